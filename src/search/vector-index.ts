import type { Database, Queryable } from '../db/database.ts';

/** The model that made the stored vectors, recorded in service_settings. */
export interface StoredModel {
  id: string;
  dimensions: number;
}

export class ModelMismatchError extends Error {
  override name = 'ModelMismatchError';
}

/** The expression the HNSW index is built on; search must use the very same expression to hit it. */
export function vectorExpr(dimensions: number, column = 'embedding'): string {
  return `(${column}::vector(${Math.trunc(dimensions)}))`;
}

/**
 * The HNSW candidate list per search (pgvector's default is 40; 1000 is its maximum). On the bench's 100k
 * chunks (2,000 real SciFact vectors, each with ~50 noisy near-copies: a hard case for recall), quiet
 * machine, forced HNSW: recall@10 0.936 at 200, 0.966 at 300, 0.979 at 500, 0.991 at 800; through search()
 * 600 gave 0.987 at p95 11.9 ms, the least that holds the recall goal of 0.98 (800: 0.991, 13.3 ms). m 24
 * instead of 16 gave no better recall on that data (docs/benchmarks.md, bench/search-latency.ts).
 */
export const EF_SEARCH = 600;

function indexName(dimensions: number): string {
  return `chunks_embedding_hnsw_${Math.trunc(dimensions)}`;
}

/**
 * HNSW over cosine distance. ef_construction 200 (pgvector's default is 64): a denser graph costs about
 * twice the build time and buys recall@10 near 0.95 at 100k chunks with ef_search 300
 * (docs/benchmarks.md, bench/search-latency.ts).
 */
function createIndexSql(dimensions: number): string {
  return `CREATE INDEX IF NOT EXISTS ${indexName(dimensions)} ON chunks
    USING hnsw (${vectorExpr(dimensions)} vector_cosine_ops) WITH (m = 16, ef_construction = 200)`;
}

export async function readStoredModel(q: Queryable): Promise<StoredModel | null> {
  const rows = await q.query<{ value: StoredModel }>(
    "SELECT value FROM service_settings WHERE key = 'embedding_model'",
  );
  return rows[0]?.value ?? null;
}

async function writeStoredModel(q: Queryable, model: StoredModel): Promise<void> {
  await q.query(
    `INSERT INTO service_settings (key, value) VALUES ('embedding_model', $1::jsonb)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [JSON.stringify(model)],
  );
}

/**
 * Bind the database to the embedding model: record it on first use, create the HNSW cosine index for
 * its dimension, and refuse to start when the stored vectors came from another model (mixing vectors of
 * two models gives meaningless distances). `kb reembed-local` is the way out.
 */
export async function ensureVectorIndex(db: Database, model: StoredModel): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(7240511933)');
    const stored = await readStoredModel(tx);
    if (stored && (stored.id !== model.id || stored.dimensions !== model.dimensions)) {
      const [{ n } = { n: 0 }] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM chunks');
      if (n > 0) {
        throw new ModelMismatchError(
          `The knowledge base was embedded with "${stored.id}" (${stored.dimensions} dimensions) but the service ` +
            `is configured with "${model.id}" (${model.dimensions}). Start with the original model, or run ` +
            '`kb reembed-local` (with the service stopped) to re-embed everything with the configured one.',
        );
      }
    }
    if (!stored || stored.id !== model.id || stored.dimensions !== model.dimensions)
      await writeStoredModel(tx, model);
    await tx.exec(createIndexSql(model.dimensions));
  });
}

/**
 * Switch the knowledge base to another model: drop the chunks and the old index, record the new model,
 * and mark every item pending so the indexer embeds it again (progress: items still pending).
 */
export async function resetForModel(db: Database, model: StoredModel): Promise<number> {
  return db.transaction(async (tx) => {
    const stored = await readStoredModel(tx);
    if (stored) await tx.exec(`DROP INDEX IF EXISTS ${indexName(stored.dimensions)}`);
    // Staged generations (src/ingest/indexer.ts) go with the chunks they named.
    await tx.exec('TRUNCATE chunks, chunk_staging');
    await writeStoredModel(tx, model);
    await tx.exec(createIndexSql(model.dimensions));
    const rows = await tx.query(
      "UPDATE items SET indexing_status = 'pending', indexing_lease_until = NULL RETURNING id",
    );
    return rows.length;
  });
}
