/**
 * `wiki` with every kind of Atlassian API token: classic tokens on the site, scoped and service-account
 * tokens through the API gateway (cloud id from the site's `/_edge/tenant_info`). The credential check
 * finds which and resolves to the credentials to store; the sync then calls where the token works; each
 * refusal names its fix. Against the fake site and gateway (two loopback servers).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { checkCredentials } from '../../src/connectors/context.ts';
import type { AnyConnector } from '../../src/connectors/types.ts';
import { type WikiCredentials, wikiConnector } from '../../src/connectors/wiki/index.ts';
import {
  CONFLUENCE_CLOUD_ID,
  CONFLUENCE_GOOD,
  CONFLUENCE_SCOPED,
  CONFLUENCE_SERVICE_ACCOUNT,
  type FakeConfluence,
  FakeConfluenceSite,
  startFakeConfluence,
} from '../fakes/confluence.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { fastHttp, rejectsWithCode, SyncedSet } from './helpers.ts';

const classic = { domain_name: 'acme', ...CONFLUENCE_GOOD };
const scoped = { domain_name: 'acme', ...CONFLUENCE_SCOPED };
const serviceAccount = { domain_name: 'acme', ...CONFLUENCE_SERVICE_ACCOUNT };

/** Two spaces, five pages and a blog post. */
function buildSite(): FakeConfluenceSite {
  const site = new FakeConfluenceSite();
  site.addSpace('ENG', 'Engineering');
  site.addSpace('OPS', 'Operations');
  site.addPage({ space: 'ENG', title: 'Engineering Home' });
  site.addPage({ space: 'ENG', title: 'Deploy runbook', storage: '<p>Roll out with care.</p>' });
  site.addPage({ space: 'ENG', title: 'Rollback steps' });
  site.addPage({ space: 'OPS', title: 'Operations Home' });
  site.addPage({ space: 'OPS', title: 'On-call rota' });
  site.addBlogPost({ space: 'ENG', title: 'Launch week' });
  site.addScopedToken(CONFLUENCE_SCOPED);
  site.addScopedToken(CONFLUENCE_SERVICE_ACCOUNT, { serviceAccount: true });
  return site;
}

/** The connection check against the fake site and gateway; resolves to the credentials to store. */
function check(fake: FakeConfluence, input: Record<string, unknown>): Promise<WikiCredentials> {
  return checkCredentials({
    connector: wikiConnector,
    credentials: wikiConnector.normalize(input as never),
    fetch: plainFetch,
    baseUrlTemplate: fake.url,
    settings: { gatewayBaseUrl: fake.gateway.url },
    http: fastHttp(),
  }) as Promise<WikiCredentials>;
}

/** A held set that syncs with `stored` (what the connection would hold after its check). */
function syncedWith(fake: FakeConfluence, stored: WikiCredentials): SyncedSet {
  const connector: AnyConnector = { ...wikiConnector, normalize: () => stored };
  const set = new SyncedSet(connector, {}, fake.url);
  set.settings = { gatewayBaseUrl: fake.gateway.url };
  return set;
}

