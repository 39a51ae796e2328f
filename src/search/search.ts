import type { Database } from '../db/database.ts';
import { toVectorParam } from '../embedding/vector.ts';
import { buildFilters, type Filters } from './filters.ts';
import { FUSION_DEPTH, fuseScores } from './fusion.ts';
import { keyword } from './keyword.ts';
import type { SearchHit, SearchQuery } from './query.ts';
import { EF_SEARCH, vectorExpr } from './vector-index.ts';

export type { SearchHit, SearchMode, SearchQuery } from './query.ts';

type Row = SearchHit & { id: number };

/**
 * The planner switches for the index pass, set with its statement ({@link Database.queryWithSettings}:
 * one round trip to embedded mode's PGlite thread). The pass must not depend on table statistics
 * (embedded PGlite has no autovacuum, and a misestimated organization filter makes the planner sort a
 * bitmap scan of every chunk instead), so only the HNSW path is left to it. Iterative index scans keep
 * filtered searches complete; ef_search trades speed for recall (docs/benchmarks.md,
 * bench/search-latency.ts).
 *
 * With only that path left, the plan cannot depend on the parameters, so the prepared statement keeps one
 * generic plan: Postgres' own choice (`plan_cache_mode = auto`) planned it afresh on every run (it never
 * found the generic plan cheaper), about half a millisecond of PGlite's thread per search at 100k chunks
 * (docs/benchmarks.md, bench/search-latency.ts). Server mode runs unnamed statements,
 * planned per run whatever this says.
 */
const INDEX_PASS =
  `SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = ${EF_SEARCH}; ` +
  'SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off; ' +
  'SET LOCAL plan_cache_mode = force_generic_plan';

/** The hit's columns, from `c` (chunks) joined to `i` (items). */
function hitColumns(includeEmbedding: boolean): string {
  return `c.id, c.item_id, i.title, i.source_url, i.visibility, i.source_type, i.source_table_name, i.tags,
          c.chunk_index, c.text AS chunk_plain_text${includeEmbedding ? ', c.embedding::text AS embedding' : ''}`;
}

/**
 * Nearest chunks by cosine distance, in one statement: the HNSW scan (pgvector's iterative scan, so
 * filters do not shrink the answer) picks `limit` chunk ids with their distances, and with `hits` only
 * those rows are then joined to their items (one statement instead of a second one that looked the
 * rows up again and recomputed the distances). `exact` orders by an expression the index cannot serve,
 * so the same statement becomes an exact scan over the matching chunks.
 */
function nearestSql(
  q: SearchQuery,
  f: Filters,
  { dims, limit, hits, exact }: { dims: number; limit: number; hits: boolean; exact: boolean },
) {
  const vec = `$${f.params.length + 1}::vector(${dims})`;
  const dist = `${vectorExpr(dims, 'c.embedding')} <=> ${vec}`;
  const scan = `SELECT c.id, ${dist} AS distance FROM chunks AS c WHERE ${f.where}
                 ORDER BY ${exact ? `(${dist}) + 0` : dist} LIMIT ${limit}`;
  return hits
    ? `WITH nn AS MATERIALIZED (${scan})
       SELECT ${hitColumns(q.includeEmbedding)}, nn.distance
         FROM nn JOIN chunks AS c ON c.id = nn.id JOIN items AS i ON i.id = c.item_id`
    : scan;
}

/**
 * The index pass, under INDEX_PASS. If the index yields fewer than `limit` rows (a filter so selective
 * that the scan budget ran out, or fewer matching chunks than `limit`), an exact scan over the matching
 * chunks answers instead. Hits nearest first. `vector` is the query's {@link toVectorParam}.
 */
async function nearest(
  db: Database,
  q: SearchQuery,
  vector: Uint8Array,
  { dims, limit, hits }: { dims: number; limit: number; hits: boolean },
): Promise<Row[]> {
  const f = buildFilters(q, 2);
  const params = [...f.params, vector];
  const indexPass = nearestSql(q, f, { dims, limit, hits, exact: false });
  let rows = await db.queryWithSettings<Row>(INDEX_PASS, indexPass, params);
  if (rows.length < limit) {
    // With the planner's defaults: the index pass's switches held for its own transaction only.
    rows = await db.query<Row>(nearestSql(q, f, { dims, limit, hits, exact: true }), params);
  }
  // relaxed_order may return near-ties slightly out of order; the join keeps no order at all.
  return rows.sort((a, b) => a.distance - b.distance || Number(a.id) - Number(b.id));
}

function toHits(rows: Row[], q: SearchQuery): SearchHit[] {
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
  const rows = await db.query<Row>(
    `SELECT ${hitColumns(q.includeEmbedding)}, ${vectorExpr(dims, 'c.embedding')} <=> $2::vector(${dims}) AS distance
       FROM chunks AS c JOIN items AS i ON i.id = c.item_id
      WHERE c.id = ANY($1::bigint[])`,
    [ids, vector],
  );
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return toHits(
    ids.map((id) => byId.get(id)).filter((r): r is Row => r !== undefined),
    q,
  );
}
