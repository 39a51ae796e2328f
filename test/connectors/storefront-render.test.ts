/**
 * Shopify objects to markdown (src/connectors/storefront/render.ts): a product's facts, description and
 * variants table; pages, articles and policies from their HTML, with every block kind a merchant's rich
 * text editor writes; and the same through the fake store and a sync.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  priceSummary,
  renderArticle,
  renderPage,
  renderPolicy,
  renderProduct,
  type StoreFacts,
} from '../../src/connectors/storefront/render.ts';
import type { Article, Product, Variant } from '../../src/connectors/storefront/schemas.ts';
import { storefrontConnector } from '../../src/connectors/storefront/index.ts';
import { FakeShopifyStore, SHOPIFY_GOOD_TOKEN, SHOPIFY_SHOP, startFakeShopify } from '../fakes/shopify.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const md = (...lines: string[]) => lines.join('\n');
const STORE: StoreFacts = { currencyCode: 'EUR', storefront: 'https://acme-outdoor.com' };

/** Every block kind of Shopify's rich text editor (and of pasted HTML). */
const RICH_HTML =
  '<h2>Care &amp; use</h2><p>Wash <em>cold</em>, <strong>hang dry</strong>.</p>' +
  '<ol><li>Unzip<ul><li>the hood</li></ul></li><li>Shake</li></ol>' +
  '<blockquote><p>Best jacket I own.</p></blockquote>' +
  '<pre><code class="language-json">{"size": "M"}</code></pre>' +
  '<table><tr><td>Chest</td><td>102 cm</td></tr><tr><td>Length | back</td><td>74 cm</td></tr></table>' +
  '<p><img src="/cdn/shop/files/jacket.jpg" alt="Jacket in red"></p><hr>' +
  '<p><a href="/pages/size-guide">Size guide</a> and <a href="#fit">fit notes</a></p><h3>Fit</h3><p>Line<br>break</p>';

const RICH_MD = md(
  '## Care & use',
  '',
  'Wash _cold_, **hang dry**.',
  '',
  '1. Unzip',
  '   - the hood',
  '2. Shake',
  '',
  '> Best jacket I own.',
  '',
  '```json',
  '{"size": "M"}',
  '```',
  '',
  '|  |  |',
  '| --- | --- |',
  '| Chest | 102 cm |',
  '| Length \\| back | 74 cm |',
  '',
  '![Jacket in red](https://acme-outdoor.com/cdn/shop/files/jacket.jpg)',
  '',
  '---',
  '',
  '[Size guide](https://acme-outdoor.com/pages/size-guide) and [fit notes](#fit)',
  '',
  '### Fit',
  '',
  'Line',
  'break',
);

function variant(v: Partial<Variant> & { title: string; price: string }): Variant {
  return {
    id: `gid://shopify/ProductVariant/${v.title}`,
    sku: null,
    compareAtPrice: null,
    availableForSale: true,
    ...v,
  };
}

function product(p: Partial<Product>): Product {
  return {
    id: 'gid://shopify/Product/1',
    title: 'Storm Shell Jacket',
    handle: 'storm-shell-jacket',
    status: 'ACTIVE',
    descriptionHtml: '',
    vendor: '',
    productType: '',
    tags: [],
    onlineStoreUrl: 'https://acme-outdoor.com/products/storm-shell-jacket',
    updatedAt: '2024-05-20T16:02:45Z',
    publishedAt: '2024-02-11T09:20:00Z',
    options: [],
    variants: { nodes: [], pageInfo: { hasNextPage: false, endCursor: null } },
    ...p,
  };
}

describe('storefront render: products', () => {
  it('title, facts, the description with every block kind, and the variants table', () => {
    const variants = [
      variant({ title: 'S / Red', sku: 'SSJ-S-RED', price: '249.00', compareAtPrice: '299.00' }),
      variant({ title: 'M / Red', sku: 'SSJ-M-RED', price: '259.00', availableForSale: false }),
      variant({ title: 'L | Tall', sku: 'SSJ`L', price: '269.00', compareAtPrice: '199.00' }),
      variant({ title: 'XL', price: '279.00' }),
    ];
    const out = renderProduct(
      product({
        vendor: 'Northwind',
        productType: 'Jackets',
        tags: ['rain', ' waterproof '],
        options: [
          { name: 'Size', values: ['S', 'M', 'L | Tall', 'XL'] },
          { name: 'Color', values: ['Red'] },
        ],
        descriptionHtml: RICH_HTML,
      }),
      variants,
      STORE,
    );
    assert.equal(
      out,
      md(
        '# Storm Shell Jacket',
        '',
        '- Price: from 249.00 to 279.00 EUR',
        '- Vendor: Northwind',
        '- Product type: Jackets',
        '- Tags: rain, waterproof',
        '- Size: S, M, L | Tall, XL',
        '- Color: Red',
        '',
        RICH_MD,
        '',
        '## Variants',
        '',
        '| Variant | SKU | Price | Availability |',
        '| --- | --- | --- | --- |',
        '| S / Red | `SSJ-S-RED` | 249.00 EUR (was 299.00 EUR) | Available |',
        '| M / Red | `SSJ-M-RED` | 259.00 EUR | Sold out |',
        // A compare-at price below the price is no discount; a backtick SKU is escaped text.
        '| L \\| Tall | SSJ\\`L | 269.00 EUR | Available |',
        '| XL | — | 279.00 EUR | Available |',
      ),
    );
  });

  it('a product without options: its single variant is named after it; no description, no empty lines', () => {
    const out = renderProduct(
      product({ title: 'Merino Beanie', options: [{ name: 'Title', values: ['Default Title'] }] }),
      [variant({ title: 'Default Title', sku: 'BEANIE', price: '35.00' })],
      STORE,
    );
    assert.equal(
      out,
      md(
        '# Merino Beanie',
        '',
        '- Price: 35.00 EUR',
        '',
        '## Variants',
        '',
        '| Variant | SKU | Price | Availability |',
        '| --- | --- | --- | --- |',
        '| Merino Beanie | `BEANIE` | 35.00 EUR | Available |',
      ),
    );
  });

  it('markdown characters in titles and facts are text, not markup', () => {
    const out = renderProduct(
      product({ title: 'Shoe *Pro* [2024] <beta>', vendor: 'A_B', tags: ['#1 seller'] }),
      [],
      STORE,
    );
    assert.equal(
      out,
      md('# Shoe \\*Pro\\* \\[2024\\] \\<beta\\>', '', '- Vendor: A\\_B', '- Tags: #1 seller'),
    );
  });

  it('price summary: one price, a range, unparseable prices left out', () => {
    assert.equal(priceSummary([variant({ title: 'a', price: '10.00' })], 'USD'), '10.00 USD');
    assert.equal(
      priceSummary(
        [
          variant({ title: 'a', price: '12.50' }),
          variant({ title: 'b', price: '9.99' }),
          variant({ title: 'c', price: 'n/a' }),
        ],
        'USD',
      ),
      'from 9.99 to 12.50 USD',
    );
    assert.equal(priceSummary([], 'USD'), undefined);
  });
});

