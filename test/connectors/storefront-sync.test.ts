/**
 * The content sync of `storefront` (Shopify Admin GraphQL) against the fake store: which products,
 * pages, articles and policies are items, pagination boundaries, 429 / 500 / THROTTLED, the cost budget
 * running low, a malformed product, revoked and insufficient access, change and deletion detection
 * between syncs (edit, archive, draft, unpublish without an edit, delete, page and article changes, a
 * renamed blog), deletionEvents gone, reset, resume and cancel. The job engine and the database are the
 * e2e file's business.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { ShopifyClient } from '../../src/connectors/storefront/client.ts';
import { storefrontConnector } from '../../src/connectors/storefront/index.ts';
import {
  ARTICLES_TABLE,
  PAGES_TABLE,
  POLICIES_TABLE,
  PRODUCTS_TABLE,
  type StorefrontCursor,
  type StorefrontSyncTuning,
  syncStorefront,
} from '../../src/connectors/storefront/sync.ts';
import type { AnyConnector, SourceDocument } from '../../src/connectors/types.ts';
import { createConnectorContext } from '../../src/connectors/context.ts';
import { AppError } from '../../src/lib/errors.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import {
  type FakeShopify,
  FakeShopifyStore,
  SHOPIFY_GOOD_TOKEN,
  SHOPIFY_SHOP,
  startFakeShopify,
  throttledReply,
} from '../fakes/shopify.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const INPUT = { shop: SHOPIFY_SHOP, access_token: SHOPIFY_GOOD_TOKEN };

/** A small store: five published products, two pages, two articles and two policies, plus what must not sync. */
function sampleStore() {
  const store = new FakeShopifyStore();
  // Tests that are not about the budget should never wait on it.
  store.bucket.restoreRate = 1_000_000;
  store.setPolicy(
    'REFUND_POLICY',
    '<p>You have <strong>30 days</strong> after receiving your item to request a return.</p>',
  );
  store.setPolicy('SHIPPING_POLICY', '<p>Orders ship within two business days.</p>');
  store.setPolicy('PRIVACY_POLICY', ''); // listed by Shopify, never written: not an item
  const shoe = store.addProduct({
    title: 'Trail Running Shoe',
    vendor: 'Acme',
    productType: 'Shoes',
    tags: ['running', 'outdoor'],
    options: [
      { name: 'Color', values: ['Red', 'Blue'] },
      { name: 'Size', values: ['9', '10'] },
    ],
    variants: [
      { title: 'Red / 9', sku: 'TRS-RED-9', price: '129.00' },
      { title: 'Red / 10', sku: 'TRS-RED-10', price: '129.00' },
      { title: 'Blue / 9', sku: 'TRS-BLU-9', price: '139.00', compareAtPrice: '159.00' },
      { title: 'Blue / 10', sku: 'TRS-BLU-10', price: '139.00', availableForSale: false },
    ],
    descriptionHtml:
      '<p>Lightweight shoe with a <strong>grippy</strong> sole.</p><ul><li>Vibram outsole</li><li>Recycled mesh</li></ul><p>See the <a href="/pages/size-guide">size guide</a>.</p>',
  });
  const jacket = store.addProduct({
    title: 'Storm Shell Jacket',
    vendor: 'Northwind',
    productType: 'Jackets',
    options: [{ name: 'Size', values: ['S', 'M'] }],
    variants: [
      { title: 'S', sku: 'SSJ-S', price: '249.00' },
      { title: 'M', sku: 'SSJ-M', price: '249.00' },
    ],
    descriptionHtml: '<p>Fully taped seams keep the rain out.</p>',
  });
  const tent = store.addProduct({
    title: 'Two-Person Tent',
    productType: 'Tents',
    variants: [{ title: 'Default Title', sku: 'TENT-2P', price: '399.00' }],
    descriptionHtml: '<p>Sets up in three minutes.</p>',
  });
  const beanie = store.addProduct({
    title: 'Merino Beanie',
    productType: 'Accessories',
    variants: [{ title: 'Default Title', sku: 'BEANIE', price: '35.00' }],
  });
  const socks = store.addProduct({
    title: 'Sampler Socks',
    productType: 'Accessories',
    options: [{ name: 'Pattern', values: Array.from({ length: 25 }, (_, i) => `P${i}`) }],
    variants: Array.from({ length: 25 }, (_, i) => ({ title: `P${i}`, sku: `SOCK-${i}`, price: '12.00' })),
  });
  // Not items: draft, archived, active but not on the Online Store, unlisted.
  const draft = store.addProduct({ title: 'Prototype Stove', status: 'DRAFT' });
  store.addProduct({ title: 'Old Lantern', status: 'ARCHIVED' });
  const wholesale = store.addProduct({ title: 'Wholesale Crate', published: false });
  store.addProduct({ title: 'Secret Sale Hat', status: 'UNLISTED' });

  const shipping = store.addPage({
    title: 'Shipping & Returns',
    body: '<h2>Shipping</h2><p>We ship worldwide.</p>',
  });
  const about = store.addPage({ title: 'About us', body: '<p>Founded in a garage in 2009.</p>' });
  store.addPage({ title: 'Coming soon', body: '<p>Secret.</p>', isPublished: false });
  const news = store.addBlog('News');
  const guides = store.addBlog('Guides');
  const howTo = store.addArticle({
    blog: news,
    title: 'How to choose trail shoes',
    body: '<p>Fit matters most.</p>',
    tags: ['guides', 'shoes'],
  });
  const layering = store.addArticle({
    blog: guides,
    title: 'Layering 101',
    body: '<p>Start with merino.</p>',
  });
  store.addArticle({ blog: news, title: 'Unannounced collab', body: '<p>Shh.</p>', isPublished: false });
  return {
    store,
    shoe,
    jacket,
    tent,
    beanie,
    socks,
    draft,
    wholesale,
    shipping,
    about,
    news,
    guides,
    howTo,
    layering,
  };
}

