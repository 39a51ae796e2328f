/**
 * The statements that store documents as items (the pipeline's hash-skip step, src/ingest/hash-skip.ts, decides
 * the order): tombstones, the one-statement upsert, and removal by source key. Each runs in the caller's
 * transaction.
 */
import type { Queryable } from '../database.ts';

/** Whether a user's deletion is recorded under any of `sourceKeys`. */
export async function hasTombstone(
  q: Queryable,
  organizationId: string,
  sourceKeys: readonly string[],
): Promise<boolean> {
  const dead = await q.query(
    'SELECT 1 FROM item_tombstones WHERE organization_id = $1 AND source_key = ANY($2::text[])',
    [organizationId, sourceKeys],
  );
  return dead.length > 0;
}

/** Lift the tombstones of `sourceKeys` (a reset sync, a new crawl of that URL). */
export async function deleteTombstones(
  q: Queryable,
  organizationId: string,
  sourceKeys: readonly string[],
): Promise<void> {
  await q.query('DELETE FROM item_tombstones WHERE organization_id = $1 AND source_key = ANY($2::text[])', [
    organizationId,
    sourceKeys,
  ]);
}

/** An item's row as {@link upsertItem} writes it. */
interface ItemUpsert {
  id: string;
  organizationId: string;
  title: string;
  content: string;
  contentHash: string;
  visibility: string;
  sourceType: string;
  sourceTableName: string;
  sourceUrl: string;
  sourceKey: string;
  connectionId: string | null;
  crawlJobId: string | null;
  tags: string[];
  /**
   * Add `tags` to the item's tags instead of replacing them (crawled pages: a page reached by several
   * crawls carries the union of their tags, and tags a user set stay).
   */
  tagsAddUp: boolean;
  sourceVersion: string | null;
  /** The item's search words, space-separated. */
  searchWords: string;
}

/** `existing` with the tags of `added` it lacks appended, in their order: how crawls' tags add up. */
function tagsAddedSql(existing: string, added: string): string {
  return `${existing} || ARRAY(SELECT t FROM unnest(${added}) WITH ORDINALITY AS u(t, n) WHERE NOT t = ANY (${existing}) ORDER BY n)`;
}

/** The item's tags after a write: its own with the new ones added, or the new ones alone (ItemUpsert.tagsAddUp). */
const NEW_TAGS = `CASE WHEN $16 THEN ${tagsAddedSql('i.tags', 'EXCLUDED.tags')} ELSE EXCLUDED.tags END`;
/** Whether a write leaves the item's tags as they are. */
const SAME_TAGS = '(CASE WHEN $16 THEN EXCLUDED.tags <@ i.tags ELSE i.tags = EXCLUDED.tags END)';

/**
 * One statement decides insert / changed / unchanged, so concurrent writers of one key cannot duplicate
 * it. A document stored again exactly as it is (a re-read after no change) matches the WHERE of
 * neither branch and writes nothing: no new row version, no chunk update, nothing for the indexer; then
 * the answer is null. Changed content turns the item `pending`. `oldHash`: the content hash before;
 * `tags`: the tags now, and `tagsChanged` whether they differ from before.
 */
