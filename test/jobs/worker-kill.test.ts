/**
 * A worker process killed with SIGKILL in the middle of a sync (native Postgres: PGlite is single-process):
 * its job is detected as dead by its stale heartbeat within a bounded time, retried by another worker, and
 * the retry resumes from the last checkpoint without duplicates.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { upsertConnection } from '../../src/db/repositories/connections.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { getSyncJob } from '../../src/db/repositories/sync-jobs.ts';
import { enqueueSyncJob } from '../../src/jobs/sync-job.ts';
import {
  startTestSource,
  TEST_SOURCE_TOKEN,
  TEST_SPACE_ID,
  type TestSource,
} from '../connectors/test-connector-source.ts';
import { testConnector } from '../connectors/test-connector.ts';
import { composeTestService, freshDatabase, testConfig } from '../support/harness.ts';
import { startWorkerProcess } from '../support/worker-process.ts';
import { FAST_SOURCE_HTTP, waitFor } from './helpers.ts';

let db: Database;
let url: string;
let drop: () => Promise<void>;
let source: TestSource;
let child: ChildProcess | undefined;

before(async () => {
  const fresh = await freshDatabase('postgres');
  db = fresh.db;
  url = fresh.url!;
  drop = fresh.drop;
  await migrate(db);
  source = await startTestSource();
});
after(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await source?.close();
  await drop?.();
});

test('a SIGKILLed worker: its job is reaped within bounded time and resumes at the checkpoint without duplicates', async () => {
  const key = randomBytes(32).toString('base64');
  const env = {
    DATABASE_URL: url,
    KB_ENCRYPTION_KEY: key,
    KB_DOCS_SPACE_BASE_URL: source.url,
    KB_CRAWL_ALLOW_PRIVATE: 'true',
    KB_LOG_LEVEL: 'silent',
  };
  const service = composeTestService(db, testConfig(env), {
    connectors: [testConnector],
    sourceHttp: FAST_SOURCE_HTTP,
  });
  const org = (await createOrganization(db, 'kill-org')).id;
  const credentials = { access_token: TEST_SOURCE_TOKEN, space_id: TEST_SPACE_ID };
  const { id: connectionId } = await db.transaction((tx) =>
    upsertConnection(tx, {
      organizationId: org,
      type: 'docs_space',
      encrypt: (id) => service.sources.encryptCredentials(id, credentials),
    }),
  );
  source.seed(600);
  source.pageDelayMs = 120; // six pages of 100, each ending at a checkpoint

  child = await startWorkerProcess(env);
  const jobId = (await db.transaction((tx) =>
    enqueueSyncJob(tx, { organizationId: org, connectionId, jobType: 'sync', trigger: 'api' }),
  ))!;
  // Wait for the second page's checkpoint itself: documents commit in batches of 50 and the checkpoint
  // in the batch after them, so rows can reach 200 a moment before the checkpoint does.
  const checkpoint = async () =>
    (
      await db.query<{ cursor: { since: number } | null }>('SELECT cursor FROM sync_jobs WHERE job_id = $1', [
        jobId,
      ])
    )[0]?.cursor?.since ?? 0;
  await waitFor(async () => (await checkpoint()) >= 200, 60_000, 'two committed pages');
  child.kill('SIGKILL');
  await once(child, 'exit');
  const killedAt = Date.now();
  const requestsAtKill = source.syncRequests().length;

  const dead = (await getSyncJob(db, org, jobId))!;
  assert.equal(dead.status, 'running', 'nobody has noticed yet');
  const [row] = await db.query<{ cursor: { since: number } }>(
    'SELECT cursor FROM sync_jobs WHERE job_id = $1',
    [jobId],
  );
  const cursor = row!.cursor;
  assert.ok(cursor.since >= 200);
  // Rows before the checkpoint are committed with or before it; a batch of the next page may be too.
  assert.ok(dead.rowsSynced >= cursor.since, `rows ${dead.rowsSynced} cover the checkpoint ${cursor.since}`);

  // Another worker (this process) with a 1 s staleness bound takes the job back and finishes it.
  const staleMs = 1_000;
  const pool = service.startWorkers({
    concurrency: 1,
    pollMs: 50,
    heartbeatMs: 100,
    staleMs,
    reapEveryMs: 100,
    periodicTasks: [],
    listenUrl: null,
  });
  try {
    await waitFor(async () => (await getSyncJob(db, org, jobId))!.attempts === 2, 60_000, 'the retry');
    // Only that it happens: how soon depends on how busy the machine is, which a test cannot know.
    console.log(
      `reaped and restarted ${Date.now() - killedAt} ms after the kill (staleness bound ${staleMs} ms)`,
    );
    await waitFor(
      async () => (await getSyncJob(db, org, jobId))!.status !== 'running',
      60_000,
      'the retry to finish',
    );
  } finally {
    await pool.stop();
  }

  const job = (await getSyncJob(db, org, jobId))!;
  assert.equal(job.status, 'succeeded', JSON.stringify(job));
  assert.equal(job.attempts, 2);
  assert.equal(job.rowsSynced, 600, 'every document counted once');
  const [counts] = await db.query<{ n: number; keys: number }>(
    'SELECT count(*)::int AS n, count(DISTINCT source_key)::int AS keys FROM items WHERE connection_id = $1',
    [connectionId],
  );
  assert.deepEqual(counts, { n: 600, keys: 600 });
  const resumed = source.syncRequests().slice(requestsAtKill);
  assert.equal(
    resumed[0]!.query.get('since'),
    String(cursor.since),
    'the retry starts at the last checkpoint',
  );
  assert.ok(resumed.every((r) => Number(r.query.get('since')) >= cursor.since));
});
