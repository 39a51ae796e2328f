/**
 * Crawl tests' harness: the real app (both storage modes) with the crawler's waits shortened, a worker
 * pool running crawl jobs, and helpers to start a crawl through the API and wait for its end.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CrawlRunDeps } from '../../src/crawler/run.ts';
import type { CrawlerOverrides } from '../../src/crawler/runtime.ts';
import type { CrawlJobView } from '../../src/db/repositories/crawl-jobs.ts';
import { assertLease, type ClaimedJob, JobLostError } from '../../src/jobs/queue.ts';
import type { WorkerPool, WorkerPoolOptions } from '../../src/jobs/worker.ts';
import { type StorageMode, startTestApp, type TestApp } from '../support/harness.ts';

/** The fastapi-docs mirror (154 pages, sitemap, robots.txt). */
export const FASTAPI_DOCS = new URL('../../../shared/data/sites/fastapi-docs', import.meta.url).pathname;

/** No politeness delay and quick retries: the tests' sites are local. */
export const FAST_CRAWLER: CrawlerOverrides = {
  minDelayMs: 0,
  perHostConcurrency: 4,
  pageConcurrency: 4,
  retry: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 2_000 },
  // Over Postgres a killed worker's host slots come back after this (10 s by default): tests kill workers.
  hostSlotLeaseMs: 2_000,
};

export const FAST_WORKERS: Partial<WorkerPoolOptions> = {
  pollMs: 50,
  heartbeatMs: 100,
  staleMs: 5_000,
  periodicTasks: [],
  listenUrl: null,
  shutdownGraceMs: 5_000,
};

/** What the `crawl` job kind hands a run (src/jobs/crawl-job.ts), for a job a test claimed itself. */
export function claimedRunDeps(t: TestApp, claimed: ClaimedJob): CrawlRunDeps {
  return {
    db: t.db,
    crawler: t.service.crawler,
    withLease: (fn) =>
      t.db.transaction(async (tx) => {
        await assertLease(tx, claimed.id, claimed.leaseToken);
        return fn(tx);
      }),
    lease: {
      jobId: claimed.id,
      token: claimed.leaseToken,
      lost: () => new JobLostError(claimed.id),
      transaction: (fn) => t.db.transaction(fn),
    },
  };
}

export interface CrawlTestApp {
  t: TestApp;
  pool: WorkerPool | null;
  /** Starts a worker pool (replacing the context's signals); the previous one must be stopped first. */
  startWorkers(opts?: Partial<WorkerPoolOptions>): WorkerPool;
  /** POST /api/connect/crawling/ and assert 200; returns the job. */
  crawl(body: Record<string, unknown>, key?: string): Promise<CrawlJobView>;
  get(id: string, key?: string): Promise<CrawlJobView>;
  /** Polls until the job is completed, failed or cancelled. */
  waitDone(id: string, opts?: { timeoutMs?: number; key?: string }): Promise<CrawlJobView>;
  /** Items of org A (or the key's org) with source_type crawl, as listed by the API. */
  crawledItems(
    key?: string,
  ): Promise<Array<{ id: string; title: string; source_url: string; tags: string[] }>>;
  close(): Promise<void>;
}

export async function startCrawlApp(
  mode: StorageMode,
  opts: {
    crawler?: CrawlerOverrides;
    config?: Record<string, string>;
    workers?: Partial<WorkerPoolOptions> | false;
  } = {},
): Promise<CrawlTestApp> {
  const t = await startTestApp(mode, {
    config: { KB_CRAWL_ALLOW_PRIVATE: 'true', ...opts.config },
    parts: { crawler: { ...FAST_CRAWLER, ...opts.crawler } },
  });
  const h: CrawlTestApp = {
    t,
    pool: null,
    startWorkers(o = {}) {
      const pool = t.service.startWorkers({ concurrency: 2, ...FAST_WORKERS, ...o });
      h.pool = pool;
      return pool;
    },
    async crawl(body, key) {
      const res = await t.call('POST', '/api/connect/crawling/', { body, ...(key ? { key } : {}) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as CrawlJobView;
    },
    async get(id, key) {
      const res = await t.call('GET', `/api/connect/crawling/${id}`, key ? { key } : {});
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as CrawlJobView;
    },
    async waitDone(id, { timeoutMs = 30_000, key }: { timeoutMs?: number; key?: string } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const job = await h.get(id, key);
        if (job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled') return job;
        if (Date.now() > deadline)
          throw new Error(`crawl ${id} still ${job.status} after ${timeoutMs} ms: ${JSON.stringify(job)}`);
        await sleep(25);
      }
    },
    async crawledItems(key) {
      const out: Array<{
        id: string;
        title: string;
        source_url: string;
        tags: string[];
        source_type: string;
      }> = [];
      for (let page = 1; ; page++) {
        const res = await t.call('POST', '/api/connect/knowledgebase-items/query', {
          body: { limit: 100, page },
          ...(key ? { key } : {}),
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        out.push(...res.body.items);
        if (!res.body.pagination.has_next_page) break;
      }
      return out.filter((i) => i.source_type === 'crawl');
    },
    async close() {
      await h.pool?.stop();
      await t.close();
    },
  };
  if (opts.workers !== false) h.startWorkers(opts.workers || {});
  return h;
}
