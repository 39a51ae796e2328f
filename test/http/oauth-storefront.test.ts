/**
 * storefront through the API the three ways Shopify issues tokens today (API.md "Credentials as the vendors
 * issue them now"): OAuth consent with the `shop` in the initiate body (the store is the authorization
 * server), the client credentials of the merchant's own app (the secret stored encrypted, never shown), and
 * a fixed token as before. Each connection then syncs through the job engine; a token without a scope ends
 * the job `incomplete`, naming the scope.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { WorkerPool } from '../../src/jobs/worker.ts';
import {
  type FakeShopify,
  FakeShopifyStore,
  SHOPIFY_CLIENT_ID,
  SHOPIFY_CLIENT_SECRET,
  SHOPIFY_GOOD_TOKEN,
  SHOPIFY_SHOP,
  startFakeShopify,
} from '../fakes/shopify.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from '../jobs/helpers.ts';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

const PUBLIC_URL = 'https://kb.example.test';

function store(): FakeShopifyStore {
  const s = new FakeShopifyStore();
  s.bucket.restoreRate = 1_000_000;
  s.addProduct({ title: 'Trail Running Shoe', descriptionHtml: '<p>Grippy.</p>' });
  s.addProduct({ title: 'Hydrogen Hoodie', published: false, headless: true });
  s.addPage({ title: 'About us', body: '<p>Founded in a garage.</p>' });
  s.setPolicy('REFUND_POLICY', '<p>30 days.</p>');
  return s;
}

for (const mode of STORAGE_MODES) {
  describe(`storefront connects three ways (${mode})`, () => {
    let shopify: FakeShopify;
    let t: TestApp;
    let pool: WorkerPool;
    before(async () => {
      shopify = await startFakeShopify({ store: store() });
      t = await startTestApp(mode, {
        config: {
          KB_CRAWL_ALLOW_PRIVATE: 'true',
          KB_STOREFRONT_BASE_URL: shopify.url,
          KB_STOREFRONT_OAUTH_BASE_URL: shopify.url,
          KB_STOREFRONT_CLIENT_ID: SHOPIFY_CLIENT_ID,
          KB_STOREFRONT_CLIENT_SECRET: SHOPIFY_CLIENT_SECRET,
          KB_PUBLIC_URL: PUBLIC_URL,
        },
        parts: { sourceHttp: FAST_SOURCE_HTTP },
      });
      pool = t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
    });
    after(async () => {
      await pool?.stop();
      await t?.close();
      await shopify?.close();
    });

    const sync = async () => {
      const res = await t.call('POST', '/api/connect/run-sync', { body: { type: 'storefront' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return waitForJob(t, res.body.jobId as number);
    };
    const titles = async () => {
      const res = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { limit: 50 } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return (res.body.items as Array<{ title: string }>).map((i) => i.title).sort();
    };

    test('OAuth: the initiate body names the shop; the consent stores an expiring token; the connection syncs', async () => {
      const missing = await t.call('POST', '/api/connect/oauth/initiate', { body: { type: 'storefront' } });
      expectError(missing, 400, 'invalid_request');
      assert.match(missing.body.message, /^shop: required/);

      const init = await t.call('POST', '/api/connect/oauth/initiate', {
        body: { type: 'shopify', shop: 'Acme-Outdoor.myshopify.com' },
      });
      assert.equal(init.status, 200, JSON.stringify(init.body));
      const consentUrl = new URL(init.body.consentUrl);
      assert.equal(consentUrl.pathname, '/admin/oauth/authorize');
      assert.equal(consentUrl.searchParams.get('redirect_uri'), `${PUBLIC_URL}/api/connect/oauth/callback`);
      const granted = await fetch(consentUrl, { redirect: 'manual' });
      const callback = new URL(granted.headers.get('location')!);
      const res = await t.call('GET', callback.pathname + callback.search, { key: null });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const grant = shopify.store.grants.at(-1)!;
      assert.equal(grant.grant, 'authorization_code');

      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'storefront', shop: SHOPIFY_SHOP } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      // The new connection's first sync, queued by the create.
      const job = await waitForJob(t, created.body.jobId as number);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.deepEqual(await titles(), [
        'About us',
        'Hydrogen Hoodie',
        'Refund policy',
        'Trail Running Shoe',
      ]);
      const list = JSON.stringify((await t.call('GET', '/api/connect/connections')).body);
      assert.ok(!list.includes(grant.token));
    });

    test('client credentials: stored encrypted, never shown; each sync gets its own token', async () => {
      const before = shopify.store.grants.length;
      const created = await t.call('POST', '/api/connect/connection', {
        body: {
          source: {
            type: 'storefront',
            shop: SHOPIFY_SHOP,
            client_id: SHOPIFY_CLIENT_ID,
            client_secret: SHOPIFY_CLIENT_SECRET,
          },
        },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.created, false, 'the same store: its credentials are replaced');
      const job = await sync();
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      const granted = shopify.store.grants.slice(before).map((g) => g.grant);
      assert.deepEqual(granted, ['client_credentials', 'client_credentials'], 'the check and the sync');
      const rows = await t.db.query<{ credentials_encrypted: string }>(
        "SELECT credentials_encrypted FROM connections WHERE type = 'storefront'",
      );
      assert.ok(!rows[0]!.credentials_encrypted.includes(SHOPIFY_CLIENT_SECRET));
      const list = JSON.stringify((await t.call('GET', '/api/connect/connections')).body);
      assert.ok(!list.includes(SHOPIFY_CLIENT_SECRET));

      const both = await t.call('POST', '/api/connect/connection', {
        body: {
          source: {
            type: 'storefront',
            shop: SHOPIFY_SHOP,
            access_token: SHOPIFY_GOOD_TOKEN,
            client_id: SHOPIFY_CLIENT_ID,
            client_secret: SHOPIFY_CLIENT_SECRET,
          },
        },
      });
      expectError(both, 400, 'invalid_request');
    });

    test('a fixed token as before; a scope it lacks ends the job incomplete, naming the scope', async () => {
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'storefront', shop: SHOPIFY_SHOP, access_token: SHOPIFY_GOOD_TOKEN } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      shopify.store.deny('shopPolicies', 'read_legal_policies');
      try {
        const job = await sync();
        assert.equal(job.status, 'incomplete', JSON.stringify(job));
        assert.ok(
          job.failures.some((f) => /read_legal_policies/.test(f.message)),
          JSON.stringify(job.failures),
        );
        assert.ok((await titles()).includes('Trail Running Shoe'));
      } finally {
        shopify.store.allow('shopPolicies');
      }
    });
  });
}