describe('wiki: which host a token works on', () => {
  let fake: FakeConfluence;
  before(async () => {
    fake = await startFakeConfluence({ site: buildSite() });
  });
  after(() => fake.close());
  let siteMark = 0;
  let gatewayMark = 0;
  beforeEach(() => {
    siteMark = fake.requests.length;
    gatewayMark = fake.gateway.requests.length;
  });
  const siteCalls = () => fake.requests.slice(siteMark).map((r) => r.path);
  const gatewayCalls = () => fake.gateway.requests.slice(gatewayMark).map((r) => r.path);

  it('a classic token: one call on the site, remembered as the site route', async () => {
    const stored = await check(fake, classic);
    assert.deepEqual(stored, {
      domain_name: 'acme.atlassian.net',
      email: CONFLUENCE_GOOD.email,
      api_token: CONFLUENCE_GOOD.api_token,
      api_route: 'site',
    });
    assert.deepEqual(siteCalls(), ['/wiki/rest/api/user/current']);
    assert.deepEqual(gatewayCalls(), []);
  });

  it('a scoped token: refused on the site, accepted through the gateway of the cloud id tenant_info gives', async () => {
    const stored = await check(fake, scoped);
    assert.deepEqual(stored, {
      domain_name: 'acme.atlassian.net',
      email: CONFLUENCE_SCOPED.email,
      api_token: CONFLUENCE_SCOPED.api_token,
      api_route: 'gateway',
      cloud_id: CONFLUENCE_CLOUD_ID,
    });
    assert.deepEqual(siteCalls(), ['/wiki/rest/api/user/current', '/_edge/tenant_info']);
    assert.equal(fake.requests.at(-1)!.headers.authorization, undefined, 'tenant_info needs no credentials');
    assert.deepEqual(gatewayCalls(), [
      `/ex/confluence/${CONFLUENCE_CLOUD_ID}/wiki/api/v2/spaces`,
      `/ex/confluence/${CONFLUENCE_CLOUD_ID}/wiki/api/v2/pages`,
    ]);
    const basic = Buffer.from(`${CONFLUENCE_SCOPED.email}:${CONFLUENCE_SCOPED.api_token}`).toString('base64');
    assert.equal(fake.gateway.requests.at(-1)!.headers.authorization, `Basic ${basic}`);
  });

  it("a service account's token (its @serviceaccount.atlassian.com address) goes through the gateway", async () => {
    const stored = await check(fake, serviceAccount);
    assert.equal(stored.api_route, 'gateway');
    assert.equal(stored.cloud_id, CONFLUENCE_CLOUD_ID);
  });

  it('a token neither way takes: source_auth_failed naming both kinds, without the token', async () => {
    const err = await rejectsWithCode(
      check(fake, { ...scoped, api_token: 'ATATT_revoked_scoped_token_55555' }),
      'source_auth_failed',
    );
    assert.match(err.message, /^Confluence \(wiki\) rejected the credentials \(HTTP 401: Unauthorized\)\./);
    assert.match(err.message, /neither the site \(classic API token\) nor Atlassian's API gateway/);
    assert.doesNotMatch(err.message, /ATATT_revoked/);
  });

  it('a scoped token without read:page:confluence: the hint names the scopes', async () => {
    const site = fake.site;
    const narrow = { email: 'reader@acme.test', api_token: 'ATATT_spaces_only_token_777777' };
    site.addScopedToken(narrow, { scopes: ['read:space:confluence'] });
    const err = await rejectsWithCode(check(fake, { domain_name: 'acme', ...narrow }), 'source_auth_failed');
    assert.match(err.message, /HTTP 401: Unauthorized; scope does not match/);
    assert.match(err.message, /read:space:confluence and read:page:confluence/);
    assert.doesNotMatch(err.message, /ATATT_spaces_only/);
  });

  it('a site that does not tell its cloud id: the hint says why the gateway was not tried', async () => {
    fake.site.tenantInfo = false;
    try {
      const err = await rejectsWithCode(check(fake, scoped), 'source_auth_failed');
      assert.match(err.message, /_edge\/tenant_info did not give/);
      assert.deepEqual(gatewayCalls(), []);
    } finally {
      fake.site.tenantInfo = true;
    }
  });

  it('the sync of a scoped token calls only the gateway, its pagination included', async () => {
    const stored = await check(fake, scoped);
    fake.site.maxPageSize = 2;
    try {
      siteMark = fake.requests.length;
      gatewayMark = fake.gateway.requests.length;
      const set = syncedWith(fake, stored);
      const out = await set.sync();
      assert.deepEqual(out.failures, []);
      assert.deepEqual(set.titles(), [
        'Deploy runbook',
        'Engineering Home',
        'Launch week',
        'On-call rota',
        'Operations Home',
        'Rollback steps',
      ]);
      assert.deepEqual(siteCalls(), [], 'no call to the site, which refuses the token');
      const cursors = fake.gateway.requests.slice(gatewayMark).filter((r) => r.query.has('cursor'));
      assert.ok(cursors.length >= 3, 'the listings were followed page by page through the gateway');
      const runbook = set.docs.get(
        [...fake.site.contents.values()].find((c) => c.title === 'Deploy runbook')!.id,
      )!;
      assert.equal(runbook.url, fake.site.url(fake.site.get(runbook.externalId)), 'URLs name the site');
      assert.match(runbook.markdown, /Roll out with care\./);
    } finally {
      fake.site.maxPageSize = 250;
    }
  });

  it('a scoped token revoked after connecting: the sync error says to make a new scoped token', async () => {
    const site = fake.site;
    const later = { email: 'writer@acme.test', api_token: 'ATATT_scoped_then_revoked_9999' };
    const token = site.addScopedToken(later);
    const stored = await check(fake, { domain_name: 'acme', ...later });
    site.scopedTokens.splice(site.scopedTokens.indexOf(token), 1);
    await assert.rejects(syncedWith(fake, stored).sync(), (err: Error) => {
      assert.match(err.message, /refused the credentials during the sync \(HTTP 401: Unauthorized\)/);
      assert.match(err.message, /API gateway no longer accepts this scoped token/);
      assert.match(err.message, /read:space:confluence and read:page:confluence/);
      assert.ok(!err.message.includes(later.api_token));
      return true;
    });
  });

  it('a classic token that expired: the sync error says to make a new API token', async () => {
    const stored = await check(fake, classic);
    const good = fake.site.credentials.api_token;
    fake.site.credentials.api_token = 'ATATT_replaced_after_expiry_0000';
    try {
      await assert.rejects(syncedWith(fake, stored).sync(), (err: Error) => {
        assert.match(err.message, /the site no longer accepts this API token/);
        assert.doesNotMatch(err.message, /gateway/);
        return true;
      });
    } finally {
      fake.site.credentials.api_token = good;
    }
  });

  it('credentials stored before routes were remembered keep using the site', async () => {
    const set = syncedWith(fake, wikiConnector.normalize(classic));
    const out = await set.sync();
    assert.deepEqual(out.failures, []);
    assert.equal(set.held.size, 6);
    assert.deepEqual(gatewayCalls(), []);
  });
});

describe('wiki: the gateway origin setting (KB_ATLASSIAN_API_BASE_URL)', () => {
  it('defaults to https://api.atlassian.com and takes an operator origin', () => {
    assert.equal(loadConfig({}).sources['wiki']?.settings['gatewayBaseUrl'], 'https://api.atlassian.com');
    assert.equal(
      loadConfig({ KB_ATLASSIAN_API_BASE_URL: 'http://127.0.0.1:4010/gw' }).sources['wiki']?.settings[
        'gatewayBaseUrl'
      ],
      'http://127.0.0.1:4010/gw',
    );
  });

  it('refuses a value that is not an http(s) origin at start', () => {
    for (const bad of [
      'api.atlassian.com',
      'ftp://api.atlassian.com',
      'https://u:p@api.atlassian.com',
      'https://x/?q=1',
    ]) {
      assert.throws(
        () => loadConfig({ KB_ATLASSIAN_API_BASE_URL: bad }),
        (err: unknown) => err instanceof ConfigError && /KB_ATLASSIAN_API_BASE_URL/.test(err.message),
        bad,
      );
    }
  });
});
