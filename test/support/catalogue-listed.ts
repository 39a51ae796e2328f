/**
 * A generated store of another shape, served on loopback: everything behind one script with a query
 * (`/item.php?id=12`, `/item.php?id=12&sku=HB-00091-RED-M`, `/catalog.php?cat=3`), a sitemap that lists
 * every variant BEFORE its product (so neither depth nor the sitemap puts products first), and faceted
 * listings (`/catalog.php?cat=3&colour=red`: the category's listing filtered to one colour, linked from
 * every category page). Variant pages differ from each other in title, SKU, colour, size and price;
 * a third of the products carry reviews. No canonical links.
 *
 * Every URL knows which distinct page it shows ({@link StoreSite.contentOf}); a faceted listing shows
 * its category.
 */
import type { ServerResponse } from 'node:http';
import { benchText } from '../fakes/workspace.ts';
import {
  buildStore,
  COLOURS,
  cap,
  STORE_VOCABULARY,
  type StoreCategory,
  type StoreProduct,
  type StoreSite,
} from './catalogue-store.ts';
import { type RouteHandler, serveRoutes } from './sites.ts';

/** Builds the store and serves it. */
export async function serveListedStore(opts: { seed?: number; products?: number; categories?: number } = {}) {
  const { products, categories } = buildStore({
    seed: opts.seed ?? 2,
    products: opts.products ?? 120,
    categories: opts.categories ?? 10,
    withReviews: 1,
  });
  const productPath = (p: StoreProduct) => `/item.php?id=${p.id + 1}`;
  const variantPath = (p: StoreProduct, v: number) => `/item.php?id=${p.id + 1}&sku=${p.variants[v]!.sku}`;
  const categoryPath = (c: StoreCategory) => `/catalog.php?cat=${c.id + 1}`;
  const facetPath = (c: StoreCategory, colour: string) => `/catalog.php?cat=${c.id + 1}&colour=${colour}`;
  const coloursOf = (c: StoreCategory) =>
    COLOURS.filter((colour) =>
      c.products.some((id) => products[id]!.variants.some((v) => v.colour === colour)),
    );

  const layout = (title: string, main: string) => `<!doctype html>
<html><head><title>${title} - Fjord Goods</title></head><body>
<div id="top"><a href="/">Fjord Goods</a> | ${categories.map((c) => `<a href="${categoryPath(c)}">${c.name}</a>`).join(' | ')}</div>
<div id="content">${main}</div>
<div id="bottom">Fjord Goods AS. Prices include VAT. Customer service on weekdays.</div>
</body></html>`;

  const variantLinks = (p: StoreProduct) =>
    p.variants
      .map((v, i) => `<a href="${variantPath(p, i)}">${cap(v.colour)}, ${v.size.toUpperCase()}</a>`)
      .join(' ');

  const productMain = (p: StoreProduct) => `<h1>${p.name}</h1>
<p>Item no. ${p.sku}. Price from ${p.basePrice},00 kr.</p>
${p.description.map((d) => `<p>${d}</p>`).join('\n')}
<p>Choose: ${variantLinks(p)}</p>
${p.reviews.map((r) => `<div class="review"><b>${r.author}</b> (${r.stars}/5): ${r.text}</div>`).join('\n')}`;

  const variantMain = (p: StoreProduct, i: number) => {
    const v = p.variants[i]!;
    return `<h1>${p.name}, ${v.colour}, size ${v.size.toUpperCase()}</h1>
<p>Item no. ${v.sku}. Price ${v.price},00 kr. Colour: ${v.colour}. Size: ${v.size.toUpperCase()}.</p>
${p.description.map((d) => `<p>${d}</p>`).join('\n')}
<p>Back to <a href="${productPath(p)}">${p.name}</a>. Also: ${variantLinks(p)}</p>`;
  };

  const listing = (c: StoreCategory, colour: string | null) => {
    const listed = c.products
      .map((id) => products[id]!)
      .filter((p) => colour === null || p.variants.some((v) => v.colour === colour));
    return `<h1>${c.name}${colour ? ` in ${colour}` : ''}</h1><p>${c.intro}</p>
<p>Filter: ${coloursOf(c)
      .map((x) => `<a href="${facetPath(c, x)}">${x}</a>`)
      .join(' ')}</p>
<table>${listed
      .map(
        (p) =>
          `<tr><td><a href="${productPath(p)}">${p.name}</a></td><td>${p.basePrice},00 kr</td><td>${p.description[0]!.split('. ')[0]}.</td></tr>`,
      )
      .join('\n')}</table>`;
  };

  const html = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  };
  const sitemapPaths = [
    '/',
    ...categories.map(categoryPath),
    ...products.flatMap((p) => [...p.variants.map((_, i) => variantPath(p, i)), productPath(p)]),
  ];
  const resolve = (
    u: URL,
  ): { kind: 'home' | 'category' | 'facet' | 'product' | 'variant'; id: number; v?: number } | null => {
    if (u.pathname === '/' && u.search === '') return { kind: 'home', id: 0 };
    if (u.pathname === '/catalog.php') {
      const c = categories[Number(u.searchParams.get('cat')) - 1];
      if (!c) return null;
      const colour = u.searchParams.get('colour');
      if (colour === null) return { kind: 'category', id: c.id };
      return coloursOf(c).includes(colour) ? { kind: 'facet', id: c.id } : null;
    }
    if (u.pathname === '/item.php') {
      const p = products[Number(u.searchParams.get('id')) - 1];
      if (!p) return null;
      const sku = u.searchParams.get('sku');
      if (sku === null) return { kind: 'product', id: p.id };
      const v = p.variants.findIndex((x) => x.sku === sku);
      return v < 0 ? null : { kind: 'variant', id: p.id, v };
    }
    return null;
  };

  const routes: Record<string, RouteHandler> = {
    '/robots.txt': {
      headers: { 'content-type': 'text/plain' },
      body: 'User-agent: *\nAllow: /\nSitemap: /sitemap.xml\n',
    },
    '/sitemap.xml': (_req, res, ctx) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${sitemapPaths
          .map((p) => `<url><loc>${`${ctx.origin}${p}`.replace(/&/g, '&amp;')}</loc></url>`)
          .join('')}</urlset>`,
      );
    },
    '*': (_req, res, ctx) => {
      const found = resolve(ctx.url);
      if (!found) return html(res, 404, 'not found');
      if (found.kind === 'home') {
        const t = benchText(STORE_VOCABULARY, 99_997, opts.seed ?? 2);
        return html(res, 200, layout('Welcome', `<h1>Fjord Goods</h1><p>${t.paragraph(3)}</p>`));
      }
      if (found.kind === 'category' || found.kind === 'facet') {
        const c = categories[found.id]!;
        return html(res, 200, layout(c.name, listing(c, ctx.url.searchParams.get('colour'))));
      }
      const p = products[found.id]!;
      if (found.kind === 'product') return html(res, 200, layout(p.name, productMain(p)));
      return html(res, 200, layout(`${p.name} ${p.variants[found.v!]!.sku}`, variantMain(p, found.v!)));
    },
  };
  const served = await serveRoutes(routes);
  const contentOf = (url: string): string | null => {
    const found = resolve(new URL(url, served.origin));
    if (!found) return null;
    if (found.kind === 'home') return 'home';
    return found.kind === 'category' || found.kind === 'facet'
      ? `category:${found.id}`
      : `product:${found.id}`;
  };
  const facets = categories.reduce((n, c) => n + coloursOf(c).length, 0);
  return {
    ...served,
    distinctPages: 1 + categories.length + products.length,
    productPaths: products.map(productPath),
    totalPages: sitemapPaths.length + facets,
    contentOf,
    allPaths: [...sitemapPaths, ...categories.flatMap((c) => coloursOf(c).map((x) => facetPath(c, x)))],
  } satisfies StoreSite & { allPaths: string[] };
}
