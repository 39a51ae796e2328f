/**
 * The Shopify Admin API version of `storefront`: one pinned default, overridable by the operator through
 * KB_STOREFRONT_API_VERSION (read and checked by the config, handed to the connector as
 * `ctx.settings.apiVersion`), used by every GraphQL call of the sync and of the credential check.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { checkCredentials, createConnectorContext } from '../../src/connectors/context.ts';
import { SHOPIFY_API_VERSION, storefrontConnector } from '../../src/connectors/storefront/index.ts';
import {
  type FakeShopify,
  FakeShopifyStore,
  SHOPIFY_GOOD_TOKEN,
  SHOPIFY_SHOP,
  startFakeShopify,
} from '../fakes/shopify.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { fastHttp } from './helpers.ts';

const INPUT = { shop: SHOPIFY_SHOP, access_token: SHOPIFY_GOOD_TOKEN };

describe('storefront API version setting', () => {
  let fake: FakeShopify;
  before(async () => {
    const store = new FakeShopifyStore();
    store.addProduct({
      title: 'Trail Running Shoe',
      variants: [{ title: 'Default Title', sku: 'TRS', price: '129.00' }],
    });
    store.addPage({ title: 'About us', body: '<p>Hello.</p>' });
    fake = await startFakeShopify({ store });
  });
  after(() => fake.close());

  const context = (settings?: Record<string, string>) =>
    createConnectorContext({
      connector: storefrontConnector,
      credentials: storefrontConnector.normalize(INPUT),
      fetch: plainFetch,
      signal: new AbortController().signal,
      baseUrlTemplate: fake.url,
      settings,
      http: { ...fastHttp(), requestsPerSecond: 100_000 },
    });

  it('a context with apiVersion 2025-07 sends every sync query to /admin/api/2025-07/graphql.json', async () => {
    const mark = fake.requests.length;
    const ctx = context({ apiVersion: '2025-07' });
    assert.equal(ctx.settings['apiVersion'], '2025-07');
    const docs: string[] = [];
    for await (const e of storefrontConnector.sync!(ctx, {
      cursor: null,
      mode: 'incremental',
      known: async function* () {},
    })) {
      if (e.kind === 'document') docs.push(e.doc.title);
    }
    assert.deepEqual(docs.sort(), ['About us', 'Trail Running Shoe']);
    const sent = fake.requests.slice(mark);
    assert.ok(sent.length >= 4);
    assert.deepEqual([...new Set(sent.map((r) => r.path))], ['/admin/api/2025-07/graphql.json']);
  });

  it('the credential check uses the setting too, and the pinned default without it', async () => {
    let mark = fake.requests.length;
    await checkCredentials({
      connector: storefrontConnector,
      credentials: storefrontConnector.normalize(INPUT),
      fetch: plainFetch,
      baseUrlTemplate: fake.url,
      settings: { apiVersion: 'unstable' },
      http: fastHttp(),
    });
    assert.deepEqual(
      fake.requests.slice(mark).map((r) => r.path),
      ['/admin/api/unstable/graphql.json'],
    );
    mark = fake.requests.length;
    const ctx = context();
    assert.equal(ctx.settings['apiVersion'], SHOPIFY_API_VERSION);
    await storefrontConnector.validate(ctx);
    assert.deepEqual(
      fake.requests.slice(mark).map((r) => r.path),
      [`/admin/api/${SHOPIFY_API_VERSION}/graphql.json`],
    );
  });
});

describe('KB_STOREFRONT_API_VERSION in the config', () => {
  it('refuses a value that is not a quarterly version or unstable, naming the setting', () => {
    for (const bad of ['banana', '2025-06', '2025-7', '25-07', '2025-07-01', 'latest']) {
      assert.throws(
        () => loadConfig({ KB_STOREFRONT_API_VERSION: bad }),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError, String(err));
          assert.match(err.message, /KB_STOREFRONT_API_VERSION: expected a Shopify Admin API version/);
          return true;
        },
        bad,
      );
    }
  });

  it('hands a valid value (or the pinned default) to the connector settings', () => {
    assert.equal(
      loadConfig({ KB_STOREFRONT_API_VERSION: '2025-07' }).sources['storefront']?.settings['apiVersion'],
      '2025-07',
    );
    assert.equal(
      loadConfig({ KB_STOREFRONT_API_VERSION: 'unstable' }).sources['storefront']?.settings['apiVersion'],
      'unstable',
    );
    assert.equal(loadConfig({}).sources['storefront']?.settings['apiVersion'], SHOPIFY_API_VERSION);
    assert.match(SHOPIFY_API_VERSION, storefrontConnector.settings!['apiVersion']!.pattern);
  });
});

describe('KB_STOREFRONT_ID_PASS_HOURS', () => {
  it('takes whole hours (0: an id pass every sync), 24 by default, and refuses anything else at start', () => {
    const hours = (env: Record<string, string>) =>
      loadConfig(env).sources['storefront']?.settings['idPassHours'];
    assert.equal(hours({}), '24');
    assert.equal(hours({ KB_STOREFRONT_ID_PASS_HOURS: '0' }), '0');
    assert.equal(hours({ KB_STOREFRONT_ID_PASS_HOURS: '168' }), '168');
    for (const value of ['1.5', '-1', 'daily', '24h']) {
      assert.throws(
        () => loadConfig({ KB_STOREFRONT_ID_PASS_HOURS: value }),
        (err: unknown) => err instanceof ConfigError && err.message.includes('KB_STOREFRONT_ID_PASS_HOURS'),
        value,
      );
    }
  });
});
