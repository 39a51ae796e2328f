/**
 * Crawl jobs through the HTTP API (endpoint 6 and its extensions), in both storage modes: validation,
 * the job's fields, crawling the fastapi-docs mirror into items, the exact page budget, isolation between
 * organizations, listing, cancel, and the refusal of private targets when the operator has not allowed them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { expectError, STORAGE_MODES } from '../support/harness.ts';
import { type ServedSite, serveDirectory } from '../support/sites.ts';
import type { CrawlJobView } from '../../src/db/repositories/crawl-jobs.ts';
import { itemSearchWords } from '../../src/lib/search-words.ts';
import { type CrawlTestApp, FASTAPI_DOCS, startCrawlApp } from './crawl-helpers.ts';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The page's own <h1> text (when it is plain text), which the extractor takes as the title. */
function h1Of(sitePath: string): string | null {
  let p = decodeURIComponent(sitePath);
  if (p.endsWith('/')) p += 'index.html';
  const html = readFileSync(path.join(FASTAPI_DOCS, p), 'utf8');
  const m = /<h1[^>]*>([^<]*)<\/h1>/.exec(html);
  return m
    ? m[1]!
        .replace(/&amp;/g, '&')
        .replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"')
        .trim()
    : null;
}

/** A finished crawl leaves no URL of its frontier queued or claimed: every one was fetched or swept. */
async function assertFrontierSettled(h: CrawlTestApp, jobId: string): Promise<void> {
  const open = await h.t.db.query<{ state: string; n: number }>(
    `SELECT state, count(*)::int AS n FROM crawl_frontier WHERE crawl_job_id = $1 AND state <> 'done' GROUP BY state`,
    [jobId],
  );
  assert.deepEqual(open, [], `frontier rows left open: ${JSON.stringify(open)}`);
}

