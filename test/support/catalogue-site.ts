/**
 * A generated web-store catalogue served on loopback, for the crawler's near-duplicate and budget tests
 * and bench/crawl.ts: a home page, categories, products, and many near-duplicate pages without canonical
 * links - one variant page per colour and size of every product (the product page with the variant
 * selected: a word or two differ) and sorted views of every category (the same listing in another
 * order). Deterministic for a seed: the same options serve the same site.
 *
 * Every URL knows which distinct page it shows ({@link CatalogueSite.contentOf}), so a test can tell how
 * many of the stored items are distinct and whether every product was reached.
 */
import type { ServerResponse } from 'node:http';
import { benchText } from '../fakes/workspace.ts';
import { type RouteHandler, type ServedRoutes, serveRoutes } from './sites.ts';

export interface CatalogueOptions {
  /** Default 1. */
  seed?: number;
  /** Default 200. */
  products?: number;
  /** Default 50; products are spread over them evenly. */
  categories?: number;
  /** Variant pages per product are colours x sizes (default 3 x 3). */
  colours?: readonly string[];
  sizes?: readonly string[];
  /**
   * How variant URLs look: `/products/<slug>?variant=<id>` (default, as Shopify does) or
   * `/products/<slug>/<colour>-<size>` (no query to tell them from pages).
   */
  variantUrls?: 'query' | 'path';
  /** Sorted views linked from every category page (default 3). */
  sortOrders?: number;
  /**
   * What `/sitemap.xml` lists: nothing (404, the default), the distinct pages, or every page with each
   * product's variants right after it (a store that lists its variant URLs).
   */
  sitemap?: 'none' | 'distinct' | 'all';
  /** Artificial latency per response, in ms. */
  delayMs?: number;
}

export interface CatalogueSite extends ServedRoutes {
  /** Home, categories and products: the pages with content of their own. */
  distinctPages: number;
  /** Path of every product page. */
  productPaths: string[];
  /** Pages a full crawl can reach: distinct pages, variants and sorted views. */
  totalPages: number;
  /** The distinct page an URL (absolute, or path with query) shows, e.g. `product:17`; null when none. */
  contentOf(url: string): string | null;
}

const VOCABULARY =
  'soft cotton linen wool denim canvas leather suede velvet silk knit woven stitched lined padded quilted breathable durable lightweight warm cool classic modern relaxed tailored slim loose cropped long short sleeve collar pocket zip button hem seam cuff waist strap sole heel lace buckle trim pattern stripe check plain print dyed washed brushed organic recycled natural vintage everyday weekend travel outdoor city summer winter autumn spring layering fit comfort care wash tumble iron shade fade shrink stretch hold shape edge finish detail craft mill studio workshop harbour meadow forest river canyon coast valley ridge prairie orchard garden market village harvest evening morning'.split(
    ' ',
  );
const NOUNS =
  'shirt jacket sweater trousers scarf cap boots sandals dress skirt hoodie vest coat belt bag gloves socks shorts blazer cardigan'.split(
    ' ',
  );
const ADJECTIVES =
  'alpine harbour meadow canyon summit coastal urban prairie cedar quartz amber willow granite marine ember juniper'.split(
    ' ',
  );

interface Product {
  id: number;
  slug: string;
  name: string;
  category: number;
  price: number;
  description: string[];
  specs: string[];
}

interface Category {
  id: number;
  slug: string;
  name: string;
  intro: string;
  products: number[];
}

