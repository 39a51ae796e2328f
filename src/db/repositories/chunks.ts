/**
 * The indexer's SQL: leasing pending items, writing their chunks (whole, or in parts under a staged
 * generation listed in `chunk_staging`, which search skips), and the embedded database's upkeep after
 * indexing. Each function is one statement in the caller's transaction (or none); the indexer
 * (src/ingest/indexer.ts) decides the order and the transactions, and says why a large item is written in
 * parts (migration 010 made the generations).
 */
import type { Queryable } from '../database.ts';
import { realArrayVectorSql } from '../real-array-param.ts';

/** A pending item as a lease hands it to the indexer. */
export interface LeasedItem {
  id: string;
  organization_id: string;
  title: string;
  content: string;
  content_hash: string;
  tags: string[];
  visibility: string;
  source_type: string;
  /** A crawled page's crawl asked for its lists of links to be searchable too (crawl option `indexListPages`). */
  index_list_pages: boolean;
}

/**
 * Leases up to $1 pending items for $2 seconds, in turns across queues (see the indexer's class comment):
 * `queues` finds each queue once by skipping along items_indexing_queue_idx (a loose index scan: one
 * index probe per queue, however many items wait), each queue offers its first $1 unleased items in order,
 * and the offers are taken by turn, then oldest change first. Cost: the number of queues times $1 rows.
 */
const LEASE_SQL = `
  WITH RECURSIVE queues (org, source, conn) AS (
    (SELECT organization_id, source_type, coalesce(connection_id, '') FROM items
      WHERE indexing_status = 'pending'
      ORDER BY organization_id, source_type, coalesce(connection_id, '') LIMIT 1)
    UNION ALL
    SELECT nxt.* FROM queues AS q CROSS JOIN LATERAL (
      SELECT organization_id, source_type, coalesce(connection_id, '') FROM items
       WHERE indexing_status = 'pending'
         AND (organization_id, source_type, coalesce(connection_id, '')) > (q.org, q.source, q.conn)
       ORDER BY organization_id, source_type, coalesce(connection_id, '') LIMIT 1) AS nxt
  ),
  offers AS (
    SELECT o.id, o.updated_at, row_number() OVER (PARTITION BY q.org, q.source, q.conn ORDER BY o.updated_at) AS turn
      FROM queues AS q CROSS JOIN LATERAL (
        SELECT i.id, i.updated_at FROM items AS i
         WHERE i.indexing_status = 'pending' AND i.organization_id = q.org AND i.source_type = q.source
           AND coalesce(i.connection_id, '') = q.conn
           AND (i.indexing_lease_until IS NULL OR i.indexing_lease_until < now())
         ORDER BY i.updated_at LIMIT $1 FOR UPDATE SKIP LOCKED) AS o
  )
  UPDATE items SET indexing_lease_until = now() + make_interval(secs => $2), indexing_started_at = now()
   WHERE id IN (SELECT id FROM offers ORDER BY turn, updated_at LIMIT $1)
  RETURNING id, organization_id, title, content, content_hash, tags, visibility, source_type,
            coalesce((SELECT (c.options->>'indexListPages')::boolean FROM crawl_jobs AS c WHERE c.id = items.crawl_job_id),
                     false) AS index_list_pages`;

/** Lease up to `limit` pending items for `leaseSeconds`, in turns across queues ({@link LEASE_SQL}). */
export function leasePendingItems(
  q: Queryable,
  opts: { limit: number; leaseSeconds: number },
): Promise<LeasedItem[]> {
  return q.query<LeasedItem>(LEASE_SQL, [opts.limit, opts.leaseSeconds]);
}

/** End every indexing lease of a pending item (a previous run of this process died mid-round). */
export async function reclaimIndexingLeases(q: Queryable): Promise<string[]> {
  const rows = await q.query<{ id: string }>(
    `UPDATE items SET indexing_lease_until = NULL
          WHERE indexing_status = 'pending' AND indexing_lease_until IS NOT NULL RETURNING id`,
  );
  return rows.map((r) => r.id);
}

/** Extend the leases of a round's items that are still pending by `leaseSeconds` from now. */
export async function renewIndexingLeases(
  q: Queryable,
  ids: readonly string[],
  leaseSeconds: number,
): Promise<void> {
  await q.query(
    `UPDATE items SET indexing_lease_until = now() + make_interval(secs => $2)
            WHERE id = ANY($1::text[]) AND indexing_status = 'pending' AND indexing_lease_until IS NOT NULL`,
    [ids, leaseSeconds],
  );
}

