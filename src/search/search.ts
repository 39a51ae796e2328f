import type { Database } from '../db/database.ts';
import {
  type ChunkHitRow,
  chunkHitsByIds,
  nearestChunksByIndex,
  nearestChunksExact,
} from '../db/repositories/search.ts';
import { toVectorParam } from '../embedding/vector.ts';
import { FUSION_DEPTH, fuseScores } from './fusion.ts';
import { keyword } from './keyword.ts';
import type { SearchHit, SearchQuery } from './query.ts';
import { EF_SEARCH } from './vector-index.ts';

export type { SearchHit, SearchMode, SearchQuery } from './query.ts';

/**
 * Nearest chunks through the HNSW index (src/db/repositories/search.ts). If the index yields fewer than
 * `limit` rows (a filter so selective that the scan budget ran out, or fewer matching chunks than
 * `limit`), an exact scan over the matching chunks answers instead. Hits nearest first. `vector` is the
 * query's {@link toVectorParam}.
 */
async function nearest(
  db: Database,
  q: SearchQuery,
  vector: Uint8Array,
  { dims, limit, hits }: { dims: number; limit: number; hits: boolean },
): Promise<ChunkHitRow[]> {
  const req = { filter: q, vector, dims, limit, hits, includeEmbedding: q.includeEmbedding };
  let rows = await nearestChunksByIndex(db, req, EF_SEARCH);
  // With the planner's defaults: the index pass's switches held for its own transaction only.
  if (rows.length < limit) rows = await nearestChunksExact(db, req);
  // relaxed_order may return near-ties slightly out of order; the join keeps no order at all.
  return rows.sort((a, b) => a.distance - b.distance || Number(a.id) - Number(b.id));
}

function toHits(rows: ChunkHitRow[], q: SearchQuery): SearchHit[] {
  const threshold = q.cosineDistanceThreshold;
  return rows
    .filter((r) => threshold === undefined || r.distance <= threshold)
    .map(({ id: _id, ...hit }) => hit);
}

/**
 * Run a search; hits nearest first (semantic), by BM25 (keyword) or by fused scores (hybrid). Each
 * statement runs on its own, not in one transaction: a hybrid search's hits are read by a last statement,
 * and a chunk deleted since its ranking is left out of them.
 */
export async function search(db: Database, q: SearchQuery, dims: number): Promise<SearchHit[]> {
  const vector = toVectorParam(q.vector);
  if (q.mode === 'semantic') {
    return toHits(await nearest(db, q, vector, { dims, limit: q.limit, hits: true }), q);
  }
  // BM25 over its postings index, with planner settings of its own (keyword.ts).
  const depth = Math.max(FUSION_DEPTH, q.limit);
  const kwRows = await keyword(db, q, depth);
  let ids = kwRows.slice(0, q.limit).map((r) => r.id);
  if (q.mode === 'hybrid') {
    const sem = await nearest(db, q, vector, { dims, limit: depth, hits: false });
    ids = fuseScores(
      sem.map((r) => ({ id: Number(r.id), distance: r.distance })),
      kwRows,
      q.limit,
    );
  }
  if (ids.length === 0) return [];
  const rows = await chunkHitsByIds(db, { ids, vector, dims, includeEmbedding: q.includeEmbedding });
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return toHits(
    ids.map((id) => byId.get(id)).filter((r): r is ChunkHitRow => r !== undefined),
    q,
  );
}
