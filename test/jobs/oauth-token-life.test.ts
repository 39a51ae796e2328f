/**
 * OAuth tokens live as long as the connection (support_desk against a Zendesk-faithful authorization
 * server: 30-minute access tokens, 30-day refresh tokens spent once used): inside a running sync the
 * token is refreshed before its announced expiry and again on a 401, as often as the sync lasts; an idle
 * connection is refreshed by the scheduled task before its refresh token dies; only a refused refresh
 * needs consent, and the job and the connection say so. Time is a clock the test moves.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { bearerToken } from '../fakes/fake-server.ts';
import { type ZendeskAuth, startZendeskAuth, zendeskOAuthSettings } from '../fakes/zendesk-oauth.ts';
import { type FakeZendesk, startFakeZendesk } from '../fakes/zendesk.ts';
import { refreshIdleConnectionTokens } from '../../src/jobs/token-refresh-task.ts';
import type { WorkerPool } from '../../src/jobs/worker.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from './helpers.ts';

const CLIENT_ID = 'kb-zendesk-client';
const CLIENT_SECRET = `zd-client-secret-${randomBytes(6).toString('hex')}`;
const PUBLIC_URL = 'https://kb.example.test';
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** The clock both the fake and the service count token lives on. */
const clock = { offset: 0, now: () => Date.now() + clock.offset };

