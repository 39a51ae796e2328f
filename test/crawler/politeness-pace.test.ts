/**
 * A crawl's pace is the operator's to set and the crawl's to ask for within it: `maxConcurrency` and
 * `delayMs` in the create body (refused beyond the operator's bounds, 400), a robots.txt Crawl-delay when
 * larger (capped), back-off after a 429 with Retry-After, and hosts the operator lists as the
 * organizations' own going at their configured concurrency. Concurrency is counted at the loopback site
 * (requests in flight at once), never inferred from timing. Delays are checked as lower bounds between
 * the crawler's request starts, recorded where its fetch is called (in the same tick as the host gate
 * lets the request start, on PGlite): a busy machine only makes them longer. Arrivals at a site served
 * by the same busy process would not do: one arrival read late makes the next gap look short.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { createOutboundFetch, type OutboundFetch } from '../../src/net/outbound.ts';
import { type CrawlTestApp, startCrawlApp } from '../http/crawl-helpers.ts';
import { expectError, STORAGE_MODES } from '../support/harness.ts';
import { recordingSite } from '../support/recording-site.ts';

/** Timers fire a millisecond or so either side of their mark. */
const CLOCK_SLACK_MS = 5;

interface Started {
  origin: string;
  path: string;
  start: number;
  /** When the answer came back, and its status. */
  answered?: { at: number; status: number };
}

/** The crawler's fetch, recording when each request starts (its origin and path). */
function recordingFetch(): { fetch: OutboundFetch; started: Started[] } {
  const inner = createOutboundFetch({ allowPrivate: true, userAgent: 'KbCrawler/1.0 (test)' });
  const started: Started[] = [];
  const fetch: OutboundFetch = (url, init) => {
    const u = new URL(String(url));
    const record: Started = { origin: u.origin, path: u.pathname, start: performance.now() };
    started.push(record);
    return inner(url, init).then((res) => {
      record.answered = { at: performance.now(), status: res.status };
      return res;
    });
  };
  return { fetch, started };
}

/** Gaps between consecutive starts of requests to `origin` (any path: robots.txt and sitemaps too). */
function gapsAt(started: Started[], origin: string): number[] {
  const starts = started.filter((s) => s.origin === origin).map((s) => s.start);
  return starts.slice(1).map((t, i) => t - starts[i]!);
}

describe('crawl pace: bounds in the create body', () => {
  let h: CrawlTestApp;
  after(() => h?.close());

  test('beyond the operator bounds is a 400 in the API error shape that queues nothing; within them is kept', async () => {
    h = await startCrawlApp('pglite', {
      config: {
        KB_CRAWL_MAX_CONCURRENCY: '3',
        KB_CRAWL_MIN_DELAY_MS: '200',
        KB_CRAWL_MAX_CRAWL_DELAY_MS: '5000',
        KB_CRAWL_FAST_HOSTS: 'docs.own.example',
        KB_CRAWL_FAST_CONCURRENCY: '12',
      },
      workers: false,
    });
    const post = (body: Record<string, unknown>) =>
      h.t.call('POST', '/api/connect/crawling/', { body: { url: 'https://example.org/', ...body } });
    for (const [body, field] of [
      [{ maxConcurrency: 4 }, 'maxConcurrency'],
      [{ delayMs: 199 }, 'delayMs'],
      [{ delayMs: 5001 }, 'delayMs'],
      [{ maxConcurrency: 13, url: 'https://docs.own.example/' }, 'maxConcurrency'],
    ] as const) {
      const res = await post(body);
      expectError(res, 400, 'invalid_request');
      assert.match(res.body.message, new RegExp(`body\\.${field}`), JSON.stringify(res.body));
    }
    const listed = await h.t.call('GET', '/api/connect/crawling/');
    assert.equal(listed.status, 200);
    assert.equal(JSON.stringify(listed.body).includes('example'), false, 'nothing was queued');

    const kept = await post({ maxConcurrency: 3, delayMs: 200 });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.equal(kept.body.maxConcurrency, 3);
    assert.equal(kept.body.delayMs, 200);
    const own = await post({ url: 'https://docs.own.example/', maxConcurrency: 12, delayMs: 0 });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    const plain = await post({});
    assert.equal(plain.body.maxConcurrency, null, "not asked: the host's default");
    assert.equal(plain.body.delayMs, null);
  });
});

for (const mode of STORAGE_MODES) {
  describe(`crawl pace: fast hosts and maxConcurrency (${mode})`, () => {
    test("a host the operator lists goes at KB_CRAWL_FAST_CONCURRENCY; a crawl's maxConcurrency holds it lower", async () => {
      const h = await startCrawlApp(mode, {
        config: { KB_CRAWL_FAST_HOSTS: '127.0.0.1', KB_CRAWL_FAST_CONCURRENCY: '6' },
        // The tests' default pace elsewhere (4 per host), so only the fast-host setting can raise it.
        crawler: { perHostConcurrency: 2, minDelayMs: 0 },
      });
      const site = await recordingSite({ pages: 30, holdMs: 250 });
      try {
        h.startWorkers({ concurrency: 1 });
        const fast = await h.waitDone((await h.crawl({ url: site.origin, limit: 31 })).id);
        assert.equal(fast.status, 'completed', JSON.stringify(fast));
        assert.equal(fast.completed_pages, 31);
        assert.equal(site.peak, 6, 'six requests in flight at once, never more');

        const slow = await recordingSite({ pages: 30, holdMs: 250 });
        try {
          const held = await h.crawl({ url: slow.origin, limit: 31, maxConcurrency: 3 });
          assert.equal((await h.waitDone(held.id)).status, 'completed');
          assert.equal(slow.peak, 3);
        } finally {
          await slow.close();
        }
      } finally {
        await site.close();
        await h.close();
      }
    });
  });
}

