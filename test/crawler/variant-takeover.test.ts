/**
 * A variant met before the page it varies gives its place to that page: the crawl reaches a variant
 * first (the home page links only the variants; each links its product), stores it, and when the product
 * comes, the product is stored and the variant's item goes (its URL counted as a near-duplicate of the
 * product, its slot in the page budget free again). Both ways a product page may relate to its variant:
 * one with reviews the variant lacks (the variant is a variant of it, not the other way round), and one
 * without (each is a variant of the other; the simpler URL is kept). With `limit` equal to the distinct
 * pages, every product is stored and no variant is.
 *
 * What it cannot do: a budget spent on variants before any product is fetched ends the crawl (the
 * store-shapes test measures whole stores, where URL-pattern push-back keeps that from happening).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { benchText } from '../fakes/workspace.ts';
import { type CrawlTestApp, startCrawlApp } from '../http/crawl-helpers.ts';
import { STORAGE_MODES } from '../support/harness.ts';
import { STORE_VOCABULARY } from '../support/catalogue-store.ts';
import { type RouteHandler, type ServedRoutes, serveRoutes } from '../support/sites.ts';

const REVIEWS =
  'loved great fits runs small large returned ordered again gift quality colour true photos arrived quickly perfect disappointed comfortable sturdy itchy cosy flattering washes well after months'.split(
    ' ',
  );

function page(title: string, paragraphs: string[], links: string[] = []): RouteHandler {
  const nav = links.map((l) => `<a href="${l}">${l}</a>`).join(' ');
  return {
    body: `<!doctype html><html><head><title>${title}</title></head><body><nav>${nav}</nav><main><h1>${title}</h1>${paragraphs
      .map((p) => `<p>${p}</p>`)
      .join('')}</main><footer>Harbour Outfitters. Free returns within 60 days.</footer></body></html>`,
  };
}

/** A product (with or without reviews) and two variant pages of it, at `/<slug>` and `/<slug>/<option>`. */
function product(slug: string, name: string, doc: number, withReviews: boolean) {
  const t = benchText(STORE_VOCABULARY, doc, 3);
  const description = [t.paragraph(4), t.paragraph(4)];
  const r = benchText(REVIEWS, doc + 1, 3);
  const reviews = withReviews
    ? Array.from({ length: 4 }, (_, i) => `Reviewer ${i + 1}, ${3 + (i % 3)} stars: ${r.paragraph(2)}`)
    : ['No reviews yet.'];
  const variant = (colour: string, size: string, price: number): RouteHandler =>
    page(
      `${name} - ${colour} / ${size}`,
      [
        `$${price}.00`,
        `SKU: HO-${doc}-${colour.slice(0, 3).toUpperCase()}-${size}. In stock: ${doc % 9}.`,
        `Colour ${colour}. Size ${size}.`,
        ...description,
      ],
      [`/${slug}`],
    );
  return {
    [`/${slug}`]: page(
      name,
      [`From $40.00`, ...description, `Options: Red / M, Navy / L.`, ...reviews],
      [`/${slug}/red-m`, `/${slug}/navy-l`, '/about'],
    ),
    [`/${slug}/red-m`]: variant('Red', 'M', 40),
    [`/${slug}/navy-l`]: variant('Navy', 'L', 42),
  };
}

const routes: Record<string, RouteHandler> = {
  '/': page(
    'Harbour Outfitters',
    [benchText(STORE_VOCABULARY, 1, 3).paragraph(5)],
    ['/shirt/red-m', '/cap/red-m'],
  ),
  '/about': page('About us', [benchText(STORE_VOCABULARY, 2, 3).paragraph(6)]),
  ...product('shirt', 'Field Shirt', 10, true),
  ...product('cap', 'Wool Cap', 20, false),
};
/**
 * Home, the two products and a page linked from the products: without the take-over, the two variants
 * met first and one product spend the budget and the other product is never reached.
 */
const DISTINCT = ['/', '/about', '/cap', '/shirt'];

for (const mode of STORAGE_MODES) {
  describe(`a variant stored before its product gives its place to the product (${mode})`, () => {
    let h: CrawlTestApp;
    let site: ServedRoutes;
    before(async () => {
      site = await serveRoutes(routes);
      h = await startCrawlApp(mode, { crawler: { pageConcurrency: 1 } });
    });
    after(async () => {
      await h?.close();
      await site?.close();
    });

    test('with limit = distinct pages, every product is stored and no variant; the variants are counted on their product', async () => {
      const done = await h.waitDone((await h.crawl({ url: `${site.origin}/`, limit: DISTINCT.length })).id, {
        timeoutMs: 60_000,
      });
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const items = await h.crawledItems();
      assert.deepEqual(items.map((i) => new URL(i.source_url).pathname).sort(), DISTINCT);
      assert.equal(done.completed_pages, DISTINCT.length);
      assert.equal(done.outcomes['created'], DISTINCT.length, JSON.stringify(done.outcomes));

      const rows = await h.t.db.query<{ url: string; outcome: string; detail: string | null }>(
        'SELECT url, outcome, detail FROM crawl_frontier WHERE crawl_job_id = $1',
        [done.id],
      );
      const row = (path: string) => rows.find((r) => r.url === `${site.origin}${path}`);
      for (const slug of ['shirt', 'cap']) {
        // Met first, stored, then taken over by its product.
        const first = row(`/${slug}/red-m`)!;
        assert.equal(first.outcome, 'near_duplicate', JSON.stringify(first));
        assert.equal(
          first.detail,
          `near-duplicate of ${site.origin}/${slug} (a variant of it, stored first and taken over)`,
        );
        assert.equal(
          done.refused['near_duplicate']?.of?.[`${site.origin}/${slug}/red-m`],
          `${site.origin}/${slug}`,
        );
        // Met after its product (unless the budget was spent by then): refused as a variant of it.
        const second = row(`/${slug}/navy-l`)!;
        assert.ok(['near_duplicate', 'budget'].includes(second.outcome), JSON.stringify(second));
        const variants = second.outcome === 'near_duplicate' ? 2 : 1;
        const kept = items.find((i) => i.source_url === `${site.origin}/${slug}`)!;
        assert.ok(kept.tags.includes(`variants:${variants}`), `${slug}: ${JSON.stringify(kept.tags)}`);
        // The variants' URL pattern counts the take-over as a collapse (what pushes a pattern back).
        const [pattern] = await h.t.db.query<{ fetched: number; collapsed: number }>(
          'SELECT fetched, collapsed FROM crawl_patterns WHERE crawl_job_id = $1 AND pattern = $2',
          [done.id, `//${new URL(site.origin).host}/${slug}/*`],
        );
        assert.deepEqual(pattern, { fetched: variants, collapsed: variants });
      }
    });
  });
}
