/** Shared set-up of the job-engine tests: an app with the test connector, its fake source and workers. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { getSyncJob, type SyncJobView } from '../../src/db/repositories/sync-jobs.ts';
import type { SourceHttpSettings } from '../../src/jobs/source-services.ts';
import type { WorkerPool, WorkerPoolOptions } from '../../src/jobs/worker.ts';
import {
  startTestSource,
  TEST_SOURCE_TOKEN,
  TEST_SPACE_ID,
  type TestSource,
} from '../connectors/test-connector-source.ts';
import { testConnector } from '../connectors/test-connector.ts';
import { type StorageMode, startTestApp, type TestApp } from '../support/harness.ts';

/** Retries without real waits worth mentioning. */
export const FAST_SOURCE_HTTP: SourceHttpSettings = {
  maxAttempts: 3,
  baseDelayMs: 5,
  maxDelayMs: 20,
  maxWaitMs: 5_000,
  attemptTimeoutMs: 10_000,
};

/** Worker timings for tests: quick polls, heartbeats and reaping. */
export const FAST_WORKERS: Omit<WorkerPoolOptions, 'concurrency' | 'kinds'> = {
  pollMs: 50,
  heartbeatMs: 100,
  staleMs: 1_500,
  periodicTasks: [],
  shutdownGraceMs: 3_000,
};

export interface SyncApp {
  t: TestApp;
  source: TestSource;
  pool: WorkerPool | null;
  /** How often the app said items changed. */
  itemsChanged: { count: number };
  close(): Promise<void>;
}

export async function startSyncApp(
  mode: StorageMode,
  opts: { workers?: Partial<WorkerPoolOptions> | false; config?: Record<string, string> } = {},
): Promise<SyncApp> {
  const source = await startTestSource();
  const itemsChanged = { count: 0 };
  const t = await startTestApp(mode, {
    config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_DOCS_SPACE_BASE_URL: source.url, ...opts.config },
    parts: {
      connectors: [testConnector],
      sourceHttp: FAST_SOURCE_HTTP,
      onItemsChanged: () => {
        itemsChanged.count++;
      },
    },
  });
  const pool =
    opts.workers === false
      ? null
      : t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, ...opts.workers, listenUrl: null });
  return {
    t,
    source,
    pool,
    itemsChanged,
    async close() {
      await pool?.stop();
      await t.close();
      await source.close();
    },
  };
}

export const TEST_SOURCE_INPUT = {
  type: 'docs_space',
  access_token: TEST_SOURCE_TOKEN,
  space_id: TEST_SPACE_ID,
};

/** Connects the test source without its first sync (`sync: false`): the tests start each sync themselves. */
export async function connect(
  t: TestApp,
  extra: Record<string, unknown> = {},
  key?: string,
): Promise<string> {
  const res = await t.call('POST', '/api/connect/connection', {
    body: { source: TEST_SOURCE_INPUT, sync: false, ...extra },
    key,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.connectionId as string;
}

export async function runSyncJob(
  t: TestApp,
  jobType: 'sync' | 'reset' = 'sync',
  key?: string,
): Promise<number> {
  const res = await t.call('POST', '/api/connect/run-sync', { body: { type: 'docs_space', jobType }, key });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.success, true);
  return res.body.jobId as number;
}

/** Polls the job until its status is one of `statuses` (default: any final one). */
export async function waitForJob(
  t: TestApp,
  jobId: number,
  statuses: readonly string[] = ['succeeded', 'failed', 'cancelled', 'incomplete'],
  timeoutMs = 60_000,
): Promise<SyncJobView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await getSyncJob(t.db, t.orgA.id, jobId);
    if (job && statuses.includes(job.status)) return job;
    if (Date.now() > deadline)
      throw new Error(`job ${jobId} not in ${statuses.join('|')}: ${JSON.stringify(job)}`);
    await sleep(20);
  }
}

export async function syncAndWait(t: TestApp, jobType: 'sync' | 'reset' = 'sync'): Promise<SyncJobView> {
  return waitForJob(t, await runSyncJob(t, jobType));
}

/** Titles of the organization's items, sorted. */
export async function itemTitles(t: TestApp, key?: string): Promise<string[]> {
  const res = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { limit: 100 }, key });
  assert.equal(res.status, 200);
  return (res.body.items as Array<{ title: string }>).map((i) => i.title).sort();
}

export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 60_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
