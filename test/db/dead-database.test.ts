/**
 * A database that dies under a running service must make its callers fail within a bounded time, not
 * hang them: the postmaster is SIGKILLed while the product's own pool (src/db/postgres.ts) has a query
 * and a transaction in flight and idle connections parked.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openPostgres } from '../../src/db/postgres.ts';
import { nativePostgresAvailable, startNativePostgres } from '../support/native-postgres.ts';

// On CI the fixture must work, so an unavailable fixture fails there instead of skipping.
const available = process.env['CI'] ? true : await nativePostgresAvailable();
const skip = available ? false : 'native postgres fixture unavailable here';

/** The bound: a caller touching a dead database fails within a minute instead of hanging. */
const BOUND_MS = 60_000;

/** Settles `p` and says how long it took; rejects if it did not settle within `ms`. */
async function settleWithin<T>(
  p: Promise<T>,
  ms: number,
): Promise<{ ok: boolean; error?: Error; ms: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  try {
    await Promise.race([p, limit]);
    return { ok: true, ms: performance.now() - started };
  } catch (err) {
    if ((err as Error).message === `still pending after ${ms} ms`) throw err;
    return { ok: false, error: err as Error, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

test('killing the postmaster fails in-flight and new queries quickly; the pool and server close', {
  skip,
}, async (t) => {
  const server = await startNativePostgres();
  const idleErrors: Error[] = [];
  const db = await openPostgres(server.url, { max: 4, onIdleError: (err) => idleErrors.push(err) });
  try {
    // Park idle connections in the pool, then occupy two: a long statement and an open transaction.
    await Promise.all([db.query('SELECT 1'), db.query('SELECT 1'), db.query('SELECT 1')]);
    const inFlight = db.query('SELECT pg_sleep(120)');
    const inTransaction = db.transaction(async (tx) => {
      await tx.query('CREATE TABLE t (id int)');
      await tx.query('SELECT pg_sleep(120)');
    });
    // Both statements are running on the server before it dies.
    for (let i = 0; i < 200; i++) {
      const rows = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(120)' AND state = 'active'",
      );
      if (rows[0]!.n === 2) break;
      await sleep(25);
    }

    process.kill(server.pid, 'SIGKILL');
    const [a, b] = await Promise.all([
      settleWithin(inFlight, BOUND_MS),
      settleWithin(inTransaction, BOUND_MS),
    ]);
    t.diagnostic(`in-flight query failed after ${Math.round(a.ms)} ms: ${a.error?.message}`);
    t.diagnostic(`open transaction failed after ${Math.round(b.ms)} ms: ${b.error?.message}`);
    assert.equal(a.ok, false, 'the in-flight query cannot succeed');
    assert.equal(b.ok, false, 'the transaction cannot commit');

    // New statements find no server: refused, not retried forever. An idle pooled connection whose
    // backend has not yet noticed the postmaster's death may still answer one statement (Postgres
    // backends check for it only when they wait), so ask until one fails, within the bound.
    const started = performance.now();
    let fresh = await settleWithin(db.query('SELECT 1'), BOUND_MS);
    while (fresh.ok && performance.now() - started < BOUND_MS) {
      await sleep(50);
      fresh = await settleWithin(db.query('SELECT 1'), BOUND_MS);
    }
    t.diagnostic(
      `new queries failed after ${Math.round(performance.now() - started)} ms: ${fresh.error?.message}`,
    );
    assert.equal(fresh.ok, false, `a new query still succeeded ${BOUND_MS} ms after the server died`);
    // Callers get `503 unavailable`; the driver's reason stays with it for the logs.
    assert.equal((fresh.error as { code?: string }).code, 'unavailable');
    assert.match(
      String((fresh.error!.cause as Error | undefined)?.message),
      /ECONNREFUSED|terminat|closed|shut ?down/i,
    );

    const closed = await settleWithin(db.close(), BOUND_MS);
    t.diagnostic(
      `pool closed after ${Math.round(closed.ms)} ms; idle connection errors: ${idleErrors.length}`,
    );
    assert.equal(closed.ok, true, 'closing the pool of a dead database succeeds');
  } finally {
    await db.close().catch(() => {});
    await server.stop();
  }
  assert.equal(existsSync(server.dir), false, 'stop() after a crash still removes the temp dir');
});
