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
 */
export interface Bm25Params {
  /** Term frequency saturation. */
  k1: number;
  /** Length normalization (0 none, 1 full). */
  b: number;
  /** Postings read per query term. */
  depth: number;
}

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

/**
 * SQL of a BM25 ranking: selects `id` and `score` of chunks (alias c) passing `where`, best first.
 * `org` and `text` are parameter references ($n), `where` is a filter over c (src/search/filters.ts).
 */
export function bm25Sql(opts: {
  org: string;
  text: string;
  where: string;
  limit: number;
  params: Bm25Params;
  /** Keep only this many best candidates before the join to chunks (filters); none: join them all. */
  preCut?: number | undefined;
}): string {
  const { k1, b, depth } = opts.params;
  const num = (x: number) => {
    if (!Number.isFinite(x)) throw new Error(`bad BM25 parameter ${x}`);
    return String(x);
  };
  // Every constant is float8: an integer plus a decimal literal is numeric in SQL, and numeric arithmetic
  // over a few thousand postings cost more than reading them (half of a query's time at 100k chunks).
  // Per term, the sum's summand is idf · tf / (tf + k1·(1 − b) + (k1·b / avglen) · len).
  return `WITH qt AS (
       SELECT DISTINCT lexeme AS term FROM unnest(tsvector_to_array(to_tsvector('english', ${opts.text}))) AS lexeme),
     st AS (
       SELECT chunk_count::float8 AS n,
              ${num(k1 * b)}::float8 / greatest(total_len::float8 / greatest(chunk_count, 1), 1) AS per_len
         FROM bm25_org_stats WHERE organization_id = ${opts.org}),
     terms AS (
       SELECT qt.term, ln(1 + (st.n - bt.df + 0.5::float8) / (bt.df + 0.5::float8)) AS idf, st.per_len
         FROM qt JOIN bm25_terms AS bt ON bt.organization_id = ${opts.org} AND bt.term = qt.term, st),
     scored AS (
       SELECT p.chunk_id, sum(terms.idf * p.tf / (p.tf + ${num(k1 * (1 - b))}::float8 + terms.per_len * p.len)) AS score
         FROM terms CROSS JOIN LATERAL (
                SELECT chunk_id, tf::float8 AS tf, len::float8 AS len FROM bm25_postings AS p
                 WHERE p.organization_id = ${opts.org} AND p.term = terms.term
                 ORDER BY p.impact DESC LIMIT ${Math.trunc(depth)}) AS p
        GROUP BY p.chunk_id${opts.preCut ? ` ORDER BY 2 DESC LIMIT ${Math.trunc(opts.preCut)}` : ''})
     SELECT c.id, s.score FROM scored AS s JOIN chunks AS c ON c.id = s.chunk_id
      WHERE ${opts.where}
      ORDER BY s.score DESC, c.id LIMIT ${Math.trunc(opts.limit)}`;
}
