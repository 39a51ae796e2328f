import type { Queryable } from '../db/database.ts';
import type { ItemSourceType, Visibility } from '../db/repositories/items.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { newId } from '../lib/ids.ts';
import { itemSearchWordsInSlices } from '../lib/search-words.ts';

/**
 * A document on its way into the knowledge base, whatever produced it (connector, crawler, upload).
 * `sourceKey` identifies it at its source, so storing it again updates the same item.
 */
export interface IngestDocument {
  sourceType: ItemSourceType;
  /** e.g. `support_desk_articles`, `crawled_pages`, `uploaded_documents` */
  sourceTableName: string;
  /** e.g. `integration:<connectionId>:<table>:<externalId>` or `crawl:<canonical url>` */
  sourceKey: string;
  /**
   * Other keys a user's deletion of this document may have been recorded under (tombstones written before
   * integration keys named the table: {@link legacyIntegrationTombstoneKey}).
   */
  tombstoneKeys?: readonly string[];
  title: string;
  markdown: string;
  url: string;
  visibility: Visibility;
  tags: string[];
  connectionId?: string | null;
  crawlJobId?: string | null;
  /** The source's change token (SourceDocument.version), for incremental syncs. */
  sourceVersion?: string | null;
  /**
   * `itemSearchWords(title, markdown)` when the caller has it already (the crawler splits them in its
   * extraction thread); else they are split here.
   */
  searchWords?: string;
}

export type StoreOutcome = 'created' | 'updated' | 'unchanged' | 'tombstoned';

/**
 * The key of a synced document: its connection, its table and the source's id. The table is part of it
 * because ids are only unique per table (a Zendesk article and a ticket may both be 7). Tables never hold
 * a colon; external ids may (`gid://shopify/Product/1`), so the id is last.
 */
export function integrationSourceKey(connectionId: string, table: string, externalId: string): string {
  return `integration:${connectionId}:${table}:${externalId}`;
}

/**
 * Where migration 006 moved a tombstone written when keys had no table (`integration:<conn>:<id>`): the
 * table is unknown, so `*` stands for any, and a document of that id in any table stays deleted.
 */
export function legacyIntegrationTombstoneKey(connectionId: string, externalId: string): string {
  return `integration:${connectionId}:*:${externalId}`;
}

export function crawlSourceKey(canonicalUrl: string): string {
  return `crawl:${canonicalUrl}`;
}

/** What decides whether chunks must be rebuilt: the text and the title (chunks embed the title). */
export function contentHash(title: string, markdown: string): string {
  return sha256Hex(`${title}\u0000${markdown}`);
}

/**
 * Store one document as an item, in the caller's transaction. Unchanged content (same hash) only
 * refreshes metadata and embeds nothing; new or changed content marks the item `pending` for the indexer.
 * With `respectTombstones` (incremental syncs, crawls of other pages) an item the user deleted stays
 * deleted; without it (reset syncs, a new crawl of that same URL) the tombstone is lifted.
 */
