/**
 * The crawler end to end on purpose-made sites (real HTTP servers on loopback, the real app and job
 * engine): path filters, external links, depth, robots.txt, redirects, traps, retries, size caps,
 * non-HTML, duplicates, re-crawls. Storage does not change these rules, so they run on PGlite; budget,
 * resume and the API run in both modes elsewhere (test/http/crawl.test.ts, runner-resume.test.ts).
 *
 * The crawler's fetch here refuses every address but 127.0.0.1, like production refuses private ones,
 * so a redirect to 127.0.0.2 shows the per-hop address check.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { CrawlJobView } from '../../src/db/repositories/crawl-jobs.ts';
import { createOutboundFetch } from '../../src/net/outbound.ts';
import { type CrawlTestApp, startCrawlApp } from '../http/crawl-helpers.ts';
import { type RouteHandler, type ServedRoutes, serveRoutes } from '../support/sites.ts';

const UA = 'KbCrawler/1.0 (test)';

/** A small HTML page: navigation with the links, a main article, a footer. */
function page(title: string, text: string, links: string[] = [], extra = ''): string {
  const nav = links.map((l) => `<a href="${l.replace(/&/g, '&amp;')}">${l}</a>`).join(' ');
  return `<!doctype html><html><head><title>${title} - Test Site</title></head><body>
<nav>${nav}</nav>
<main><h1>${title}</h1><p>${text}</p><p>This paragraph makes the article long enough to be trusted as the page's main content by the extractor.</p></main>
${extra}<footer>Test Site footer, generated at ${Date.now()}</footer></body></html>`;
}

const html = (title: string, text: string, links: string[] = []): RouteHandler => ({
  body: page(title, text, links),
});

function redirect(to: string | ((origin: string) => string), status = 301): RouteHandler {
  return (_req, res, ctx) => {
    res.writeHead(status, { location: typeof to === 'string' ? to : to(ctx.origin) });
    res.end();
  };
}

