import type { Database } from '../db/database.ts';
import { rankChunksByBm25 } from '../db/repositories/search.ts';
import { type Bm25Params, BM25_DEFAULTS } from './bm25.ts';
import type { SearchQuery } from './query.ts';

/**
 * Keyword ranking: BM25 (src/db/repositories/search.ts) with OR semantics over the query's terms, so long
 * natural-language queries still match. Best first, with the BM25 score (for score fusion).
 */
export async function keyword(
  db: Pick<Database, 'queryWithSettings'>,
  q: SearchQuery,
  limit: number,
  params: Bm25Params = BM25_DEFAULTS,
): Promise<Array<{ id: number; score: number }>> {
  const run = (preCut?: number) => rankChunksByBm25(db, { filter: q, text: q.text, limit, params, preCut });
  // Filters (staged generations, tags, visibility, source types) are checked by a join to chunks, one
  // probe per candidate. Most searches filter little: cut to a few times the limit first, and join every
  // candidate only when the filters left fewer than asked.
  let rows = await run(PRE_CUT * limit);
  if (rows.length < limit) rows = await run();
  return rows;
}

/** Candidates kept before the filter join, per result asked for. */
const PRE_CUT = 4;