export async function storeDocument(
  q: Queryable,
  organizationId: string,
  input: IngestDocument,
  opts: { respectTombstones: boolean },
): Promise<{ outcome: StoreOutcome; itemId: string | null }> {
  const doc = storableDocument(input);
  // Given words hold when the text is stored as given (no NUL removed from it). Split in slices, a turn of
  // the event loop apart: a document of millions of characters takes a large part of a second.
  const searchWords =
    input.searchWords !== undefined && doc.title === input.title && doc.markdown === input.markdown
      ? input.searchWords
      : await itemSearchWordsInSlices(doc.title, doc.markdown);
  const tombstoneKeys = [doc.sourceKey, ...(doc.tombstoneKeys ?? [])];
  if (opts.respectTombstones) {
    const dead = await q.query(
      'SELECT 1 FROM item_tombstones WHERE organization_id = $1 AND source_key = ANY($2::text[])',
      [organizationId, tombstoneKeys],
    );
    if (dead.length > 0) return { outcome: 'tombstoned', itemId: null };
  } else {
    await q.query('DELETE FROM item_tombstones WHERE organization_id = $1 AND source_key = ANY($2::text[])', [
      organizationId,
      tombstoneKeys,
    ]);
  }
  const hash = contentHash(doc.title, doc.markdown);
  const tags = [...new Set(doc.tags)];
  // One statement decides insert / changed / unchanged, so concurrent writers of one key cannot duplicate
  // it. A document stored again exactly as it is (a re-read after no change) matches the WHERE of
  // neither branch and writes nothing: no new row version, no chunk update, nothing for the indexer.
  const rows = await q.query<{ id: string; inserted: boolean; old_hash: string | null }>(
    `WITH old AS (SELECT content_hash FROM items WHERE organization_id = $2 AND source_key = $10)
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
       tags = EXCLUDED.tags,
       source_version = EXCLUDED.source_version,
       indexing_status = CASE WHEN i.content_hash = EXCLUDED.content_hash THEN i.indexing_status ELSE 'pending' END,
       indexing_error = CASE WHEN i.content_hash = EXCLUDED.content_hash THEN i.indexing_error ELSE NULL END,
       updated_at = CASE WHEN i.content_hash = EXCLUDED.content_hash AND i.visibility = EXCLUDED.visibility
                          AND i.tags = EXCLUDED.tags AND i.source_url = EXCLUDED.source_url
                         THEN i.updated_at ELSE now() END
     WHERE NOT (i.content_hash = EXCLUDED.content_hash AND i.title = EXCLUDED.title
                AND i.visibility = EXCLUDED.visibility AND i.source_table_name = EXCLUDED.source_table_name
                AND i.source_url = EXCLUDED.source_url AND i.tags = EXCLUDED.tags
                AND i.connection_id IS NOT DISTINCT FROM EXCLUDED.connection_id
                AND i.source_version IS NOT DISTINCT FROM EXCLUDED.source_version
                AND (EXCLUDED.crawl_job_id IS NULL OR i.crawl_job_id IS NOT DISTINCT FROM EXCLUDED.crawl_job_id))
     RETURNING id, (xmax = 0) AS inserted, (SELECT content_hash FROM old) AS old_hash`,
    [
      newId(),
      organizationId,
      doc.title,
      doc.markdown,
      hash,
      doc.visibility,
      doc.sourceType,
      doc.sourceTableName,
      doc.url,
      doc.sourceKey,
      doc.connectionId ?? null,
      doc.crawlJobId ?? null,
      tags,
      doc.sourceVersion ?? null,
      searchWords,
    ],
  );
  const row = rows[0];
  if (!row) {
    const same = await q.query<{ id: string }>(
      'SELECT id FROM items WHERE organization_id = $1 AND source_key = $2',
      [organizationId, doc.sourceKey],
    );
    return { outcome: 'unchanged', itemId: same[0]!.id };
  }
  // A new item has no chunks yet.
  if (row.inserted) return { outcome: 'created', itemId: row.id };
  // Chunks copy tags and visibility for filtering; keep them in step when only metadata changed.
  await q.query('UPDATE chunks SET tags = $2, visibility = $3 WHERE item_id = $1', [
    row.id,
    tags,
    doc.visibility,
  ]);
  return { outcome: row.old_hash === hash ? 'unchanged' : 'updated', itemId: row.id };
}

/**
 * Postgres text cannot hold U+0000, and sources and pages do carry it (a pasted binary, a broken export):
 * it is dropped from fetched content rather than failing the document. Requests are refused at the API.
 */
function storableDocument(doc: IngestDocument): IngestDocument {
  const clean = (s: string) => (s.includes('\u0000') ? s.replaceAll('\u0000', '') : s);
  return {
    ...doc,
    title: clean(doc.title),
    markdown: clean(doc.markdown),
    url: clean(doc.url),
    tags: doc.tags.map(clean),
    ...(doc.sourceVersion ? { sourceVersion: clean(doc.sourceVersion) } : {}),
  };
}

/** Remove a document that is gone at its source (no tombstone: if it comes back, it is welcome). */
export async function removeDocument(
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
