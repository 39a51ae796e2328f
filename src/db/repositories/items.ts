import { itemSearchWords, splitWords } from '../../lib/search-words.ts';
import type { Queryable } from '../database.ts';

export type Visibility = 'public' | 'private';
export type ItemSourceType = 'integration' | 'crawl' | 'upload';
export type IndexingStatus = 'pending' | 'indexed' | 'failed';

/** An item as the API lists it (seed fields plus our extensions). */
interface ItemView {
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

/**
 * The `search` of the items query as the index sees it: the search's words as items' words are split
 * (src/lib/search-words.ts), each as a prefix ('word':*), all required. `exact` when the search is a
 * single such word: a word of the item beginning with it is then exactly an occurrence of the search text
 * at the start of a word, so the text needs no second check. Null when the search has no words (only
 * punctuation, say).
 */
export function searchWords(search: string): { tsquery: string; exact: boolean } | null {
  const words = splitWords(search);
  if (words.length === 0) return null;
  // A word is letters, marks and digits only: nothing in it is tsquery syntax, and no quote needs escaping.
  const tsquery = words.map((w) => `'${w}':*`).join(' & ');
  return { tsquery, exact: words.length === 1 && words[0] === search.toLowerCase() };
}

/**
 * The organization's items, newest first, one page, with the number of all that match.
 *
 * `search`: an item matches when its title or its content contains the search text (case-insensitive;
 * `%`, `_`, `\` and quotes are ordinary characters) and every word of the search begins a word of the
 * item. So a word finds the words it begins ("quokk" finds "Quokkaline"), several words match as a
 * phrase whose last word may be a prefix ("machine lear" finds "Machine learning"), and the inside of a
 * word finds nothing ("okkaline"). The GIN index of migration 013 finds the items with the words; the
 * text check runs on those only. A search without words (punctuation only) checks the text of every item.
 * Case: a one-word search needs no text check and folds all of Unicode, as items' words are folded; a
 * longer search is checked with the database's lower(), which on a server initialized with the C locale
 * folds ASCII letters only ('ÉCLAIR AU' does not find 'éclair au' there).
 */
export async function queryItems(
  q: Queryable,
  organizationId: string,
  opts: { limit: number; page: number; search?: string | undefined },
): Promise<{ items: ItemView[]; total: number }> {
  const params: unknown[] = [organizationId];
  let where = 'organization_id = $1';
  const offset = (opts.page - 1) * opts.limit;
  if (!opts.search) {
    const [countRow] = await q.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM items WHERE ${where}`,
      params,
    );
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
  const words = searchWords(opts.search);
  if (words) {
    params.push(words.tsquery);
    where += ' AND search_words @@ $2::tsquery';
  }
  if (!words?.exact) {
    // lower() and strpos rather than ILIKE: no character of the search is a wildcard, and ILIKE folds only
    // ASCII letters under the C collation embedded mode uses ('ÉCLAIR' would not find 'éclair'), where
    // lower() folds all of Unicode (ctype C.UTF-8).
    params.push(opts.search);
    const n = params.length;
    where += ` AND (strpos(lower(title), lower($${n})) > 0 OR strpos(lower(content), lower($${n})) > 0)`;
  }
  // A search finds its matches once (MATERIALIZED), counts them and sorts them for the page. Walking the
  // listing index and testing each item instead could stop early for a common word, but reads every
  // item of the organization for a rare one, and without statistics (embedded mode has no autovacuum)
  // the planner cannot tell which it has; the count reads all matches anyway, so this costs at most as
  // much again.
  const rows = await q.query<ItemView & { total: number }>(
    `WITH matches AS MATERIALIZED (SELECT id, created_at, seq FROM items WHERE ${where}),
          page AS (SELECT id AS page_id FROM matches ORDER BY created_at DESC, seq DESC
                    LIMIT ${opts.limit} OFFSET ${offset})
     SELECT (SELECT count(*)::int FROM matches) AS total, ${VIEW_COLUMNS}
       FROM items JOIN page ON page.page_id = items.id
      ORDER BY items.created_at DESC, items.seq DESC`,
    params,
  );
  let total = rows[0]?.total;
  if (total === undefined) {
    // No row: a page past the end, or no match at all; the count alone.
    const [countRow] = await q.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM items WHERE ${where}`,
      params,
    );
    total = countRow!.n;
  }
  return { items: rows.map(({ total: _total, ...item }) => item), total };
}

