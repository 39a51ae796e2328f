/**
 * How `storefront` gets its token against the fake store's token endpoint: the client credentials grant
 * (form body, Shopify's refusals, a token that runs out mid-sync, before its announced expiry and on a 401),
 * the authorization code grant and its refresh (expiring offline tokens, rotating refresh tokens), and the
 * input rules of the three ways in. The consent routes themselves are test/http/oauth-storefront.test.ts's.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { SHOPIFY_OAUTH_SCOPES, shopifyOAuth } from '../../src/connectors/storefront/auth.ts';
import type { ShopifyClient } from '../../src/connectors/storefront/client.ts';
import { SHOPIFY_API_VERSION, storefrontConnector } from '../../src/connectors/storefront/index.ts';
import { type StorefrontCursor, syncStorefront } from '../../src/connectors/storefront/sync.ts';
import type { AnyConnector } from '../../src/connectors/types.ts';
import { createSourceHttpClient } from '../../src/connectors/http.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import {
  type FakeShopify,
  FakeShopifyStore,
  SHOPIFY_CLIENT_ID,
  SHOPIFY_CLIENT_SECRET,
  SHOPIFY_SHOP,
  startFakeShopify,
} from '../fakes/shopify.ts';
import { fastHttp, rejectsWithCode, runCheck, SyncedSet, throwsInvalid } from './helpers.ts';

const CLIENT_INPUT = {
  shop: SHOPIFY_SHOP,
  client_id: SHOPIFY_CLIENT_ID,
  client_secret: SHOPIFY_CLIENT_SECRET,
};

let fake: FakeShopify | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** A store of `count` published products (20 a listing page) whose cost budget never binds. */
function storeOf(count: number): FakeShopifyStore {
  const store = new FakeShopifyStore();
  store.bucket.restoreRate = 1_000_000;
  for (let i = 1; i <= count; i++) store.addProduct({ title: `Product ${i}` });
  return store;
}

/** The sync of the client-credentials connection, with the client's wall clock in the test's hands. */
async function start(store: FakeShopifyStore, clock: { now: number }) {
  fake = await startFakeShopify({ store });
  let client: ShopifyClient | undefined;
  const connector: AnyConnector = {
    ...storefrontConnector,
    sync: (ctx, o) =>
      syncStorefront(ctx, o, {
        clock: () => clock.now,
        observe: (c) => {
          client = c;
        },
      }),
  };
  const set = new SyncedSet<StorefrontCursor>(connector, CLIENT_INPUT, fake.url);
  return { fake, set, client: () => client! };
}

const tokenRequests = (f: FakeShopify) => f.requests.filter((r) => r.path === '/admin/oauth/access_token');