const TITLES = [
  'About us',
  'How to choose trail shoes',
  'Layering 101',
  'Merino Beanie',
  'Refund policy',
  'Sampler Socks',
  'Shipping & Returns',
  'Shipping policy',
  'Storm Shell Jacket',
  'Trail Running Shoe',
  'Two-Person Tent',
];

let fake: FakeShopify | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

interface StartOptions {
  delays?: number[];
  maxAttempts?: number;
  tuning?: StorefrontSyncTuning;
}

/** The sync's wall clock (token expiry, the id pass's interval): tests move it. */
const clock = { now: Date.parse('2026-11-20T08:00:00Z') };

async function start(store: FakeShopifyStore, opts: StartOptions = {}) {
  fake = await startFakeShopify({ store });
  let client: ShopifyClient | undefined;
  const tuning: StorefrontSyncTuning = {
    clock: () => clock.now,
    ...opts.tuning,
    observe: (c) => {
      client = c;
      opts.tuning?.observe?.(c);
    },
  };
  const connector: AnyConnector = {
    ...storefrontConnector,
    sync: (ctx, o) => syncStorefront(ctx, o, tuning),
  };
  const set = new SyncedSet<StorefrontCursor>(connector, INPUT, fake.url, {
    ...fastHttp(opts.delays ?? []),
    requestsPerSecond: 100_000,
    ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}),
  });
  return { fake, set, client: () => client! };
}

function byTitle(docs: readonly SourceDocument[], title: string): SourceDocument {
  const doc = docs.find((d) => d.title === title);
  assert.ok(doc, `a document titled ${title}: ${docs.map((d) => d.title).join(' | ')}`);
  return doc;
}

const titles = (docs: readonly { title: string }[]) => docs.map((d) => d.title).sort();
const roots = (s: FakeShopifyStore, from = 0) => s.queries.slice(from).map((q) => q.roots.join('+'));

