/**
 * A storefront connection made through OAuth consent (authorization code grant, expiring offline tokens with
 * rotating refresh tokens) keeps syncing however long the sync runs: the shared HTTP client swaps the
 * `X-Shopify-Access-Token` the connector sends for the connection's current token, refreshed before its
 * announced expiry and again on a 401, with each rotated refresh token stored (encrypted) before the new
 * access token is used. The fake store's tokens live 120 s; time is a clock the test moves per query (the
 * fake's and the service's, or only the fake's to play a token voided before its announced expiry).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { WorkerPool } from '../../src/jobs/worker.ts';
import {
  type FakeShopify,
  FakeShopifyStore,
  SHOPIFY_CLIENT_ID,
  SHOPIFY_CLIENT_SECRET,
  SHOPIFY_SHOP,
  startFakeShopify,
} from '../fakes/shopify.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from '../jobs/helpers.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

const PRODUCTS = 150;
const TOKEN_SECONDS = 120;
const SECOND = 1000;

/** The service's token clock and the fake store's, each the wall clock plus an offset the test moves. */
const serviceClock = { offset: 0, now: () => Date.now() + serviceClock.offset };
const storeClock = { offset: 0, now: () => Date.now() + storeClock.offset };

for (const mode of STORAGE_MODES) {
  describe(`storefront OAuth tokens live as long as the sync (${mode})`, () => {
    let shopify: FakeShopify;
    let t: TestApp;
    let pool: WorkerPool;

    before(async () => {
      const store = new FakeShopifyStore();
      store.bucket.restoreRate = 1_000_000;
      store.offlineLifetimeSeconds = TOKEN_SECONDS;
      store.now = storeClock.now;
      for (let i = 1; i <= PRODUCTS; i++) store.addProduct({ title: `Product ${i}` });
      shopify = await startFakeShopify({ store });
      t = await startTestApp(mode, {
        config: {
          KB_CRAWL_ALLOW_PRIVATE: 'true',
          KB_STOREFRONT_BASE_URL: shopify.url,
          KB_STOREFRONT_OAUTH_BASE_URL: shopify.url,
          KB_STOREFRONT_CLIENT_ID: SHOPIFY_CLIENT_ID,
          KB_STOREFRONT_CLIENT_SECRET: SHOPIFY_CLIENT_SECRET,
          KB_PUBLIC_URL: 'https://kb.example.test',
        },
        parts: { sourceHttp: FAST_SOURCE_HTTP, tokenClock: serviceClock.now },
      });
      pool = t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });

      const init = await t.call('POST', '/api/connect/oauth/initiate', {
        body: { type: 'storefront', shop: SHOPIFY_SHOP },
      });
      assert.equal(init.status, 200, JSON.stringify(init.body));
      const granted = await fetch(init.body.consentUrl, { redirect: 'manual' });
      const callback = new URL(granted.headers.get('location')!);
      const consented = await t.call('GET', callback.pathname + callback.search, { key: null });
      assert.equal(consented.status, 200, JSON.stringify(consented.body));
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'storefront', shop: SHOPIFY_SHOP } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      // A first sync the create may have queued runs before the tests move any clock.
      if (typeof created.body.jobId === 'number') await waitForJob(t, created.body.jobId);
    });
    after(async () => {
      await pool?.stop();
      await t?.close();
      await shopify?.close();
    });

    /** A full sync; `onQuery` sees each GraphQL query the store is about to answer. */
    async function sync(onQuery: () => void) {
      const store = shopify.store;
      let queries = 0;
      store.onQuery = () => {
        queries++;
        onQuery();
      };
      const refreshesBefore = store.grants.filter((g) => g.grant === 'refresh_token').length;
      const expiredBefore = store.expiredAnswers;
      const res = await t.call('POST', '/api/connect/run-sync', {
        body: { type: 'storefront', jobType: 'reset' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const job = await waitForJob(t, res.body.jobId as number);
      store.onQuery = undefined;
      return {
        job,
        queries,
        refreshes: store.grants.filter((g) => g.grant === 'refresh_token').length - refreshesBefore,
        expired: store.expiredAnswers - expiredBefore,
      };
    }

    async function storedCredentials(): Promise<Record<string, unknown>> {
      const [row] = await t.db.query<{ id: string; credentials_encrypted: string }>(
        "SELECT id, credentials_encrypted FROM connections WHERE type = 'storefront'",
      );
      return t.service.sources.decryptCredentials(row!.id, row!.credentials_encrypted);
    }

    async function itemCount(): Promise<number> {
      const rows = await t.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM items WHERE title LIKE 'Product %'",
      );
      return rows[0]!.n;
    }

    test('a sync that outlives three access tokens refreshes each before its announced expiry and completes', async () => {
      // Every query takes both clocks on by 50 s: a 120-s token lasts about two queries.
      const { job, queries, refreshes, expired } = await sync(() => {
        serviceClock.offset += 50 * SECOND;
        storeClock.offset += 50 * SECOND;
      });
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.ok(queries * 50 > 3 * TOKEN_SECONDS, `the sync spans ${queries * 50} s of token time`);
      assert.ok(refreshes >= 3, `refreshed ${refreshes} times`);
      assert.equal(expired, 0, 'no query was sent with an expired token');
      assert.equal(await itemCount(), PRODUCTS);

      const creds = await storedCredentials();
      const newest = shopify.store.grants.at(-1)!;
      assert.equal(newest.grant, 'refresh_token');
      assert.equal(creds['access_token'], newest.token, 'the last refreshed token is stored');
      const lastRefresh = shopify.requests
        .filter((r) => r.path === '/admin/oauth/access_token')
        .map((r) => JSON.parse(r.body) as Record<string, string>)
        .at(-1)!;
      assert.equal(lastRefresh['grant_type'], 'refresh_token');
      assert.notEqual(creds['oauth_refresh_token'], lastRefresh['refresh_token'], 'the rotated one is kept');
      const [row] = await t.db.query<{ credentials_encrypted: string }>(
        "SELECT credentials_encrypted FROM connections WHERE type = 'storefront'",
      );
      assert.ok(
        !row!.credentials_encrypted.includes(String(creds['oauth_refresh_token'])),
        'stored encrypted',
      );
    });

    test('a token Shopify stops accepting before its announced expiry (401) is refreshed and the query sent again', async () => {
      // Only the store's clock runs, a whole token life at every query: the service learns of each
      // expiry from the 401 alone, many times in one sync.
      const { job, refreshes, expired } = await sync(() => {
        storeClock.offset += TOKEN_SECONDS * SECOND;
      });
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.ok(expired >= 3, `${expired} queries met a 401`);
      assert.ok(refreshes >= expired, `${refreshes} refreshes for ${expired} 401s`);
      assert.equal(await itemCount(), PRODUCTS);
      assert.equal((await storedCredentials())['access_token'], shopify.store.grants.at(-1)!.token);
    });
  });
}
