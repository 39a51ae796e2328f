/**
 * A generated store modelled on a real e-commerce platform's catalogue, served on loopback: the shape the
 * first generated catalogue (catalogue-site.ts) does not have. Variant pages are not the product page with
 * a word changed: each has its own title (`Name - Red / XL`), SKU, price (by size), attribute table and
 * "other options" list, and lacks the product page's reviews (most products have several: the product page
 * is then much longer than its variants). No canonical links, no sitemap; variants are reachable only
 * through links: the swatches on the product page and on every category listing (so they sit at the same
 * link depth as the products). Products have from one to twelve variants.
 *
 * URLs: `/shop/<category>/<product>.html` and `/shop/<category>/<product>/<sku>.html`.
 *
 * Every URL knows which distinct page it shows ({@link StoreSite.contentOf}).
 */
import type { ServerResponse } from 'node:http';
import { benchText } from '../fakes/workspace.ts';
import { type RouteHandler, type ServedRoutes, serveRoutes } from './sites.ts';

export interface StoreSite extends ServedRoutes {
  /** Home, categories and products: the pages with content of their own. */
  distinctPages: number;
  /** Path of every product page. */
  productPaths: string[];
  /** Pages a full crawl can reach. */
  totalPages: number;
  /** The distinct page a URL shows (`home`, `category:N`, `product:N`); null when none. */
  contentOf(url: string): string | null;
}

export const STORE_VOCABULARY =
  'soft cotton linen wool denim canvas leather suede velvet silk knit woven stitched lined padded quilted breathable durable lightweight warm cool classic modern relaxed tailored slim loose cropped long short sleeve collar pocket zip button hem seam cuff waist strap sole heel lace buckle trim pattern stripe check plain print dyed washed brushed organic recycled natural vintage everyday weekend travel outdoor city summer winter autumn spring layering fit comfort care wash tumble iron shade fade shrink stretch hold shape edge finish detail craft mill studio workshop harbour meadow forest river canyon coast valley ridge prairie orchard garden market village harvest evening morning'.split(
    ' ',
  );
const REVIEW_VOCABULARY =
  'loved great fits runs small large returned ordered again gift quality colour true photos arrived quickly perfect disappointed comfortable sturdy itchy cosy flattering washes well after months still daughter husband wife recommend stars would buy another pair soft seams held up nicely'.split(
    ' ',
  );
export const COLOURS = ['red', 'navy', 'olive', 'black', 'sand', 'white'];
export const SIZES = ['xs', 's', 'm', 'l', 'xl'];
const NOUNS =
  'shirt jacket sweater trousers scarf cap boots sandals dress skirt hoodie vest coat belt bag gloves'.split(
    ' ',
  );

export interface StoreProduct {
  id: number;
  slug: string;
  name: string;
  category: number;
  sku: string;
  basePrice: number;
  material: string;
  description: string[];
  reviews: Array<{ author: string; stars: number; text: string }>;
  variants: Array<{ colour: string; size: string; sku: string; price: number }>;
}

export interface StoreCategory {
  id: number;
  slug: string;
  name: string;
  intro: string;
  products: number[];
}

