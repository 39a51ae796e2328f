/**
 * The statements search runs (src/search/ decides which, in what order, and how their answers are fused):
 * the filter every statement applies to chunks, the nearest chunks by cosine distance, the BM25 ranking,
 * and the read of the hits themselves. Each statement is built by one function here; the constants that
 * tune them (ef_search, BM25's k1 and b) are search's choice and come in as arguments.
 */
import type { Database } from '../database.ts';
import { vectorExpr } from './vector-model.ts';

/** What a search narrows the chunks to (src/search/query.ts's SearchQuery is one). */
interface ChunkFilter {
  organizationId: string;
  tags?: string[] | undefined;
  visibility?: string[] | undefined;
  sourceTypes?: string[] | undefined;
}

/** A WHERE clause over `c` (chunks) and the parameters it references. */
interface ChunkWhere {
  where: string;
  params: unknown[];
}

/** A hit: a chunk with its item's fields. */
export interface ChunkHit {
  item_id: string;
  title: string;
  source_url: string;
  visibility: string;
  distance: number;
  chunk_index: number;
  chunk_plain_text: string;
  source_type: string;
  source_table_name: string;
  tags: string[];
  embedding?: string;
}

/** A hit with its chunk's id (the key the rankings are fused on). */
export type ChunkHitRow = ChunkHit & { id: number };

/**
 * Chunks of a generation the indexer is still writing (src/ingest/indexer.ts, migration 010) are not
 * searchable yet. The staging table holds a row per large item being written right now, so this is a
 * hashed subplan: one read of a tiny table per statement, then a hash probe per candidate chunk.
 */
const NOT_STAGED = 'c.generation NOT IN (SELECT generation FROM chunk_staging)';

/** WHERE clause over `c` (chunks) for the organization and the optional filters; $1 is the org. */
export function chunkFilterSql(filter: ChunkFilter, firstParam: number): ChunkWhere {
  const params: unknown[] = [filter.organizationId];
  const parts = ['c.organization_id = $1', NOT_STAGED];
  const add = (sql: (n: number) => string, value: unknown) => {
    params.push(value);
    parts.push(sql(firstParam + params.length - 2));
  };
  if (filter.tags && filter.tags.length > 0) add((n) => `c.tags && $${n}::text[]`, filter.tags);
  if (filter.visibility && filter.visibility.length > 0)
    add((n) => `c.visibility = ANY($${n}::text[])`, filter.visibility);
  if (filter.sourceTypes && filter.sourceTypes.length > 0)
    add((n) => `c.source_type = ANY($${n}::text[])`, filter.sourceTypes);
  return { where: parts.join(' AND '), params };
}

// ---- Nearest chunks by cosine distance ------------------------------------------------------------

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
function indexPassSettings(efSearch: number): string {
  return (
    `SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = ${Math.trunc(efSearch)}; ` +
    'SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off; ' +
    'SET LOCAL plan_cache_mode = force_generic_plan'
  );
}

/** The hit's columns, from `c` (chunks) joined to `i` (items). */
function hitColumns({ includeEmbedding }: { includeEmbedding: boolean }): string {
  return `c.id, c.item_id, i.title, i.source_url, i.visibility, i.source_type, i.source_table_name, i.tags,
          c.chunk_index, c.text AS chunk_plain_text${includeEmbedding ? ', c.embedding::text AS embedding' : ''}`;
}

interface NearestChunksRequest {
  filter: ChunkFilter;
  /** The query vector as toVectorParam makes it (src/embedding/vector.ts). */
  vector: Uint8Array;
  dims: number;
  limit: number;
  /** Join the chunks found to their items (whole hits); otherwise ids and distances only. */
  hits: boolean;
  includeEmbedding: boolean;
}

/**
 * Nearest chunks by cosine distance, in one statement: the HNSW scan (pgvector's iterative scan, so
 * filters do not shrink the answer) picks `limit` chunk ids with their distances, and with `hits` only
 * those rows are then joined to their items (one statement instead of a second one that looked the
 * rows up again and recomputed the distances). `exact` orders by an expression the index cannot serve,
 * so the same statement becomes an exact scan over the matching chunks.
 */
