import type { Queryable } from '../db/database.ts';
import {
  addTagsBySourceKey,
  deleteItemBySourceKey,
  deleteTombstones,
  hasTombstone,
  itemIdBySourceKey,
  updateChunkFilters,
  upsertItem,
} from '../db/repositories/item-store.ts';
import type { ItemSourceType, Visibility } from '../db/repositories/items.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { newId } from '../lib/ids.ts';
import { itemSearchWords, itemSearchWordsInSlices } from '../lib/search-words.ts';

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
   * `itemSearchWords(title, markdown)` when the caller has it already: the crawler splits them in its
   * extraction thread, other callers with {@link documentSearchWords} before their transaction opens.
   * Else they are split here, inside the transaction, in one go.
   */
  searchWords?: string;
}

type StoreOutcome = 'created' | 'updated' | 'retagged' | 'unchanged' | 'tombstoned';

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
function contentHash(title: string, markdown: string): string {
  return sha256Hex(`${title}\u0000${markdown}`);
}

/**
 * Store one document as an item, in the caller's transaction. Unchanged content (same hash) only
 * refreshes metadata and embeds nothing (`retagged` when its tags changed, `unchanged` otherwise); new or
 * changed content marks the item `pending` for the indexer. A crawled page's tags add up (see ItemUpsert).
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
  // Given words hold when the text is stored as given (no NUL removed from it).
  const searchWords =
    input.searchWords !== undefined && doc.title === input.title && doc.markdown === input.markdown
      ? input.searchWords
      : itemSearchWords(doc.title, doc.markdown);
  const tombstoneKeys = [doc.sourceKey, ...(doc.tombstoneKeys ?? [])];
  if (opts.respectTombstones) {
    if (await hasTombstone(q, organizationId, tombstoneKeys)) return { outcome: 'tombstoned', itemId: null };
  } else {
    await deleteTombstones(q, organizationId, tombstoneKeys);
  }
  const hash = contentHash(doc.title, doc.markdown);
  const tags = [...new Set(doc.tags)];
  // One statement decides insert / changed / unchanged (upsertItem): null when nothing changed at all.
  const row = await upsertItem(q, {
    id: newId(),
    organizationId,
    title: doc.title,
    content: doc.markdown,
    contentHash: hash,
    visibility: doc.visibility,
    sourceType: doc.sourceType,
    sourceTableName: doc.sourceTableName,
    sourceUrl: doc.url,
    sourceKey: doc.sourceKey,
    connectionId: doc.connectionId ?? null,
    crawlJobId: doc.crawlJobId ?? null,
    tags,
    tagsAddUp: doc.sourceType === 'crawl',
    sourceVersion: doc.sourceVersion ?? null,
    searchWords,
  });
  if (!row) {
    const same = await itemIdBySourceKey(q, organizationId, doc.sourceKey);
    if (same === undefined) throw new Error(`no item is stored under ${doc.sourceKey}`);
    return { outcome: 'unchanged', itemId: same };
  }
  // A new item has no chunks yet.
  if (row.inserted) return { outcome: 'created', itemId: row.id };
  await updateChunkFilters(q, row.id, row.tags, doc.visibility);
  if (row.oldHash !== hash) return { outcome: 'updated', itemId: row.id };
  return { outcome: row.tagsChanged ? 'retagged' : 'unchanged', itemId: row.id };
}

/**
 * A crawl found a page unchanged (304): its tags are added to the item's (crawled items carry the union
 * of their crawls' tags). True when the item had not all of them.
 */
export async function addCrawlTags(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
  tags: readonly string[],
): Promise<boolean> {
  if (tags.length === 0) return false;
  const item = await addTagsBySourceKey(q, organizationId, sourceKey, [...new Set(tags)]);
  if (!item) return false;
  await updateChunkFilters(q, item.id, item.tags, item.visibility);
  return true;
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

/**
 * A document's search words for {@link IngestDocument.searchWords}, split before the transaction that
 * stores it opens: a document of millions of characters takes a large part of a second, split in slices
 * a turn of the event loop apart, and inside a transaction that time would hold the database (on PGlite,
 * every other organization's statements) and let other work run between the transaction's statements.
 */
export function documentSearchWords(doc: { title: string; markdown: string }): Promise<string> {
  return itemSearchWordsInSlices(doc.title, doc.markdown);
}

/** Remove a document that is gone at its source (no tombstone: if it comes back, it is welcome). */
export async function removeDocument(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
): Promise<boolean> {
  return deleteItemBySourceKey(q, organizationId, sourceKey);
}
