import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { newStateNonce, OAuthStates } from '../../src/http/oauth-state.ts';
import { basicCredentials, type FakeServer, startFakeServer } from '../fakes/fake-server.ts';
import { NOTION_GOOD_TOKEN, startFakeNotion } from '../fakes/notion.ts';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

const CLIENT_ID = 'client-abc';
const CLIENT_SECRET = 'client-secret-xyz-123456';
const PUBLIC_URL = 'https://kb.example.test';
const CALLBACK = `${PUBLIC_URL}/api/connect/oauth/callback`;

interface FakeAuthServer extends FakeServer {
  /** Codes issued at authorize, with the redirect_uri they were issued for. */
  codes: Map<string, string>;
}

/** A fake Notion authorization server: consent always granted, codes single-use, Basic client auth. */
async function startFakeAuthServer(): Promise<FakeAuthServer> {
  const codes = new Map<string, string>();
  const server = await startFakeServer((req) => {
    if (req.method === 'GET' && req.path === '/v1/oauth/authorize') {
      const redirect = new URL(req.query.get('redirect_uri')!);
      const code = `code-${randomBytes(6).toString('hex')}`;
      codes.set(code, redirect.toString());
      redirect.searchParams.set('code', code);
      redirect.searchParams.set('state', req.query.get('state')!);
      return { status: 302, headers: { location: redirect.toString() } };
    }
    if (req.method === 'POST' && req.path === '/v1/oauth/token') {
      const client = basicCredentials(req);
      if (client?.user !== CLIENT_ID || client.password !== CLIENT_SECRET) {
        return {
          status: 401,
          body: { error: 'invalid_client', error_description: 'Client authentication failed.' },
        };
      }
      const body = JSON.parse(req.body) as { grant_type: string; code: string; redirect_uri: string };
      const issuedFor = codes.get(body.code);
      if (body.grant_type !== 'authorization_code' || !issuedFor || issuedFor !== body.redirect_uri) {
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid code.' } };
      }
      codes.delete(body.code);
      return {
        status: 200,
        body: {
          access_token: NOTION_GOOD_TOKEN,
          token_type: 'bearer',
          refresh_token: null,
          bot_id: 'b3414d65-1224-4ff7-8ffa-c06674a8f8a2',
          workspace_name: 'Acme Docs',
          workspace_id: '9f1b5b4e-4d58-4a3b-9e69-0a3c2d2e7f11',
          owner: { type: 'workspace', workspace: true },
        },
      };
    }
    return { status: 404, body: { error: 'not_found' } };
  });
  return Object.assign(server, { codes });
}

/** What a browser does with the consent URL: the fake grants consent and redirects to our callback. */
async function consent(consentUrl: string): Promise<string> {
  const res = await fetch(consentUrl, { redirect: 'manual' });
  assert.equal(res.status, 302);
  const location = new URL(res.headers.get('location')!);
  assert.equal(location.origin + location.pathname, CALLBACK);
  return location.pathname + location.search;
}

