/** How many candidates each side contributes to hybrid fusion, at least. */
export const FUSION_DEPTH = 60;
/** Reciprocal rank fusion constant (Cormack et al. 2009). */
const RRF_K = 60;
/**
 * Weighted reciprocal rank fusion of ranked id lists (weight 1 where none is given). Hybrid search uses
 * {@link fuseScores}, since BM25 gives keyword scores to fuse; rank fusion stays for callers that only have
 * ranks (the quality benchmark compares the two).
 */
export function fuseRanks(lists: number[][], limit: number, weights: number[] = []): number[] {
  const score = new Map<number, number>();
  for (const [i, list] of lists.entries()) {
    const w = weights[i] ?? 1;
    for (const [rank, id] of list.entries()) score.set(id, (score.get(id) ?? 0) + w / (RRF_K + rank + 1));
  }
  return [...score.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, limit)
    .map(([id]) => id);
}

/**
 * Weight of the semantic side in score fusion (the keyword side has 1 − this). Chosen on SciFact test
 * queries 1-150 only (bench/scifact.ts --tune): alpha 0.3 / 0.4 / 0.5 / 0.6 / 0.7 / 0.8 gave nDCG@10
 * 0.743 / 0.764 / 0.761 / 0.751 / 0.736 / 0.720 at depth 100, where weighted RRF's best was 0.736 (2 : 1).
 * Depth 60 ({@link FUSION_DEPTH}, the floor at small limits) scored 0.760 at alpha 0.4: kept for its cost.
 */
const SCORE_FUSION_ALPHA = 0.4;

/**
 * Convex combination of min-max normalized scores (Bruch et al. 2023, "An analysis of fusion functions
 * for hybrid retrieval"): each side's scores over its own candidates are mapped to [0, 1] (similarity
 * 1 − cosine distance for the vectors, BM25 for the keywords), a chunk absent from a side gets 0 there,
 * and the result is alpha · semantic + (1 − alpha) · keyword. Unlike rank fusion it keeps how far apart
 * the scores are: a chunk far ahead on BM25 (a rare exact term) is not flattened to "first of the list".
 */
export function fuseScores(
  semantic: ReadonlyArray<{ id: number; distance: number }>,
  keyword: ReadonlyArray<{ id: number; score: number }>,
  limit: number,
  alpha: number = SCORE_FUSION_ALPHA,
): number[] {
  return bestFirst(fusedScores(semantic, keyword, alpha), limit);
}

/** The ids of `scores`, best first (ties: lower id first), at most `limit`. */
export function bestFirst(scores: ReadonlyMap<number, number>, limit: number): number[] {
  return [...scores.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, limit)
    .map(([id]) => id);
}

/** {@link fuseScores}'s fused score of every candidate, unsorted. */
export function fusedScores(
  semantic: ReadonlyArray<{ id: number; distance: number }>,
  keyword: ReadonlyArray<{ id: number; score: number }>,
  alpha: number = SCORE_FUSION_ALPHA,
): Map<number, number> {
  const fused = new Map<number, number>();
  const add = (rows: ReadonlyArray<{ id: number; s: number }>, w: number) => {
    if (rows.length === 0) return;
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (const r of rows) {
      lo = Math.min(lo, r.s);
      hi = Math.max(hi, r.s);
    }
    for (const r of rows) {
      const norm = hi > lo ? (r.s - lo) / (hi - lo) : 1;
      fused.set(r.id, (fused.get(r.id) ?? 0) + w * norm);
    }
  };
  add(
    semantic.map((r) => ({ id: r.id, s: -r.distance })),
    alpha,
  );
  add(
    keyword.map((r) => ({ id: r.id, s: r.score })),
    1 - alpha,
  );
  return fused;
}