describe('storefront client credentials grant', () => {
  it('the credential check gets a token with a form-encoded grant, then asks `{ shop { name } }` with it', async () => {
    const store = storeOf(0);
    fake = await startFakeShopify({ store });
    await runCheck(storefrontConnector, CLIENT_INPUT, fake.url);
    const [grant, check] = fake.requests;
    assert.equal(grant!.path, '/admin/oauth/access_token');
    assert.equal(grant!.method, 'POST');
    assert.equal(grant!.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(grant!.body)), {
      grant_type: 'client_credentials',
      client_id: SHOPIFY_CLIENT_ID,
      client_secret: SHOPIFY_CLIENT_SECRET,
    });
    assert.equal(check!.path, `/admin/api/${SHOPIFY_API_VERSION}/graphql.json`);
    assert.equal(check!.headers['x-shopify-access-token'], store.grants[0]!.token);
  });

  it("Shopify's refusals are source_auth_failed with its words and what to check, never the secret", async () => {
    const store = storeOf(0);
    fake = await startFakeShopify({ store });
    const wrong = await rejectsWithCode(
      runCheck(storefrontConnector, { ...CLIENT_INPUT, client_secret: 'shpss_wrong_secret_value' }, fake.url),
      'source_auth_failed',
    );
    assert.match(
      wrong.message,
      /^Shopify \(storefront\) refused the client credentials grant \(HTTP 400: invalid_client: Client authentication failed\.\)\. Check source\.client_id and source\.client_secret/,
    );
    assert.doesNotMatch(wrong.message, /shpss_wrong_secret_value/);

    store.app.sameOrganization = false;
    const other = await rejectsWithCode(
      runCheck(storefrontConnector, CLIENT_INPUT, fake.url),
      'source_auth_failed',
    );
    assert.match(other.message, /shop_not_permitted: Client credentials cannot be performed on this shop\./);
    assert.match(other.message, /for another merchant's store, connect through OAuth/);

    store.app.sameOrganization = true;
    store.app.installed = false;
    const missing = await rejectsWithCode(
      runCheck(storefrontConnector, CLIENT_INPUT, fake.url),
      'source_auth_failed',
    );
    assert.match(missing.message, /app_not_installed: The application is not installed on this shop\./);
    for (const err of [wrong, other, missing])
      assert.doesNotMatch(err.message, new RegExp(SHOPIFY_CLIENT_SECRET));
  });

  it('a sync asks for one token, a new one shortly before the announced expiry, and none after that', async () => {
    const store = storeOf(45);
    store.clientCredentialsLifetimeSeconds = 3_600;
    const clock = { now: Date.parse('2026-11-20T08:00:00Z') };
    store.now = () => clock.now;
    const { fake, set, client } = await start(store, clock);
    // Each products page takes (on the sync's clock and the store's) half an hour: three pages, 90 minutes.
    store.onQuery = (roots) => {
      if (roots[0] === 'products') clock.now += 30 * 60_000;
    };
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    assert.equal(set.docs.size, 45);
    assert.equal(store.expiredAnswers, 0, 'renewed before the expiry, not after a 401');
    assert.equal(client().tokenGrants, 2, 'the first token and one renewal within its last 6 minutes');
    assert.equal(tokenRequests(fake).length, 2);
    const used = new Set(fake.requests.map((r) => r.headers['x-shopify-access-token']).filter(Boolean));
    assert.deepEqual([...used].sort(), store.grants.map((g) => g.token).sort());
  });

  it('a token that stops working early (401) is replaced and the query sent again, as often as the sync needs', async () => {
    const store = storeOf(45);
    const clock = { now: Date.parse('2026-11-20T08:00:00Z') };
    const storeClock = { now: clock.now };
    store.now = () => storeClock.now;
    const { fake, set, client } = await start(store, clock);
    // The store's clock runs a full token life ahead at every products page; the sync's does not move, so
    // only the 401 tells it: three token lifetimes in one sync.
    store.onQuery = (roots) => {
      if (roots[0] === 'products') storeClock.now += store.clientCredentialsLifetimeSeconds * 1000;
    };
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    assert.equal(set.docs.size, 45);
    assert.equal(store.expiredAnswers, 3);
    assert.equal(client().tokenGrants, 4);
    assert.equal(tokenRequests(fake).length, 4);
    assert.ok(
      fake.requests.every(
        (r) => !r.body.includes(SHOPIFY_CLIENT_SECRET) || r.path === '/admin/oauth/access_token',
      ),
    );
  });

  it('a grant refused mid-sync (app uninstalled) fails the sync naming the fix, without the secret', async () => {
    const store = storeOf(25);
    const clock = { now: Date.parse('2026-11-20T08:00:00Z') };
    const storeClock = { now: clock.now };
    store.now = () => storeClock.now;
    const { set } = await start(store, clock);
    store.onQuery = (roots) => {
      if (roots[0] === 'products') {
        storeClock.now += store.clientCredentialsLifetimeSeconds * 1000;
        store.app.installed = false;
      }
    };
    const err = await rejectsWithCode(set.sync(), 'source_auth_failed');
    assert.match(err.message, /app_not_installed/);
    assert.doesNotMatch(err.message, new RegExp(SHOPIFY_CLIENT_SECRET));
  });
});

