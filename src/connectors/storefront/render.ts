/**
 * Shopify objects to markdown items a shopper's question can match: a product's facts (price, vendor,
 * type, tags, options), its description and a variants table (SKU, price, availability); pages, blog
 * articles and shop policies from their HTML bodies. Pure functions of what the API answered.
 */
import { htmlToMarkdown } from '../../lib/html-to-markdown.ts';
import type { Article, Page, Product, ShopPolicy, Variant } from './schemas.ts';

/** What every item of a store shares. */
export interface StoreFacts {
  /** ISO 4217 code of the shop's currency (`shop.currencyCode`). */
  currencyCode: string;
  /** Origin of the storefront (`shop.primaryDomain.url`), without a trailing slash. */
  storefront: string;
}

/** Shopify names the single variant of a product without options `Default Title`. */
const DEFAULT_VARIANT_TITLE = 'Default Title';

/** Backslash-escapes what would otherwise read as markdown in a line of plain text. */
function escapeInline(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/([\\`*_[\]<>])/g, '\\$1');
}

function cell(text: string): string {
  return escapeInline(text).replace(/\|/g, '\\|');
}

function money(amount: string, currencyCode: string): string {
  return `${amount} ${currencyCode}`;
}

/** `129.00 USD`, or `from 99.00 to 129.00 USD` when the variants differ. */
export function priceSummary(variants: readonly Variant[], currencyCode: string): string | undefined {
  const amounts = variants
    .map((v) => ({ text: v.price, value: Number(v.price) }))
    .filter((a) => Number.isFinite(a.value));
  if (amounts.length === 0) return undefined;
  amounts.sort((a, b) => a.value - b.value);
  const low = amounts[0]!;
  const high = amounts.at(-1)!;
  return low.value === high.value
    ? money(low.text, currencyCode)
    : `from ${low.text} to ${money(high.text, currencyCode)}`;
}

function variantRow(product: Product, v: Variant, currencyCode: string): string {
  const name = v.title === DEFAULT_VARIANT_TITLE ? product.title : v.title;
  const sku = v.sku?.trim() ? (v.sku.includes('`') ? cell(v.sku) : `\`${v.sku.trim()}\``) : '—';
  const compare =
    v.compareAtPrice && Number(v.compareAtPrice) > Number(v.price)
      ? ` (was ${money(v.compareAtPrice, currencyCode)})`
      : '';
  const price = `${money(v.price, currencyCode)}${compare}`;
  return `| ${cell(name)} | ${sku} | ${cell(price)} | ${v.availableForSale ? 'Available' : 'Sold out'} |`;
}

/**
 * `# Title`, a list of facts (price, vendor, type, tags, each option with its values), the description,
 * then `## Variants` as a table: the price and SKUs are in the text, so "price of X" and a SKU match.
 */
export function renderProduct(product: Product, variants: readonly Variant[], store: StoreFacts): string {
  const facts: string[] = [];
  const price = priceSummary(variants, store.currencyCode);
  if (price) facts.push(`- Price: ${escapeInline(price)}`);
  if (product.vendor.trim()) facts.push(`- Vendor: ${escapeInline(product.vendor)}`);
  if (product.productType.trim()) facts.push(`- Product type: ${escapeInline(product.productType)}`);
  const tags = product.tags.map((t) => t.trim()).filter(Boolean);
  if (tags.length > 0) facts.push(`- Tags: ${escapeInline(tags.join(', '))}`);
  for (const option of product.options) {
    const values = option.values.filter((v) => v !== DEFAULT_VARIANT_TITLE);
    if (values.length === 0) continue;
    facts.push(`- ${escapeInline(option.name)}: ${escapeInline(values.join(', '))}`);
  }
  const parts = [`# ${escapeInline(product.title)}`];
  if (facts.length > 0) parts.push(facts.join('\n'));
  const description = product.descriptionHtml.trim()
    ? htmlToMarkdown(product.descriptionHtml, { baseUrl: product.onlineStoreUrl ?? store.storefront })
    : '';
  if (description) parts.push(description);
  if (variants.length > 0) {
    parts.push(
      [
        '## Variants',
        '',
        '| Variant | SKU | Price | Availability |',
        '| --- | --- | --- | --- |',
        ...variants.map((v) => variantRow(product, v, store.currencyCode)),
      ].join('\n'),
    );
  }
  return parts.join('\n\n');
}

export function pageUrl(store: StoreFacts, handle: string): string {
  return `${store.storefront}/pages/${encodeURIComponent(handle)}`;
}

export function articleUrl(store: StoreFacts, blogHandle: string, handle: string): string {
  return `${store.storefront}/blogs/${encodeURIComponent(blogHandle)}/${encodeURIComponent(handle)}`;
}

/** An online-store page: its body. */
export function renderPage(page: Page, store: StoreFacts): string {
  return htmlToMarkdown(page.body, { baseUrl: pageUrl(store, page.handle) });
}

/** A blog article: a byline (author, blog, date), then its body (its summary when the body is empty). */
export function renderArticle(article: Article, store: StoreFacts): string {
  const baseUrl = articleUrl(store, article.blog.handle, article.handle);
  const byline = [
    article.author?.name.trim() ? `By ${article.author.name.trim()}` : undefined,
    `in ${article.blog.title}`,
    article.publishedAt ? article.publishedAt.slice(0, 10) : undefined,
  ]
    .filter((p): p is string => p !== undefined)
    .join(', ');
  const html = article.body.trim() ? article.body : (article.summary ?? '');
  const body = htmlToMarkdown(html, { baseUrl });
  return [`_${escapeInline(byline)}_`, body].filter(Boolean).join('\n\n');
}

/** A shop policy: its body. */
export function renderPolicy(policy: ShopPolicy): string {
  return htmlToMarkdown(policy.body, { baseUrl: policy.url });
}