describe('crawler on purpose-made sites', () => {
  let h: CrawlTestApp;
  const sites: ServedRoutes[] = [];
  const serve = async (routes: Record<string, RouteHandler>, host?: string) => {
    const s = await serveRoutes(routes, host ? { host } : {});
    sites.push(s);
    return s;
  };

  before(async () => {
    h = await startCrawlApp('pglite', {
      config: { KB_CRAWL_ALLOW_PRIVATE: 'false' },
      crawler: {
        userAgent: UA,
        maxPageBytes: 256 * 1024,
        fetch: createOutboundFetch({
          allowPrivate: false,
          userAgent: UA,
          maxBytes: 256 * 1024,
          timeoutMs: 10_000,
          isAllowedAddress: (a) => a === '127.0.0.1',
        }),
      },
    });
  });
  after(async () => {
    await h?.close();
    for (const s of sites) await s.close();
  });

  const crawl = async (body: Record<string, unknown>): Promise<CrawlJobView> => {
    const job = await h.crawl(body);
    return h.waitDone(job.id);
  };
  /** Paths (with query) of the pages a crawl stored or found unchanged. */
  const stored = async (job: CrawlJobView): Promise<string[]> => {
    const rows = await h.t.db.query<{ url: string }>(
      `SELECT url FROM crawl_frontier WHERE crawl_job_id = $1 AND outcome IN ('created', 'updated', 'unchanged')`,
      [job.id],
    );
    return rows.map((r) => {
      const u = new URL(r.url);
      return u.pathname + u.search;
    });
  };
  const sorted = (xs: string[]) => [...xs].sort();
  const paths = (urls: string[] | undefined) =>
    (urls ?? []).map((u) => new URL(u).pathname + new URL(u).search);

  describe('scope', () => {
    let site: ServedRoutes;
    let ext: ServedRoutes;
    before(async () => {
      ext = await serve({
        '/page': html('External Page', 'A page on another site that links further.', ['/page2']),
        '/page2': html('External Two', 'The second page of the other site.'),
      });
      site = await serve({
        '/': html('Home', 'The home page of the scope site.', [
          '/docs/a',
          '/docs/b',
          '/docs/internal/secret',
          '/blog/post',
          `${ext.origin}/page`,
          '/deep/1',
        ]),
        '/docs/a': html('Doc A', 'Documentation page A about installing the product.'),
        '/docs/b': html('Doc B', 'Documentation page B about configuring the product.'),
        '/docs/internal/secret': html('Internal', 'Internal notes nobody should crawl.'),
        '/blog/post': html('Blog Post', 'A blog post announcing the release.'),
        '/deep/1': html('Deep One', 'First level of the deep chain.', ['/deep/2']),
        '/deep/2': html('Deep Two', 'Second level of the deep chain.', ['/deep/3']),
        '/deep/3': html('Deep Three', 'Third level of the deep chain.'),
        '/sitemap.xml': {
          headers: { 'content-type': 'application/xml' },
          body: '<urlset><url><loc>/deep/3</loc></url><url><loc>/docs/a</loc></url></urlset>',
        },
      });
    });

    test('includePaths and excludePaths: excludes win; a start page outside them is read for links only', async () => {
      const before = site.requests.length;
      const job = await crawl({
        url: `${site.origin}/`,
        includePaths: ['^/docs/'],
        excludePaths: ['/internal/'],
      });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.deepEqual(sorted(await stored(job)), ['/docs/a', '/docs/b']);
      assert.equal(job.total_pages, 2);
      assert.equal(job.completed_pages, 2);
      assert.deepEqual(sorted(paths(job.refused['not_included']?.sample)), [
        '/',
        '/blog/post',
        '/deep/1',
        '/deep/3',
      ]);
      assert.deepEqual(paths(job.refused['excluded']?.sample), ['/docs/internal/secret']);
      assert.deepEqual(job.refused['external']?.sample, [`${ext.origin}/page`]);
      const requested = site.requests.slice(before);
      assert.ok(
        !requested.includes('/blog/post') && !requested.includes('/docs/internal/secret'),
        requested.join(),
      );
      assert.equal(ext.requests.length, 0, 'nothing requested from the other site');
      const items = await h.crawledItems();
      const docA = items.find((i) => i.source_url === `${site.origin}/docs/a`);
      assert.equal(docA?.title, 'Doc A');

      const both = await crawl({
        url: `${site.origin}/`,
        includePaths: ['^/docs/'],
        excludePaths: ['^/docs/(b|internal)'],
      });
      assert.deepEqual(await stored(both), ['/docs/a'], 'a path both included and excluded is excluded');
    });

    test('allowExternalLinks follows other sites (their robots.txt read first)', async () => {
      const job = await crawl({ url: `${site.origin}/`, allowExternalLinks: true, limit: 50 });
      assert.equal(job.status, 'completed');
      const urls = await h.t.db.query<{ url: string }>(
        `SELECT url FROM crawl_frontier WHERE crawl_job_id = $1 AND outcome IN ('created', 'updated', 'unchanged')`,
        [job.id],
      );
      const set = new Set(urls.map((r) => r.url));
      assert.ok(set.has(`${ext.origin}/page`) && set.has(`${ext.origin}/page2`), [...set].join());
      assert.ok(set.has(`${site.origin}/deep/3`));
      assert.equal(ext.requests[0], '/robots.txt');
    });

    test('maxDepth counts links from the start page; sitemaps are not read then', async () => {
      const before = site.requests.length;
      const one = await crawl({ url: `${site.origin}/`, maxDepth: 1 });
      assert.deepEqual(sorted(await stored(one)), [
        '/',
        '/blog/post',
        '/deep/1',
        '/docs/a',
        '/docs/b',
        '/docs/internal/secret',
      ]);
      assert.deepEqual(paths(one.refused['depth']?.sample), ['/deep/2']);
      assert.ok(!site.requests.slice(before).includes('/sitemap.xml'));
      const zero = await crawl({ url: `${site.origin}/`, maxDepth: 0 });
      assert.deepEqual(await stored(zero), ['/']);
      assert.equal(zero.total_pages, 1);
    });
  });

  test('robots.txt: our own group applies, disallowed pages are never requested, Crawl-delay spaces requests', async () => {
    const times = new Map<string, number>();
    const timed =
      (title: string): RouteHandler =>
      (req, res) => {
        times.set(req.url ?? '', Date.now());
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(page(title, `The ${title} page of the polite site.`, ['/a', '/b', '/c', '/private/x']));
      };
    const site = await serve({
      '/robots.txt': {
        headers: { 'content-type': 'text/plain' },
        // Everyone else is shut out; our group lets us in except for /private/, slowly.
        body: 'User-agent: *\nDisallow: /\n\nUser-agent: KbCrawler\nDisallow: /private/\nCrawl-delay: 0.3\n',
      },
      '/': timed('Start'),
      '/a': timed('Alpha'),
      '/b': timed('Beta'),
      '/c': timed('Gamma'),
      '/private/x': timed('Private'),
    });
    const job = await crawl({ url: `${site.origin}/` });
    assert.equal(job.status, 'completed', JSON.stringify(job));
    assert.deepEqual(sorted(await stored(job)), ['/', '/a', '/b', '/c']);
    assert.ok(!site.requests.includes('/private/x'));
    assert.deepEqual(paths(job.refused['robots']?.sample), ['/private/x']);
    const starts = [...times.values()].sort((x, y) => x - y);
    // Arrival times at the site, each a little after its grant: a 50 ms allowance for a loaded machine.
    for (let i = 1; i < starts.length; i++) {
      assert.ok(starts[i]! - starts[i - 1]! >= 250, `requests ${starts[i]! - starts[i - 1]!} ms apart`);
    }

    const closed = await serve({
      '/robots.txt': { headers: { 'content-type': 'text/plain' }, body: 'User-agent: *\nDisallow: /\n' },
      '/': html('Closed', 'Nobody may crawl this.'),
    });
    const refused = await crawl({ url: `${closed.origin}/` });
    assert.equal(refused.status, 'failed');
    assert.match(refused.error_message!, /robots\.txt .* disallows/);
    assert.deepEqual(closed.requests, ['/robots.txt']);
  });

  test('redirects are followed hop by hop: stored under the target, loops and long chains end, each hop judged', async () => {
    const other = await serve({ '/x': html('Other', 'A page on another host.') });
    const privateSite = await serve({ '/secret': html('Secret', 'Behind the firewall.') }, '127.0.0.2');
    const site = await serve({
      '/robots.txt': {
        headers: { 'content-type': 'text/plain' },
        body: 'User-agent: *\nDisallow: /private/\n',
      },
      '/': html('Redirects', 'A page with links that move.', [
        '/old',
        '/loop-a',
        '/chain/1',
        '/to-other',
        '/to-known',
        '/a',
        '/to-robots',
      ]),
      '/old': redirect('/new'),
      '/new': html('New Place', 'The page that used to live at /old.'),
      '/loop-a': redirect('/loop-b', 302),
      '/loop-b': redirect('/loop-a', 302),
      '*': (_req, res, ctx) => {
        const m = /^\/chain\/(\d+)$/.exec(ctx.url.pathname);
        if (!m) {
          res.writeHead(404);
          res.end();
          return;
        }
        res.writeHead(302, { location: `/chain/${Number(m[1]) + 1}` });
        res.end();
      },
      '/to-other': redirect(`${other.origin}/x`, 302),
      '/to-known': redirect('/a'),
      '/a': html('Page A', 'The page both /a and /to-known lead to.'),
      '/to-robots': redirect('/private/p', 302),
      '/private/p': html('Private', 'Disallowed by robots.txt.'),
    });
    const job = await crawl({ url: `${site.origin}/` });
    assert.equal(job.status, 'completed', JSON.stringify(job));
    const items = await h.crawledItems();
    const newItem = items.find((i) => i.source_url === `${site.origin}/new`);
    assert.equal(newItem?.title, 'New Place', 'stored under the redirect target');
    assert.ok(!items.some((i) => i.source_url === `${site.origin}/old`));
    assert.equal(items.filter((i) => i.title === 'Page A').length, 1, '/to-known and /a are one page');
    assert.equal(job.outcomes['failed'], 2, 'the loop and the chain');
    assert.equal(job.outcomes['duplicate'], 1);
    assert.ok(site.requests.filter((r) => r.startsWith('/chain/')).length <= 6);
    assert.deepEqual(job.refused['external']?.sample, [`${other.origin}/x`]);
    assert.deepEqual(other.requests, [], 'an out-of-scope target is never requested');
    assert.deepEqual(paths(job.refused['robots']?.sample), ['/private/p']);
    assert.ok(!site.requests.includes('/private/p'));

    // A hop to a refused address (here anything but 127.0.0.1) is refused before it is requested.
    const jump = await serve({
      '/': html('Jump', 'A page that links to a redirect into the private network.', ['/to-private']),
      '/to-private': redirect(`${privateSite.origin}/secret`, 302),
    });
    const blocked = await crawl({ url: `${jump.origin}/`, allowExternalLinks: true });
    assert.equal(blocked.status, 'completed');
    assert.deepEqual(blocked.refused['blocked']?.sample, [`${privateSite.origin}/secret`]);
    assert.deepEqual(privateSite.requests, [], 'a refused address is never requested');
  });

  test('an infinite calendar is bounded by the page budget and the fetch cap', async () => {
    const site = await serve({
      '/': html('Calendar Home', 'Browse the events calendar.', ['/calendar?month=0']),
      '/calendar': (_req, res, ctx) => {
        const n = Number(ctx.url.searchParams.get('month') ?? '0');
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(
          page(`Month ${n}`, `Events planned for month number ${n}.`, [
            `/calendar?month=${n + 1}`,
            `/calendar?month=${n - 1}`,
          ]),
        );
      },
    });
    const job = await crawl({ url: `${site.origin}/`, limit: 15 });
    assert.equal(job.status, 'completed');
    assert.equal(job.total_pages, 15);
    assert.equal(job.completed_pages, 15);
    assert.ok(job.refused['budget']!.count >= 1);
    // Months -n and n read the same (near-duplicates): they cost fetches, never more than the fetch cap.
    assert.ok(job.fetched_pages <= job.fetch_limit);
    assert.ok(site.requests.filter((r) => r.startsWith('/calendar')).length <= job.fetch_limit);
  });

  test('429 and 5xx are retried with backoff, honouring Retry-After; a page that keeps failing is recorded', async () => {
    const busyTimes: number[] = [];
    const site = await serve({
      '/': html('Retry Home', 'Links to pages that fail at first.', ['/busy', '/flaky', '/down']),
      '/busy': (_req, res, ctx) => {
        busyTimes.push(Date.now());
        if (ctx.hits === 1) {
          res.writeHead(429, { 'retry-after': '1' });
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(page('Busy', 'This page answered 429 before it answered.'));
      },
      '/flaky': (_req, res, ctx) => {
        if (ctx.hits <= 2) {
          res.writeHead(503);
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(page('Flaky', 'This page answered 503 twice.'));
      },
      '/down': { status: 500, body: 'down' },
    });
    const job = await crawl({ url: `${site.origin}/` });
    assert.equal(job.status, 'completed');
    assert.deepEqual(sorted(await stored(job)), ['/', '/busy', '/flaky']);
    assert.ok(
      busyTimes.length === 2 && busyTimes[1]! - busyTimes[0]! >= 900,
      `Retry-After honoured: ${busyTimes}`,
    );
    assert.equal(site.hits.get('/down'), 3, 'three attempts, then given up');
    assert.equal(job.outcomes['failed'], 1);
    assert.deepEqual(paths(job.refused['failed']?.sample), ['/down']);
  });

  test('a huge page is capped at the size limit, not downloaded whole', async () => {
    let sent = 0;
    const site = await serve({
      '/': html('Huge Home', 'Links to a very large page.', ['/huge']),
      '/huge': (_req, res: http.ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<html><head><title>Huge</title></head><body><main><h1>Huge</h1>');
        const chunk = Buffer.from('<p>All work and no play makes a very large page. </p>'.repeat(1200));
        const pump = () => {
          while (sent < 40 * 1024 * 1024) {
            if (res.destroyed) return;
            sent += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end('</main></body></html>');
        };
        res.on('close', () => {
          sent = Math.min(sent, 40 * 1024 * 1024);
        });
        pump();
      },
    });
    const job = await crawl({ url: `${site.origin}/` });
    assert.equal(job.status, 'completed');
    assert.ok((await stored(job)).includes('/huge'));
    const [row] = await h.t.db.query<{ n: number }>(
      `SELECT length(content)::int AS n FROM items WHERE source_url = $1`,
      [`${site.origin}/huge`],
    );
    assert.ok(row!.n > 100_000 && row!.n <= 256 * 1024, `content of ${row!.n} characters`);
    assert.ok(sent < 16 * 1024 * 1024, `the server sent ${sent} bytes of 40 MiB before the crawler hung up`);
    const [f] = await h.t.db.query<{ detail: string }>(
      `SELECT detail FROM crawl_frontier WHERE crawl_job_id = $1 AND url LIKE '%/huge'`,
      [job.id],
    );
    assert.match(f!.detail, /truncated/);
  });

  test('non-HTML is skipped: by extension before any request, by content type after; a broken PDF is a refusal', async () => {
    const site = await serve({
      '/': html('Files', 'Links to files of all kinds.', [
        '/file.pdf',
        '/feed.xml',
        '/data',
        '/img',
        '/noext',
      ]),
      '/file.pdf': { headers: { 'content-type': 'application/pdf' }, body: '%PDF-1.4' },
      '/feed.xml': { headers: { 'content-type': 'application/xml' }, body: '<rss/>' },
      '/data': { headers: { 'content-type': 'application/json' }, body: '{"a":1}' },
      '/img': { headers: { 'content-type': 'image/png' }, body: Buffer.from([0x89, 0x50, 0x4e, 0x47]) },
      // No content type at all: recognised as HTML by its first bytes.
      '/noext': (_req, res) => {
        res.writeHead(200);
        res.end(page('No Type', 'An HTML page served without a content type.'));
      },
    });
    const job = await crawl({ url: `${site.origin}/` });
    assert.equal(job.status, 'completed');
    assert.deepEqual(sorted(await stored(job)), ['/', '/noext']);
    assert.deepEqual(sorted(paths(job.refused['not_html']?.sample)), ['/data', '/feed.xml', '/img']);
    assert.ok(!site.requests.includes('/feed.xml'));
    // PDFs are fetched and extracted (pdf.test.ts); this one is only a header.
    assert.deepEqual(paths(job.refused['pdf_unreadable']?.sample), ['/file.pdf']);
    assert.equal(job.outcomes['not_html'], 2);
  });

  test('pages whose text is the same as one already taken are stored once', async () => {
    const article =
      'Our refund policy: customers may return any product within thirty days of delivery for a full refund.';
    const site = await serve({
      '/': html('Policies', 'Index of the policy pages.', [
        '/article',
        '/article?utm_source=newsletter',
        '/print/article',
        '/article-copy',
        '/other',
      ]),
      // Same article, different navigation, sidebars and footers (and timestamps) around it.
      '/article': (_req, res, ctx) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        const side = ctx.url.search ? '<aside>Campaign sidebar</aside>' : '<aside>Related links</aside>';
        res.end(page('Refund Policy', article, ['/', '/other'], side));
      },
      '/print/article': {
        body: `<html><head><title>Refund Policy</title></head><body><main><h1>Refund Policy</h1><p>${article}</p><p>This paragraph makes the article long enough to be trusted as the page's main content by the extractor.</p></main></body></html>`,
      },
      '/article-copy': {
        body: page('Refund Policy', article.replace(/ /g, '  \n ')),
      },
      '/other': html('Shipping Policy', 'Orders ship within two business days from our warehouse.'),
    });
    const job = await crawl({ url: `${site.origin}/` });
    assert.equal(job.status, 'completed');
    const got = await stored(job);
    assert.equal(got.filter((p) => p.includes('article')).length, 1, got.join());
    assert.ok(got.includes('/other') && got.includes('/'));
    assert.equal(job.outcomes['duplicate'], 3);
    assert.equal(job.refused['duplicate']?.count, 3);
  });

  test('a re-crawl leaves unchanged pages alone (304), updates changed ones, removes 404/410 ones; tombstones hold', async () => {
    const content: Record<string, string> = {
      '/': page('Recrawl Home', 'The home page of the changing site.', ['/a', '/b', '/c']),
      '/a': page('Page A', 'Page A never changes.'),
      '/b': page('Page B', 'Version one of page B.'),
      '/c': page('Page C', 'Page C will be removed.'),
    };
    const conditional = new Map<string, string | undefined>();
    const serveContent: RouteHandler = (req, res, ctx) => {
      const body = content[ctx.url.pathname];
      conditional.set(ctx.url.pathname, req.headers['if-none-match']);
      if (body === undefined) {
        res.writeHead(410);
        res.end();
        return;
      }
      const etag = `"${createHash('sha1').update(body).digest('hex')}"`;
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, { etag });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html', etag });
      res.end(body);
    };
    const site = await serve({
      '/': serveContent,
      '/a': serveContent,
      '/b': serveContent,
      '/c': serveContent,
    });
    const first = await crawl({ url: `${site.origin}/` });
    assert.deepEqual(first.outcomes, { created: 4 });
    const itemOf = async (p: string) =>
      (await h.crawledItems()).find((i) => i.source_url === `${site.origin}${p}`) as
        | { id: string; title: string; updated_at: string }
        | undefined;
    const aBefore = await itemOf('/a');

    content['/b'] = page('Page B Revised', 'Version two of page B, rewritten.');
    delete content['/c'];
    const second = await crawl({ url: `${site.origin}/` });
    assert.equal(second.status, 'completed');
    assert.deepEqual(second.outcomes, { unchanged: 2, updated: 1, removed: 1 });
    assert.ok(conditional.get('/a'), 'the unchanged page was asked for conditionally');
    assert.equal((await itemOf('/a'))?.updated_at, aBefore?.updated_at);
    assert.equal((await itemOf('/b'))?.title, 'Page B Revised');
    assert.equal(await itemOf('/c'), undefined, 'the page that answers 410 is gone');

    // A user deletes two items: the start URL's comes back with a new crawl of it, the other stays deleted.
    const home = (await itemOf('/'))!;
    const a = (await itemOf('/a'))!;
    const del = await h.t.call('DELETE', '/api/connect/knowledgebase-items', {
      body: { ids: [home.id, a.id] },
    });
    assert.equal(del.body.deleted, 2);
    const third = await crawl({ url: `${site.origin}/` });
    assert.equal(third.status, 'completed');
    assert.ok(await itemOf('/'), 'a new crawl of the start URL brings its item back');
    assert.equal(await itemOf('/a'), undefined, 'a deleted page stays deleted across crawls of other URLs');
    assert.equal(third.outcomes['tombstoned'], 1);
  });
});