describe('storefront (Shopify) content sync', () => {
  it('syncs published active products, published pages and articles, and written policies', async () => {
    const s = sampleStore();
    const { fake, set } = await start(s.store);
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    assert.deepEqual(first.deleted, []);
    assert.deepEqual(titles(first.documents), TITLES);
    // shop, one products page, the publications of the active one off the Online Store, the socks'
    // remaining variants, pages + bodies, articles + bodies.
    assert.deepEqual(roots(s.store), [
      'shop',
      'products',
      'nodes',
      'product',
      'pages',
      'nodes',
      'articles',
      'nodes',
    ]);
    assert.equal(first.requests, 8);

    const shoe = byTitle(first.documents, 'Trail Running Shoe');
    assert.equal(shoe.externalId, s.shoe.id);
    assert.equal(shoe.table, PRODUCTS_TABLE);
    assert.equal(shoe.url, 'https://acme-outdoor.com/products/trail-running-shoe');
    assert.equal(shoe.visibility, 'public');
    assert.deepEqual(shoe.tags, ['storefront', 'Acme', 'Shoes', 'running', 'outdoor']);
    assert.match(shoe.version ?? '', /^2024-05-01T08:00:\d\dZ\|[0-9a-f]{12}$/);
    assert.equal(
      shoe.markdown,
      [
        '# Trail Running Shoe',
        '',
        '- Price: from 129.00 to 139.00 USD',
        '- Vendor: Acme',
        '- Product type: Shoes',
        '- Tags: running, outdoor',
        '- Color: Red, Blue',
        '- Size: 9, 10',
        '',
        'Lightweight shoe with a **grippy** sole.',
        '',
        '- Vibram outsole',
        '- Recycled mesh',
        '',
        'See the [size guide](https://acme-outdoor.com/pages/size-guide).',
        '',
        '## Variants',
        '',
        '| Variant | SKU | Price | Availability |',
        '| --- | --- | --- | --- |',
        '| Red / 9 | `TRS-RED-9` | 129.00 USD | Available |',
        '| Red / 10 | `TRS-RED-10` | 129.00 USD | Available |',
        '| Blue / 9 | `TRS-BLU-9` | 139.00 USD (was 159.00 USD) | Available |',
        '| Blue / 10 | `TRS-BLU-10` | 139.00 USD | Sold out |',
      ].join('\n'),
    );
    const tent = byTitle(first.documents, 'Two-Person Tent');
    assert.match(tent.markdown, /\| Two-Person Tent \| `TENT-2P` \| 399\.00 USD \| Available \|/);
    assert.doesNotMatch(tent.markdown, /Default Title/);
    const socks = byTitle(first.documents, 'Sampler Socks');
    assert.equal(
      (socks.markdown.match(/`SOCK-\d+`/g) ?? []).length,
      25,
      'variants past the first 20 read too',
    );

    const page = byTitle(first.documents, 'Shipping & Returns');
    assert.deepEqual(
      [page.externalId, page.table, page.url, page.markdown, page.tags],
      [
        s.shipping.id,
        PAGES_TABLE,
        'https://acme-outdoor.com/pages/shipping-returns',
        '## Shipping\n\nWe ship worldwide.',
        ['storefront'],
      ],
    );
    const article = byTitle(first.documents, 'How to choose trail shoes');
    assert.deepEqual(
      [article.table, article.url, article.tags],
      [
        ARTICLES_TABLE,
        'https://acme-outdoor.com/blogs/news/how-to-choose-trail-shoes',
        ['storefront', 'News', 'guides', 'shoes'],
      ],
    );
    assert.match(article.markdown, /^_By Jamie Rivera, in News, 2024-05-01_\n\nFit matters most\.$/);
    const refund = byTitle(first.documents, 'Refund policy');
    assert.deepEqual(
      [refund.externalId, refund.table, refund.url, refund.markdown],
      [
        'REFUND_POLICY',
        POLICIES_TABLE,
        'https://acme-outdoor.myshopify.com/policies/refund-policy',
        'You have **30 days** after receiving your item to request a return.',
      ],
    );
    assert.ok(first.documents.every((d) => d.visibility === 'public' && d.version));

    // Asked the documented way: the pinned version, the token header, variables, UPDATED_AT order.
    const bodies = fake.requests.map(
      (r) => JSON.parse(r.body) as { query: string; variables?: Record<string, unknown> },
    );
    assert.ok(
      fake.requests.every((r) => r.path === '/admin/api/2026-10/graphql.json' && r.method === 'POST'),
    );
    assert.ok(fake.requests.every((r) => r.headers['x-shopify-access-token'] === SHOPIFY_GOOD_TOKEN));
    const products = bodies[1]!;
    assert.match(
      products.query,
      /products\(first: \$first, after: \$cursor, query: \$query, sortKey: UPDATED_AT\)/,
    );
    assert.deepEqual(products.variables, { first: 20, query: 'status:active' });
    // The newest listed active product (published or not) is where the next sync starts.
    assert.deepEqual(first.cursor, {
      productsUpdatedAt: isoOf(s.store.product(s.wholesale.id).updatedAt),
      idPassAt: clock.now,
    });
  });

  it('pages end exactly at the page size; the unchanged sync costs a small share of the first', async () => {
    const store = new FakeShopifyStore();
    store.bucket.restoreRate = 1_000_000;
    for (let i = 1; i <= 250; i++) {
      store.addProduct({
        title: `Product ${i}`,
        variants: [
          { title: 'S', sku: `P${i}-S`, price: '10.00' },
          { title: 'M', sku: `P${i}-M`, price: '11.00' },
        ],
        descriptionHtml: `<p>Product number ${i}.</p>`,
      });
    }
    const { fake, set } = await start(store);
    const first = await set.sync();
    assert.equal(first.documents.length, 250);
    const productPages = fake.requests.filter((r) =>
      JSON.parse(r.body).query.includes('StorefrontProducts('),
    );
    assert.equal(productPages.length, 13, '12 full pages of 20 and one of 10');
    for (const [i, r] of productPages.entries()) {
      const vars = JSON.parse(r.body).variables as Record<string, unknown>;
      assert.equal(vars['query'], 'status:active', 'every page keeps the filter');
      if (i === 0) assert.equal(vars['cursor'], undefined);
      else assert.equal(typeof vars['cursor'], 'string', 'a followed page carries endCursor');
    }
    assert.deepEqual(
      first.documents.map((d) => d.title),
      Array.from({ length: 250 }, (_, i) => `Product ${i + 1}`),
      'oldest edit first',
    );
    assert.equal(first.checkpoints.length, 14, 'one checkpoint a page, one at the end');
    const firstCost = store.costCharged;

    const mark = store.queries.length;
    const second = await set.sync();
    assert.deepEqual([second.documents, second.deleted, second.failures], [[], [], []]);
    // One query: the shop with the product count, the changed products (the boundary second again) and
    // the first pages of pages and articles. The count agrees with what the connection holds: no id pass.
    assert.deepEqual(roots(store, mark), ['shop+productsCount+products+pages+articles']);
    assert.equal(second.requests, 1);
    assert.ok(second.requests <= first.requests / 4, `${second.requests} of ${first.requests} requests`);
    const secondCost = store.costCharged - firstCost;
    console.log(
      `# storefront: first sync ${first.requests} requests / ${firstCost} points, unchanged ${second.requests} requests / ${secondCost} points`,
    );
    assert.ok(secondCost < firstCost * 0.35, `unchanged sync cost ${secondCost} points against ${firstCost}`);

    // One more product, a day later: the daily id pass crosses its page boundary (250 + 1).
    store.addProduct({ title: 'Product 251', variants: [{ title: 'S', sku: 'P251', price: '9.00' }] });
    clock.now += 25 * 3_600_000;
    const third = await set.sync();
    assert.deepEqual(titles(third.documents), ['Product 251']);
    const idPages = store.queries.filter((q) => q.roots[0] === 'products' && q.variables['first'] === 250);
    assert.equal(idPages.length, 2, 'none in the second sync, two in the third');
  });

  it('waits out a 429 burst with Retry-After and a 500, then succeeds', async () => {
    const s = sampleStore();
    const delays: number[] = [];
    const { fake, set } = await start(s.store, { delays, maxAttempts: 5 });
    fake.rateLimitNext(2, 2);
    fake.failNext(1, { status: 500, body: { errors: 'Internal Server Error' } });
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    assert.deepEqual(set.titles(), TITLES);
    assert.deepEqual(delays.slice(0, 2), [2000, 2000], 'Retry-After: 2.0 honoured');
    assert.equal(delays.length, 3, 'then one backoff after the 500');
    assert.equal(first.requests, 8 + 3);
  });

  it('THROTTLED on HTTP 200 is retried after the time the bucket needs; endless THROTTLED throws', async () => {
    const s = sampleStore();
    const waits: number[] = [];
    const { fake, set, client } = await start(s.store, {
      tuning: { wait: async (ms) => void waits.push(ms) },
    });
    fake.failNext(1, throttledReply(70, 66, 50));
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    assert.deepEqual(set.titles(), TITLES);
    assert.deepEqual(waits, [80], '(70 - 66) / 50 s');
    assert.equal(client().throttledAnswers, 1);
    assert.equal(client().costWaitMs, 80);

    fake.failNext(6, throttledReply(500, 0, 100));
    await assert.rejects(set.sync(), (err: Error) => {
      assert.match(
        err.message,
        /^Shopify \(storefront\) query StorefrontShop answered THROTTLED 6 times in a row/,
      );
      return true;
    });
    assert.deepEqual(waits.slice(1), [5000, 5000, 5000, 5000, 5000]);
  });

  it('a query the real bucket cannot pay is THROTTLED, then retried once it refilled', async () => {
    const s = sampleStore();
    s.store.bucket.restoreRate = 5_000;
    const { set, client } = await start(s.store);
    // The bucket empties behind the client's back (another app of the same store, say).
    s.store.onQuery = (r) => {
      if (r[0] === 'products' && s.store.throttledAnswers === 0) s.store.drainBucket(0);
    };
    const first = await set.sync();
    assert.deepEqual(set.titles(), TITLES);
    assert.equal(first.failures.length, 0);
    assert.equal(s.store.throttledAnswers, 1);
    assert.equal(client().throttledAnswers, 1);
    assert.ok(client().costWaitMs >= 90, `waited ${client().costWaitMs} ms for 482 points at 5,000/s`);
  });

  it("Shopify's cost budget running low: the client waits before the query instead of being throttled", async () => {
    const s = sampleStore();
    s.store.bucket.restoreRate = 2_000;
    // Drained as the first query (the shop's) arrives, not before the server starts: the bucket refills
    // in real time, and on a busy machine the start alone could refill it.
    s.store.onQuery = () => {
      if (s.store.queries.length === 1) s.store.drainBucket(30);
    };
    const waits: number[] = [];
    const { set, client } = await start(s.store, {
      tuning: {
        wait: async (ms, signal) => {
          waits.push(ms);
          await new Promise((resolve) => setTimeout(resolve, ms)).then(() => signal.throwIfAborted());
        },
      },
    });
    const first = await set.sync();
    assert.deepEqual(set.titles(), TITLES);
    assert.equal(s.store.throttledAnswers, 0, 'never throttled');
    assert.ok(waits.length >= 1);
    // After the shop query (3 points asked) at most 27 remain; the products page asks 482, so the wait is at
    // most (482 - 27) / 2,000 s. The store refills in real time meanwhile, so on a busy machine (more time
    // between the two queries) it can be shorter; never none, since 482 points take 241 ms to restore.
    assert.ok(waits[0]! > 0 && waits[0]! <= 240, `first wait ${waits[0]} ms`);
    assert.equal(
      client().costWaitMs,
      waits.reduce((a, b) => a + b, 0),
    );
    assert.equal(first.requests, 8, 'no request was refused');
  });

  it('a malformed product is its failure (id and table); the rest lands', async () => {
    const s = sampleStore();
    s.store.editProduct(s.jacket.id, {
      variants: [
        { title: 'S', sku: 'SSJ-S', price: '249.00' },
        { title: 'M', sku: 'SSJ-M', price: null },
      ],
    });
    const { set } = await start(s.store);
    const first = await set.sync();
    assert.equal(first.failures.length, 1);
    const f = first.failures[0]! as { externalId?: string; table?: string; error: Error; retryable: boolean };
    assert.equal(f.externalId, s.jacket.id);
    assert.equal(f.table, PRODUCTS_TABLE);
    assert.equal(f.retryable, false);
    assert.match(
      f.error.message,
      /^Shopify \(storefront\) product gid:\/\/shopify\/Product\/\d+ came in an unexpected shape: .*variants\.nodes\[1\]\.price/,
    );
    assert.deepEqual(
      set.titles(),
      TITLES.filter((t) => t !== 'Storm Shell Jacket'),
    );

    // Fixed at the source: the next sync reads it (its edit moved updatedAt).
    s.store.editProduct(s.jacket.id, { variants: [{ title: 'S', sku: 'SSJ-S', price: '249.00' }] });
    const second = await set.sync();
    assert.deepEqual(titles(second.documents), ['Storm Shell Jacket']);
    assert.deepEqual(second.failures, []);
  });

  it('revoked token: the sync throws a clear error naming Shopify, without the token; items stay', async () => {
    const s = sampleStore();
    const { set } = await start(s.store);
    await set.sync();
    s.store.token = 'shpat_rotated_elsewhere_9876543210';
    await assert.rejects(set.sync(), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'source_auth_failed');
      assert.match(
        err.message,
        /^Shopify \(storefront\) refused the sync \(HTTP 401: \[API\] Invalid API key or access token \(unrecognized login or wrong password\)\)\. Check source\.access_token .*reinstall the app, or create the connection again with a new token, client credentials .* or OAuth consent\.$/,
      );
      assert.ok(!err.message.includes(SHOPIFY_GOOD_TOKEN));
      return true;
    });
    assert.deepEqual(set.titles(), TITLES, 'nothing is removed');
  });

  it('a scope the app lacks costs only what is behind it: one failure naming the scope, the rest syncs', async () => {
    const s = sampleStore();
    const { set } = await start(s.store);
    await set.sync();
    // The merchant narrows the app: no pages, no policies (a field inside `shop`: Shopify nulls all `data`).
    s.store.deny('pages', 'read_online_store_pages');
    s.store.deny('shopPolicies', 'read_legal_policies');
    s.store.editArticle(s.layering.id, { body: '<p>Start with wool.</p>' });
    s.store.deletePage(s.about.id);
    const second = await set.sync();
    assert.deepEqual(titles(second.documents), ['Layering 101'], 'the articles still sync');
    assert.deepEqual(second.deleted, [], 'nothing behind a refused scope is deleted');
    const refused = second.failures.map((f) => [
      (f as { table?: string }).table,
      f.externalId,
      f.retryable,
      f.error.message,
    ]);
    assert.deepEqual(
      refused.map(([table, id, retryable]) => [table, id, retryable]),
      [
        [POLICIES_TABLE, undefined, false],
        [PAGES_TABLE, undefined, false],
      ],
    );
    assert.match(
      String(refused[0]![3]),
      /^Shopify \(storefront\) policies could not be read: .*ACCESS_DENIED: Access denied for shopPolicies field\..*Grant the app the read_legal_policies access scope/,
    );
    assert.match(String(refused[1]![3]), /Grant the app the read_online_store_pages access scope/);
    assert.deepEqual(set.titles(), TITLES, 'held policies and pages stay');

    // Granted again: the next sync reads them, and what left meanwhile leaves.
    s.store.allow('pages');
    s.store.allow('shopPolicies');
    const third = await set.sync();
    assert.deepEqual(third.failures, []);
    assert.deepEqual(
      third.deleted.map((d) => d.externalId),
      [s.about.id],
    );
  });

  it('a sync job whose token lacks a scope ends with failures (incomplete), not an error', async () => {
    const s = sampleStore();
    s.store.deny('products', 'read_products');
    const { set } = await start(s.store);
    const first = await set.sync();
    assert.equal(first.failures.length, 1);
    assert.match(first.failures[0]!.error.message, /Grant the app the read_products access scope/);
    assert.deepEqual(
      set.titles(),
      TITLES.filter((t) => !/Shoe|Jacket|Tent|Beanie|Socks/.test(t)),
    );
  });

  it('active products published only to a headless storefront are items, with a /products/ URL', async () => {
    const s = sampleStore();
    // A headless store: no product is on the Online Store, so every onlineStoreUrl is null.
    const hydrogen = s.store.addProduct({ title: 'Hydrogen Hoodie', published: false, headless: true });
    const { set } = await start(s.store);
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    const hoodie = byTitle(first.documents, 'Hydrogen Hoodie');
    assert.equal(hoodie.url, 'https://acme-outdoor.com/products/hydrogen-hoodie');
    assert.equal(hoodie.visibility, 'public');
    assert.ok(!set.docs.has(s.wholesale.id), 'active but published nowhere: not an item');

    // Withdrawn from the headless storefront without an edit: the daily id pass finds it.
    s.store.setHeadless(hydrogen.id, false);
    clock.now += 25 * 3_600_000;
    const second = await set.sync();
    assert.deepEqual(
      second.deleted.map((d) => d.externalId),
      [hydrogen.id],
    );

    // Without read_publications: one failure naming it; the Online Store's products sync as before.
    s.store.setHeadless(hydrogen.id, true);
    s.store.editProduct(hydrogen.id, { title: 'Hydrogen Hoodie 2' });
    s.store.deny('resourcePublicationsCount', 'read_publications');
    const third = await set.sync();
    assert.equal(third.failures.length, 1);
    assert.match(
      third.failures[0]!.error.message,
      /not on the Online Store could not be checked .*Grant the app the read_publications access scope/,
    );
    assert.ok(!set.docs.has(hydrogen.id));
  });

  it('between two syncs: edit, archive, draft, unpublish, delete; page edit and unpublish; article delete; renamed blog', async () => {
    const s = sampleStore();
    const { set } = await start(s.store);
    await set.sync();
    const before = new Map([...set.docs.values()].map((d) => [d.externalId, d]));

    s.store.editProduct(s.shoe.id, {
      variants: [
        { title: 'Red / 9', sku: 'TRS-RED-9', price: '119.00' },
        { title: 'Blue / 9', sku: 'TRS-BLU-9', price: '139.00' },
      ],
    });
    s.store.setStatus(s.jacket.id, 'ARCHIVED');
    s.store.setStatus(s.tent.id, 'DRAFT');
    s.store.unpublish(s.beanie.id); // no updatedAt change: only the id pass can tell
    s.store.deleteProduct(s.socks.id);
    s.store.editPage(s.about.id, { body: '<p>Founded in a garage in <em>2009</em>, now in Portland.</p>' });
    s.store.editPage(s.shipping.id, { isPublished: false });
    s.store.deleteArticle(s.howTo.id);
    s.store.renameBlog(s.guides.id, 'Field Guides'); // the article's updatedAt stays, its tags change
    s.store.setPolicy('SHIPPING_POLICY', '<p>Orders ship within one business day.</p>');
    const mark = s.store.queries.length;

    const second = await set.sync();
    assert.deepEqual(second.failures, []);
    assert.deepEqual(titles(second.documents), [
      'About us',
      'Layering 101',
      'Shipping policy',
      'Trail Running Shoe',
    ]);
    assert.deepEqual(
      second.deleted.map((d) => [d.externalId, d.table]).sort(),
      [
        [s.beanie.id, PRODUCTS_TABLE],
        [s.howTo.id, ARTICLES_TABLE],
        [s.jacket.id, PRODUCTS_TABLE],
        [s.shipping.id, PAGES_TABLE],
        [s.socks.id, PRODUCTS_TABLE],
        [s.tent.id, PRODUCTS_TABLE],
      ].sort(),
    );
    // Only the edited page and the article of the renamed blog are fetched by id.
    // (Besides the publications of the active products off the Online Store, asked in the id pass: the
    // unpublished beanie, and the one listed again at the boundary second.)
    const fetched = s.store.queries.slice(mark).filter((q) => q.roots[0] === 'nodes');
    assert.deepEqual(
      fetched.map((q) => q.variables['ids']),
      [[s.beanie.id, s.wholesale.id], [s.about.id], [s.layering.id]],
    );
    // The store counts one product on the Online Store, the connection held five: the id pass runs.
    assert.deepEqual(roots(s.store, mark), [
      'shop+productsCount+products+pages+articles',
      'deletionEvents',
      'products',
      'nodes',
      'nodes',
      'nodes',
    ]);

    const shoe = byTitle(second.documents, 'Trail Running Shoe');
    assert.match(shoe.markdown, /- Price: from 119\.00 to 139\.00 USD/);
    assert.match(shoe.markdown, /\| Red \/ 9 \| `TRS-RED-9` \| 119\.00 USD \| Available \|/);
    assert.notEqual(shoe.version, before.get(s.shoe.id)?.version);
    assert.equal(
      byTitle(second.documents, 'About us').markdown,
      'Founded in a garage in _2009_, now in Portland.',
    );
    const layering = byTitle(second.documents, 'Layering 101');
    assert.deepEqual(layering.tags, ['storefront', 'Field Guides']);
    assert.equal(layering.updatedAt, before.get(s.layering.id)?.updatedAt, 'same updatedAt, new token');
    assert.notEqual(layering.version, before.get(s.layering.id)?.version);

    assert.deepEqual(set.titles(), [
      'About us',
      'Layering 101',
      'Refund policy',
      'Shipping policy',
      'Trail Running Shoe',
    ]);
    // Deletion events are asked from the newest one seen (later than the newest product edit here).
    const deletedAt = isoOf(s.store.deletionEvents.at(-1)!.occurredAt);
    assert.deepEqual(second.cursor, {
      productsUpdatedAt: isoOf(s.store.product(s.tent.id).updatedAt),
      deletionsAt: deletedAt,
      idPassAt: clock.now,
    });

    // Back on the Online Store (again without an edit): the id pass fetches it by id.
    s.store.publish(s.beanie.id);
    const thirdMark = s.store.queries.length;
    const third = await set.sync();
    const asked = s.store.queries.slice(thirdMark).find((q) => q.roots[0] === 'deletionEvents');
    assert.equal(asked?.variables['query'], `occurred_at:>='${deletedAt}'`);
    assert.deepEqual(titles(third.documents), ['Merino Beanie']);
    assert.deepEqual(third.deleted, []);
    const fourth = await set.sync();
    assert.deepEqual([fourth.documents.length, fourth.deleted.length, fourth.requests], [0, 0, 1]);
  });

  it('deletionEvents deletes even when the id pass cannot; without deletionEvents the id pass does alone', async () => {
    const s = sampleStore();
    const { set } = await start(s.store);
    await set.sync();
    // A product whose id cannot be read makes the id pass incomplete: it may delete nothing.
    s.store.editProduct(s.tent.id, { override: { id: null } });
    s.store.deleteProduct(s.socks.id);
    s.store.unpublish(s.beanie.id);
    const second = await set.sync();
    assert.deepEqual(
      second.deleted.map((d) => d.externalId),
      [s.socks.id],
      "only Shopify's own deletion signal deletes",
    );
    assert.ok(
      second.failures.some((f) => f.externalId === undefined),
      'the unreadable product is reported',
    );
    assert.ok(set.docs.has(s.beanie.id));

    s.store.editProduct(s.tent.id, { override: {} });
    s.store.deletionEventsSupported = false;
    s.store.deleteProduct(s.shoe.id);
    const third = await set.sync();
    assert.deepEqual(third.deleted.map((d) => d.externalId).sort(), [s.beanie.id, s.shoe.id].sort());
    assert.deepEqual(third.failures, []);
    assert.deepEqual(
      titles(third.documents),
      ['Two-Person Tent'],
      'readable again (its edit moved updatedAt)',
    );
    assert.ok(
      s.store.queries.some((q) => q.roots[0] === 'deletionEvents'),
      'asked, and answered undefinedField',
    );
  });

  it('reset (full) re-reads everything and ends with exactly the source set', async () => {
    const s = sampleStore();
    const { set } = await start(s.store);
    await set.sync();
    s.store.deleteProduct(s.socks.id);
    s.store.setStatus(s.jacket.id, 'DRAFT');
    s.store.unpublish(s.beanie.id);
    s.store.addPage({ title: 'Size guide', body: '<p>Measure your foot.</p>' });
    s.store.editArticle(s.layering.id, { body: '<p>Start with wool.</p>' });
    const mark = s.store.queries.length;

    const reset = await set.sync('full');
    const expected = [
      ...TITLES.filter((t) => !['Sampler Socks', 'Storm Shell Jacket', 'Merino Beanie'].includes(t)),
      'Size guide',
    ].sort();
    assert.deepEqual(titles(reset.documents), expected, 'every item is read again');
    assert.deepEqual(reset.deleted, [], 'a full pass leaves removal to the sweep');
    assert.deepEqual(set.titles(), expected);
    assert.match(byTitle([...set.docs.values()], 'Layering 101').markdown, /Start with wool\./);
    // Sampler Socks (whose extra variants took a query) is gone.
    assert.deepEqual(roots(s.store, mark), [
      'shop',
      'products',
      'nodes',
      'pages',
      'nodes',
      'articles',
      'nodes',
    ]);
  });

  it('a retried reset goes on after its last checkpoint', async () => {
    const store = new FakeShopifyStore();
    store.bucket.restoreRate = 1_000_000;
    for (let i = 1; i <= 45; i++) store.addProduct({ title: `Product ${i}` });
    const { set } = await start(store);
    const full = await set.sync('full');
    assert.equal(full.checkpoints.length, 4);
    const afterSecondPage = full.checkpoints[1]!;
    assert.equal(
      afterSecondPage.productsUpdatedAt,
      isoOf(store.product([...store.products.keys()][39]!).updatedAt),
    );

    // The job restarts with that checkpoint: products from there on (the boundary second again).
    const mark = store.queries.length;
    const events: string[] = [];
    for await (const title of resumedFull(afterSecondPage)) events.push(title);
    assert.deepEqual(
      events,
      Array.from({ length: 6 }, (_, i) => `Product ${40 + i}`),
    );
    const listing = store.queries.slice(mark).find((q) => q.roots[0] === 'products')!;
    assert.equal(
      listing.variables['query'],
      `status:active AND updated_at:>='${afterSecondPage.productsUpdatedAt}'`,
    );
  });

  it('cancel: an aborted signal stops the sync promptly', async () => {
    const store = new FakeShopifyStore();
    store.bucket.restoreRate = 1_000_000;
    for (let i = 1; i <= 100; i++) store.addProduct({ title: `Product ${i}` });
    const { fake, set } = await start(store);
    const controller = new AbortController();
    let pages = 0;
    store.onQuery = (r) => {
      if (r[0] === 'products' && ++pages === 2) controller.abort();
    };
    await assert.rejects(set.sync('incremental', { signal: controller.signal }), { name: 'AbortError' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(fake.requests.length <= 3, `stopped after ${fake.requests.length} requests`);
    assert.ok(set.docs.size <= 20);
  });

  it('cancel while waiting on the cost budget stops at once', async () => {
    const s = sampleStore();
    // A budget refilled at a hundredth of a point a second: the products page would wait some 13 hours,
    // so only the signal can end the sync within the test's time.
    s.store.bucket.restoreRate = 0.01;
    s.store.drainBucket(10);
    const { set, client } = await start(s.store, { tuning: {} });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(set.sync('incremental', { signal: controller.signal }), { name: 'AbortError' });
    assert.ok(client().costWaitMs > 0, 'the sync was waiting on the budget when cancelled');
  });
});

function isoOf(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** A full pass resumed from `cursor`, as the runner hands a retried reset its checkpoint: product titles. */
async function* resumedFull(cursor: StorefrontCursor): AsyncGenerator<string> {
  const ctx = createConnectorContext({
    connector: storefrontConnector,
    credentials: storefrontConnector.normalize(INPUT),
    fetch: plainFetch,
    signal: new AbortController().signal,
    baseUrlTemplate: fake!.url,
    http: { ...fastHttp(), requestsPerSecond: 100_000 },
  });
  for await (const e of storefrontConnector.sync!(ctx, {
    cursor,
    mode: 'full',
    known: async function* () {},
  })) {
    if (e.kind === 'document' && e.doc.table === PRODUCTS_TABLE) yield e.doc.title;
  }
}
