/**
 * The budget buys content, in both storage modes: `limit` counts distinct pages
 * stored, so fetches that store nothing (404, non-HTML, duplicate, near-duplicate, noindex) do not use it
 * up; the fetch cap (3 x limit, at least limit + 10) ends a crawl of endless near-duplicates; and on the
 * generated store catalogue (100 products, 25 categories, 900 variant pages and sorted listings,
 * no canonical links, a sitemap listing every variant after its product) a crawl whose limit is the
 * number of distinct pages stores at least 95% distinct items and reaches every product, because the
 * frontier pushes back the URL patterns whose pages keep collapsing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { crawlBounds } from '../../src/crawler/settings.ts';
import { benchText } from '../fakes/workspace.ts';
import { type CrawlTestApp, startCrawlApp } from '../http/crawl-helpers.ts';
import { type CatalogueSite, serveCatalogue } from '../support/catalogue-site.ts';
import { STORAGE_MODES } from '../support/harness.ts';
import { type RouteHandler, type ServedRoutes, serveRoutes } from '../support/sites.ts';

const VOCABULARY =
  'granite harbour lantern meadow copper falcon willow ember glacier thistle orchard basalt heron saffron tundra marble cobalt juniper lagoon cedar'.split(
    ' ',
  );
const prose = (doc: number) => benchText(VOCABULARY, doc, 3).paragraph(10);

function page(title: string, text: string, links: string[] = [], head = ''): RouteHandler {
  const nav = links.map((l) => `<a href="${l}">${l}</a>`).join(' ');
  return {
    body: `<!doctype html><html><head><title>${title}</title>${head}</head><body><nav>${nav}</nav><main><h1>${title}</h1><p>${text}</p></main></body></html>`,
  };
}

for (const mode of STORAGE_MODES) {
  describe(`the crawl budget (${mode})`, () => {
    let h: CrawlTestApp;
    const sites: ServedRoutes[] = [];
    before(async () => {
      h = await startCrawlApp(mode);
    });
    after(async () => {
      await h?.close();
      for (const s of sites) await s.close();
    });

    test('fetches that store nothing do not use up the limit', async () => {
      const real = ['/a', '/b', '/c', '/d'];
      const waste = [
        '/missing-1',
        '/missing-2',
        '/missing-3',
        '/data',
        '/copy-of-home',
        '/home-again',
        '/hidden',
      ];
      const routes: Record<string, RouteHandler> = {
        // The links that store nothing come first, so an admitted-URL budget would be spent on them.
        '/': page('Home', prose(0), [...waste, ...real]),
        '/data': { headers: { 'content-type': 'application/json' }, body: '{"a":1}' },
        // The home page's text again, and again with a word added.
        '/copy-of-home': page('Home', prose(0)),
        '/home-again': page('Home', `${prose(0)} Again.`),
        '/hidden': page('Hidden', prose(9), [], '<meta name="robots" content="noindex">'),
      };
      real.forEach((p, i) => {
        routes[p] = page(`Page ${p}`, prose(i + 1));
      });
      const site = await serveRoutes(routes);
      sites.push(site);
      const done = await h.waitDone((await h.crawl({ url: `${site.origin}/`, limit: 5 })).id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.completed_pages, 5, JSON.stringify(done.outcomes));
      assert.equal(done.total_pages, 5);
      const items = (await h.crawledItems()).filter((i) => i.source_url.startsWith(site.origin));
      assert.deepEqual(items.map((i) => new URL(i.source_url).pathname).sort(), ['/', ...real]);
      assert.equal(done.fetched_pages, 12, 'every link was fetched once');
      assert.equal(done.fetch_limit, crawlBounds(5).fetchLimit);
      assert.equal(done.outcomes['gone'], 3);
      assert.equal(done.outcomes['not_html'], 1);
      assert.equal(done.outcomes['noindex'], 1);
      assert.equal((done.outcomes['duplicate'] ?? 0) + (done.outcomes['near_duplicate'] ?? 0), 2);
    });

    test('the fetch cap ends a crawl of endless near-duplicates', async () => {
      const text = prose(20);
      const site = await serveRoutes({
        '/': page('Calendar', prose(21), ['/day?n=1']),
        '/day': (_req, res, ctx) => {
          const n = Number(ctx.url.searchParams.get('n'));
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end(
            (page(`Day`, `${text} Day ${n}.`, [`/day?n=${n + 1}`, `/day?n=${n + 2}`]) as { body: string })
              .body,
          );
        },
      });
      sites.push(site);
      const limit = 10;
      const done = await h.waitDone((await h.crawl({ url: `${site.origin}/`, limit })).id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const cap = crawlBounds(limit).fetchLimit;
      assert.equal(done.fetch_limit, cap);
      assert.equal(done.fetched_pages, cap, 'fetched up to the cap');
      assert.equal(site.requests.filter((r) => r.startsWith('/day')).length, cap - 1);
      assert.equal(done.completed_pages, 2, 'home and the first day; the rest repeat it');
      assert.equal(done.total_pages, 2);
      assert.ok(done.refused['budget']!.count >= 1, 'what was still queued is refused for the budget');
      assert.equal(done.outcomes['near_duplicate'], cap - 2);
    });
  });
}

// Path-style variant URLs listed in the sitemap right after their product: neither depth, nor sitemap, nor
// a query tells them from products; only their pattern's collapses do. Query-style variants without a
// sitemap: found by links, a level below the products.
const CATALOGUES = [
  { mode: 'pglite', variantUrls: 'path', sitemap: 'all' },
  { mode: 'postgres', variantUrls: 'query', sitemap: 'none' },
] as const;

for (const c of CATALOGUES) {
  describe(`the generated catalogue, ${c.variantUrls} variants, sitemap ${c.sitemap} (${c.mode}): limit = distinct pages`, () => {
    let h: CrawlTestApp;
    let site: CatalogueSite;
    before(async () => {
      // Half the benchmark's catalogue (bench/crawl.ts crawls the whole one): 900 variant pages are as many
      // chances to spend the budget on near-copies as the learning needs.
      site = await serveCatalogue({
        sitemap: c.sitemap,
        variantUrls: c.variantUrls,
        products: 100,
        categories: 25,
      });
      h = await startCrawlApp(c.mode);
    });
    after(async () => {
      await h?.close();
      await site?.close();
    });

    test('at least 95% of the stored items are distinct and every product page is reached', async () => {
      const done = await h.waitDone(
        (await h.crawl({ url: `${site.origin}/`, limit: site.distinctPages })).id,
        { timeoutMs: 120_000 },
      );
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const items = await h.crawledItems();
      assert.equal(items.length, done.completed_pages);
      const contents = items.map((i) => site.contentOf(i.source_url));
      const distinct = new Set(contents.filter((x) => x !== null)).size;
      assert.ok(distinct / items.length >= 0.95, `${distinct} distinct of ${items.length} items`);
      const products = new Set(contents.filter((x) => x?.startsWith('product:')));
      assert.equal(products.size, site.productPaths.length, 'every product is an item');
      const urls = new Set(items.map((i) => new URL(i.source_url).pathname + new URL(i.source_url).search));
      const own = site.productPaths.filter((p) => urls.has(p)).length;
      assert.ok(own >= 0.95 * site.productPaths.length, `${own} products stored under their own URL`);
      assert.ok(done.fetched_pages <= done.fetch_limit);
      console.log(
        `catalogue (${c.variantUrls}, sitemap ${c.sitemap}): ${items.length} items, ${distinct} distinct, ` +
          `${products.size} products (${own} under their own URL), ${done.fetched_pages} fetches ` +
          `(${(done.fetched_pages / items.length).toFixed(2)} per item), outcomes ${JSON.stringify(done.outcomes)}`,
      );
    });
  });
}
