import type { Database } from '../db/database.ts';
import { type Bm25Params, BM25_DEFAULTS, bm25Sql } from './bm25.ts';
import { buildFilters } from './filters.ts';
import type { SearchQuery } from './query.ts';

/**
 * Keyword ranking: BM25 (src/search/bm25.ts) with OR semantics over the query's terms, so long
 * natural-language queries still match. Best first, with the BM25 score (for score fusion).
 */
export async function keyword(
  db: Pick<Database, 'queryWithSettings'>,
  q: SearchQuery,
  limit: number,
  params: Bm25Params = BM25_DEFAULTS,
): Promise<Array<{ id: number; score: number }>> {
  const f = buildFilters(q, 2);
  const n = f.params.length + 1;
  // Each term's best postings must come from an ordered scan of the impact index. Embedded PGlite has no
  // autovacuum, so the new tables' statistics go stale and the planner would read every posting of a
  // term in a bitmap scan and sort them (a 100k-chunk corpus read all of them: the cap then bounds nothing).
  const run = (preCut?: number) =>
    db.queryWithSettings<{ id: number | string; score: number }>(
      'SET LOCAL enable_bitmapscan = off',
      bm25Sql({ org: '$1', text: `$${n}`, where: f.where, limit, params, preCut }),
      [...f.params, q.text],
    );
  // Filters (staged generations, tags, visibility, source types) are checked by a join to chunks, one
  // probe per candidate. Most searches filter little: cut to a few times the limit first, and join every
  // candidate only when the filters left fewer than asked.
  let rows = await run(PRE_CUT * limit);
  if (rows.length < limit) rows = await run();
  return rows.map((r) => ({ id: Number(r.id), score: Number(r.score) }));
}

/** Candidates kept before the filter join, per result asked for. */
const PRE_CUT = 4;
