/**
 * Pages that finish while another page's commit is being written are committed together in the next
 * transaction (src/crawler/run.ts, `#commit`). Commits are slowed here (each transaction held 40 ms) so
 * that groups form, and the crawl must come out as if every page had committed alone: each page stored
 * once, an exact duplicate fetched beside its original collapsed into it, the job's counters equal to
 * what the frontier and the items say.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { runCrawlJob } from '../../src/crawler/run.ts';
import type { Queryable } from '../../src/db/database.ts';
import { assertLease, claimJob } from '../../src/jobs/queue.ts';
import { type CrawlTestApp, startCrawlApp } from '../http/crawl-helpers.ts';
import { STORAGE_MODES } from '../support/harness.ts';
import { type ServedRoutes, serveRoutes } from '../support/sites.ts';

const PAGES = 12;
const WORDS = 'amber basalt cedar delta ember fjord granite harbor iris juniper kelp lagoon'.split(' ');
/** Distinct prose per page (no two near-duplicates). */
const prose = (i: number) =>
  Array.from({ length: 60 }, (_, k) => WORDS[(i * 7 + k * (i + 3)) % WORDS.length]).join(' ') + ` page ${i}.`;
const page = (title: string, text: string, links: string[] = []) =>
  `<!doctype html><html><head><title>${title}</title></head><body><nav>${links
    .map((l) => `<a href="${l}">${l}</a>`)
    .join(' ')}</nav><main><h1>${title}</h1><p>${text}</p></main></body></html>`;

for (const mode of STORAGE_MODES) {
  describe(`group commit of crawled pages (${mode})`, () => {
    let h: CrawlTestApp;
    let site: ServedRoutes;

    before(async () => {
      h = await startCrawlApp(mode, {
        workers: false,
        crawler: { pageConcurrency: 4, perHostConcurrency: 4 },
      });
      const links = [...Array.from({ length: PAGES }, (_, i) => `/p/${i}`), '/copy-a', '/copy-b'];
      const routes: Record<string, { body: string }> = {
        '/': { body: page('Home', 'The start page of the group commit site.', links) },
        // The same page under two URLs, linked side by side: fetched together, committed together.
        '/copy-a': { body: page('Copy', prose(99)) },
        '/copy-b': { body: page('Copy', prose(99)) },
      };
      for (let i = 0; i < PAGES; i++) routes[`/p/${i}`] = { body: page(`Page ${i}`, prose(i)) };
      site = await serveRoutes(routes);
    });
    after(async () => {
      await h?.close();
      await site?.close();
    });

    test('pages committed in groups are each stored once, with exact counters', async () => {
      const job = await h.crawl({ url: `${site.origin}/`, limit: 100 });
      const claimed = (await claimJob(h.t.db, { kinds: ['crawl'], workerId: 'group-commit' }))!;
      let commits = 0;
      const counting = (tx: Queryable): Queryable => ({
        ...tx,
        query: (sql, params) => {
          // lockCrawlJob: once per page commit, or per group of them.
          if (sql.includes('admitted_pages AS admitted')) commits++;
          return tx.query(sql, params);
        },
        exec: (sql) => tx.exec(sql),
      });
      await runCrawlJob(
        {
          db: h.t.db,
          crawler: h.t.service.crawler,
          withLease: async (fn) => {
            // A slow commit: pages that finish meanwhile queue for the next one. (Slow before its
            // transaction, not inside it: an open transaction holds the database, so the other pages'
            // own statements, their claims and conditional-request lookups, would wait for it too.)
            await sleep(40);
            return h.t.db.transaction(async (tx) => {
              await assertLease(tx, claimed.id, claimed.leaseToken);
              return fn(counting(tx));
            });
          },
        },
        job.id,
        new AbortController().signal,
      );

      const outcomes = await h.t.db.query<{ path: string; outcome: string; state: string }>(
        `SELECT url AS path, outcome, state FROM crawl_frontier WHERE crawl_job_id = $1`,
        [job.id],
      );
      assert.ok(
        outcomes.every((o) => o.state === 'done'),
        JSON.stringify(outcomes),
      );
      const byOutcome = (o: string) =>
        outcomes.filter((r) => r.outcome === o).map((r) => new URL(r.path).pathname);
      // The home page, the twelve pages and one of the two copies are stored; the other copy collapses.
      assert.equal(byOutcome('created').length, PAGES + 2, JSON.stringify(outcomes));
      assert.equal(byOutcome('duplicate').length, 1, JSON.stringify(outcomes));
      const items = await h.crawledItems();
      assert.equal(items.length, PAGES + 2);
      assert.equal(new Set(items.map((i) => i.source_url)).size, items.length, 'no page stored twice');
      assert.equal(items.filter((i) => i.source_url.includes('/copy-')).length, 1);

      const [counters] = await h.t.db.query<{
        stored: number;
        fetched: number;
        admitted: number;
        settled: number;
      }>(
        `SELECT stored_pages AS stored, fetched_pages AS fetched, admitted_pages AS admitted, settled_pages AS settled
           FROM crawl_jobs WHERE id = $1`,
        [job.id],
      );
      assert.deepEqual(counters, {
        stored: PAGES + 2,
        fetched: outcomes.length,
        admitted: outcomes.length,
        settled: outcomes.length,
      });
      // Fewer commits than pages: groups did form (the start page and sitemap steps lock the job too).
      assert.ok(commits < outcomes.length, `${commits} commits for ${outcomes.length} pages`);
    });
  });
}
