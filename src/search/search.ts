import type { Database } from '../db/database.ts';
import {
  type ChunkHitRow,
  chunkHitsByIds,
  nearestChunksByIndex,
  nearestChunksExact,
  organizationChunkCount,
  pageFieldMatches,
} from '../db/repositories/search.ts';
import { toVectorParam } from '../embedding/vector.ts';
import { bestFirst, FUSION_DEPTH, fusedScores } from './fusion.ts';
import { keyword } from './keyword.ts';
import { PAGE_WEIGHTS, pageBoost } from './page-signal.ts';
import type { SearchHit, SearchQuery } from './query.ts';
import { EF_SEARCH } from './vector-index.ts';

export type { SearchHit, SearchMode, SearchQuery } from './query.ts';

/**
 * Organizations with at most this many chunks are searched by an exact scan of their own chunks (through
 * the organization's index), not through the HNSW index. The graph is shared by every organization, so a
 * small one's index pass walks mostly other organizations' chunks and filters them out one by one: in
 * embedded mode, an organization with 450 chunks beside another's 6,600 took 10 ms in the index pass and
 * takes 5 ms in the exact scan (about 12 µs a chunk), which does not grow with the others' data. The
 * exact answer is also the better one (recall 1).
 */
export const EXACT_SCAN_MAX_CHUNKS = 1000;

/**
 * Nearest chunks, nearest first: by an exact scan of the organization's chunks when `exact` (a small
 * organization, {@link EXACT_SCAN_MAX_CHUNKS}), else through the HNSW index (src/db/repositories/search.ts),
 * and by the exact scan after all if the index yields fewer than `limit` rows (a filter so selective that
 * the scan budget ran out, or fewer matching chunks than `limit`). `vector` is the query's
 * {@link toVectorParam}.
 */
async function nearest(
  db: Database,
  q: SearchQuery,
  vector: Uint8Array,
  { dims, limit, exact }: { dims: number; limit: number; exact: boolean },
): Promise<ChunkHitRow[]> {
  const req = { filter: q, vector, dims, limit, hits: false, includeEmbedding: q.includeEmbedding };
  let rows = exact ? await nearestChunksExact(db, req) : await nearestChunksByIndex(db, req, EF_SEARCH);
  // With the planner's defaults: the index pass's switches held for its own transaction only.
  if (!exact && rows.length < limit) rows = await nearestChunksExact(db, req);
  // relaxed_order may return near-ties slightly out of order; the join keeps no order at all.
  return rows.sort((a, b) => a.distance - b.distance || Number(a.id) - Number(b.id));
}

function toHits(rows: ChunkHitRow[], q: SearchQuery): SearchHit[] {
  const threshold = q.cosineDistanceThreshold;
  return rows
    .filter((r) => threshold === undefined || r.distance <= threshold)
    .map(({ id: _id, ...hit }) => hit);
}

/** Candidates a ranking reads at most while it looks for enough items to fill `limit` under `maxPerItem`. */
const MAX_DEPTH = 1000;

/** A candidate chunk's id and score (higher is better), before the page signal. */
type Scored = Map<number, number>;

/**
 * Run a search; hits best first: by cosine similarity (semantic), BM25 (keyword) or fused scores
 * (hybrid), each plus the page signal of the chunk's page (page-signal.ts). With `maxPerItem`, at most that
 * many hits per item: the rankings read deeper until `limit` hits are found or the candidates run out.
 * Each statement runs on its own, not in one transaction: the hits are read by a last statement, and a
 * chunk deleted since its ranking is left out of them.
 */
export async function search(db: Database, q: SearchQuery, dims: number): Promise<SearchHit[]> {
  const vector = toVectorParam(q.vector);
  // Decided once: the deeper rounds of a `maxPerItem` search scan the same way.
  const exact =
    q.mode !== 'keyword' && (await organizationChunkCount(db, q.organizationId)) <= EXACT_SCAN_MAX_CHUNKS;
  let depth = Math.max(FUSION_DEPTH, q.limit);
  for (;;) {
    const { scores, exhausted } = await candidates(db, q, vector, { dims, depth, exact });
    const ids = await rankWithPages(db, q, scores);
    // Only a collapse can leave the list short while more candidates exist.
    const done = q.maxPerItem === undefined || ids.length >= q.limit || exhausted || depth >= MAX_DEPTH;
    if (done) return readHits(db, q, vector, dims, ids);
    depth = Math.min(MAX_DEPTH, depth * 4);
  }
}

/**
 * Each mode's candidate chunks with their scores; `exhausted` when no ranking had more than `depth`.
 * `exact`: the vectors' ranking scans the organization's chunks exactly (see {@link nearest}).
 */
async function candidates(
  db: Database,
  q: SearchQuery,
  vector: Uint8Array,
  { dims, depth, exact }: { dims: number; depth: number; exact: boolean },
): Promise<{ scores: Scored; exhausted: boolean }> {
  if (q.mode === 'semantic') {
    const sem = await nearest(db, q, vector, { dims, limit: depth, exact });
    const threshold = q.cosineDistanceThreshold;
    const kept = sem.filter((r) => threshold === undefined || r.distance <= threshold);
    return {
      scores: new Map(kept.map((r) => [Number(r.id), 1 - r.distance])),
      exhausted: sem.length < depth,
    };
  }
  // BM25 over its postings index, with planner settings of its own (keyword.ts).
  const kw = await keyword(db, q, depth);
  if (q.mode === 'keyword') {
    return { scores: fusedScores([], kw, 0), exhausted: kw.length < depth };
  }
  const sem = await nearest(db, q, vector, { dims, limit: depth, exact });
  return {
    scores: fusedScores(
      sem.map((r) => ({ id: Number(r.id), distance: r.distance })),
      kw,
    ),
    exhausted: sem.length < depth && kw.length < depth,
  };
}

/** The candidates' ids best first once each has its page's boost, collapsed to `maxPerItem` per item. */
async function rankWithPages(db: Database, q: SearchQuery, scores: Scored): Promise<number[]> {
  if (scores.size === 0) return [];
  const pages = await pageFieldMatches(db, {
    organizationId: q.organizationId,
    text: q.text,
    ids: [...scores.keys()],
  });
  const weights = PAGE_WEIGHTS[q.mode];
  const itemOf = new Map<number, string>();
  const boosted = new Map(scores);
  for (const m of pages) {
    itemOf.set(m.id, m.item_id);
    boosted.set(m.id, (boosted.get(m.id) ?? 0) + pageBoost(m, weights));
  }
  // A chunk deleted since its ranking has no page row: its hit would not be read either.
  const ranked = bestFirst(boosted, boosted.size).filter((id) => itemOf.has(id));
  if (q.maxPerItem === undefined) return ranked.slice(0, q.limit);
  const perItem = new Map<string, number>();
  const kept: number[] = [];
  for (const id of ranked) {
    const item = itemOf.get(id)!;
    const n = perItem.get(item) ?? 0;
    if (n >= q.maxPerItem) continue;
    perItem.set(item, n + 1);
    kept.push(id);
    if (kept.length === q.limit) break;
  }
  return kept;
}

async function readHits(
  db: Database,
  q: SearchQuery,
  vector: Uint8Array,
  dims: number,
  ids: number[],
): Promise<SearchHit[]> {
  if (ids.length === 0) return [];
  const rows = await chunkHitsByIds(db, { ids, vector, dims, includeEmbedding: q.includeEmbedding });
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return toHits(
    ids.map((id) => byId.get(id)).filter((r): r is ChunkHitRow => r !== undefined),
    q,
  );
}