function nearestChunksStatement(
  req: NearestChunksRequest,
  { exact }: { exact: boolean },
): { sql: string; params: unknown[] } {
  const f = chunkFilterSql(req.filter, 2);
  const vec = `$${f.params.length + 1}::vector(${req.dims})`;
  const dist = `${vectorExpr(req.dims, 'c.embedding')} <=> ${vec}`;
  const scan = `SELECT c.id, ${dist} AS distance FROM chunks AS c WHERE ${f.where}
                 ORDER BY ${exact ? `(${dist}) + 0` : dist} LIMIT ${req.limit}`;
  const sql = req.hits
    ? `WITH nn AS MATERIALIZED (${scan})
       SELECT ${hitColumns(req)}, nn.distance
         FROM nn JOIN chunks AS c ON c.id = nn.id JOIN items AS i ON i.id = c.item_id`
    : scan;
  return { sql, params: [...f.params, req.vector] };
}

/**
 * The index pass: nearest chunks through the HNSW index, with `efSearch` candidates, in a transaction of
 * its own under {@link indexPassSettings}. Rows in no particular order; fewer than `limit` when the
 * scan budget ran out.
 */
export function nearestChunksByIndex(
  db: Pick<Database, 'queryWithSettings'>,
  req: NearestChunksRequest,
  efSearch: number,
): Promise<ChunkHitRow[]> {
  const { sql, params } = nearestChunksStatement(req, { exact: false });
  return db.queryWithSettings<ChunkHitRow>(indexPassSettings(efSearch), sql, params);
}

/** The same nearest chunks by an exact scan over the matching chunks, with the planner's defaults. */
export function nearestChunksExact(
  db: Pick<Database, 'query'>,
  req: NearestChunksRequest,
): Promise<ChunkHitRow[]> {
  const { sql, params } = nearestChunksStatement(req, { exact: true });
  return db.query<ChunkHitRow>(sql, params);
}

/** How many chunks the organization has (searchable or being written), from its BM25 statistics row. */
export async function organizationChunkCount(
  db: Pick<Database, 'query'>,
  organizationId: string,
): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    'SELECT chunk_count::int AS n FROM bm25_org_stats WHERE organization_id = $1',
    [organizationId],
  );
  return row?.n ?? 0;
}

/** The hits of the chunks `ids` (in no particular order), with their distances to the query vector. */
export function chunkHitsByIds(
  db: Pick<Database, 'query'>,
  req: { ids: number[]; vector: Uint8Array; dims: number; includeEmbedding: boolean },
): Promise<ChunkHitRow[]> {
  return db.query<ChunkHitRow>(
    `SELECT ${hitColumns(req)}, ${vectorExpr(req.dims, 'c.embedding')} <=> $2::vector(${req.dims}) AS distance
       FROM chunks AS c JOIN items AS i ON i.id = c.item_id
      WHERE c.id = ANY($1::bigint[])`,
    [req.ids, req.vector],
  );
}

// ---- BM25 ------------------------------------------------------------------------------------------

/** The parameters of a BM25 ranking; src/search/bm25.ts explains the formula, its candidates and the defaults. */
export interface Bm25Params {
  /** Term frequency saturation. */
  k1: number;
  /** Length normalization (0 none, 1 full). */
  b: number;
  /** Postings read per query term. */
  depth: number;
}

/**
 * SQL of a BM25 ranking: selects `id` and `score` of chunks (alias c) passing `where`, best first.
 * `org` and `text` are parameter references ($n), `where` is a filter over c ({@link chunkFilterSql}).
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

/**
 * The chunks passing `filter` ranked by BM25 of `text` (OR over its terms), best first, with their
 * scores. `preCut` as in {@link bm25Sql}.
 */
export async function rankChunksByBm25(
  db: Pick<Database, 'queryWithSettings'>,
  req: { filter: ChunkFilter; text: string; limit: number; params: Bm25Params; preCut?: number | undefined },
): Promise<Array<{ id: number; score: number }>> {
  const f = chunkFilterSql(req.filter, 2);
  const n = f.params.length + 1;
  // Each term's best postings must come from an ordered scan of the impact index. Embedded PGlite has no
  // autovacuum, so the new tables' statistics go stale and the planner would read every posting of a
  // term in a bitmap scan and sort them (a 100k-chunk corpus read all of them: the cap then bounds nothing).
  const rows = await db.queryWithSettings<{ id: number | string; score: number }>(
    'SET LOCAL enable_bitmapscan = off',
    bm25Sql({
      org: '$1',
      text: `$${n}`,
      where: f.where,
      limit: req.limit,
      params: req.params,
      preCut: req.preCut,
    }),
    [...f.params, req.text],
  );
  return rows.map((r) => ({ id: Number(r.id), score: Number(r.score) }));
}