export function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function slugify(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/**
 * A deterministic store: `products` products over `categories` categories; `withReviews` of every 3
 * products carry reviews (4 to 8), the rest none; variants are a product-dependent slice of colours x sizes.
 */
export function buildStore(opts: {
  seed: number;
  products: number;
  categories: number;
  withReviews: number;
}): { products: StoreProduct[]; categories: StoreCategory[] } {
  const { seed } = opts;
  const categories: StoreCategory[] = Array.from({ length: opts.categories }, (_, i) => {
    const t = benchText(STORE_VOCABULARY, 20_000 + i, seed);
    const name = `${cap(t.word())} ${cap(NOUNS[i % NOUNS.length]!)}s ${i + 1}`;
    return { id: i, slug: slugify(name), name, intro: t.paragraph(2), products: [] };
  });
  const products: StoreProduct[] = Array.from({ length: opts.products }, (_, i) => {
    const t = benchText(STORE_VOCABULARY, 30_000 + i, seed);
    const r = benchText(REVIEW_VOCABULARY, 40_000 + i, seed);
    const name = `${cap(t.word())} ${cap(t.word())} ${cap(NOUNS[(i * 5) % NOUNS.length]!)}`;
    const category = i % opts.categories;
    categories[category]!.products.push(i);
    const sku = `HB-${String(1000 + i * 7).padStart(5, '0')}`;
    const basePrice = 25 + ((i * 37) % 150);
    const colours = COLOURS.slice(i % 3, (i % 3) + 1 + (i % 4));
    const sizes = i % 5 === 0 ? ['one size'] : SIZES.slice(i % 2, (i % 2) + 1 + (i % 3) + (i % 2));
    const variants = colours.flatMap((colour) =>
      sizes.map((size, k) => ({
        colour,
        size,
        sku: `${sku}-${colour.slice(0, 3).toUpperCase()}-${slugify(size).toUpperCase()}`,
        price: basePrice + 2 * k,
      })),
    );
    const reviews =
      i % 3 < opts.withReviews
        ? Array.from({ length: 4 + (i % 5) }, (_, k) => ({
            author: `${cap(r.word())} ${String.fromCharCode(65 + ((i + k) % 26))}.`,
            stars: 3 + ((i + k) % 3),
            text: `${r.sentence(14)} ${r.sentence(12)}`,
          }))
        : [];
    return {
      id: i,
      slug: slugify(name) + `-${i + 1}`,
      name: `${name} ${i + 1}`,
      category,
      sku,
      basePrice,
      material: `${t.word()} ${t.word()}`,
      description: [t.paragraph(3), t.paragraph(2)],
      reviews,
      variants,
    };
  });
  return { products, categories };
}

/** Builds the store and serves it. */
export async function serveStore(opts: { seed?: number; products?: number; categories?: number } = {}) {
  const { products, categories } = buildStore({
    seed: opts.seed ?? 1,
    products: opts.products ?? 120,
    categories: opts.categories ?? 12,
    withReviews: 2,
  });
  const categoryPath = (c: StoreCategory) => `/shop/${c.slug}.html`;
  const productPath = (p: StoreProduct) => `/shop/${categories[p.category]!.slug}/${p.slug}.html`;
  const variantPath = (p: StoreProduct, v: number) =>
    `/shop/${categories[p.category]!.slug}/${p.slug}/${p.variants[v]!.sku.toLowerCase()}.html`;

  const layout = (title: string, main: string) => `<!doctype html>
<html><head><title>${title} | Northwind Supply</title></head><body>
<header><a href="/">Northwind Supply</a> <a href="/cart">Cart</a></header>
<nav><ul>${categories.map((c) => `<li><a href="${categoryPath(c)}">${c.name}</a></li>`).join('')}</ul></nav>
<main>${main}</main>
<footer><p>Northwind Supply. Shipping in 2 to 4 days, free over $80. Returns within 60 days.</p></footer>
</body></html>`;

  const options = (p: StoreProduct) =>
    `<ul class="swatches">${p.variants.map((v, i) => `<li><a href="${variantPath(p, i)}">${cap(v.colour)} / ${v.size.toUpperCase()}</a></li>`).join('')}</ul>`;

  const productMain = (p: StoreProduct) => {
    const prices = p.variants.map((v) => v.price);
    return `<nav class="crumbs"><a href="${categoryPath(categories[p.category]!)}">${categories[p.category]!.name}</a></nav>
<h1>${p.name}</h1>
<p class="price">From $${Math.min(...prices)}.00</p>
${p.description.map((d) => `<p>${d}</p>`).join('\n')}
<p>Material: ${p.material}.</p>
<h2>Options</h2>${options(p)}
${
  p.reviews.length > 0
    ? `<section class="reviews"><h2>Reviews (${p.reviews.length})</h2>${p.reviews
        .map((r) => `<article><h3>${r.author} - ${r.stars} stars</h3><p>${r.text}</p></article>`)
        .join('\n')}</section>`
    : '<p>No reviews yet.</p>'
}`;
  };

  const variantMain = (p: StoreProduct, i: number) => {
    const v = p.variants[i]!;
    return `<nav class="crumbs"><a href="${categoryPath(categories[p.category]!)}">${categories[p.category]!.name}</a> / <a href="${productPath(p)}">${p.name}</a></nav>
<h1>${p.name} - ${cap(v.colour)} / ${v.size.toUpperCase()}</h1>
<p class="price">$${v.price}.00</p>
<p>SKU: ${v.sku}. In stock: ${3 + ((p.id + i) % 20)}.</p>
<table><tr><th>Colour</th><td>${cap(v.colour)}</td></tr><tr><th>Size</th><td>${v.size.toUpperCase()}</td></tr><tr><th>Material</th><td>${p.material}</td></tr></table>
${p.description.map((d) => `<p>${d}</p>`).join('\n')}
<h2>Other options</h2>${options(p)}`;
  };

  const categoryMain = (c: StoreCategory) => `<h1>${c.name}</h1><p>${c.intro}</p>
<ul class="products">${c.products
    .map((id) => {
      const p = products[id]!;
      return `<li><a href="${productPath(p)}">${p.name}</a> from $${p.basePrice}.00. ${p.description[0]!.split('. ')[0]}. ${options(p)}</li>`;
    })
    .join('\n')}</ul>`;

  const homeMain = () => {
    const t = benchText(STORE_VOCABULARY, 99_998, opts.seed ?? 1);
    return `<h1>Northwind Supply</h1><p>${t.paragraph(3)}</p>`;
  };

  const html = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  };
  const categoryBySlug = new Map(categories.map((c) => [c.slug, c]));
  const productBySlug = new Map(products.map((p) => [p.slug, p]));
  const resolve = (
    path: string,
  ): { kind: 'category' | 'product' | 'variant'; id: number; v?: number } | null => {
    const m = /^\/shop\/([^/]+?)(?:\/([^/]+?)(?:\/([^/]+?))?)?\.html$/.exec(path);
    if (!m) return null;
    const c = categoryBySlug.get(m[1]!);
    if (!c) return null;
    if (m[2] === undefined) return { kind: 'category', id: c.id };
    const p = productBySlug.get(m[2]);
    if (!p || p.category !== c.id) return null;
    if (m[3] === undefined) return { kind: 'product', id: p.id };
    const v = p.variants.findIndex((x) => x.sku.toLowerCase() === m[3]);
    return v < 0 ? null : { kind: 'variant', id: p.id, v };
  };

  const routes: Record<string, RouteHandler> = {
    '/robots.txt': { headers: { 'content-type': 'text/plain' }, body: 'User-agent: *\nDisallow: /cart\n' },
    '/': (_req, res) => html(res, 200, layout('Home', homeMain())),
    '*': (_req, res, ctx) => {
      const found = resolve(ctx.url.pathname);
      if (!found) return html(res, 404, 'not found');
      if (found.kind === 'category') {
        const c = categories[found.id]!;
        return html(res, 200, layout(c.name, categoryMain(c)));
      }
      const p = products[found.id]!;
      if (found.kind === 'product') return html(res, 200, layout(p.name, productMain(p)));
      const v = p.variants[found.v!]!;
      return html(
        res,
        200,
        layout(`${p.name} - ${cap(v.colour)} / ${v.size.toUpperCase()}`, variantMain(p, found.v!)),
      );
    },
  };
  const served = await serveRoutes(routes);
  const contentOf = (url: string): string | null => {
    const u = new URL(url, served.origin);
    if (u.pathname === '/') return 'home';
    const found = resolve(u.pathname);
    if (!found) return null;
    return found.kind === 'category' ? `category:${found.id}` : `product:${found.id}`;
  };
  const variantCount = products.reduce((n, p) => n + p.variants.length, 0);
  return {
    ...served,
    distinctPages: 1 + categories.length + products.length,
    productPaths: products.map(productPath),
    totalPages: 1 + categories.length + products.length + variantCount,
    contentOf,
    /** Every page's path (for measuring similarities). */
    allPaths: [
      '/',
      ...categories.map(categoryPath),
      ...products.flatMap((p) => [productPath(p), ...p.variants.map((_, i) => variantPath(p, i))]),
    ],
  } satisfies StoreSite & { allPaths: string[] };
}