/** End the leases of those items that are still pending, so the next round may take them at once. */
export async function endIndexingLeases(q: Queryable, ids: readonly string[]): Promise<void> {
  await q.query(
    `UPDATE items SET indexing_lease_until = NULL WHERE id = ANY($1::text[]) AND indexing_status = 'pending'`,
    [ids],
  );
}

/**
 * The item changed while an attempt embedded it: if it is pending (new content), end its lease so the
 * next round takes it again rather than after the lease runs out.
 */
export async function endIndexingLease(q: Queryable, itemId: string): Promise<void> {
  await q.query(
    `UPDATE items SET indexing_lease_until = NULL WHERE id = $1 AND indexing_status = 'pending'`,
    [itemId],
  );
}

/** Every generation staged in `chunk_staging` (unseen by search until flipped). */
export async function listStagedGenerations(q: Queryable): Promise<number[]> {
  const rows = await q.query<{ generation: number }>('SELECT generation FROM chunk_staging');
  return rows.map((r) => r.generation);
}

/** Delete at most `limit` chunks of a generation; returns how many went (0: none are left). */
export async function deleteGenerationChunksBatch(
  q: Queryable,
  generation: number,
  limit: number,
): Promise<number> {
  const gone = await q.query(
    `DELETE FROM chunks WHERE id IN (SELECT id FROM chunks WHERE generation = $1 LIMIT $2) RETURNING id`,
    [generation, limit],
  );
  return gone.length;
}

/** Remove a generation's row from `chunk_staging`. */
export async function deleteStagedGeneration(q: Queryable, generation: number | null): Promise<void> {
  await q.query('DELETE FROM chunk_staging WHERE generation = $1', [generation]);
}

/**
 * The swap of an item whose chunks fit in one transaction: marks it indexed if it still holds the content
 * that was embedded (`contentHash`) and is still pending, and answers a new generation for its chunks;
 * null when it changed meanwhile. The UPDATE locks the item's row: its other writers take that lock first.
 */
export async function markIndexedIfUnchanged(
  q: Queryable,
  itemId: string,
  contentHash: string,
): Promise<number | null> {
  const rows = await q.query<{ generation: number }>(
    `UPDATE items SET indexing_status = 'indexed', indexing_error = NULL, indexing_lease_until = NULL, indexed_at = now()
          WHERE id = $1 AND content_hash = $2 AND indexing_status = 'pending'
          RETURNING nextval('chunk_generation_seq') AS generation`,
    [itemId, contentHash],
  );
  return rows[0]?.generation ?? null;
}

/**
 * Locks the item for a part of a large item's chunks. Null when it no longer holds `contentHash` or is no
 * longer pending; else whether `generation` is still staged (another attempt that finished the item
 * removed it).
 */
export async function lockItemForPart(
  q: Queryable,
  itemId: string,
  contentHash: string,
  generation: number | null,
): Promise<{ staged: boolean } | null> {
  const rows = await q.query<{ generation: number | null }>(
    `SELECT (SELECT s.generation FROM chunk_staging AS s WHERE s.generation = $3) AS generation
         FROM items WHERE id = $1 AND content_hash = $2 AND indexing_status = 'pending' FOR UPDATE`,
    [itemId, contentHash, generation ?? -1],
  );
  const [row] = rows;
  return row ? { staged: row.generation !== null } : null;
}

/** A new generation staged for the item's chunks (search skips it until it is flipped). */
export async function stageGeneration(q: Queryable, itemId: string): Promise<number> {
  const [staged] = await q.query<{ generation: number }>(
    `INSERT INTO chunk_staging (generation, item_id) VALUES (nextval('chunk_generation_seq'), $1)
         RETURNING generation`,
    [itemId],
  );
  return staged!.generation;
}

/** The flip of a large item's last part: the item turns indexed (its staged generation is flipped apart). */
export async function markIndexed(q: Queryable, itemId: string): Promise<void> {
  await q.query(
    `UPDATE items SET indexing_status = 'indexed', indexing_error = NULL, indexing_lease_until = NULL, indexed_at = now()
        WHERE id = $1`,
    [itemId],
  );
}

/** Every chunk of the item, of every generation. */
export async function deleteItemChunks(q: Queryable, itemId: string): Promise<void> {
  await q.query('DELETE FROM chunks WHERE item_id = $1', [itemId]);
}

/** The item's chunks of one generation (what an attempt staged). */
export async function deleteItemGenerationChunks(
  q: Queryable,
  itemId: string,
  generation: number | null,
): Promise<void> {
  await q.query('DELETE FROM chunks WHERE item_id = $1 AND generation = $2', [itemId, generation]);
}

