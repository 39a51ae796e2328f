import type { Database } from '../db/database.ts';
import {
  countChunks,
  createVectorIndex,
  dropVectorIndex,
  lockVectorModel,
  markAllItemsPending,
  readStoredModel,
  type StoredModel,
  truncateChunks,
  vectorExpr,
  writeStoredModel,
} from '../db/repositories/vector-model.ts';

export { readStoredModel, type StoredModel, vectorExpr };

export class ModelMismatchError extends Error {
  override name = 'ModelMismatchError';
}

/**
 * The HNSW candidate list per search (pgvector's default is 40; 1000 is its maximum). On the bench's 100k
 * chunks (2,000 real SciFact vectors, each with ~50 noisy near-copies: a hard case for recall), quiet
 * machine, forced HNSW: recall@10 0.936 at 200, 0.966 at 300, 0.979 at 500, 0.991 at 800; through search()
 * 600 gave 0.987 at p95 11.9 ms, the least that holds the recall goal of 0.98 (800: 0.991, 13.3 ms). m 24
 * instead of 16 gave no better recall on that data (docs/benchmarks.md, bench/search-latency.ts).
 */
export const EF_SEARCH = 600;

/**
 * Bind the database to the embedding model: record it on first use, create the HNSW cosine index for
 * its dimension, and refuse to start when the stored vectors came from another model (mixing vectors of
 * two models gives meaningless distances). `kb reembed-local` is the way out.
 */
export async function ensureVectorIndex(db: Database, model: StoredModel): Promise<void> {
  await db.transaction(async (tx) => {
    await lockVectorModel(tx);
    const stored = await readStoredModel(tx);
    if (stored && (stored.id !== model.id || stored.dimensions !== model.dimensions)) {
      const n = await countChunks(tx);
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
    await createVectorIndex(tx, model.dimensions);
  });
}

/**
 * Switch the knowledge base to another model: drop the chunks and the old index, record the new model,
 * and mark every item pending so the indexer embeds it again (progress: items still pending).
 */
export async function resetForModel(db: Database, model: StoredModel): Promise<number> {
  return db.transaction(async (tx) => {
    const stored = await readStoredModel(tx);
    if (stored) await dropVectorIndex(tx, stored.dimensions);
    await truncateChunks(tx);
    await writeStoredModel(tx, model);
    await createVectorIndex(tx, model.dimensions);
    return markAllItemsPending(tx);
  });
}