for (const mode of STORAGE_MODES) {
  describe(`crawl jobs API (${mode})`, () => {
    let h: CrawlTestApp;
    let site: ServedSite;
    before(async () => {
      site = await serveDirectory(FASTAPI_DOCS);
      h = await startCrawlApp(mode);
    });
    after(async () => {
      await h?.close();
      await site?.close();
    });

    test('validates the request: url required, http(s) only, limit range, patterns compile, no unknown fields', async () => {
      const post = (body: unknown) => h.t.call('POST', '/api/connect/crawling/', { body });
      expectError(await post({}), 400, 'invalid_request');
      expectError(await post({ url: 'ftp://example.com/' }), 400, 'invalid_request');
      expectError(await post({ url: '/relative/path' }), 400, 'invalid_request');
      expectError(await post({ url: 'https://example.com/', limit: 0 }), 400, 'invalid_request');
      expectError(await post({ url: 'https://example.com/', limit: 10_001 }), 400, 'invalid_request');
      expectError(await post({ url: 'https://example.com/', limit: 2.5 }), 400, 'invalid_request');
      expectError(await post({ url: 'https://example.com/', bogus: true }), 400, 'invalid_request');
      expectError(
        await post({ url: 'https://example.com/', allowExternalLinks: 'yes' }),
        400,
        'invalid_request',
      );
      const badRegex = await post({ url: 'https://example.com/', includePaths: ['^/docs/', '(unclosed'] });
      expectError(badRegex, 400, 'invalid_request');
      assert.match(badRegex.body.message, /includePaths/);
      assert.match(badRegex.body.message, /\(unclosed/);
      const badExclude = await post({ url: 'https://example.com/', excludePaths: ['[z-a]'] });
      expectError(badExclude, 400, 'invalid_request');
      assert.match(badExclude.body.message, /excludePaths.*\[z-a\]/);
      // Patterns run in linear time (RE2): lookarounds and backreferences are refused by name.
      const lookaround = await post({ url: 'https://example.com/', includePaths: ['^/docs/(?!old)'] });
      expectError(lookaround, 400, 'invalid_request');
      assert.match(lookaround.body.message, /\(\?!old\)/);
      const evil = await h.crawl(
        { url: `${site.origin}/about/`, excludePaths: ['(a+)+$'], limit: 1 },
        h.t.orgB.key,
      );
      assert.equal((await h.waitDone(evil.id, { key: h.t.orgB.key })).status, 'completed');
      expectError(
        await h.t.call('POST', '/api/connect/crawling', { body: { url: 'https://example.com/' } }),
        404,
        'not_found',
      );
      expectError(
        await h.t.call('POST', '/api/connect/crawling/', {
          body: { url: 'https://example.com/' },
          key: null,
        }),
        401,
        'unauthorized',
      );
    });

    test('answers the job in idle with the seed fields, then crawls the site into items with URLs and titles', async () => {
      // No workers yet: the answer and a first look show the job as queued.
      await h.pool?.stop();
      h.pool = null;
      const job = await h.crawl({ url: `${site.origin}/`, limit: 25, tags: ['docs', 'fastapi'] });
      assert.equal(job.status, 'idle');
      assert.equal(job.url, `${site.origin}/`);
      assert.equal(job.service_project_id, h.t.orgA.id);
      assert.equal(job.tenant_id, h.t.orgA.id);
      assert.equal(job.completed_at, null);
      assert.equal(job.error_message, null);
      assert.equal(job.total_pages, 0);
      assert.equal(job.completed_pages, 0);
      assert.equal(typeof job.id, 'string');
      assert.match(job.created_at, ISO_UTC);
      assert.match(job.updated_at, ISO_UTC);
      assert.equal(job.limit, 25);
      assert.equal((await h.get(job.id)).status, 'idle');

      h.startWorkers();
      const done = await h.waitDone(job.id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.match(done.completed_at!, ISO_UTC);
      assert.equal(done.total_pages, 25);
      assert.equal(done.completed_pages, 25);
      assert.equal(done.error_message, null);
      assert.ok(done.refused['budget']!.count > 100, 'the rest of the site is refused for the budget');
      assert.ok(done.refused['external']!.count > 0);

      const items = await h.crawledItems();
      assert.equal(items.length, done.outcomes['created']);
      assert.ok(items.length >= 20, `most admitted pages are pages (${items.length})`);
      const urls = new Set(items.map((i) => i.source_url));
      assert.equal(urls.size, items.length, 'one item per page');
      assert.ok(urls.has(`${site.origin}/`), 'the start page is an item');
      for (const item of items) {
        assert.ok(item.source_url.startsWith(`${site.origin}/`), item.source_url);
        assert.deepEqual(item.tags, ['docs', 'fastapi']);
        const expected = h1Of(new URL(item.source_url).pathname);
        if (expected) assert.equal(item.title, expected, item.source_url);
      }
      const list = await h.t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'Python Types Intro' },
      });
      const types = list.body.items.find((i: { source_url: string }) =>
        i.source_url.endsWith('/python-types.html'),
      );
      assert.equal(types?.title, 'Python Types Intro');
      assert.equal(types?.source_type, 'crawl');
      assert.equal(types?.source_table_name, 'crawled_pages');
      assert.equal(types?.visibility, 'public');
      // The words the crawl's extraction thread split are those of the stored title and text.
      const stored = await h.t.db.query<{ title: string; content: string; words: string }>(
        `SELECT title, content, search_words::text AS words FROM items WHERE source_type = 'crawl'`,
      );
      for (const item of stored) {
        const [expected] = await h.t.db.query<{ words: string }>(
          `SELECT array_to_tsvector(string_to_array($1, ' '))::text AS words`,
          [itemSearchWords(item.title, item.content)],
        );
        assert.equal(item.words, expected!.words, item.title);
      }
    });

    test('the page budget is exact under concurrency', async () => {
      const before = site.requests.length;
      const job = await h.crawl({ url: `${site.origin}/tutorial/`, limit: 7 });
      const done = await h.waitDone(job.id);
      assert.equal(done.status, 'completed');
      await assertFrontierSettled(h, job.id);
      assert.equal(done.total_pages, 7, JSON.stringify(done.outcomes));
      assert.equal(done.completed_pages, 7);
      const pageRequests = site.requests
        .slice(before)
        .filter((r) => r !== '/robots.txt' && !r.startsWith('/sitemap'));
      assert.ok(pageRequests.length <= 7, `at most 7 page requests, got ${pageRequests.length}`);
      // The limit counts pages stored, not URLs admitted: the frontier may hold more URLs than that.
      const inDb = await h.t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM crawl_frontier WHERE crawl_job_id = $1 AND outcome IN ('created', 'updated', 'unchanged')`,
        [job.id],
      );
      assert.equal(inDb[0]!.n, 7);
    });

    if (mode === 'postgres') {
      test('a crawl without a binding budget takes every page of the site', async () => {
        const job = await h.crawl({ url: `${site.origin}/`, limit: 1000 });
        const done = await h.waitDone(job.id, { timeoutMs: 60_000 });
        assert.equal(done.status, 'completed', JSON.stringify(done));
        await assertFrontierSettled(h, job.id);
        assert.equal(done.completed_pages, done.total_pages, JSON.stringify(done.outcomes));
        const sitemap = readFileSync(path.join(FASTAPI_DOCS, 'sitemap.xml'), 'utf8');
        const pages = [...sitemap.matchAll(/<loc>http:\/\/127\.0\.0\.1:8000([^<]*)<\/loc>/g)].map(
          (m) => m[1]!,
        );
        assert.equal(pages.length, 154);
        const kept =
          (done.outcomes['created'] ?? 0) +
          (done.outcomes['unchanged'] ?? 0) +
          (done.outcomes['updated'] ?? 0);
        assert.equal(kept, 154, JSON.stringify(done.outcomes));
        const keyOf = (p: string) => p.replace(/index\.html$/, '').replace(/\/$/, '');
        const itemKeys = new Set((await h.crawledItems()).map((i) => keyOf(new URL(i.source_url).pathname)));
        for (const p of pages) assert.ok(itemKeys.has(keyOf(p)), `${p} is an item`);
      });
    }

    test("other organizations' crawl jobs behave as not found; the list is the caller's, newest first, paged", async () => {
      const mine = await h.crawl({ url: `${site.origin}/about/`, limit: 1 });
      await h.waitDone(mine.id);
      const other = h.t.orgB.key;
      expectError(
        await h.t.call('GET', `/api/connect/crawling/${mine.id}`, { key: other }),
        404,
        'not_found',
      );
      expectError(
        await h.t.call('DELETE', `/api/connect/crawling/${mine.id}`, { key: other }),
        404,
        'not_found',
      );
      expectError(await h.t.call('GET', '/api/connect/crawling/not-a-job'), 404, 'not_found');
      const theirs = await h.t.call('GET', '/api/connect/crawling/', { key: other });
      assert.equal(theirs.status, 200);
      assert.ok(
        theirs.body.data.every((j: CrawlJobView) => j.tenant_id === h.t.orgB.id && j.id !== mine.id),
        'only their own jobs',
      );
      const theirTotal = theirs.body.total as number;

      const all = await h.t.call('GET', '/api/connect/crawling/');
      assert.equal(all.status, 200);
      assert.equal(all.body.data[0].id, mine.id, 'newest first');
      const total = all.body.total as number;
      assert.ok(total >= 3);
      const page = await h.t.call('GET', '/api/connect/crawling/?limit=1&offset=1');
      assert.equal(page.body.data.length, 1);
      assert.equal(page.body.data[0].id, all.body.data[1].id);
      assert.match(page.body.next, /\/api\/connect\/crawling\/\?limit=1&offset=2$/);
      assert.match(page.body.previous, /\/api\/connect\/crawling\/\?limit=1&offset=0$/);
      expectError(await h.t.call('GET', '/api/connect/crawling/?limit=500'), 400, 'invalid_request');
      // A job of org B is invisible to org A.
      const b = await h.crawl({ url: `${site.origin}/about/`, limit: 1 }, other);
      assert.equal((await h.waitDone(b.id, { key: other })).status, 'completed');
      assert.equal(
        (await h.t.call('GET', '/api/connect/crawling/', { key: other })).body.total,
        theirTotal + 1,
      );
      expectError(await h.t.call('GET', `/api/connect/crawling/${b.id}`), 404, 'not_found');
      assert.equal((await h.crawledItems(other)).length, 1);
    });

    test('cancel stops the crawl at once; cancelling again is a no-op, a finished job is a conflict', async () => {
      const slow = await serveDirectory(FASTAPI_DOCS, { delayMs: 150 });
      try {
        const job = await h.crawl({ url: `${slow.origin}/`, limit: 100 });
        const deadline = Date.now() + 60_000;
        while ((await h.get(job.id)).completed_pages < 2) {
          assert.ok(Date.now() < deadline, 'crawl started');
          await sleep(20);
        }
        const res = await h.t.call('DELETE', `/api/connect/crawling/${job.id}`);
        assert.equal(res.status, 200);
        assert.equal(res.body.status, 'cancelled');
        assert.match(res.body.completed_at, ISO_UTC);
        assert.equal(res.body.error_message, null);
        const frozen = res.body.completed_pages as number;
        await sleep(200);
        const requestsAfter = slow.requests.length;
        await sleep(500);
        assert.equal(slow.requests.length, requestsAfter, 'no request after the cancel settled');
        const later = await h.get(job.id);
        assert.equal(later.status, 'cancelled');
        assert.equal(later.completed_pages, frozen, 'nothing committed after the cancel');
        assert.ok(later.completed_pages < later.total_pages, 'the rest of the frontier was never done');
        assert.equal((await h.t.call('DELETE', `/api/connect/crawling/${job.id}`)).body.status, 'cancelled');
        const finished = await h.crawl({ url: `${site.origin}/about/`, limit: 1 });
        await h.waitDone(finished.id);
        expectError(await h.t.call('DELETE', `/api/connect/crawling/${finished.id}`), 409, 'conflict');
      } finally {
        await slow.close();
      }
    });
  });
}

describe('private targets without KB_CRAWL_ALLOW_PRIVATE', () => {
  let h: CrawlTestApp;
  let site: ServedSite;
  before(async () => {
    site = await serveDirectory(FASTAPI_DOCS);
    // Storage plays no part here; the native Postgres database starts in a fraction of PGlite's time.
    h = await startCrawlApp('postgres', { config: { KB_CRAWL_ALLOW_PRIVATE: 'false' } });
  });
  after(async () => {
    await h?.close();
    await site?.close();
  });

  test('a crawl of a loopback address fails with a clear message and fetches nothing', async () => {
    const port = new URL(site.origin).port;
    // Dotted, decimal and IPv6 spellings, and a DNS name that resolves to loopback.
    for (const url of [
      `${site.origin}/`,
      `http://2130706433:${port}/`,
      `http://[::1]:${port}/`,
      `http://localhost:${port}/`,
    ]) {
      const job = await h.crawl({ url, limit: 5 });
      const done = await h.waitDone(job.id);
      assert.equal(done.status, 'failed', url);
      assert.match(done.error_message!, /not public/, url);
      assert.match(done.error_message!, /KB_CRAWL_ALLOW_PRIVATE/);
      assert.match(done.completed_at!, ISO_UTC);
      assert.equal(done.total_pages, 0);
    }
    assert.deepEqual(site.requests, [], 'not a single request reached the site');
    assert.equal((await h.crawledItems()).length, 0);
  });
});
