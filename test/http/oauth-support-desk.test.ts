import { zendeskOAuthSettings } from '../fakes/zendesk-oauth.ts';
/**
 * support_desk through Zendesk's OAuth consent (API.md "Later extensions"; zendesk.md §2 and its
 * Corrections): every account is its own authorization server, so the initiate body names the subdomain;
 * the token endpoint takes JSON with the client's id and secret; access tokens expire and a sync job trades
 * the refresh token for new ones first (refresh tokens rotate), and fails saying to consent again when
 * Zendesk refuses.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ZENDESK_OAUTH_SCOPES, zendeskOAuth } from '../../src/connectors/support-desk/oauth.ts';
import type { WorkerPool } from '../../src/jobs/worker.ts';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.ts';
import { type FakeZendesk, startFakeZendesk } from '../fakes/zendesk.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from '../jobs/helpers.ts';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

const CLIENT_ID = 'kb-zendesk-client';
const CLIENT_SECRET = `zd-client-secret-${randomBytes(6).toString('hex')}`;
const PUBLIC_URL = 'https://kb.example.test';
const CALLBACK = `${PUBLIC_URL}/api/connect/oauth/callback`;

interface TokenGrant {
  access: string;
  refresh: string;
}

/**
 * A Zendesk-shaped authorization server under `/<subdomain>/oauth/...`: codes per subdomain, single use;
 * refresh tokens rotate; `refuseRefresh` plays a revoked grant. Each grant is handed to `onGrant` (the API
 * fake then accepts that access token).
 */
async function startZendeskAuth(onGrant: (subdomain: string, grant: TokenGrant) => void) {
  const codes = new Map<string, { subdomain: string; redirect: string }>();
  const refreshTokens = new Map<string, string>();
  const state = { refuseRefresh: false, expiresIn: 600 };
  const issue = (subdomain: string) => {
    const grant = {
      access: `zd-access-${randomBytes(6).toString('hex')}`,
      refresh: `zd-refresh-${randomBytes(6).toString('hex')}`,
    };
    refreshTokens.set(grant.refresh, subdomain);
    onGrant(subdomain, grant);
    return {
      status: 200,
      body: {
        access_token: grant.access,
        token_type: 'bearer',
        scope: ZENDESK_OAUTH_SCOPES,
        refresh_token: grant.refresh,
        expires_in: state.expiresIn,
        refresh_token_expires_in: 2_592_000,
      },
    };
  };
  const server: FakeServer = await startFakeServer((req) => {
    const m = /^\/([a-z0-9-]+)\/oauth\/(authorizations\/new|tokens)$/.exec(req.path);
    if (!m) return { status: 404, body: { error: 'InvalidEndpoint' } };
    const subdomain = m[1]!;
    if (m[2] === 'authorizations/new') {
      const redirect = new URL(req.query.get('redirect_uri')!);
      const code = `zd-code-${randomBytes(6).toString('hex')}`;
      codes.set(code, { subdomain, redirect: redirect.toString() });
      redirect.searchParams.set('code', code);
      redirect.searchParams.set('state', req.query.get('state')!);
      return { status: 302, headers: { location: redirect.toString() } };
    }
    const body = JSON.parse(req.body) as Record<string, string>;
    if (body['client_id'] !== CLIENT_ID || body['client_secret'] !== CLIENT_SECRET) {
      return {
        status: 401,
        body: { error: 'invalid_client', error_description: 'Client authentication failed.' },
      };
    }
    if (body['grant_type'] === 'authorization_code') {
      const issued = codes.get(body['code'] ?? '');
      codes.delete(body['code'] ?? '');
      if (!issued || issued.subdomain !== subdomain || issued.redirect !== body['redirect_uri']) {
        return {
          status: 400,
          body: { error: 'invalid_grant', error_description: 'The code is invalid or expired.' },
        };
      }
      return issue(subdomain);
    }
    if (body['grant_type'] === 'refresh_token') {
      const owner = refreshTokens.get(body['refresh_token'] ?? '');
      refreshTokens.delete(body['refresh_token'] ?? '');
      if (state.refuseRefresh || owner !== subdomain) {
        return {
          status: 400,
          body: { error: 'invalid_grant', error_description: 'The refresh token was revoked.' },
        };
      }
      return issue(subdomain);
    }
    return { status: 400, body: { error: 'unsupported_grant_type' } };
  });
  return Object.assign(server, { state });
}

describe('Zendesk consent scopes', () => {
  const app = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, baseUrl: 'https://acme.zendesk.com' };
  const scopeOf = (receivesChanges: boolean) =>
    new URL(
      zendeskOAuth.authorizeUrl(app, { redirectUri: CALLBACK, state: 's', receivesChanges }),
    ).searchParams.get('scope');
  test('asks to write webhooks only when the service will subscribe (it has a public URL)', () => {
    assert.equal(scopeOf(false), 'hc:read read');
    assert.equal(scopeOf(true), 'hc:read read webhooks:write');
  });
});