describe('storefront render: pages, articles, policies', () => {
  const page = {
    id: 'gid://shopify/Page/1',
    title: 'Care guide',
    handle: 'care-guide',
    body: RICH_HTML,
    isPublished: true,
    publishedAt: '2023-11-02T10:00:00Z',
    updatedAt: '2024-04-18T13:27:40Z',
  };

  it('a page is its body, links resolved against the page URL', () => {
    assert.equal(renderPage(page, STORE), RICH_MD);
    assert.equal(
      renderPage({ ...page, body: '<p><a href="size-guide">relative</a></p>' }, STORE),
      '[relative](https://acme-outdoor.com/pages/size-guide)',
    );
  });

  const article: Article = {
    id: 'gid://shopify/Article/1',
    title: 'How to choose trail shoes',
    handle: 'how-to-choose-trail-shoes',
    body: '<p>Fit matters most. See <a href="../guides/lacing">lacing</a>.</p>',
    summary: '<p>A quick guide.</p>',
    tags: ['guides'],
    isPublished: true,
    publishedAt: '2024-03-05T08:00:00Z',
    updatedAt: '2024-05-19T11:45:10Z',
    author: { name: 'Jamie Rivera' },
    blog: { id: 'gid://shopify/Blog/1', title: 'News_and_notes', handle: 'news' },
  };

  it('an article: byline (author, blog, date) and body; the summary when the body is empty', () => {
    assert.equal(
      renderArticle(article, STORE),
      md(
        '_By Jamie Rivera, in News\\_and\\_notes, 2024-03-05_',
        '',
        'Fit matters most. See [lacing](https://acme-outdoor.com/blogs/guides/lacing).',
      ),
    );
    assert.equal(
      renderArticle({ ...article, body: '  ', author: null, publishedAt: null }, STORE),
      md('_in News\\_and\\_notes_', '', 'A quick guide.'),
    );
  });

  it('a policy is its body', () => {
    assert.equal(
      renderPolicy({
        id: 'gid://shopify/ShopPolicy/1',
        type: 'REFUND_POLICY',
        title: 'Refund policy',
        body: '<h3>Returns</h3><ul><li>30 days</li><li>Unworn items</li></ul>',
        url: 'https://acme-outdoor.myshopify.com/policies/refund-policy',
        updatedAt: '2024-02-01T09:30:00Z',
      }),
      md('### Returns', '', '- 30 days', '- Unworn items'),
    );
  });
});

describe('storefront render through the fake store', () => {
  it('a product, a page and an article with every block kind come out as above', async () => {
    const store = new FakeShopifyStore();
    store.currencyCode = 'EUR';
    store.addProduct({
      title: 'Storm Shell Jacket',
      descriptionHtml: RICH_HTML,
      variants: [{ title: 'Default Title', sku: 'SSJ', price: '249.00' }],
    });
    store.addPage({ title: 'Care guide', handle: 'care-guide', body: RICH_HTML });
    const blog = store.addBlog('News');
    store.addArticle({ blog, title: 'Care notes', body: RICH_HTML, author: null });
    const fake = await startFakeShopify({ store });
    try {
      const set = new SyncedSet(
        storefrontConnector,
        { shop: SHOPIFY_SHOP, access_token: SHOPIFY_GOOD_TOKEN },
        fake.url,
        {
          ...fastHttp(),
          requestsPerSecond: 100_000,
        },
      );
      const out = await set.sync();
      const body = (title: string) => out.documents.find((d) => d.title === title)?.markdown;
      assert.equal(body('Care guide'), RICH_MD);
      assert.equal(body('Care notes'), md('_in News, 2024-05-01_', '', RICH_MD));
      assert.equal(
        body('Storm Shell Jacket'),
        md(
          '# Storm Shell Jacket',
          '',
          '- Price: 249.00 EUR',
          '- Vendor: Acme',
          '',
          RICH_MD,
          '',
          '## Variants',
          '',
          '| Variant | SKU | Price | Availability |',
          '| --- | --- | --- | --- |',
          '| Storm Shell Jacket | `SSJ` | 249.00 EUR | Available |',
        ),
      );
    } finally {
      await fake.close();
    }
  });
});