// ---- Page fields -----------------------------------------------------------------------------------

/** How well the title and the headings of a chunk's page match a query (src/search/page-signal.ts). */
export interface PageFieldMatch {
  id: number;
  item_id: string;
  /** Cosine of the query's and the title's idf-weighted term sets, 0-1. */
  title: number;
  /** The idf share of the query's terms found among the headings, 0-1. */
  headings_share: number;
  /** Distinct lexemes of the title and headings (the field's length). */
  headings_len: number;
}

/**
 * The page fields (migration 021) of the items of chunks `ids` matched against `text`: for each chunk,
 * its item and that item's title and heading matches. Terms are the query's lexemes as BM25 takes them,
 * weighted by their BM25 idf over the organization's chunks (a term no chunk has gets the highest idf).
 */
export async function pageFieldMatches(
  db: Pick<Database, 'query'>,
  req: { organizationId: string; text: string; ids: number[] },
): Promise<PageFieldMatch[]> {
  if (req.ids.length === 0) return [];
  const rows = await db.query<PageFieldMatch>(
    `WITH st AS (SELECT coalesce((SELECT chunk_count::float8 FROM bm25_org_stats WHERE organization_id = $1), 0) AS n),
     cand AS (SELECT c.id, c.item_id FROM chunks AS c WHERE c.id = ANY($3::bigint[])),
     page AS (
       SELECT it.id AS item_id, it.fields, length(it.fields) AS len
         FROM (SELECT DISTINCT item_id FROM cand) AS d JOIN items AS it ON it.id = d.item_id),
     title AS (
       SELECT page.item_id, t.lexeme
         FROM page, unnest(tsvector_to_array(ts_filter(page.fields, '{a}'))) AS t(lexeme)),
     qterms AS (SELECT DISTINCT lexeme AS term FROM unnest(tsvector_to_array(to_tsvector('english', $2))) AS lexeme),
     idf AS (
       SELECT nd.term, ln(1 + (st.n - coalesce(bt.df, 0) + 0.5::float8) / (coalesce(bt.df, 0) + 0.5::float8)) AS idf
         FROM (SELECT term FROM qterms UNION SELECT lexeme FROM title) AS nd CROSS JOIN st
         LEFT JOIN bm25_terms AS bt ON bt.organization_id = $1 AND bt.term = nd.term),
     qt AS (SELECT idf.term, idf.idf FROM qterms JOIN idf USING (term)),
     q AS (SELECT sum(idf * idf) AS sq, sum(idf) AS s FROM qt),
     -- The title's few lexemes are read out; the headings are only probed for the query's terms.
     title_match AS (
       SELECT title.item_id, sum(qt.idf * qt.idf) AS dot, sum(ti.idf * ti.idf) AS sq
         FROM title JOIN idf AS ti ON ti.term = title.lexeme LEFT JOIN qt ON qt.term = title.lexeme
        GROUP BY title.item_id),
     headings_match AS (
       SELECT page.item_id, sum(qt.idf) AS hit
         FROM page JOIN qt ON page.fields @@ (quote_literal(qt.term) || ':B')::tsquery
        GROUP BY page.item_id)
     SELECT cand.id, cand.item_id,
            coalesce(tm.dot / nullif(sqrt(q.sq * tm.sq), 0), 0)::float8 AS title,
            coalesce(hm.hit / nullif(q.s, 0), 0)::float8 AS headings_share,
            coalesce(page.len, 0)::int AS headings_len
       FROM cand CROSS JOIN q JOIN page ON page.item_id = cand.item_id
       LEFT JOIN title_match AS tm ON tm.item_id = cand.item_id
       LEFT JOIN headings_match AS hm ON hm.item_id = cand.item_id`,
    [req.organizationId, req.text, req.ids],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