for (const mode of STORAGE_MODES) {
  describe(`support_desk through Zendesk OAuth (${mode})`, () => {
    let zendesk: FakeZendesk;
    let auth: Awaited<ReturnType<typeof startZendeskAuth>>;
    let t: TestApp;
    let pool: WorkerPool;
    const grants: TokenGrant[] = [];
    before(async () => {
      zendesk = await startFakeZendesk();
      auth = await startZendeskAuth((_subdomain, grant) => {
        grants.push(grant);
        zendesk.account.credentials.access_token = grant.access;
      });
      t = await startTestApp(mode, {
        config: zendeskOAuthSettings({
          zendeskUrl: zendesk.url,
          authUrl: auth.url,
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
          publicUrl: PUBLIC_URL,
        }),
        parts: { sourceHttp: FAST_SOURCE_HTTP },
      });
      pool = t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
    });
    after(async () => {
      await pool?.stop();
      await t?.close();
      await zendesk?.close();
      await auth?.close();
    });

    test('consent per subdomain; the connection takes only its own account’s token', async () => {
      expectError(
        await t.call('POST', '/api/connect/oauth/initiate', { body: { type: 'support_desk' } }),
        400,
        'invalid_request',
      );
      const missing = await t.call('POST', '/api/connect/oauth/initiate', { body: { type: 'support_desk' } });
      assert.match(missing.body.message, /^subdomain: required/);
      const wrongField = await t.call('POST', '/api/connect/oauth/initiate', {
        body: { type: 'notes', subdomain: 'acme' },
      });
      expectError(wrongField, 400, 'invalid_request');
      assert.match(wrongField.body.message, /subdomain: notes does not take it/);
      expectError(
        await t.call('POST', '/api/connect/oauth/initiate', {
          body: { type: 'zendesk', subdomain: 'https://evil.test/x' },
        }),
        400,
        'invalid_request',
      );

      const init = await t.call('POST', '/api/connect/oauth/initiate', {
        body: { type: 'zendesk', subdomain: 'ACME.zendesk.com' },
      });
      assert.equal(init.status, 200, JSON.stringify(init.body));
      const consentUrl = new URL(init.body.consentUrl);
      assert.equal(consentUrl.origin + consentUrl.pathname, `${auth.url}/acme/oauth/authorizations/new`);
      assert.equal(consentUrl.searchParams.get('client_id'), CLIENT_ID);
      assert.equal(consentUrl.searchParams.get('response_type'), 'code');
      // The service has a public URL, so it will create the connection's webhook: the consent asks for that.
      assert.equal(consentUrl.searchParams.get('scope'), 'hc:read read webhooks:write');
      assert.equal(consentUrl.searchParams.get('redirect_uri'), CALLBACK);

      const granted = await fetch(consentUrl, { redirect: 'manual' });
      const callback = new URL(granted.headers.get('location')!);
      const res = await t.call('GET', callback.pathname + callback.search, { key: null });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const exchange = JSON.parse(auth.requests.find((r) => r.path === '/acme/oauth/tokens')!.body);
      assert.equal(exchange.grant_type, 'authorization_code');
      assert.equal(exchange.redirect_uri, CALLBACK);
      assert.equal(exchange.scope, 'hc:read read webhooks:write');
      const stored = await t.db.query<{ token_encrypted: string; tenant: string }>(
        'SELECT token_encrypted, tenant FROM oauth_secrets',
      );
      assert.equal(stored[0]!.tenant, 'acme');
      assert.ok(!stored[0]!.token_encrypted.includes(grants[0]!.access));

      // Another subdomain has no consent; this consent does not fit it.
      expectError(
        await t.call('POST', '/api/connect/connection', {
          body: { source: { type: 'support_desk', subdomain: 'other' } },
        }),
        400,
        'oauth_required',
      );
      const mismatch = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'support_desk', subdomain: 'other' }, secretId: init.body.secretId },
      });
      expectError(mismatch, 400, 'invalid_request');
      assert.match(mismatch.body.message, /^source\.subdomain:/);

      const before = zendesk.requests.length;
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'support_desk', subdomain: 'acme' }, sync: false },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(zendesk.requests[before]!.headers.authorization, `Bearer ${grants[0]!.access}`);
      const list = await t.call('GET', '/api/connect/connections');
      const text = JSON.stringify(list.body);
      for (const g of grants) assert.ok(!text.includes(g.access) && !text.includes(g.refresh));
    });

    test('a sync refreshes an expiring token first and keeps the rotated one; a revoked grant fails the job saying what to do', async () => {
      const first = grants.at(-1)!;
      const run = async () => {
        const res = await t.call('POST', '/api/connect/run-sync', { body: { type: 'support_desk' } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return waitForJob(t, res.body.jobId as number);
      };
      // The token expires in 10 minutes, within the refresh margin: the job refreshes before it syncs.
      const synced = await run();
      assert.equal(synced.status, 'succeeded', JSON.stringify(synced));
      const refresh = auth.requests
        .filter((r) => r.path === '/acme/oauth/tokens')
        .map((r) => JSON.parse(r.body))
        .at(-1);
      assert.equal(refresh.grant_type, 'refresh_token');
      assert.equal(refresh.refresh_token, first.refresh);
      const second = grants.at(-1)!;
      assert.notEqual(second.access, first.access);
      const syncCalls = zendesk.requests.filter((r) => r.path.includes('/help_center/'));
      assert.ok(syncCalls.length > 0);
      for (const r of syncCalls) assert.equal(r.headers.authorization, `Bearer ${second.access}`);
      const row = await t.db.query<{ id: string; credentials_encrypted: string }>(
        "SELECT id, credentials_encrypted FROM connections WHERE type = 'support_desk'",
      );
      const creds = t.service.sources.decryptCredentials(row[0]!.id, row[0]!.credentials_encrypted);
      assert.equal(creds['access_token'], second.access);
      assert.equal(creds['oauth_refresh_token'], second.refresh, 'the rotated refresh token is kept');

      auth.state.refuseRefresh = true;
      const failed = await run();
      assert.equal(failed.status, 'failed');
      assert.match(
        failed.error ?? '',
        /^Zendesk refused the refresh token \(HTTP 400: invalid_grant\)\. The OAuth access of this support_desk connection has ended: connect it again through POST \/api\/connect\/oauth\/initiate/,
      );
      for (const g of grants)
        assert.ok(!(failed.error ?? '').includes(g.refresh) && !(failed.error ?? '').includes(g.access));
      auth.state.refuseRefresh = false;
    });
  });
}
