import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import {
  claimJob,
  enqueueJob,
  finishJob,
  getJob,
  heartbeatJob,
  reapStaleJobs,
} from '../../src/jobs/queue.ts';
import { defineJobKind, JobError } from '../../src/jobs/registry.ts';
import { JOB_STATUSES, JOB_TRANSITIONS } from '../../src/db/job-status.ts';
import { startWorkerPool } from '../../src/jobs/worker.ts';
import { freshDatabase, STORAGE_MODES } from '../support/harness.ts';
import { waitFor } from './helpers.ts';

// A job kind of the tests' own, plugged in exactly as the crawler will plug in 'crawl'.
const calls: Array<{ id: number; attempt: number; payload: unknown }> = [];
const echoKind = defineJobKind({
  kind: 'test-echo',
  maxAttempts: 3,
  handler: async ({ job, signal, withLease }) => {
    calls.push({ id: job.id, attempt: job.attempt, payload: job.payload });
    const p = job.payload as { mode?: string; ms?: number };
    if (p.mode === 'retry-once' && job.attempt === 1)
      throw new JobError('flaky, try again', { retryable: true, retryAfterMs: 10 });
    if (p.mode === 'crash') throw new Error('secret internal detail');
    if (p.mode === 'slow') {
      // Honours its signal, like every handler must.
      await sleep(p.ms ?? 10_000, undefined, { signal });
    }
    await withLease(async (tx) => {
      await tx.query('SELECT 1');
    });
    return { status: 'succeeded' };
  },
});