describe('storefront input: three ways in', () => {
  const normalize = (input: Record<string, unknown>) =>
    storefrontConnector.normalize(input as Parameters<typeof storefrontConnector.normalize>[0]);

  it('takes a token, or a client id with its secret, or neither (the OAuth consent fills the token)', () => {
    assert.deepEqual(normalize({ shop: 'Acme.myshopify.com', access_token: ' shpat_x ' }), {
      shop: 'acme',
      access_token: 'shpat_x',
    });
    assert.deepEqual(normalize(CLIENT_INPUT), CLIENT_INPUT);
    assert.deepEqual(normalize({ shop: 'acme' }), { shop: 'acme' });
    assert.equal(shopifyOAuth.needsConsent!({ shop: 'acme' }), true);
    assert.equal(shopifyOAuth.needsConsent!({ ...normalize(CLIENT_INPUT) }), false);
    assert.equal(shopifyOAuth.needsConsent!({ shop: 'acme', access_token: 'shpat_x' }), false);
  });

  it('refuses both ways at once, and an id without its secret (or the reverse), naming the field', () => {
    throwsInvalid(() => normalize({ ...CLIENT_INPUT, access_token: 'shpat_x' }), 'access_token');
    throwsInvalid(() => normalize({ shop: 'acme', client_id: SHOPIFY_CLIENT_ID }), 'client_secret');
    throwsInvalid(() => normalize({ shop: 'acme', client_secret: SHOPIFY_CLIENT_SECRET }), 'client_id');
    throwsInvalid(() => normalize({ ...CLIENT_INPUT, client_secret: 'has space' }), 'client_secret');
  });
});

describe('storefront OAuth steps (authorization code grant)', () => {
  const app = () => ({
    clientId: SHOPIFY_CLIENT_ID,
    clientSecret: SHOPIFY_CLIENT_SECRET,
    baseUrl: fake!.url,
  });
  const http = () => createSourceHttpClient({ ...fastHttp(), fetch: plainFetch });

  it('consent on the store, an expiring offline token for the code, a rotating refresh token', async () => {
    const store = storeOf(0);
    fake = await startFakeShopify({ store });
    const consent = new URL(
      shopifyOAuth.authorizeUrl(app(), { redirectUri: 'https://kb.example.test/cb', state: 'signed-state' }),
    );
    assert.equal(consent.pathname, '/admin/oauth/authorize');
    assert.equal(consent.searchParams.get('scope'), SHOPIFY_OAUTH_SCOPES);
    assert.equal(consent.searchParams.get('redirect_uri'), 'https://kb.example.test/cb');
    const granted = await fetch(consent, { redirect: 'manual' });
    const callback = new URL(granted.headers.get('location')!);
    assert.equal(callback.searchParams.get('state'), 'signed-state');
    assert.equal(callback.searchParams.get('shop'), `${SHOPIFY_SHOP}.myshopify.com`);

    const tokens = await shopifyOAuth.exchangeCode(http(), app(), {
      code: callback.searchParams.get('code')!,
      redirectUri: 'https://kb.example.test/cb',
    });
    const exchange = JSON.parse(tokenRequests(fake).at(-1)!.body);
    assert.equal(exchange.expiring, '1', 'asks for an expiring offline token');
    assert.ok(tokens.refreshToken);
    assert.ok(tokens.expiresAt && tokens.expiresAt > Date.now() + 3_500_000);

    const refreshed = await shopifyOAuth.refresh!(http(), app(), { refreshToken: tokens.refreshToken! });
    assert.notEqual(refreshed.accessToken, tokens.accessToken);
    assert.notEqual(refreshed.refreshToken, tokens.refreshToken, 'the refresh token rotates');
    const spent = await rejectsWithCode(
      shopifyOAuth.refresh!(http(), app(), { refreshToken: tokens.refreshToken! }),
      'source_auth_failed',
    );
    assert.match(spent.message, /^Shopify refused the refresh token \(HTTP 400: invalid_grant/);
    assert.doesNotMatch(spent.message, new RegExp(tokens.refreshToken!));
  });
});
