import type { Database, Queryable } from './database.ts';

/**
 * The embedded ceiling: the largest corpus embedded mode (PGlite) was measured to hold with search and
 * listing inside their latency goals and without failure (docs/benchmarks.md, bench/ceiling.ts; what an
 * operator does about it: docs/operations.md). Items are counted beside chunks because the items
 * listing's cost follows items and search's follows chunks; the benchmark stores four chunks per item.
 */
// 50k chunks: the largest step of bench/ceiling.ts with recall@10 >= 0.98 and the 1-client search latency
// goals, without failure, on a quiet machine (load ~1.1). At 100k recall@10 was 0.979 and the
// item search for common words 122 ms p95; 16 clients and common-word item search miss at every size, so
// they bound no size. Update this, docs/benchmarks.md and docs/operations.md together.
export const EMBEDDED_CEILING = { chunks: 50_000, items: 12_500 } as const;

/**
 * "Near" the ceiling from this share of it on, in either count: far enough below it that an operator has
 * time to move to server mode (`kb export-to-postgres`) before searches slow down, and close enough that a
 * small knowledge base is never told to.
 */
export const NEAR_CEILING_SHARE = 0.8;

interface EmbeddedCeilingStatus {
  items: number;
  chunks: number;
  ceiling: { items: number; chunks: number };
  /** The larger of items / ceiling.items and chunks / ceiling.chunks, rounded to 0.01. */
  share: number;
  /** share >= NEAR_CEILING_SHARE. */
  near: boolean;
  /** share >= 1. */
  over: boolean;
}

export function ceilingStatus(counts: { items: number; chunks: number }): EmbeddedCeilingStatus {
  const ceiling = { ...EMBEDDED_CEILING };
  const share = Math.max(counts.items / ceiling.items, counts.chunks / ceiling.chunks);
  return {
    ...counts,
    ceiling,
    share: Math.round(share * 100) / 100,
    near: share >= NEAR_CEILING_SHARE,
    over: share >= 1,
  };
}

/** Counts every organization's items and chunks (the ceiling is the data directory's, not a tenant's). */
export async function embeddedCeilingStatus(db: Queryable): Promise<EmbeddedCeilingStatus> {
  const [row] = await db.query<{ items: number; chunks: number }>(
    'SELECT (SELECT count(*) FROM items)::int AS items, (SELECT count(*) FROM chunks)::int AS chunks',
  );
  return ceilingStatus({ items: row?.items ?? 0, chunks: row?.chunks ?? 0 });
}

/** The sentence for people: null while the data directory is well below the ceiling. */
export function ceilingWarning(s: EmbeddedCeilingStatus): string | null {
  if (!s.near) return null;
  const where = s.over ? 'beyond' : 'near';
  return (
    `The embedded data directory is ${where} embedded mode's measured ceiling (${s.items} items, ${s.chunks} chunks; ` +
    `ceiling ${s.ceiling.items} items, ${s.ceiling.chunks} chunks): search and listing may slow past their goals. ` +
    'Move it to a server Postgres with `kb export-to-postgres DATABASE_URL` (docs/operations.md).'
  );
}

/**
 * The counts cost a scan of both tables (PGlite has no autovacuum, so there is no cheap estimate to trust),
 * and PGlite runs one statement at a time: /readyz, which load balancers poll, reuses a count for a minute.
 */
const CACHE_MS = 60_000;
const cache = new WeakMap<Database, { at: number; status: Promise<EmbeddedCeilingStatus> }>();

export function cachedCeilingStatus(db: Database, now = Date.now()): Promise<EmbeddedCeilingStatus> {
  const hit = cache.get(db);
  if (hit && now - hit.at < CACHE_MS) return hit.status;
  const status = embeddedCeilingStatus(db);
  cache.set(db, { at: now, status });
  status.catch(() => cache.delete(db));
  return status;
}

interface StartLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** The start-up line of embedded mode: the corpus against the ceiling, a warning when near it. */
export async function logEmbeddedCeiling(db: Database, log: StartLog): Promise<void> {
  if (db.kind !== 'pglite') return;
  const s = await cachedCeilingStatus(db);
  const fields = { items: s.items, chunks: s.chunks, ceiling: s.ceiling, share: s.share };
  const warning = ceilingWarning(s);
  if (warning) log.warn({ embeddedCeiling: fields }, warning);
  else log.info({ embeddedCeiling: fields }, 'embedded data directory below the measured ceiling');
}
