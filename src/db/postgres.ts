import pg from 'pg';
import { AppError } from '../lib/errors.ts';
import { type Database, type Queryable, queryWithSettingsInTransaction } from './database.ts';

// int8 (bigint) comes back as a JS number: our counters and ids stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

/**
 * Connections per process (`KB_DB_POOL_MAX`). Each process needs about one per job loop, one for the
 * indexer, one per request in flight and a few for heartbeats and periodic tasks; 10 was the API's
 * bottleneck with 64 clients, 2 workers and the indexer (docs/benchmarks.md, bench/load.ts). Postgres
 * allows 100 connections by default: 20 leaves room for four such processes and the operator's tools.
 */
export const DEFAULT_POOL_MAX = 20;

/** Server mode: a node-postgres pool against any Postgres that has pgvector. */
export async function openPostgres(
  url: string,
  opts: { max?: number; onIdleError?: (err: Error) => void } = {},
): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? DEFAULT_POOL_MAX,
    application_name: 'kb-service',
    // A server that accepts no connection (down, hung, overloaded) fails the request quickly with 503
    // instead of holding it until the client gives up.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // An idle connection dropped by the server (restart, failover, admin) must not crash the process:
  // the pool discards it and the next query opens a new one.
  pool.on('error', (err) => opts.onIdleError?.(err));
  // Fail fast with the real reason (bad host, password) instead of on the first request.
  const client = await pool.connect();
  client.release();
  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(sql: string, params?: readonly unknown[]) {
      try {
        const res = await q.query(sql, params as unknown[] | undefined);
        return res.rows as T[];
      } catch (err) {
        throw asUnavailable(err);
      }
    },
    async exec(sql: string) {
      try {
        await q.query(sql);
      } catch (err) {
        throw asUnavailable(err);
      }
    },
  });
  const base = wrap(pool);
  let closed = false;
  const db: Database = {
    kind: 'postgres',
    query: base.query,
    exec: base.exec,
    async transaction(fn) {
      let c: pg.PoolClient;
      try {
        c = await pool.connect();
      } catch (err) {
        throw asUnavailable(err);
      }
      // The pool listens for errors on idle clients only. Without a listener of our own, a connection that
      // dies during the transaction (server crash or restart, failover, terminated backend) would emit an
      // unhandled 'error' and crash the process instead of failing this transaction.
      let broken: Error | undefined;
      const onError = (err: Error) => {
        broken = err;
      };
      c.on('error', onError);
      try {
        await c.query('BEGIN');
        const out = await fn(wrap(c));
        await c.query('COMMIT');
        return out;
      } catch (err) {
        if (!broken) await c.query('ROLLBACK').catch(() => {});
        throw asUnavailable(broken ?? err);
      } finally {
        c.off('error', onError);
        // Releasing with the error makes the pool discard the connection instead of reusing it.
        c.release(broken);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
    queryWithSettings: (settings, sql, params) => queryWithSettingsInTransaction(db, settings, sql, params),
  };
  return db;
}

const CONNECT_TIMEOUT_MS = 5_000;

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The database itself is away (down, restarting, unreachable, refusing connections), as opposed to a
 * statement that failed: SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown, crash, starting
 * up), 53300 (too many connections), a network error, or node-postgres's own words for a dropped or
 * timed-out connection.
 */
function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code) || code === '53300')
      return true;
  }
  return /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Client was closed/i.test(
    err.message,
  );
}

/** A database that is away becomes `503 unavailable` (retry later); any other error passes unchanged. */
function asUnavailable(err: unknown): unknown {
  if (err instanceof AppError || !isDatabaseUnavailable(err)) return err;
  // The driver's words (host, port) stay in `cause` for the logs; the caller is told only what to do.
  return Object.assign(new AppError('unavailable', 'The database is unreachable; try again shortly.'), {
    cause: err,
  });
}
