/**
 * Server mode's pool: a job's lease transactions and heartbeats all lock the job's row first.
 * When several came at once (a crawl's pages finishing together, a heartbeat during a sync batch) each
 * held a pool connection while Postgres made it wait for that lock, and the API ran short of connections.
 * The worker now queues them itself: they run one at a time, in order, and none waits in the database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { enqueueJob, getJob } from '../../src/jobs/queue.ts';
import { defineJobKind } from '../../src/jobs/registry.ts';
import { startWorkerPool } from '../../src/jobs/worker.ts';
import { freshDatabase } from '../support/harness.ts';
import { waitFor } from './helpers.ts';

describe('a job writes to its own row one transaction at a time (postgres)', () => {
  let db: Database;
  let url: string;
  let drop: () => Promise<void>;
  let observer: pg.Client;
  before(async () => {
    const fresh = await freshDatabase('postgres');
    db = fresh.db;
    url = fresh.url!;
    drop = fresh.drop;
    await migrate(db);
    observer = new pg.Client({ connectionString: url });
    await observer.connect();
  });
  after(async () => {
    await observer?.end();
    await drop?.();
  });

  /** Sessions of the service's pool on this database waiting for a lock, and all of them (the observer aside). */
  const sessions = async () =>
    (
      await observer.query<{ waiting: number; open: number }>(
        `SELECT count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS waiting, count(*)::int AS open
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      )
    ).rows[0]!;

  test("concurrent lease transactions and heartbeats queue in the worker, not on the job row's lock", async () => {
    const order: string[] = [];
    let seenWhileHeld: { waiting: number; open: number } | null = null;
    const kind = defineJobKind({
      kind: 'test-pages',
      maxAttempts: 1,
      handler: async ({ withLease }) => {
        // Four pages finish at once; the first holds the job row while the others and the heartbeats
        // (every 20 ms) come in.
        await Promise.all(
          [0, 1, 2, 3].map((page) =>
            withLease(async (tx) => {
              await tx.query('SELECT 1');
              order.push(`start ${page}`);
              if (page === 0) {
                await sleep(1_000);
                seenWhileHeld = await sessions();
              }
              order.push(`end ${page}`);
            }),
          ),
        );
        return { status: 'succeeded' };
      },
    });
    const org = (await createOrganization(db, 'row-queue')).id;
    const id = (await enqueueJob(db, { kind: 'test-pages', organizationId: org }))!;
    const pool = startWorkerPool(db, {
      concurrency: 1,
      kinds: [kind],
      pollMs: 20,
      heartbeatMs: 20,
      staleMs: 30_000,
      periodicTasks: [],
      listenUrl: null,
    });
    try {
      await waitFor(async () => (await getJob(db, id))?.status === 'succeeded', 60_000);
    } finally {
      await pool.stop();
    }
    assert.ok(seenWhileHeld, 'the first transaction looked at the sessions');
    const held = seenWhileHeld as { waiting: number; open: number };
    assert.equal(held.waiting, 0, 'no session waited for the job row');
    assert.deepEqual(order, ['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  });
});