for (const mode of STORAGE_MODES) {
  describe(`OAuth tokens live as long as the connection (${mode})`, () => {
    let zendesk: FakeZendesk;
    let auth: ZendeskAuth;
    let t: TestApp;
    let pool: WorkerPool;
    /** API requests the fake refused for their token (401 invalid_token). */
    let refusedTokens: string[] = [];

    before(async () => {
      zendesk = await startFakeZendesk();
      auth = await startZendeskAuth(zendesk, {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        now: clock.now,
      });
      const acct = zendesk.account;
      const category = acct.addCategory('Guides');
      const section = acct.addSection(category, 'Setup');
      for (let i = 0; i < 24; i++) acct.addArticle({ section, title: `Article ${i}` });
      acct.articleExportPageSize = 2; // many requests: the sync outlives several tokens
      t = await startTestApp(mode, {
        config: zendeskOAuthSettings({
          zendeskUrl: zendesk.url,
          authUrl: auth.url,
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
          publicUrl: PUBLIC_URL,
        }),
        parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 1000 }, tokenClock: clock.now },
      });
      pool = t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
      await consentAndConnect();
    });
    after(async () => {
      await pool?.stop();
      await t?.close();
      await zendesk?.close();
      await auth?.close();
    });

    /** The consent flow of the API (initiate, the vendor's redirect, callback), then the connection. */
    async function consentAndConnect(): Promise<void> {
      const init = await t.call('POST', '/api/connect/oauth/initiate', {
        body: { type: 'support_desk', subdomain: 'acme' },
      });
      assert.equal(init.status, 200, JSON.stringify(init.body));
      const granted = await fetch(init.body.consentUrl, { redirect: 'manual' });
      const callback = new URL(granted.headers.get('location')!);
      const res = await t.call('GET', callback.pathname + callback.search, { key: null });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'support_desk', subdomain: 'acme' }, sync: false },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
    }

    /** Runs a sync; `onApiRequest` sees every authenticated API request before the fake answers it. */
    async function sync(onApiRequest: (token: string, n: number) => void = () => {}) {
      let n = 0;
      refusedTokens = [];
      zendesk.account.onRequest = (req) => {
        const token = bearerToken(req);
        if (token === undefined) return undefined;
        onApiRequest(token, n++);
        // Checked as the fake is about to (after whatever the test changed for this request).
        if (!auth.accepts(token)) refusedTokens.push(token);
        return undefined;
      };
      const res = await t.call('POST', '/api/connect/run-sync', {
        body: { type: 'support_desk', jobType: 'reset' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const job = await waitForJob(t, res.body.jobId as number);
      zendesk.account.onRequest = undefined;
      return { job, requests: n };
    }

    async function storedCredentials(): Promise<Record<string, unknown>> {
      const [row] = await t.db.query<{ id: string; credentials_encrypted: string }>(
        "SELECT id, credentials_encrypted FROM connections WHERE type = 'support_desk'",
      );
      for (const g of auth.grants) {
        assert.ok(!row!.credentials_encrypted.includes(g.refresh), 'stored encrypted');
      }
      return t.service.sources.decryptCredentials(row!.id, row!.credentials_encrypted);
    }

    async function connectionView(): Promise<Record<string, unknown>> {
      const list = await t.call('GET', '/api/connect/connections');
      assert.equal(list.status, 200, JSON.stringify(list.body));
      return list.body.data.find((c: { type: string }) => c.type === 'support_desk');
    }

    test('a sync that outlives three access tokens refreshes each before its announced expiry, never meeting a 401', async () => {
      const before = auth.counts.refreshes;
      // Every API request takes the clock on by 9 minutes: a 30-minute token lasts about three requests.
      const { job, requests } = await sync(() => {
        clock.offset += 9 * MINUTE;
      });
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      const refreshes = auth.counts.refreshes - before;
      assert.ok(requests * 9 > 3 * 30, `the sync spans ${requests * 9} minutes, over three token lives`);
      assert.ok(refreshes >= 3, `refreshed ${refreshes} times`);
      assert.deepEqual(refusedTokens, [], 'no request was sent with an expired token');
      const creds = await storedCredentials();
      const newest = auth.grants.at(-1)!;
      assert.equal(creds['access_token'], newest.access);
      assert.equal(creds['oauth_refresh_token'], newest.refresh, 'the last rotated refresh token is stored');
    });

    test('a token refused before its expiry (401) is refreshed once and the request tried again', async () => {
      let before = 0;
      const { job } = await sync((token, n) => {
        // Zendesk voids the token early on the third request (a revocation, another client's refresh).
        if (n === 2) {
          before = auth.counts.refreshes;
          auth.revokeAccess(token);
        }
      });
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.equal(refusedTokens.length, 1, 'one request met the 401');
      assert.equal(auth.counts.refreshes - before, 1, 'one refresh, then the request went again');
      assert.equal((await storedCredentials())['oauth_refresh_token'], auth.grants.at(-1)!.refresh);
    });

    test('an idle connection is refreshed on schedule before its refresh token dies; a refused refresh asks for consent', async () => {
      const deps = { db: t.db, sources: t.service.sources };
      const first = (await storedCredentials())['oauth_refresh_token'];
      // Ten days idle: nothing is due yet.
      clock.offset += 10 * DAY;
      assert.deepEqual((await refreshIdleConnectionTokens(deps)).refreshed, []);
      // Twenty days: past half the refresh token's 30-day life, it is traded; again 20 days later.
      for (let i = 0; i < 2; i++) {
        clock.offset += 10 * DAY;
        const outcome = await refreshIdleConnectionTokens(deps);
        assert.equal(outcome.refreshed.length, 1, JSON.stringify(outcome));
        clock.offset += 10 * DAY;
      }
      const now = await storedCredentials();
      assert.notEqual(now['oauth_refresh_token'], first);
      assert.equal(now['oauth_refresh_token'], auth.grants.at(-1)!.refresh);
      // 50 days on, long past the first refresh token's life, the connection still syncs.
      const { job } = await sync();
      assert.equal(job.status, 'succeeded', JSON.stringify(job));

      // The user revokes the app: the next scheduled refresh is refused and the connection says so.
      auth.revoke(String((await storedCredentials())['oauth_refresh_token']));
      clock.offset += 20 * DAY;
      const outcome = await refreshIdleConnectionTokens(deps);
      assert.equal(outcome.refused.length, 1, JSON.stringify(outcome));
      const view = await connectionView();
      assert.match(
        String(view['consentNeeded']),
        /^Zendesk refused the refresh token \(HTTP 400: invalid_grant.*connect it again through POST \/api\/connect\/oauth\/initiate/,
      );
      // And so does a sync's job.
      const failed = await sync();
      assert.equal(failed.job.status, 'failed');
      assert.match(
        failed.job.error ?? '',
        /The OAuth access of this support_desk connection has ended: connect it again/,
      );
      const shown = JSON.stringify([view, failed.job]);
      for (const g of auth.grants) assert.ok(!shown.includes(g.access) && !shown.includes(g.refresh));

      // Consenting again clears it.
      await consentAndConnect();
      assert.equal((await connectionView())['consentNeeded'], null);
      const again = await sync();
      assert.equal(again.job.status, 'succeeded', JSON.stringify(again.job));
    });

    test('a refresh refused inside a running sync fails the job saying to consent again', async () => {
      const { job } = await sync((token, n) => {
        if (n !== 1) return;
        const grant = auth.grants.find((g) => g.access === token)!;
        auth.revoke(grant.refresh); // voids the access token as well: the next request meets a 401
      });
      assert.equal(job.status, 'failed');
      assert.match(
        job.error ?? '',
        /^Zendesk refused the refresh token \(HTTP 400: invalid_grant.*The OAuth access of this support_desk connection has ended: connect it again through POST \/api\/connect\/oauth\/initiate/,
      );
      assert.match(String((await connectionView())['consentNeeded']), /connect it again/);
      await consentAndConnect();
    });
  });
}
