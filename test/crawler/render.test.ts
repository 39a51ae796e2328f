/**
 * `renderJavaScript`: pages a script builds are stored as a browser shows them (Debian's Chromium through
 * playwright-core, as the console tests drive it), the browser reaches nothing the crawler's outbound
 * checks refuse, and without a browser the crawl goes on plainly and says so.
 *
 * The crawler's fetch here refuses every address but 127.0.0.1, as production refuses private ones; the
 * private target listens on 127.0.0.2. Rendering does not depend on storage: PGlite only. Time limits are
 * generous (a busy machine starts Chromium slowly); nothing here measures time.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { PageRenderer } from '../../src/crawler/render.ts';
import { defaultCrawlerSettings } from '../../src/crawler/settings.ts';
import { createOutboundFetch } from '../../src/net/outbound.ts';
import { type CrawlTestApp, startCrawlApp } from '../http/crawl-helpers.ts';
import { CHROMIUM } from '../support/browser.ts';
import {
  LEAKY_PAGE,
  type PrivateTarget,
  SCRIPT_PAGES,
  serveScriptSite,
  servePrivateTarget,
} from '../support/script-site.ts';
import { type ServedRoutes, serveRoutes } from '../support/sites.ts';

const UA = 'KbCrawler/1.0 (test)';
const WAIT = { timeoutMs: 180_000 };

/** The crawler's fetch of these tests: only 127.0.0.1 may be reached. */
function loopbackOnlyFetch() {
  return createOutboundFetch({
    allowPrivate: false,
    userAgent: UA,
    maxBytes: 1024 * 1024,
    timeoutMs: 30_000,
    isAllowedAddress: (a) => a === '127.0.0.1',
  });
}

async function storedContent(h: CrawlTestApp, origin: string): Promise<Map<string, string>> {
  const rows = await h.t.db.query<{ source_url: string; content: string }>(
    `SELECT source_url, content FROM items WHERE source_type = 'crawl' AND source_url LIKE $1`,
    [`${origin}/%`],
  );
  return new Map(rows.map((r) => [new URL(r.source_url).pathname, r.content]));
}

describe('crawling pages a script builds', () => {
  let h: CrawlTestApp;
  let site: ServedRoutes;
  let leakySite: ServedRoutes;
  let target: PrivateTarget;

  before(async () => {
    assert.ok(
      existsSync(CHROMIUM),
      `Debian's chromium is not installed (${CHROMIUM}); ./dev.sh test installs it when run as root.`,
    );
    target = await servePrivateTarget('127.0.0.2');
    site = await serveScriptSite();
    leakySite = await serveScriptSite({ privateOrigin: target.origin });
    h = await startCrawlApp('pglite', {
      config: { KB_CRAWL_ALLOW_PRIVATE: 'false' },
      crawler: {
        userAgent: UA,
        fetch: loopbackOnlyFetch(),
        renderTimeoutMs: 60_000,
        renderPages: 2,
      },
    });
  });
  after(async () => {
    await h?.close();
    await site?.close();
    await leakySite?.close();
    await target?.close();
  });

  test('plain crawling stores the empty shell: no script-built text, no page reached past the start', async () => {
    const job = await h.crawl({ url: `${site.origin}/`, limit: 10 });
    const done = await h.waitDone(job.id, WAIT);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.renderJavaScript, false);
    const content = await storedContent(h, site.origin);
    for (const [path, text] of content)
      assert.ok(!text.includes(SCRIPT_PAGES[path]?.text ?? '\u0000'), `${path}: ${text}`);
    assert.ok(!site.requests.some((r) => r.startsWith('/guide')), site.requests.join(' '));
  });

  test('a rendering crawl stores what the script built, follows the links it wrote, then closes the browser', async () => {
    const job = await h.crawl({ url: `${site.origin}/`, limit: 10, renderJavaScript: true });
    assert.equal(job.renderJavaScript, true);
    const done = await h.waitDone(job.id, WAIT);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.warnings, [], JSON.stringify(done.warnings));
    const content = await storedContent(h, site.origin);
    for (const [path, page] of Object.entries(SCRIPT_PAGES)) {
      const text = content.get(path);
      assert.ok(text?.includes(page.text), `${path} stored as: ${text}`);
    }
    const titles = (await h.crawledItems()).map((i) => i.title).sort();
    assert.ok(titles.includes('Orbit Guide'), titles.join(', '));
    assert.equal(h.t.service.crawler.renderer.running, false, 'the browser outlived the last crawl using it');
  });

  test("the browser reaches no address the crawler refuses: the page's requests there are refused, and said", async () => {
    const job = await h.crawl({
      url: `${leakySite.origin}/leaky`,
      limit: 5,
      maxDepth: 0,
      renderJavaScript: true,
    });
    const done = await h.waitDone(job.id, WAIT);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const text = (await storedContent(h, leakySite.origin)).get('/leaky') ?? '';
    assert.ok(text.includes(LEAKY_PAGE.text), `the page was not rendered: ${text}`);
    assert.ok(!text.includes('secret'), text);
    assert.equal(target.requests(), 0, 'a request reached the private address');
    assert.equal(target.connections(), 0, 'a connection reached the private address');
    const blocked = done.warnings.find((w) => w.code === 'render_blocked');
    assert.ok(blocked, JSON.stringify(done.warnings));
    assert.match(blocked.message, /127\.0\.0\.2/);
  });

  test('renderJavaScript must be a boolean (400, nothing queued)', async () => {
    const res = await h.t.call('POST', '/api/connect/crawling/', {
      body: { url: `${site.origin}/`, renderJavaScript: 'yes' },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
  });
});

