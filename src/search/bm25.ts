/**
 * BM25 over the statistics that migration 012 keeps exact per organization (bm25_postings, bm25_terms,
 * bm25_org_stats, maintained by statement triggers on chunks).
 *
 *   score(chunk) = Σ over query terms t of idf(t) · tf / (tf + k1 · (1 − b + b · len / avglen))
 *   idf(t)       = ln(1 + (N − df + 0.5) / (df + 0.5))
 *
 * This is Lucene's form, the default of bm25s (the reference the SciFact benchmark runs beside ours): the
 * idf never goes negative, and the (k1 + 1) factor of the textbook form is dropped (it scales every score
 * alike). Terms are the query's lexemes under to_tsvector('english'), the same as chunks.tsv; a term
 * repeated in the query counts once.
 *
 * Candidates: each query term contributes at most `depth` postings, read from the index on
 * (organization, term, impact DESC) in impact order, so the work is bounded by terms × depth whatever the
 * corpus size. A chunk is scored on the terms whose lists it was read from; a chunk just below the cut of
 * a frequent term loses that term's share (small: frequent terms have a low idf). Below `depth` postings
 * per term (every term of a corpus of up to `depth` chunks) the ranking is exact BM25.
 *
 * The statement is bm25Sql in src/db/repositories/search.ts; keyword.ts runs it.
 */
import type { Bm25Params } from '../db/repositories/search.ts';

export type { Bm25Params };

/**
 * Chosen on SciFact test queries 1-150 only (bench/scifact.ts --tune; docs/benchmarks.md, bench/scifact.ts
 * has the grid and the figures on queries 151-300): k1 in {0.6, 0.9, 1.2, 1.5, 2}, b in {0.5, 0.75, 0.9}; k1
 * 0.6, b 0.5 was best (nDCG@10 0.710 vs 0.695 for the usual 1.2 / 0.75): chunks are short (~200 tokens, title
 * included), so term repetition and length say less than in whole documents. Depth: 100 / 300 / 1000 / 3000 /
 * all postings gave 0.669 / 0.695 / 0.695 / 0.698 / 0.699 at 1.2 / 0.75; 1000 keeps the cost bounded within
 * 0.004 of exact. The impact that orders postings (migration 012) was computed with 1.2 / 0.75: it only
 * decides which postings of a frequent term are read, not their scores.
 */
export const BM25_DEFAULTS: Bm25Params = { k1: 0.6, b: 0.5, depth: 1000 };
