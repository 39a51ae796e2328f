import pg from 'pg';
import type { Database, Queryable } from './database.ts';

// int8 (bigint) comes back as a JS number: our counters and ids stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

/** Server mode: a node-postgres pool against any Postgres that has pgvector. */
export async function openPostgres(url: string, opts: { max?: number; onIdleError?: (err: Error) => void } = {}): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, application_name: 'kb-service' });
  // An idle connection dropped by the server (restart, failover, admin) must not crash the process:
  // the pool discards it and the next query opens a new one.
  pool.on('error', (err) => opts.onIdleError?.(err));
  // Fail fast with the real reason (bad host, password) instead of on the first request.
  const client = await pool.connect();
  client.release();
  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(sql: string, params?: readonly unknown[]) {
      const res = await q.query(sql, params as unknown[] | undefined);
      return res.rows as T[];
    },
    async exec(sql: string) {
      await q.query(sql);
    },
  });
  const base = wrap(pool);
  let closed = false;
  return {
    kind: 'postgres',
    query: base.query,
    exec: base.exec,
    async transaction(fn) {
      const c = await pool.connect();
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
        throw err;
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
  };
}