/** The item's chunks of every generation but `generation` (the flip's other half). */
export async function deleteOtherGenerationsChunks(
  q: Queryable,
  itemId: string,
  generation: number | null,
): Promise<void> {
  await q.query('DELETE FROM chunks WHERE item_id = $1 AND generation <> $2', [itemId, generation]);
}

/** The item's rows in `chunk_staging`. */
export async function deleteItemStaging(q: Queryable, itemId: string): Promise<void> {
  await q.query('DELETE FROM chunk_staging WHERE item_id = $1', [itemId]);
}

/** Chunks of one item, in order, as the indexer writes them under a generation. */
export interface ChunkRows {
  itemId: string;
  organizationId: string;
  modelId: string;
  generation: number | null;
  /** Each chunk's index in the item. */
  indexes: number[];
  texts: string[];
  /** The text each was embedded from (title and headings included), which keyword search indexes. */
  embedTexts: string[];
  /**
   * Their vectors: one binary `real[]` of all of them (toRealArrayParam in ../real-array-param.ts, `dims` each), or one
   * pgvector text literal each.
   */
  vectors: { realArray: Uint8Array; dims: number } | { literals: string[] };
}

/**
 * Inserts chunks with their vectors; tags, visibility and source type are copied from the item for
 * filtering. Embedded mode sends the vectors as one binary real[] (toRealArrayParam), each sliced out by its
 * row's ordinal: PGlite's WASM parsed their text at 0.72-0.78 ms a vector of its thread, binary takes
 * 0.07-0.13. Server mode keeps the text form: there the 32-row insert took 13 ms longer with the
 * binary array (90-96 against 104-109 ms, the same vectors into twin tables with the HNSW index;
 * the execution itself was not slower, the cause was not found) and native parsing is cheap.
 */
export async function insertChunks(q: Queryable, c: ChunkRows): Promise<void> {
  await q.query(insertChunksSql(c, ''), insertChunksParams(c));
}

/**
 * {@link insertChunks} as a statement of its own, outside any transaction: the rows go in only while the
 * item still holds `contentHash`, is pending and has `c.generation` staged, checked by the statement
 * itself. Embedded mode writes a large item's parts this way (the indexer says why). Returns the rows
 * written: 0 when the item changed or another attempt finished it.
 */
export async function insertStagedChunks(q: Queryable, c: ChunkRows, contentHash: string): Promise<number> {
  const guard = `WHERE i.content_hash = $9 AND i.indexing_status = 'pending'
           AND EXISTS (SELECT 1 FROM chunk_staging AS s WHERE s.generation = $8 AND s.item_id = $1)`;
  const rows = await q.query<{ written: number }>(
    `WITH written AS (${insertChunksSql(c, guard)} RETURNING 1) SELECT count(*)::int AS written FROM written`,
    [...insertChunksParams(c), contentHash],
  );
  return rows[0]?.written ?? 0;
}

function insertChunksSql(c: ChunkRows, where: string): string {
  const v = c.vectors;
  const [rows, embedding] =
    'realArray' in v
      ? [
          'unnest($4::int[], $5::text[], $7::text[]) WITH ORDINALITY AS u(idx, txt, et, n)',
          realArrayVectorSql('$6', 'u.n', v.dims),
        ]
      : ['unnest($4::int[], $5::text[], $7::text[], $6::text[]) AS u(idx, txt, et, emb)', 'u.emb::vector'];
  return `INSERT INTO chunks (item_id, organization_id, chunk_index, text, embedding, model_id, tsv, tags, visibility, source_type, generation)
       SELECT $1, $2, u.idx, u.txt, ${embedding}, $3, to_tsvector('english', u.et), i.tags, i.visibility, i.source_type, $8
         FROM ${rows} JOIN items AS i ON i.id = $1 ${where}`;
}

function insertChunksParams(c: ChunkRows): unknown[] {
  const vectors = 'realArray' in c.vectors ? c.vectors.realArray : c.vectors.literals;
  return [c.itemId, c.organizationId, c.modelId, c.indexes, c.texts, vectors, c.embedTexts, c.generation];
}

/**
 * Embedded PGlite runs no autovacuum: planner statistics of the items and their chunks, refreshed after
 * large changes so the items listing and filters keep good plans.
 */
export async function analyzeItemsAndChunks(q: Queryable): Promise<void> {
  await q.exec('ANALYZE items; ANALYZE chunks');
}

/**
 * VACUUM of the BM25 postings, so their new heap pages are marked all-visible and keyword search reads
 * postings from the index alone (migration 015). It cannot run in a transaction or a multi-statement
 * string, hence its own call.
 */
export async function vacuumPostings(q: Queryable): Promise<void> {
  await q.exec('VACUUM bm25_postings');
}