for (const mode of STORAGE_MODES) {
  describe(`OAuth consent for notes (${mode})`, () => {
    let auth: FakeAuthServer;
    let notion: FakeServer;
    let t: TestApp;
    before(async () => {
      auth = await startFakeAuthServer();
      notion = await startFakeNotion();
      t = await startTestApp(mode, {
        config: {
          KB_CRAWL_ALLOW_PRIVATE: 'true',
          KB_NOTES_BASE_URL: notion.url,
          KB_NOTES_OAUTH_BASE_URL: auth.url,
          KB_NOTES_CLIENT_ID: CLIENT_ID,
          KB_NOTES_CLIENT_SECRET: CLIENT_SECRET,
          KB_PUBLIC_URL: PUBLIC_URL,
        },
      });
    });
    after(async () => {
      await t?.close();
      await auth?.close();
      await notion?.close();
    });

    const initiate = async (body: Record<string, unknown> = { type: 'notes' }, key?: string) => {
      const res = await t.call('POST', '/api/connect/oauth/initiate', { body, key });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as { consentUrl: string; secretId: string; expiresAt: number };
    };

    test('creating notes without consent is oauth_required; other types cannot initiate OAuth', async () => {
      expectError(
        await t.call('POST', '/api/connect/connection', { body: { source: { type: 'notes' } } }),
        400,
        'oauth_required',
      );
      expectError(
        await t.call('POST', '/api/connect/oauth/initiate', { body: { type: 'support_desk' } }),
        400,
        'invalid_request',
      );
    });

    test('initiate → consent → callback stores the token; secret-id-exists per organization; create connects', async () => {
      const { consentUrl, secretId, expiresAt } = await initiate({ type: 'notion' });
      assert.ok(expiresAt > Date.now());
      const url = new URL(consentUrl);
      assert.equal(url.origin, auth.url);
      assert.equal(url.pathname, '/v1/oauth/authorize');
      assert.equal(url.searchParams.get('client_id'), CLIENT_ID);
      assert.equal(url.searchParams.get('response_type'), 'code');
      assert.equal(url.searchParams.get('owner'), 'user');
      assert.equal(url.searchParams.get('redirect_uri'), CALLBACK);
      assert.ok(url.searchParams.get('state'));

      const exists = async (key?: string) =>
        (await t.call('GET', `/api/connect/secret-id-exists?secretId=${secretId}`, { key })).body
          .exists as boolean;
      assert.equal(await exists(), false);

      const callback = await consent(consentUrl);
      const res = await t.call('GET', callback, { key: null });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { success: true, secretId });
      const exchange = auth.requests.find((r) => r.path === '/v1/oauth/token')!;
      assert.equal(JSON.parse(exchange.body).redirect_uri, CALLBACK);

      assert.equal(await exists(), true);
      assert.equal(await exists(t.orgB.key), false, 'another organization does not see it');
      const stored = await t.db.query<{ token_encrypted: string }>(
        'SELECT token_encrypted FROM oauth_secrets',
      );
      assert.ok(!stored[0]!.token_encrypted.includes(NOTION_GOOD_TOKEN));

      // Replaying the same callback (same state) is refused, and stores nothing new.
      expectError(await t.call('GET', callback, { key: null }), 400, 'invalid_request');

      expectError(
        await t.call('POST', '/api/connect/connection', {
          body: { source: { type: 'notes' } },
          key: t.orgB.key,
        }),
        400,
        'oauth_required',
      );
      const before = notion.requests.length;
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'notes' }, secretId },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.created, true);
      assert.equal(
        notion.requests[before]!.headers.authorization,
        `Bearer ${NOTION_GOOD_TOKEN}`,
        'checked with the OAuth token',
      );
      const list = await t.call('GET', '/api/connect/connections');
      assert.equal(list.body.data[0].type, 'notes');
      assert.ok(!JSON.stringify(list.body).includes(NOTION_GOOD_TOKEN));
    });

    test('a forged, altered, unknown or expired state is refused before any code exchange', async () => {
      const { consentUrl } = await initiate();
      const callback = new URL(await consent(consentUrl), PUBLIC_URL);
      const state = callback.searchParams.get('state')!;
      const code = callback.searchParams.get('code')!;
      const exchangesBefore = auth.requests.filter((r) => r.path === '/v1/oauth/token').length;
      const tryState = async (s: string) => {
        const res = await t.call(
          'GET',
          `/api/connect/oauth/callback?code=${code}&state=${encodeURIComponent(s)}`,
          { key: null },
        );
        expectError(res, 400, 'invalid_request');
        return res.body.message as string;
      };
      const [nonce, exp, sig] = state.split('.');
      await tryState(`${nonce}.${Number(exp) + 3600}.${sig}`); // later expiry, old signature
      await tryState(`${newStateNonce()}.${exp}.${sig}`); // another nonce
      await tryState(
        `${nonce}.${exp}.${Buffer.from('forged-signature-forged-signatur').toString('base64url')}`,
      );
      await tryState('not-a-state');
      // Signed with our key, but never issued: the database does not know it.
      assert.match(
        await tryState(await new OAuthStates(t.db, t.service.cipher).sign(newStateNonce(), 60_000)),
        /already used or has expired/,
      );
      assert.match(
        await tryState(await new OAuthStates(t.db, t.service.cipher).sign(newStateNonce(), -1_000)),
        /expired/,
      );
      expectError(
        await t.call('GET', `/api/connect/oauth/callback?code=${code}`, { key: null }),
        400,
        'invalid_request',
      );
      assert.equal(auth.requests.filter((r) => r.path === '/v1/oauth/token').length, exchangesBefore);

      // The genuine state still works once.
      const ok = await t.call('GET', `${callback.pathname}${callback.search}`, { key: null });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    });

    test('a refused code is source_auth_failed; with a redirectUri the browser is sent back with the outcome', async () => {
      const { consentUrl } = await initiate();
      const callback = new URL(await consent(consentUrl), PUBLIC_URL);
      callback.searchParams.set('code', 'made-up-code');
      const bad = await t.call('GET', `${callback.pathname}${callback.search}`, { key: null });
      expectError(bad, 400, 'source_auth_failed');
      assert.match(bad.body.message, /invalid_grant/);
      assert.doesNotMatch(bad.body.message, new RegExp(CLIENT_SECRET));

      const started = await initiate({ type: 'notes', redirectUri: 'https://app.example.test/done?x=1' });
      const good = await t.call('GET', await consent(started.consentUrl), { key: null });
      assert.equal(good.status, 302);
      const back = new URL(good.headers['location'] as string);
      assert.equal(back.origin + back.pathname, 'https://app.example.test/done');
      assert.equal(back.searchParams.get('x'), '1');
      assert.equal(back.searchParams.get('secretId'), started.secretId);
      assert.equal(back.searchParams.get('status'), 'success');

      const declined = await initiate({ type: 'notes', redirectUri: 'https://app.example.test/done' });
      const state = new URL(declined.consentUrl).searchParams.get('state')!;
      const res = await t.call(
        'GET',
        `/api/connect/oauth/callback?error=access_denied&state=${encodeURIComponent(state)}`,
        {
          key: null,
        },
      );
      assert.equal(res.status, 302);
      const declinedBack = new URL(res.headers['location'] as string);
      assert.equal(declinedBack.searchParams.get('status'), 'error');
      assert.equal(declinedBack.searchParams.get('error'), 'source_auth_failed');
    });
  });
}

describe('OAuth without a configured app', () => {
  test('initiate answers 400 oauth_not_configured', async () => {
    const t = await startTestApp('postgres');
    try {
      const res = await t.call('POST', '/api/connect/oauth/initiate', { body: { type: 'notes' } });
      expectError(res, 400, 'oauth_not_configured');
      assert.match(res.body.message, /KB_NOTES_CLIENT_ID/);
    } finally {
      await t.close();
    }
  });
});
