/**
 * A crawl survives its worker, in both storage modes: stopped gracefully mid-crawl, another worker picks
 * it up and finishes without fetching the done pages again; a worker that dies without a word is noticed
 * by the reaper (stale heartbeat) and the crawl resumes and completes. Never stuck in `scraping`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCrawlJob } from '../../src/crawler/run.ts';
import { claimJob, getJob, JobLostError } from '../../src/jobs/queue.ts';
import { type CrawlTestApp, claimedRunDeps, FASTAPI_DOCS, startCrawlApp } from '../http/crawl-helpers.ts';
import { STORAGE_MODES } from '../support/harness.ts';
import { serveDirectory } from '../support/sites.ts';

const PAGES = 40;

for (const mode of STORAGE_MODES) {
  describe(`crawl resume (${mode})`, () => {
    let h: CrawlTestApp;
    before(async () => {
      h = await startCrawlApp(mode, { workers: false, crawler: { pageConcurrency: 2 } });
    });
    after(async () => h?.close());

    test('a crawl stopped with its worker resumes on another one without refetching done pages', async () => {
      const site = await serveDirectory(FASTAPI_DOCS, { delayMs: 30 });
      h.startWorkers();
      try {
        const job = await h.crawl({ url: `${site.origin}/`, limit: PAGES });
        const deadline = Date.now() + 60_000;
        while ((await h.get(job.id)).completed_pages < 10) {
          assert.ok(Date.now() < deadline, 'the crawl made progress');
          await sleep(10);
        }
        await h.pool!.stop();
        h.pool = null;
        const paused = await h.get(job.id);
        assert.equal(paused.status, 'scraping', 'between workers the crawl is still in progress');
        assert.ok(paused.completed_pages >= 10 && paused.completed_pages < PAGES);
        const done = await h.t.db.query<{ url: string }>(
          `SELECT url FROM crawl_frontier WHERE crawl_job_id = $1 AND state = 'done'`,
          [job.id],
        );
        const donePaths = new Set(done.map((r) => new URL(r.url).pathname));
        const requestsAtStop = site.requests.length;

        h.startWorkers();
        const finished = await h.waitDone(job.id);
        assert.equal(finished.status, 'completed', JSON.stringify(finished));
        assert.equal(finished.total_pages, PAGES);
        assert.equal(finished.completed_pages, PAGES);
        const refetched = site.requests.slice(requestsAtStop).filter((p) => donePaths.has(p));
        assert.deepEqual(refetched, [], 'no done page is fetched again');
        assert.ok(
          !site.requests.slice(requestsAtStop).some((p) => p.startsWith('/sitemap')),
          'sitemaps are not read again',
        );
        const stored = finished.outcomes['created'] ?? 0;
        const items = await h.crawledItems();
        assert.equal(items.filter((i) => i.source_url.startsWith(site.origin)).length, stored);
      } finally {
        await h.pool?.stop();
        h.pool = null;
        await site.close();
      }
    });

    test('a row left fetching by a claim that raced a lease being taken back is settled at the end', async () => {
      // Claims read the lease without locking the job's row (claimNextFrontierRow), so one made as the
      // lease is taken back can still mark a row `fetching` after the new holder requeued the old ones.
      // Stood in for here: while the pages are held at the gate, a queued row is set `fetching` behind
      // the run's back. The run must requeue it once it has nothing else, and settle it.
      let open!: () => void;
      const gate = { after: 4, open: new Promise<void>((resolve) => (open = resolve)) };
      const site = await serveDirectory(FASTAPI_DOCS, { gate });
      h.startWorkers();
      try {
        const job = await h.crawl({ url: `${site.origin}/`, limit: 12 });
        let stray: { url_key: string; url: string } | undefined;
        const deadline = Date.now() + 60_000;
        while (!stray) {
          assert.ok(Date.now() < deadline, 'the crawl queued pages');
          [stray] = await h.t.db.query<{ url_key: string; url: string }>(
            `UPDATE crawl_frontier SET state = 'fetching'
              WHERE crawl_job_id = $1 AND url_key = (
                SELECT url_key FROM crawl_frontier WHERE crawl_job_id = $1 AND state = 'queued' AND admitted
                 ORDER BY priority, seq LIMIT 1)
              RETURNING url_key, url`,
            [job.id],
          );
          if (!stray) await sleep(5);
        }
        open();
        const finished = await h.waitDone(job.id);
        assert.equal(finished.status, 'completed', JSON.stringify(finished));
        const [row] = await h.t.db.query<{ state: string; outcome: string }>(
          'SELECT state, outcome FROM crawl_frontier WHERE crawl_job_id = $1 AND url_key = $2',
          [job.id, stray.url_key],
        );
        // Queued again, it was crawled or (the limit reached first) swept as budget: not left `fetching`.
        assert.equal(row!.state, 'done', 'the stray row was taken up again');
        assert.ok(row!.outcome, 'with an outcome');
        const stuck = await h.t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM crawl_frontier WHERE crawl_job_id = $1 AND state <> 'done'`,
          [job.id],
        );
        assert.equal(stuck[0]!.n, 0);
        assert.ok(finished.fetched_pages <= finished.fetch_limit);
      } finally {
        open();
        await h.pool?.stop();
        h.pool = null;
        await site.close();
      }
    });

    test('a claim under a lease taken back takes nothing and ends the run with the lease error', async () => {
      const site = await serveDirectory(FASTAPI_DOCS);
      try {
        const job = await h.crawl({ url: `${site.origin}/`, limit: 5 });
        const claimed = (await claimJob(h.t.db, { kinds: ['crawl'], workerId: 'loser' }))!;
        // Taken back before the run starts: its first claim finds the lease gone.
        await h.t.db.query(`UPDATE jobs SET lease_token = 'someone-else' WHERE id = $1`, [claimed.id]);
        // Only the claims check the lease here: the run's other transactions would have refused too.
        const deps = { ...claimedRunDeps(h.t, claimed), withLease: h.t.db.transaction.bind(h.t.db) };
        await assert.rejects(
          runCrawlJob(deps, job.id, new AbortController().signal),
          (err) => err instanceof JobLostError,
        );
        const fetching = await h.t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM crawl_frontier WHERE crawl_job_id = $1 AND state = 'fetching'`,
          [job.id],
        );
        assert.equal(fetching[0]!.n, 0, 'nothing was claimed');
        assert.deepEqual(
          site.requests.filter((p) => p !== '/robots.txt'),
          [],
          'no page was requested under the lost lease',
        );
      } finally {
        await site.close();
      }
    });

    test('pages in flight when the lease is taken back commit nothing', async () => {
      const site = await serveDirectory(FASTAPI_DOCS, { delayMs: 150 });
      try {
        const job = await h.crawl({ url: `${site.origin}/`, limit: 20 });
        const claimed = (await claimJob(h.t.db, { kinds: ['crawl'], workerId: 'loser' }))!;
        // Commits check the lease in their lock of the crawl job (lockCrawlJobUnderLease).
        const running = runCrawlJob(claimedRunDeps(h.t, claimed), job.id, new AbortController().signal).then(
          () => null,
          (err: unknown) => err,
        );
        while ((await h.get(job.id)).completed_pages < 2) await sleep(10);
        await h.t.db.query(`UPDATE jobs SET lease_token = 'someone-else' WHERE id = $1`, [claimed.id]);
        const atTakeover = await h.get(job.id);
        const itemsAtTakeover = (await h.crawledItems()).length;
        assert.ok((await running) instanceof JobLostError, 'the run ends with the lease error');
        const after = await h.get(job.id);
        assert.equal(after.completed_pages, atTakeover.completed_pages, 'no page counted after the takeover');
        assert.equal((await h.crawledItems()).length, itemsAtTakeover, 'no item stored after the takeover');
        assert.ok(site.requests.length > atTakeover.completed_pages, 'pages were in flight at the takeover');
      } finally {
        await site.close();
      }
    });

    test('a crawl whose worker died is taken back by the reaper and completes', async () => {
      const site = await serveDirectory(FASTAPI_DOCS, { delayMs: 20 });
      try {
        const job = await h.crawl({ url: `${site.origin}/`, limit: 20 });
        // A worker claims the job and dies mid-crawl: no release, no more heartbeats.
        const claimed = (await claimJob(h.t.db, { kinds: ['crawl'], workerId: 'doomed' }))!;
        assert.ok(claimed);
        const death = new AbortController();
        const running = runCrawlJob(claimedRunDeps(h.t, claimed), job.id, death.signal);
        while ((await h.get(job.id)).completed_pages < 5) await sleep(10);
        death.abort(new Error('worker process killed'));
        await assert.rejects(running);
        assert.equal(
          (await getJob(h.t.db, claimed.id))!.status,
          'running',
          'the dead worker left it running',
        );
        assert.equal((await h.get(job.id)).status, 'scraping');

        h.startWorkers({ staleMs: 400 });
        const finished = await h.waitDone(job.id);
        assert.equal(finished.status, 'completed', JSON.stringify(finished));
        assert.equal(finished.total_pages, 20);
        assert.equal(finished.completed_pages, 20);
        assert.equal((await getJob(h.t.db, claimed.id))!.attempts, 2);
        const left = await h.t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM crawl_frontier WHERE crawl_job_id = $1 AND state <> 'done'`,
          [job.id],
        );
        assert.equal(left[0]!.n, 0, 'rows the dead worker left mid-fetch were done by the next one');
      } finally {
        await h.pool?.stop();
        h.pool = null;
        await site.close();
      }
    });
  });
}