describe('crawling with rendering asked but no browser', () => {
  let h: CrawlTestApp;
  let site: ServedRoutes;

  before(async () => {
    site = await serveScriptSite();
    h = await startCrawlApp('pglite', { crawler: { browserPath: '/nonexistent/chromium' } });
  });
  after(async () => {
    await h?.close();
    await site?.close();
  });

  test('the crawl goes on plainly and its job says once that pages were not rendered', async () => {
    const job = await h.crawl({ url: `${site.origin}/`, limit: 10, renderJavaScript: true });
    const done = await h.waitDone(job.id, WAIT);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.ok(done.fetched_pages >= 1);
    for (const [path, text] of await storedContent(h, site.origin))
      assert.ok(!text.includes(SCRIPT_PAGES[path]?.text ?? '\u0000'), `${path}: ${text}`);
    const warnings = done.warnings.filter((w) => w.code === 'render_unavailable');
    assert.equal(warnings.length, 1, JSON.stringify(done.warnings));
    assert.equal(warnings[0]!.count, 1);
    assert.match(warnings[0]!.message, /\/nonexistent\/chromium/);
    assert.equal(h.t.service.crawler.renderer.running, false);
  });
});

describe('the render pool', () => {
  test('renders at most `renderPages` pages at once in a process, whatever asks', async () => {
    // Each page's script asks /slow, which the site answers only after a while: pages rendering at once
    // overlap there, and the site counts the most it held together.
    let held = 0;
    let mostHeld = 0;
    const site = await serveRoutes({
      '/slow': (_req, res) => {
        held++;
        mostHeld = Math.max(mostHeld, held);
        setTimeout(() => {
          held--;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('"slow answer"');
        }, 300);
      },
    });
    const renderer = new PageRenderer({
      settings: { ...defaultCrawlerSettings(), userAgent: UA, renderPages: 2, renderTimeoutMs: 60_000 },
      fetch: loopbackOnlyFetch(),
    });
    const crawls = [renderer.session(), renderer.session()];
    const html = `<!doctype html><html><body><p id="out">waiting</p><script>
fetch('/slow').then((r) => r.json()).then((t) => { document.getElementById('out').textContent = t; });
</script></body></html>`;
    try {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => crawls[i % 2]!.render({ url: `${site.origin}/page/${i}`, html })),
      );
      for (const r of results) {
        assert.equal(r.kind, 'rendered', JSON.stringify(r));
        assert.ok(r.kind === 'rendered' && r.html.includes('slow answer'), JSON.stringify(r));
      }
      assert.equal(held, 0);
      assert.ok(mostHeld >= 1 && mostHeld <= 2, `${mostHeld} pages rendered at once`);
      assert.equal(renderer.running, true);
    } finally {
      for (const c of crawls) await c.close();
      await site.close();
    }
    assert.equal(renderer.running, false, 'the browser outlived the crawls using it');
  });

  test('a page whose script never yields fails alone at the time limit; the next page renders', async () => {
    const site = await serveRoutes({});
    // A short limit is safe here: a failed render is the expected outcome, whatever the machine's speed.
    const renderer = new PageRenderer({
      settings: { ...defaultCrawlerSettings(), userAgent: UA, renderPages: 1, renderTimeoutMs: 5_000 },
      fetch: loopbackOnlyFetch(),
    });
    const crawl = renderer.session();
    try {
      const stuck = await crawl.render({
        url: `${site.origin}/stuck`,
        html: '<!doctype html><html><body><p>before</p><script>for (;;) {}</script></body></html>',
      });
      assert.equal(stuck.kind, 'failed', JSON.stringify(stuck));
      const next = await crawl.render({
        url: `${site.origin}/next`,
        html: `<!doctype html><html><body><script>document.body.append('written by script')</script></body></html>`,
      });
      assert.equal(next.kind, 'rendered', JSON.stringify(next));
      assert.ok(next.kind === 'rendered' && next.html.includes('written by script'), JSON.stringify(next));
    } finally {
      await crawl.close();
      await site.close();
    }
  });
});
