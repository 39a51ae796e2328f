/**
 * The statements that bind the database to one embedding model (src/search/vector-index.ts decides when):
 * the model recorded in service_settings, the HNSW index over the chunks' vectors for its dimension, and a
 * reset for another model.
 */
import type { Queryable } from '../database.ts';
import { readServiceSetting, writeServiceSetting } from './service-settings.ts';

/** The service_settings key the model is recorded under. */
const MODEL_SETTING = 'embedding_model';

/** The model that made the stored vectors, recorded in service_settings. */
export interface StoredModel {
  id: string;
  dimensions: number;
}

/** The expression the HNSW index is built on; search must use the very same expression to hit it. */
export function vectorExpr(dimensions: number, column = 'embedding'): string {
  return `(${column}::vector(${Math.trunc(dimensions)}))`;
}

function indexName(dimensions: number): string {
  return `chunks_embedding_hnsw_${Math.trunc(dimensions)}`;
}

/** Serializes the processes that bind the database to a model (in the caller's transaction). */
export async function lockVectorModel(q: Queryable): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock(7240511933)');
}

export async function readStoredModel(q: Queryable): Promise<StoredModel | null> {
  return readServiceSetting<StoredModel>(q, MODEL_SETTING);
}

export async function writeStoredModel(q: Queryable, model: StoredModel): Promise<void> {
  await writeServiceSetting(q, MODEL_SETTING, JSON.stringify(model));
}

/** Chunks stored, of any model. */
export async function countChunks(q: Queryable): Promise<number> {
  const [{ n } = { n: 0 }] = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM chunks');
  return n;
}

/**
 * HNSW over cosine distance. ef_construction 200 (pgvector's default is 64): a denser graph costs about
 * twice the build time and buys recall@10 near 0.95 at 100k chunks with ef_search 300
 * (docs/benchmarks.md, bench/search-latency.ts).
 */
export async function createVectorIndex(q: Queryable, dimensions: number): Promise<void> {
  await q.exec(`CREATE INDEX IF NOT EXISTS ${indexName(dimensions)} ON chunks
    USING hnsw (${vectorExpr(dimensions)} vector_cosine_ops) WITH (m = 16, ef_construction = 200)`);
}

export async function dropVectorIndex(q: Queryable, dimensions: number): Promise<void> {
  await q.exec(`DROP INDEX IF EXISTS ${indexName(dimensions)}`);
}

/** Every chunk; staged generations (src/ingest/indexer.ts) go with the chunks they named. */
export async function truncateChunks(q: Queryable): Promise<void> {
  await q.exec('TRUNCATE chunks, chunk_staging');
}

/** Every item back to pending, for the indexer to embed again; returns how many. */
export async function markAllItemsPending(q: Queryable): Promise<number> {
  const rows = await q.query(
    "UPDATE items SET indexing_status = 'pending', indexing_lease_until = NULL RETURNING id",
  );
  return rows.length;
}
