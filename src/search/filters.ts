import type { SearchQuery } from './query.ts';

export interface Filters {
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
export function buildFilters(q: SearchQuery, firstParam: number): Filters {
  const params: unknown[] = [q.organizationId];
  const parts = ['c.organization_id = $1', NOT_STAGED];
  const add = (sql: (n: number) => string, value: unknown) => {
    params.push(value);
    parts.push(sql(firstParam + params.length - 2));
  };
  if (q.tags && q.tags.length > 0) add((n) => `c.tags && $${n}::text[]`, q.tags);
  if (q.visibility && q.visibility.length > 0) add((n) => `c.visibility = ANY($${n}::text[])`, q.visibility);
  if (q.sourceTypes && q.sourceTypes.length > 0)
    add((n) => `c.source_type = ANY($${n}::text[])`, q.sourceTypes);
  return { where: parts.join(' AND '), params };
}