/** Builds the catalogue for `opts` and serves it. */
export async function serveCatalogue(opts: CatalogueOptions = {}): Promise<CatalogueSite> {
  const seed = opts.seed ?? 1;
  const productCount = opts.products ?? 200;
  const categoryCount = opts.categories ?? 50;
  const colours = opts.colours ?? ['red', 'blue', 'green'];
  const sizes = opts.sizes ?? ['s', 'm', 'l'];
  const sortOrders = ['price-ascending', 'price-descending', 'title-ascending', 'best-selling'].slice(
    0,
    opts.sortOrders ?? 3,
  );

  const categories: Category[] = Array.from({ length: categoryCount }, (_, i) => {
    const t = benchText(VOCABULARY, 10_000 + i, seed);
    const name = `${cap(ADJECTIVES[i % ADJECTIVES.length]!)} ${cap(NOUNS[(i * 7) % NOUNS.length]!)} Collection ${i + 1}`;
    return { id: i, slug: slugify(name), name, intro: t.paragraph(3), products: [] };
  });
  const products: Product[] = Array.from({ length: productCount }, (_, i) => {
    const t = benchText(VOCABULARY, i, seed);
    const name = `${cap(t.word())} ${cap(ADJECTIVES[(i * 3) % ADJECTIVES.length]!)} ${cap(NOUNS[i % NOUNS.length]!)} ${i + 1}`;
    const category = i % categoryCount;
    categories[category]!.products.push(i);
    return {
      id: i,
      slug: slugify(name),
      name,
      category,
      price: 20 + ((i * 37) % 180),
      description: [t.paragraph(4), t.paragraph(4)],
      specs: Array.from({ length: 4 }, () => t.sentence(6)),
    };
  });
  const bySlug = new Map(products.map((p) => [p.slug, p]));
  const categoryBySlug = new Map(categories.map((c) => [c.slug, c]));
  const variants = colours.flatMap((c) => sizes.map((s) => ({ colour: c, size: s })));

  const productPath = (p: Product) => `/products/${p.slug}`;
  const variantPath = (p: Product, v: number) =>
    opts.variantUrls === 'path'
      ? `/products/${p.slug}/${variants[v]!.colour}-${variants[v]!.size}`
      : `/products/${p.slug}?variant=${p.id * 100 + v + 1}`;
  const categoryPath = (c: Category) => `/collections/${c.slug}`;

  const layout = (origin: string, title: string, main: string) => `<!doctype html>
<html><head><title>${title} | Harbour Outfitters</title></head><body>
<header><a href="${origin}/">Harbour Outfitters</a></header>
<nav><ul>${categories.map((c) => `<li><a href="${categoryPath(c)}">${c.name}</a></li>`).join('')}</ul></nav>
<main>${main}</main>
<footer><p>Harbour Outfitters, 12 Quay Street. Free returns within 30 days.</p><a href="/">Home</a></footer>
</body></html>`;

  const productMain = (p: Product, selected: number | null) => {
    const v = selected === null ? null : variants[selected]!;
    const heading = v ? `${p.name} - ${cap(v.colour)} / ${v.size.toUpperCase()}` : p.name;
    const related = [1, 2, 3].map((k) => products[(p.id + k * 17) % products.length]!);
    return `<h1>${heading}</h1>
<p class="price">$${p.price}.00</p>
${v ? `<p>Selected: ${v.colour}, size ${v.size.toUpperCase()}.</p>` : ''}
${p.description.map((d) => `<p>${d}</p>`).join('\n')}
<ul>${p.specs.map((s) => `<li>${s}</li>`).join('')}</ul>
<p>Colours: ${colours.join(', ')}. Sizes: ${sizes.map((s) => s.toUpperCase()).join(', ')}.</p>
<ul class="variants">${variants.map((x, i) => `<li><a href="${variantPath(p, i)}">${cap(x.colour)} / ${x.size.toUpperCase()}</a></li>`).join('')}</ul>
<p>From the <a href="${categoryPath(categories[p.category]!)}">${categories[p.category]!.name}</a>.</p>
<section><h2>You may also like</h2><ul>${related.map((r) => `<li><a href="${productPath(r)}">${r.name}</a></li>`).join('')}</ul></section>`;
  };

  const categoryMain = (c: Category, sort: string | null) => {
    const listed = c.products.map((i) => products[i]!);
    if (sort === 'price-ascending') listed.sort((a, b) => a.price - b.price || a.id - b.id);
    else if (sort === 'price-descending') listed.sort((a, b) => b.price - a.price || a.id - b.id);
    else if (sort === 'title-ascending') listed.sort((a, b) => a.name.localeCompare(b.name));
    else if (sort === 'best-selling') listed.reverse();
    return `<h1>${c.name}</h1>
<p>${c.intro}</p>
<p>Sort by: ${sortOrders.map((s) => `<a href="${categoryPath(c)}?sort_by=${s}">${s.replace('-', ' ')}</a>`).join(' ')}</p>
<ul class="products">${listed
      .map(
        (p) =>
          `<li><a href="${productPath(p)}">${p.name}</a> - $${p.price}.00. ${p.description[0]!.split('. ')[0]}.</li>`,
      )
      .join('\n')}</ul>`;
  };

  const homeMain = () => {
    const t = benchText(VOCABULARY, 99_999, seed);
    const featured = products.filter((_, i) => i % 25 === 0);
    return `<h1>Harbour Outfitters</h1><p>${t.paragraph(4)}</p>
<h2>Featured</h2><ul>${featured.map((p) => `<li><a href="${productPath(p)}">${p.name}</a></li>`).join('')}</ul>`;
  };

  const sitemapUrls = (origin: string): string[] => {
    if (opts.sitemap === 'distinct' || opts.sitemap === 'all') {
      const urls = [`${origin}/`, ...categories.map((c) => `${origin}${categoryPath(c)}`)];
      for (const p of products) {
        urls.push(`${origin}${productPath(p)}`);
        if (opts.sitemap === 'all')
          for (let i = 0; i < variants.length; i++) urls.push(`${origin}${variantPath(p, i)}`);
      }
      return urls;
    }
    return [];
  };

  const html = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  };
  const delay = () => (opts.delayMs ? new Promise((r) => setTimeout(r, opts.delayMs)) : undefined);

  const routes: Record<string, RouteHandler> = {
    '/robots.txt': { headers: { 'content-type': 'text/plain' }, body: 'User-agent: *\nAllow: /\n' },
    '/sitemap.xml': async (_req, res, ctx) => {
      await delay();
      const urls = sitemapUrls(ctx.origin);
      if (urls.length === 0) return html(res, 404, 'not found');
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls
          .map((u) => `<url><loc>${u.replace(/&/g, '&amp;')}</loc></url>`)
          .join('')}</urlset>`,
      );
    },
    '/': async (_req, res, ctx) => {
      await delay();
      html(res, 200, layout(ctx.origin, 'Home', homeMain()));
    },
    '*': async (_req, res, ctx) => {
      await delay();
      const path = ctx.url.pathname;
      const product = /^\/products\/([^/]+)(?:\/([a-z]+)-([a-z]+))?$/.exec(path);
      if (product) {
        const p = bySlug.get(product[1]!);
        if (!p) return html(res, 404, 'not found');
        const vid = ctx.url.searchParams.get('variant');
        let selected: number | null = null;
        if (product[2] !== undefined) {
          selected = variants.findIndex((v) => v.colour === product[2] && v.size === product[3]);
          if (selected < 0 || opts.variantUrls !== 'path') return html(res, 404, 'not found');
        } else if (vid !== null) {
          selected = Number(vid) - p.id * 100 - 1;
          if (!Number.isInteger(selected) || selected < 0 || selected >= variants.length)
            return html(res, 404, 'not found');
        }
        return html(res, 200, layout(ctx.origin, p.name, productMain(p, selected)));
      }
      const category = /^\/collections\/([^/]+)$/.exec(path);
      if (category) {
        const c = categoryBySlug.get(category[1]!);
        if (!c) return html(res, 404, 'not found');
        const sort = ctx.url.searchParams.get('sort_by');
        if (sort !== null && !sortOrders.includes(sort)) return html(res, 404, 'not found');
        return html(res, 200, layout(ctx.origin, c.name, categoryMain(c, sort)));
      }
      return html(res, 404, 'not found');
    },
  };
  const served = await serveRoutes(routes);

  const contentOf = (url: string): string | null => {
    const u = new URL(url, served.origin);
    if (u.pathname === '/' && u.search === '') return 'home';
    const product = /^\/products\/([^/]+)(?:\/[a-z]+-[a-z]+)?$/.exec(u.pathname);
    if (product) {
      const p = bySlug.get(product[1]!);
      return p ? `product:${p.id}` : null;
    }
    const category = /^\/collections\/([^/]+)$/.exec(u.pathname);
    if (category) {
      const c = categoryBySlug.get(category[1]!);
      return c ? `category:${c.id}` : null;
    }
    return null;
  };

  return {
    ...served,
    distinctPages: 1 + categories.length + products.length,
    productPaths: products.map(productPath),
    totalPages: 1 + categories.length * (1 + sortOrders.length) + products.length * (1 + variants.length),
    contentOf,
  };
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function slugify(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}