describe('crawl pace: robots.txt Crawl-delay and delayMs', () => {
  let h: CrawlTestApp;
  after(() => h?.close());

  test('the larger of Crawl-delay and delayMs holds, one request at a time, even on a fast host; Crawl-delay is capped', async () => {
    const recorder = recordingFetch();
    h = await startCrawlApp('pglite', {
      config: { KB_CRAWL_FAST_HOSTS: '127.0.0.1' },
      crawler: { maxCrawlDelayMs: 400, fetch: recorder.fetch },
    });
    h.startWorkers({ concurrency: 1 });
    const robots = (delay: string) => `User-agent: *\nCrawl-delay: ${delay}\n`;

    // Crawl-delay 0.3 s against a fast host's 0 ms and the crawl's 50 ms: 0.3 s.
    const a = await recordingSite({ pages: 4, holdMs: 0, robots: robots('0.3') });
    // delayMs 350 against Crawl-delay 0.2 s: 0.35 s.
    const b = await recordingSite({ pages: 3, holdMs: 0, robots: robots('0.2') });
    // Crawl-delay 3600 s, capped at the operator's 0.4 s: the crawl ends, each gap at least the cap.
    const c = await recordingSite({ pages: 3, holdMs: 100, robots: robots('3600') });
    try {
      const jobs = [
        await h.crawl({ url: a.origin, limit: 5, delayMs: 50 }),
        await h.crawl({ url: b.origin, limit: 4, delayMs: 350 }),
        await h.crawl({ url: c.origin, limit: 4, maxConcurrency: 8 }),
      ];
      for (const job of jobs) assert.equal((await h.waitDone(job.id)).status, 'completed');
      for (const [site, least, pages] of [
        [a, 300, 5],
        [b, 350, 4],
        [c, 400, 4],
      ] as const) {
        // After robots.txt (read before the Crawl-delay is known): every request, pages and sitemaps.
        const gaps = gapsAt(recorder.started, site.origin).slice(1);
        assert.ok(gaps.length >= pages - 1, JSON.stringify(site.arrived));
        assert.equal(site.hits.filter((x) => x.path === '/' || x.path.startsWith('/p/')).length, pages);
        for (const gap of gaps)
          assert.ok(gap >= least - CLOCK_SLACK_MS, `gaps ${gaps.map(Math.round)} >= ${least}`);
        assert.equal(site.peak, 1, 'one request at a time under a Crawl-delay');
      }
    } finally {
      for (const s of [a, b, c]) await s.close();
    }
  });
});

describe('crawl pace: back-off', () => {
  let h: CrawlTestApp;
  after(() => h?.close());

  test('a 429 with Retry-After pauses the host that long, then the host gets a wider gap than the crawl asked', async () => {
    const recorder = recordingFetch();
    h = await startCrawlApp('pglite', {
      crawler: { perHostConcurrency: 2, minDelayMs: 0, fetch: recorder.fetch },
    });
    h.startWorkers({ concurrency: 1 });
    const arrivals: Array<{ path: string; start: number; status: number }> = [];
    let throttled = false;
    const links = Array.from({ length: 8 }, (_, i) => `<a href="/p/${i + 1}">page ${i + 1}</a>`).join(' ');
    const server = http.createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const start = performance.now();
      // The third page asked for is refused once, with Retry-After: 1.
      const pagesBefore = arrivals.filter((a) => a.path.startsWith('/p/')).length;
      if (path.startsWith('/p/') && pagesBefore === 2 && !throttled) {
        throttled = true;
        arrivals.push({ path, start, status: 429 });
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' });
        res.end('slow down');
        return;
      }
      const page =
        path === '/' ? `<h1>Home</h1>${links}` : `<h1>Page ${path}</h1><p>${'words '.repeat(40)}${path}</p>`;
      const status = path === '/' || /^\/p\/[1-8]$/.test(path) ? 200 : 404;
      arrivals.push({ path, start, status });
      res.writeHead(status, { 'content-type': status === 200 ? 'text/html' : 'text/plain' });
      res.end(status === 200 ? page : 'none');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const job = await h.waitDone((await h.crawl({ url: origin, limit: 9 })).id);
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(job.completed_pages, 9, 'the throttled page was fetched again');
      const mine = recorder.started.filter((s) => s.origin === origin);
      const throttledAt = mine.find((s) => s.answered?.status === 429)?.answered?.at;
      assert.ok(throttledAt !== undefined, JSON.stringify(arrivals));
      const later = mine.filter((s) => s.start > throttledAt).map((s) => s.start);
      assert.ok(later.length >= 3, JSON.stringify(arrivals));
      // Nothing was sent to the host for the Retry-After second.
      const pause = later[0]! - throttledAt;
      assert.ok(pause >= 1000 - CLOCK_SLACK_MS, `${pause}`);
      // Then not at the crawl's 0 ms: the back-off's gap, narrowing from 1 s (0.75 s after one good answer).
      const gap = later[1]! - later[0]!;
      assert.ok(gap >= 700 - CLOCK_SLACK_MS, `gap after the pause ${gap}`);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
