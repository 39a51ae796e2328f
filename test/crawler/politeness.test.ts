/**
 * Politeness across processes, with real worker processes on the native Postgres
 * (PGlite is one process: its in-process gate is the whole story, tested in fetch-page.test.ts): two
 * workers (test/support/worker-process.ts), each running one crawl job of the same host (one job runs in
 * one worker at a time, so two organizations crawl it), against a loopback site that records every
 * request's start and end and the number in flight. The per-host limits hold across both; both did fetch.
 * And a worker killed while it holds the host's only slot: the slot comes back when its lease ends.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { DatabaseHostSlots } from '../../src/crawler/host-slots.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { getCrawlJob } from '../../src/db/repositories/crawl-jobs.ts';
import { tryTakeHostSlot } from '../../src/db/repositories/crawl-hosts.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { enqueueCrawlJob } from '../../src/jobs/crawl-job.ts';
import { newId } from '../../src/lib/ids.ts';
import { waitFor } from '../jobs/helpers.ts';
import { freshDatabase } from '../support/harness.ts';
import { type RecordingSite, recordingSite } from '../support/recording-site.ts';
import { startWorkerProcess } from '../support/worker-process.ts';

const PAGES = 6;

describe('politeness across worker processes (postgres)', () => {
  let db: Database;
  let env: Record<string, string>;
  let drop: () => Promise<void>;
  const children: ChildProcess[] = [];

  before(async () => {
    const fresh = await freshDatabase('postgres');
    db = fresh.db;
    drop = fresh.drop;
    await migrate(db);
    env = {
      DATABASE_URL: fresh.url!,
      KB_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      KB_CRAWL_ALLOW_PRIVATE: 'true',
      KB_LOG_LEVEL: 'silent',
    };
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await drop?.();
  });

  async function worker(name: string, crawler: Record<string, unknown>): Promise<ChildProcess> {
    const child = await startWorkerProcess({
      ...env,
      KB_TEST_WORKERS: '1',
      KB_TEST_CRAWLER: JSON.stringify({ userAgent: `${name}/1.0`, ...crawler }),
    });
    children.push(child);
    return child;
  }

  async function stop(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  }

  /** One crawl job of `url` per organization, queued together. */
  async function enqueueCrawls(url: string, orgs: number): Promise<Array<{ org: string; id: string }>> {
    const jobs: Array<{ org: string; id: string }> = [];
    await db.transaction(async (tx) => {
      for (let i = 0; i < orgs; i++) {
        const org = (await createOrganization(tx, `polite-${newId()}`)).id;
        const id = newId();
        const options = { includePaths: [], excludePaths: [], allowExternalLinks: false, tags: [] };
        await enqueueCrawlJob(tx, { id, organizationId: org, url, limit: 50, options });
        jobs.push({ org, id });
      }
    });
    return jobs;
  }

  /** One crawl job of `url` per organization, queued together; resolves when all have completed. */
  async function crawlInOrgs(url: string, orgs: number): Promise<void> {
    await waitCompleted(await enqueueCrawls(url, orgs));
  }

  async function waitCompleted(jobs: Array<{ org: string; id: string }>): Promise<void> {
    await waitFor(
      async () => {
        for (const j of jobs) {
          const view = await getCrawlJob(db, j.org, j.id);
          if (view?.status === 'failed') throw new Error(`crawl failed: ${view.error_message}`);
          if (view?.status !== 'completed') return false;
        }
        return true;
      },
      60_000,
      'both crawls',
    );
  }

  /** Both workers fetched from the host: each crawled its own job there. */
  function assertShared(site: RecordingSite): void {
    const agents = new Set(site.hits.map((h) => h.agent.split('/')[0]));
    assert.deepEqual([...agents].sort(), ['WorkerA', 'WorkerB']);
    const pages = site.hits.filter((h) => h.path.startsWith('/p/'));
    assert.equal(pages.length, 2 * PAGES, 'every page crawled once per organization');
  }

  test('per-host concurrency holds across two workers crawling one host', async () => {
    const site = await recordingSite({ holdMs: 60 });
    // Each process alone would allow 2 in flight, and each crawl has 4 pages in flight: 4 at the host.
    const crawler = { perHostConcurrency: 2, minDelayMs: 0, pageConcurrency: 4 };
    const a = await worker('WorkerA', crawler);
    const b = await worker('WorkerB', crawler);
    try {
      await crawlInOrgs(site.origin, 2);
    } finally {
      await Promise.all([stop(a), stop(b)]);
      await site.close();
    }
    assertShared(site);
    assert.ok(site.peak <= 2, `at most 2 requests in flight at the host, saw ${site.peak}`);
  });

  test('a robots.txt Crawl-delay holds across two workers: one request at a time, starts spaced by it', async () => {
    const delayMs = 250;
    const site = await recordingSite({
      holdMs: 5,
      robots: `User-agent: *\nCrawl-delay: ${delayMs / 1000}\n`,
    });
    const crawler = { perHostConcurrency: 2, minDelayMs: 0, pageConcurrency: 4 };
    const a = await worker('WorkerA', crawler);
    const b = await worker('WorkerB', crawler);
    try {
      // The second crawl starts once the first has read robots.txt: until someone has, the Crawl-delay is
      // not known (two first robots.txt requests may overlap). From then on it binds every process, the
      // one that has not read robots.txt yet included.
      const first = await enqueueCrawls(site.origin, 1);
      await waitFor(
        async () =>
          (
            await db.query('SELECT 1 FROM crawl_hosts WHERE host = $1 AND crawl_delay_ms = $2', [
              site.host,
              delayMs,
            ])
          ).length > 0,
        20_000,
        'the Crawl-delay recorded',
      );
      await waitCompleted([...first, ...(await enqueueCrawls(site.origin, 1))]);
    } finally {
      await Promise.all([stop(a), stop(b)]);
      await site.close();
    }
    assertShared(site);
    assert.equal(site.peak, 1, 'one request at a time at the host');
    // Starts are taken at the server, a moment after the database granted them; the moment differs by
    // process and stretches on a loaded machine, so gaps are held to the delay less 100 ms. Two processes
    // that each kept the delay alone would interleave: some gaps under half the delay.
    const starts = site.hits.map((h) => h.start).sort((x, y) => x - y);
    for (let i = 1; i < starts.length; i++) {
      const gap = starts[i]! - starts[i - 1]!;
      assert.ok(gap >= delayMs - 100, `request ${i} started ${gap.toFixed(1)} ms after the one before`);
    }
  });

  test("a killed worker's slot comes back when its lease ends", async () => {
    const site = await recordingSite({ holdMs: 0, hang: '/' });
    const leaseMs = 1_500;
    const a = await worker('WorkerA', { perHostConcurrency: 1, minDelayMs: 0, hostSlotLeaseMs: leaseMs });
    try {
      await enqueueCrawls(site.origin, 1);
      // The start page's request holds the host's only slot, unanswered; then the process dies.
      await waitFor(() => site.arrived.includes('/'), 20_000, 'the start page request');
      assert.equal(await leasesOf(site.host), 1, 'the slot is in the table');
      a.kill('SIGKILL');
      await once(a, 'exit');

      const slots = new DatabaseHostSlots(db, { leaseMs: 10_000 });
      const refused = await tryTakeHostSlot(db, {
        host: site.host,
        token: 'probe',
        holder: 'probe',
        concurrency: 1,
        minDelayMs: 0,
        leaseMs: 10_000,
      });
      assert.equal(refused.granted, false, "the dead worker's slot still counts until its lease ends");
      const deadline = AbortSignal.timeout(leaseMs + 10_000);
      const release = await slots.acquire(site.host, { concurrency: 1, delayMs: 0 }, deadline);
      assert.equal(await leasesOf(site.host), 1, "the dead worker's lease was dropped; only ours is left");
      await release();
      assert.equal(await leasesOf(site.host), 0);
    } finally {
      await site.close();
    }
  });

  async function leasesOf(host: string): Promise<number> {
    const [row] = await db.query<{ n: number }>(
      'SELECT (SELECT count(*) FROM jsonb_object_keys(leases))::int AS n FROM crawl_hosts WHERE host = $1',
      [host],
    );
    return row?.n ?? 0;
  }
});