export async function upsertItem(
  q: Queryable,
  item: ItemUpsert,
): Promise<{
  id: string;
  inserted: boolean;
  oldHash: string | null;
  tags: string[];
  tagsChanged: boolean;
} | null> {
  const rows = await q.query<{
    id: string;
    inserted: boolean;
    old_hash: string | null;
    tags: string[];
    tags_changed: boolean;
  }>(
    `WITH old AS (SELECT content_hash, tags FROM items WHERE organization_id = $2 AND source_key = $10)
     INSERT INTO items AS i (id, organization_id, title, content, content_hash, visibility, source_type,
                             source_table_name, source_url, source_key, connection_id, crawl_job_id, tags,
                             source_version, search_words)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
             array_to_tsvector(string_to_array($15, ' ')))
     ON CONFLICT (organization_id, source_key) DO UPDATE SET
       title = EXCLUDED.title,
       content = EXCLUDED.content,
       search_words = EXCLUDED.search_words,
       content_hash = EXCLUDED.content_hash,
       visibility = EXCLUDED.visibility,
       source_table_name = EXCLUDED.source_table_name,
       source_url = EXCLUDED.source_url,
       connection_id = EXCLUDED.connection_id,
       crawl_job_id = COALESCE(EXCLUDED.crawl_job_id, i.crawl_job_id),
       tags = ${NEW_TAGS},
       source_version = EXCLUDED.source_version,
       indexing_status = CASE WHEN i.content_hash = EXCLUDED.content_hash THEN i.indexing_status ELSE 'pending' END,
       indexing_error = CASE WHEN i.content_hash = EXCLUDED.content_hash THEN i.indexing_error ELSE NULL END,
       updated_at = CASE WHEN i.content_hash = EXCLUDED.content_hash AND i.visibility = EXCLUDED.visibility
                          AND ${SAME_TAGS} AND i.source_url = EXCLUDED.source_url
                         THEN i.updated_at ELSE now() END
     WHERE NOT (i.content_hash = EXCLUDED.content_hash AND i.title = EXCLUDED.title
                AND i.visibility = EXCLUDED.visibility AND i.source_table_name = EXCLUDED.source_table_name
                AND i.source_url = EXCLUDED.source_url AND ${SAME_TAGS}
                AND i.connection_id IS NOT DISTINCT FROM EXCLUDED.connection_id
                AND i.source_version IS NOT DISTINCT FROM EXCLUDED.source_version
                AND (EXCLUDED.crawl_job_id IS NULL OR i.crawl_job_id IS NOT DISTINCT FROM EXCLUDED.crawl_job_id))
     RETURNING id, (xmax = 0) AS inserted, (SELECT content_hash FROM old) AS old_hash,
               i.tags, (SELECT tags FROM old) IS DISTINCT FROM i.tags AS tags_changed`,
    [
      item.id,
      item.organizationId,
      item.title,
      item.content,
      item.contentHash,
      item.visibility,
      item.sourceType,
      item.sourceTableName,
      item.sourceUrl,
      item.sourceKey,
      item.connectionId,
      item.crawlJobId,
      item.tags,
      item.sourceVersion,
      item.searchWords,
      item.tagsAddUp,
    ],
  );
  const row = rows[0];
  return row
    ? {
        id: row.id,
        inserted: row.inserted,
        oldHash: row.old_hash,
        tags: row.tags,
        tagsChanged: row.tags_changed,
      }
    : null;
}

/** The id of the organization's item stored under `sourceKey` (undefined when there is none). */
export async function itemIdBySourceKey(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
): Promise<string | undefined> {
  const rows = await q.query<{ id: string }>(
    'SELECT id FROM items WHERE organization_id = $1 AND source_key = $2',
    [organizationId, sourceKey],
  );
  return rows[0]?.id;
}

/** Chunks copy tags and visibility for filtering: keep them in step when only the item's metadata changed. */
export async function updateChunkFilters(
  q: Queryable,
  itemId: string,
  tags: readonly string[],
  visibility: string,
): Promise<void> {
  await q.query('UPDATE chunks SET tags = $2, visibility = $3 WHERE item_id = $1', [
    itemId,
    tags,
    visibility,
  ]);
}

/**
 * Add `tags` to the tags of the organization's item stored under `sourceKey` (a crawl that found the page
 * unchanged). Returns the item's id, tags and visibility when tags were added, null when it had them all.
 */
export async function addTagsBySourceKey(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
  tags: readonly string[],
): Promise<{ id: string; tags: string[]; visibility: string } | null> {
  const rows = await q.query<{ id: string; tags: string[]; visibility: string }>(
    `UPDATE items AS i SET tags = ${tagsAddedSql('i.tags', '$3::text[]')},
            updated_at = now()
      WHERE i.organization_id = $1 AND i.source_key = $2 AND NOT ($3::text[] <@ i.tags)
      RETURNING i.id, i.tags, i.visibility`,
    [organizationId, sourceKey, tags],
  );
  return rows[0] ?? null;
}

/** Delete the organization's item stored under `sourceKey` (no tombstone); false when there was none. */
export async function deleteItemBySourceKey(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
): Promise<boolean> {
  const rows = await q.query(
    'DELETE FROM items WHERE organization_id = $1 AND source_key = $2 RETURNING id',
    [organizationId, sourceKey],
  );
  return rows.length > 0;
}
