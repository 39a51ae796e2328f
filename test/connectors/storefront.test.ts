import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SHOPIFY_API_VERSION, storefrontConnector } from '../../src/connectors/storefront/index.ts';
import { closedPortUrl, type FakeServer } from '../fakes/fake-server.ts';
import { SHOPIFY_GOOD_TOKEN, SHOPIFY_NO_ACCESS_TOKEN, startFakeShopify } from '../fakes/shopify.ts';
import { rejectsWithCode, runCheck, throwsInvalid } from './helpers.ts';

const good = { shop: 'acme-outdoor', access_token: SHOPIFY_GOOD_TOKEN };

describe('storefront (Shopify) credential check', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await startFakeShopify();
  });
  after(() => fake.close());

  it('accepts a good token with one Admin GraphQL `{ shop { name } }` query', async () => {
    const before = fake.requests.length;
    await runCheck(storefrontConnector, good, fake.url);
    const sent = fake.requests.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.method, 'POST');
    assert.equal(sent[0]!.path, `/admin/api/${SHOPIFY_API_VERSION}/graphql.json`);
    assert.equal(sent[0]!.headers['x-shopify-access-token'], SHOPIFY_GOOD_TOKEN);
    assert.equal(sent[0]!.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(sent[0]!.body), { query: '{ shop { name } }' });
  });

  it('rejects a wrong token as source_auth_failed with Shopify’s error string', async () => {
    const err = await rejectsWithCode(
      runCheck(storefrontConnector, { ...good, access_token: 'shpat_wrong' }, fake.url),
      'source_auth_failed',
    );
    assert.match(err.message, /Shopify \(storefront\).*HTTP 401: \[API\] Invalid API key or access token/);
    assert.doesNotMatch(err.message, /shpat_wrong/);
  });

  it('rejects a token without access (HTTP 200, ACCESS_DENIED) as source_auth_failed', async () => {
    const err = await rejectsWithCode(
      runCheck(storefrontConnector, { ...good, access_token: SHOPIFY_NO_ACCESS_TOKEN }, fake.url),
      'source_auth_failed',
    );
    assert.match(err.message, /ACCESS_DENIED/);
  });

  it('honours a fractional Retry-After ("2.0") on 429', async () => {
    fake.rateLimitNext(1, 2);
    const delays: number[] = [];
    await runCheck(storefrontConnector, good, fake.url, delays);
    assert.deepEqual(delays, [2000]);
  });

  it('answers source_unreachable when nothing listens', async () => {
    await rejectsWithCode(runCheck(storefrontConnector, good, await closedPortUrl()), 'source_unreachable');
  });
});

describe('storefront normalize', () => {
  const n = (shop: string) => storefrontConnector.normalize({ ...good, shop }).shop;

  it('keeps the bare store name of a name or myshopify.com host', () => {
    assert.equal(n('acme-outdoor'), 'acme-outdoor');
    assert.equal(n('Acme-Outdoor.myshopify.com'), 'acme-outdoor');
  });

  it('refuses URLs, custom domains, ports and IPs', () => {
    for (const bad of [
      'https://acme.myshopify.com',
      'acme.myshopify.com/admin',
      'acme.myshopify.com:443',
      'acme-outdoor.com',
      'admin.shopify.com',
      '192.168.0.1',
      '',
    ]) {
      throwsInvalid(() => n(bad), 'shop');
    }
    throwsInvalid(() => storefrontConnector.normalize({ ...good, access_token: '' }), 'access_token');
  });
});