export async function getItem(q: Queryable, organizationId: string, id: string): Promise<ItemView | null> {
  const rows = await q.query<ItemView>(
    `SELECT ${VIEW_COLUMNS} FROM items WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  return rows[0] ?? null;
}

/** An item with its full text (the markdown or plain text its chunks were cut from). */
interface ItemWithContent extends ItemView {
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

/** The content of an organization's items, with its hash, for search words split outside a transaction. */
export function readItemContents(
  q: Queryable,
  organizationId: string,
  ids: string[],
): Promise<Array<{ id: string; content: string; contentHash: string }>> {
  return q.query(
    'SELECT id, content, content_hash AS "contentHash" FROM items WHERE organization_id = $1 AND id = ANY($2::text[])',
    [organizationId, ids],
  );
}

/** An update with the item's new search words, split from the content whose hash it names. */
export interface ItemUpdateWithWords extends ItemUpdate {
  words: string;
  contentHash: string;
}

/**
 * Apply title (and optional tags/visibility) updates with their search words; returns the ids updated.
 * An item whose content no longer has `contentHash` (it changed after the words were split) is left
 * alone and not returned, so the caller can split its words again.
 */
export async function updateItems(
  q: Queryable,
  organizationId: string,
  updates: ItemUpdateWithWords[],
): Promise<Set<string>> {
  const withWords = updates.map((u) => ({ ...u, content_hash: u.contentHash }));
  const rows = await q.query<{ id: string }>(
    `UPDATE items AS i SET
        title = u.title,
        search_words = array_to_tsvector(string_to_array(u.words, ' ')),
        tags = COALESCE(u.tags, i.tags),
        visibility = COALESCE(u.visibility, i.visibility),
        updated_at = now()
       FROM jsonb_to_recordset($2::jsonb) AS u(id text, title text, tags text[], visibility text, words text, content_hash text)
      WHERE i.organization_id = $1 AND i.id = u.id AND i.content_hash = u.content_hash
      RETURNING i.id`,
    [organizationId, JSON.stringify(withWords)],
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
interface ConnectionDocumentRow {
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

/**
 * Splits the search words of every item again (migration 016: words split by Postgres's parser before it).
 * Items are taken in id order (each page a range of the primary key's index, so no page reads the whole
 * table), `pageRows` sizes at a time, and their text read in batches of at most `batchChars` characters (an
 * item longer than that alone), so a large corpus never sits in memory at once. Returns the number of items
 * rewritten.
 */
export async function rewriteItemSearchWords(
  q: Queryable,
  { pageRows = 1000, batchChars = 8_000_000 }: { pageRows?: number; batchChars?: number } = {},
): Promise<number> {
  let after = '';
  let rewritten = 0;
  for (;;) {
    const sizes = await q.query<{ id: string; chars: number }>(
      `SELECT id, (length(title) + length(content))::int AS chars
         FROM items WHERE id > $1 ORDER BY id LIMIT $2`,
      [after, pageRows],
    );
    if (sizes.length === 0) return rewritten;
    after = sizes.at(-1)!.id;
    let batch: string[] = [];
    let chars = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const rows = await q.query<{ id: string; title: string; content: string }>(
        'SELECT id, title, content FROM items WHERE id = ANY($1::text[])',
        [batch],
      );
      await q.query(
        `UPDATE items AS i SET search_words = array_to_tsvector(string_to_array(u.words, ' '))
           FROM unnest($1::text[], $2::text[]) AS u(id, words) WHERE i.id = u.id`,
        [rows.map((r) => r.id), rows.map((r) => itemSearchWords(r.title, r.content))],
      );
      rewritten += rows.length;
      batch = [];
      chars = 0;
    };
    for (const s of sizes) {
      if (chars + s.chars > batchChars) await flush();
      batch.push(s.id);
      chars += s.chars;
    }
    await flush();
  }
}
