/**
 * Variants collapse on store shapes the first catalogue does not have, and distinct documentation pages
 * never do. Two generated stores (test/support/catalogue-store.ts: variants that differ in title, SKU,
 * colour, size and price, product pages with reviews the variants lack, variants reachable only through
 * links at the products' depth; catalogue-listed.ts: query-string variants listed in the sitemap before
 * their product, faceted listings): with `limit` equal to the distinct pages, at least 95% of the stored
 * items are distinct and every product is reached. The fastapi-docs mirror and a generated reference
 * manual (templated pages that differ in a name, a type and a sentence or two) are stored whole: no page is
 * refused as a near-duplicate.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type CrawlTestApp, startCrawlApp } from '../http/crawl-helpers.ts';
import { serveListedStore } from '../support/catalogue-listed.ts';
import { serveStore, type StoreSite } from '../support/catalogue-store.ts';
import type { StorageMode } from '../support/harness.ts';
import { serveReferenceManual } from '../support/reference-manual.ts';
import { type ServedSite, serveDirectory } from '../support/sites.ts';

const SHAPES: Array<{ name: string; mode: StorageMode; serve: () => Promise<StoreSite> }> = [
  { name: 'variants by links, product pages with reviews', mode: 'pglite', serve: () => serveStore() },
  {
    name: 'query variants listed in the sitemap first, facets',
    mode: 'postgres',
    serve: () => serveListedStore(),
  },
];

for (const shape of SHAPES) {
  describe(`a store, ${shape.name} (${shape.mode}): limit = distinct pages`, () => {
    let h: CrawlTestApp;
    let site: StoreSite;
    before(async () => {
      site = await shape.serve();
      h = await startCrawlApp(shape.mode);
    });
    after(async () => {
      await h?.close();
      await site?.close();
    });

    test('at least 95% of the stored items are distinct and every product is reached', async () => {
      const done = await h.waitDone(
        (await h.crawl({ url: `${site.origin}/`, limit: site.distinctPages })).id,
        { timeoutMs: 120_000 },
      );
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const items = await h.crawledItems();
      const contents = items.map((i) => site.contentOf(i.source_url));
      const distinct = new Set(contents.filter((x) => x !== null)).size;
      const products = new Set(contents.filter((x) => x?.startsWith('product:'))).size;
      console.log(
        `${shape.name}: ${items.length} items, ${distinct} distinct, ${products} of ${site.productPaths.length} products, ` +
          `${done.fetched_pages} fetches, outcomes ${JSON.stringify(done.outcomes)}`,
      );
      assert.ok(distinct / items.length >= 0.95, `${distinct} distinct of ${items.length} items`);
      assert.equal(products, site.productPaths.length, 'every product is reached');
    });
  });
}

describe('distinct documentation pages never collapse (pglite)', () => {
  let h: CrawlTestApp;
  const sites: ServedSite[] = [];
  before(async () => {
    h = await startCrawlApp('pglite');
  });
  after(async () => {
    await h?.close();
    for (const s of sites) await s.close();
  });

  test('a generated reference manual is stored whole', async () => {
    const manual = await serveReferenceManual();
    sites.push(manual);
    const done = await h.waitDone((await h.crawl({ url: `${manual.origin}/`, limit: 1000 })).id, {
      timeoutMs: 120_000,
    });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.refused['near_duplicate'], undefined, JSON.stringify(done.refused['near_duplicate']));
    const stored = new Set(
      (await h.crawledItems())
        .filter((i) => i.source_url.startsWith(manual.origin))
        .map((i) => new URL(i.source_url).pathname),
    );
    assert.deepEqual(
      manual.paths.filter((p) => !stored.has(p)),
      [],
    );
  });

  test('the fastapi-docs mirror is stored whole', async () => {
    const site = await serveDirectory(
      fileURLToPath(new URL('../../../shared/data/sites/fastapi-docs', import.meta.url)),
    );
    sites.push(site);
    const done = await h.waitDone((await h.crawl({ url: `${site.origin}/`, limit: 1000 })).id, {
      timeoutMs: 120_000,
    });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.refused['near_duplicate'], undefined, JSON.stringify(done.refused['near_duplicate']));
    assert.equal(done.refused['duplicate'], undefined, JSON.stringify(done.refused['duplicate']));
    assert.equal(done.completed_pages, 154);
  });
});
