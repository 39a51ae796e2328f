import type { Queryable } from '../database.ts';

export type Visibility = 'public' | 'private';
export type ItemSourceType = 'integration' | 'crawl' | 'upload';
export type IndexingStatus = 'pending' | 'indexed' | 'failed';

/** An item as the API lists it (seed fields plus our extensions). */
export interface ItemView {
  id: string;
  title: string;
  visibility: Visibility;
  source_type: ItemSourceType;
  source_table_name: string;
  source_url: string;
  tags: string[];
  indexing_status: IndexingStatus;
  created_at: string;
  updated_at: string;
}

const VIEW_COLUMNS = `id, title, visibility, source_type, source_table_name, source_url, tags, indexing_status,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at`;

/** Escape LIKE wildcards so a user's `%` or `_` matches itself. */
function likePattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function queryItems(
  q: Queryable,
  organizationId: string,
  opts: { limit: number; page: number; search?: string | undefined },
): Promise<{ items: ItemView[]; total: number }> {
  const params: unknown[] = [organizationId];
  let where = 'organization_id = $1';
  if (opts.search) {
    params.push(likePattern(opts.search));
    where += ` AND (title ILIKE $2 OR content ILIKE $2)`;
  }
  const [countRow] = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM items WHERE ${where}`,
    params,
  );
  const offset = (opts.page - 1) * opts.limit;
  // Deferred join: page through the narrow (created_at, seq) index first, then fetch the page's rows.
  // The ORDER BY names the table's columns: the view's `created_at` is a formatted string.
  const items = await q.query<ItemView>(
    `SELECT ${VIEW_COLUMNS} FROM items
       JOIN (SELECT id AS page_id FROM items WHERE ${where}
              ORDER BY items.created_at DESC, items.seq DESC LIMIT ${opts.limit} OFFSET ${offset}) AS page
         ON page.page_id = items.id
      ORDER BY items.created_at DESC, items.seq DESC`,
    params,
  );
  return { items, total: countRow!.n };
}

export async function getItem(q: Queryable, organizationId: string, id: string): Promise<ItemView | null> {
  const rows = await q.query<ItemView>(
    `SELECT ${VIEW_COLUMNS} FROM items WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  return rows[0] ?? null;
}

/** An item with its full text (the markdown or plain text its chunks were cut from). */
export interface ItemWithContent extends ItemView {
  content: string;
}

export async function getItemWithContent(
  q: Queryable,
  organizationId: string,
  id: string,
): Promise<ItemWithContent | null> {
  const rows = await q.query<ItemWithContent>(
    `SELECT ${VIEW_COLUMNS}, content FROM items WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  return rows[0] ?? null;
}

export interface ItemUpdate {
  id: string;
  title: string;
  tags?: string[] | undefined;
  visibility?: Visibility | undefined;
}

/** Apply title (and optional tags/visibility) updates; returns the ids that exist and were updated. */
export async function updateItems(
  q: Queryable,
  organizationId: string,
  updates: ItemUpdate[],
): Promise<Set<string>> {
  const rows = await q.query<{ id: string }>(
    `UPDATE items AS i SET
        title = u.title,
        tags = COALESCE(u.tags, i.tags),
        visibility = COALESCE(u.visibility, i.visibility),
        updated_at = now()
       FROM jsonb_to_recordset($2::jsonb) AS u(id text, title text, tags text[], visibility text)
      WHERE i.organization_id = $1 AND i.id = u.id
      RETURNING i.id`,
    [organizationId, JSON.stringify(updates)],
  );
  const ids = rows.map((r) => r.id);
  // Chunks carry copies of tags and visibility for search filters; keep them in step.
  await q.query(
    `UPDATE chunks AS c SET tags = i.tags, visibility = i.visibility
       FROM items AS i WHERE c.item_id = i.id AND i.id = ANY($1::text[])`,
    [ids],
  );
  return new Set(ids);
}

/**
 * Delete items of one organization. Items that came from a source (integration, crawl) leave a
 * tombstone so an incremental sync or a crawl of other pages does not bring them back.
 */
export async function deleteItems(q: Queryable, organizationId: string, ids: string[]): Promise<number> {
  const rows = await q.query<{ source_key: string; source_type: ItemSourceType }>(
    'DELETE FROM items WHERE organization_id = $1 AND id = ANY($2::text[]) RETURNING source_key, source_type',
    [organizationId, ids],
  );
  const keys = rows.filter((r) => r.source_type !== 'upload').map((r) => r.source_key);
  if (keys.length > 0) {
    await q.query(
      `INSERT INTO item_tombstones (organization_id, source_key)
       SELECT $1, k FROM unnest($2::text[]) AS k ON CONFLICT DO NOTHING`,
      [organizationId, keys],
    );
  }
  return rows.length;
}

/** One synced document of a connection, for the sync's comparison with its source. */
export interface ConnectionDocumentRow {
  sourceKey: string;
  table: string;
  version: string | null;
}

/**
 * A connection's items in source-key order, `limit` at a time after `afterKey` (keyset pagination over
 * the unique (organization, source key) index), so a large connection is read without holding it.
 */
export async function listConnectionDocuments(
  q: Queryable,
  organizationId: string,
  connectionId: string,
  opts: { afterKey: string | null; limit: number },
): Promise<ConnectionDocumentRow[]> {
  const rows = await q.query<{
    source_key: string;
    source_table_name: string;
    source_version: string | null;
  }>(
    `SELECT source_key, source_table_name, source_version FROM items
      WHERE organization_id = $1 AND connection_id = $2 AND ($3::text IS NULL OR source_key > $3)
      ORDER BY source_key LIMIT $4`,
    [organizationId, connectionId, opts.afterKey, opts.limit],
  );
  return rows.map((r) => ({
    sourceKey: r.source_key,
    table: r.source_table_name,
    version: r.source_version,
  }));
}