for (const mode of STORAGE_MODES) {
  describe(`job engine (${mode})`, () => {
    let db: Database;
    let drop: () => Promise<void>;
    let org: string;
    before(async () => {
      const fresh = await freshDatabase(mode);
      db = fresh.db;
      drop = fresh.drop;
      await migrate(db);
      org = (await createOrganization(db, 'engine-org')).id;
    });
    after(async () => drop?.());

    test('the database refuses every status change outside the transition table', async () => {
      const rows = await db.query<{ from_status: string; to_status: string }>(
        'SELECT from_status, to_status FROM job_status_transitions',
      );
      const fromDb = rows.map((r) => `${r.from_status}>${r.to_status}`).sort();
      const fromCode = JOB_STATUSES.flatMap((from) =>
        JOB_TRANSITIONS[from].map((to) => `${from}>${to}`),
      ).sort();
      assert.deepEqual(fromDb, fromCode);

      const id = (await enqueueJob(db, { kind: 'nobody', organizationId: org }))!;
      await assert.rejects(
        db.query(`UPDATE jobs SET status = 'succeeded' WHERE id = $1`, [id]),
        /cannot become/,
      );
      await db.query(`UPDATE jobs SET status = 'cancelled' WHERE id = $1`, [id]);
      await assert.rejects(
        db.query(`UPDATE jobs SET status = 'pending' WHERE id = $1`, [id]),
        /cannot become/,
      );
    });

    test('one active job per dedupe key, enforced by the partial unique index', async () => {
      const first = await enqueueJob(db, { kind: 'nobody', organizationId: org, dedupeKey: 'k1' });
      assert.ok(first);
      assert.equal(await enqueueJob(db, { kind: 'nobody', organizationId: org, dedupeKey: 'k1' }), null);
      // Even a writer that skips the check cannot insert a second one.
      await assert.rejects(
        db.query(`INSERT INTO jobs (kind, organization_id, dedupe_key) VALUES ('nobody', $1, 'k1')`, [org]),
        /jobs_active_dedupe_key|duplicate key/,
      );
      await db.query(`UPDATE jobs SET status = 'cancelled' WHERE id = $1`, [first]);
      assert.ok(
        await enqueueJob(db, { kind: 'nobody', organizationId: org, dedupeKey: 'k1' }),
        'a finished job frees the key',
      );
    });

    test('concurrent claims never take the same job', async () => {
      const ids = await Promise.all(
        [1, 2, 3, 4].map(() => enqueueJob(db, { kind: 'claim-test', organizationId: org })),
      );
      const claimed = await Promise.all(
        [1, 2, 3, 4, 5].map((n) => claimJob(db, { kinds: ['claim-test'], workerId: `w${n}` })),
      );
      const got = claimed.filter((c) => c !== null).map((c) => c.id);
      assert.deepEqual([...got].sort(), [...ids].sort());
      assert.equal(claimed.filter((c) => c === null).length, 1);
      await db.query(`UPDATE jobs SET status = 'cancelled' WHERE id = ANY($1::bigint[])`, [got]);
    });

    test('a job whose worker stops heart-beating is requeued, then failed once attempts run out', async () => {
      const id = (await enqueueJob(db, { kind: 'reap-test', organizationId: org, maxAttempts: 2 }))!;
      const first = (await claimJob(db, { kinds: ['reap-test'], workerId: 'ghost-1' }))!;
      assert.equal(first.id, id);
      assert.deepEqual(
        await reapStaleJobs(db, 60_000),
        { requeued: [], failed: [] },
        'fresh heartbeat: left alone',
      );
      await sleep(250);
      assert.deepEqual(await reapStaleJobs(db, 200), { requeued: [id], failed: [] });
      assert.equal((await getJob(db, id))!.status, 'pending');
      assert.equal(await heartbeatJob(db, id, first.leaseToken), false, 'the dead worker lost its lease');
      assert.equal(await finishJob(db, id, first.leaseToken, 'succeeded', null), false);

      const second = (await claimJob(db, { kinds: ['reap-test'], workerId: 'ghost-2' }))!;
      assert.equal(second.attempt, 2);
      await sleep(250);
      assert.deepEqual(await reapStaleJobs(db, 200), { requeued: [], failed: [id] });
      const job = (await getJob(db, id))!;
      assert.equal(job.status, 'failed');
      assert.match(job.error ?? '', /stopped responding/);
    });

    test('a worker pool runs registered kinds: retryable errors retry, others fail without internals', async () => {
      const pool = startWorkerPool(db, {
        kinds: [echoKind],
        concurrency: 2,
        pollMs: 50,
        heartbeatMs: 50,
        staleMs: 2_000,
        periodicTasks: [],
        listenUrl: null,
      });
      const callsBefore = calls.length;
      try {
        const ok = (await enqueueJob(db, {
          kind: 'test-echo',
          organizationId: org,
          payload: { mode: 'ok' },
        }))!;
        const flaky = (await enqueueJob(db, {
          kind: 'test-echo',
          organizationId: org,
          payload: { mode: 'retry-once' },
        }))!;
        const crash = (await enqueueJob(db, {
          kind: 'test-echo',
          organizationId: org,
          payload: { mode: 'crash' },
        }))!;
        pool.wake();
        const final = async (id: number) => {
          await waitFor(
            async () => ['succeeded', 'failed'].includes((await getJob(db, id))!.status),
            60_000,
            `job ${id}`,
          );
          return (await getJob(db, id))!;
        };
        assert.equal((await final(ok)).status, 'succeeded');
        const f = await final(flaky);
        assert.equal(f.status, 'succeeded');
        assert.equal(f.attempts, 2);
        const c = await final(crash);
        assert.equal(c.status, 'failed');
        assert.doesNotMatch(c.error ?? '', /secret internal detail/);
        assert.match(c.error ?? '', /internal error/);
        assert.deepEqual(
          calls
            .slice(callsBefore)
            .filter((x) => x.id === ok)
            .map((x) => x.payload),
          [{ mode: 'ok' }],
        );
      } finally {
        await pool.stop();
      }
    });

    test('reaping with no grace takes back every running job, even one claimed in the same millisecond', async () => {
      // PGlite's clock has millisecond resolution: a claim and the start's reap a moment later can read the
      // same now(), and the start's reclaim must still take the job back.
      for (let i = 0; i < 5; i++) {
        const id = (await enqueueJob(db, { kind: 'reap-now', organizationId: org }))!;
        assert.equal((await claimJob(db, { kinds: ['reap-now'], workerId: 'previous-run' }))!.id, id);
        assert.deepEqual(await reapStaleJobs(db, 0), { requeued: [id], failed: [] });
        await db.query(`UPDATE jobs SET status = 'cancelled' WHERE id = $1`, [id]);
      }
    });

    test('on start, a pool takes back jobs left running by a dead process only where it owns the database', async () => {
      const id = (await enqueueJob(db, { kind: 'test-echo', organizationId: org, payload: { mode: 'ok' } }))!;
      const ghost = (await claimJob(db, { kinds: ['test-echo'], workerId: 'previous-run' }))!;
      assert.equal(ghost.id, id);
      const pool = startWorkerPool(db, {
        kinds: [echoKind],
        concurrency: 1,
        pollMs: 50,
        heartbeatMs: 50,
        staleMs: 60_000,
        periodicTasks: [],
        listenUrl: null,
      });
      try {
        if (mode === 'pglite') {
          await waitFor(
            async () => (await getJob(db, id))!.status === 'succeeded',
            60_000,
            'the reclaimed job',
          );
        } else {
          await sleep(300);
          assert.equal(
            (await getJob(db, id))!.status,
            'running',
            'on Postgres another process may still own it',
          );
          await db.query(`UPDATE jobs SET status = 'cancelled' WHERE id = $1`, [id]);
        }
      } finally {
        await pool.stop();
      }
    });

    test('heartbeats keep a long job alive; stopping the pool hands it back without using up an attempt', async () => {
      const pool = startWorkerPool(db, {
        kinds: [echoKind],
        concurrency: 1,
        pollMs: 50,
        heartbeatMs: 50,
        staleMs: 5_000,
        periodicTasks: [],
        listenUrl: null,
      });
      const id = (await enqueueJob(db, {
        kind: 'test-echo',
        organizationId: org,
        payload: { mode: 'slow' },
      }))!;
      pool.wake();
      await waitFor(async () => (await getJob(db, id))!.status === 'running', 60_000, 'running');
      await sleep(400);
      assert.deepEqual(
        await reapStaleJobs(db, 300),
        { requeued: [], failed: [] },
        'heart-beating jobs are not reaped',
      );
      await pool.stop();
      const job = (await getJob(db, id))!;
      assert.equal(job.status, 'pending');
      assert.equal(job.attempts, 0);
      await db.query(`UPDATE jobs SET status = 'cancelled' WHERE id = $1`, [id]);
    });
  });
}
