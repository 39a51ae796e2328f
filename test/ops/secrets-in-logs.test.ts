/**
 * Secrets stay out of the logs: every log line of a full run (admin provisioning, connections accepted and
 * refused, an OAuth consent, syncs with failures and with revoked credentials, a crawl with errors, bad
 * requests) is captured at trace level and searched for every secret the run used: API keys, the admin
 * token, the encryption key, source tokens, e-mails of source accounts, the OAuth client secret, code,
 * state and secret id. The log must still say what happened (it is not silent), just never those values.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createProcessLogger } from '../../src/lib/logger.ts';
import type { WorkerPool } from '../../src/jobs/worker.ts';
import { CONFLUENCE_GOOD, startFakeConfluence, type FakeConfluence } from '../fakes/confluence.ts';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.ts';
import { NOTION_GOOD_TOKEN, startFakeNotion } from '../fakes/notion.ts';
import { startFakeZendesk, ZENDESK_GOOD } from '../fakes/zendesk.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from '../jobs/helpers.ts';
import { FAST_CRAWLER } from '../http/crawl-helpers.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

const ADMIN_TOKEN = `admin-${randomBytes(12).toString('hex')}`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const CLIENT_ID = 'notes-client-id';
const CLIENT_SECRET = `client-secret-${randomBytes(8).toString('hex')}`;
const PUBLIC_URL = 'https://kb.example.test';
const WRONG_TOKEN = `wrong-token-${randomBytes(8).toString('hex')}`;

/** A Notion-shaped authorization server that records the codes it issues. */
async function startAuthServer(codes: string[]): Promise<FakeServer> {
  return startFakeServer((req) => {
    if (req.path === '/v1/oauth/authorize') {
      const redirect = new URL(req.query.get('redirect_uri')!);
      const code = `code-${randomBytes(8).toString('hex')}`;
      codes.push(code);
      redirect.searchParams.set('code', code);
      redirect.searchParams.set('state', req.query.get('state')!);
      return { status: 302, headers: { location: redirect.toString() } };
    }
    if (req.path === '/v1/oauth/token') {
      return { status: 200, body: { access_token: NOTION_GOOD_TOKEN, workspace_name: 'Acme' } };
    }
    return { status: 404, body: { error: 'not_found' } };
  });
}

/** A small site: two pages, a link to a page that fails, one that is missing. */
async function startSite(): Promise<FakeServer> {
  const page = (title: string, body: string) => ({
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`,
  });
  return startFakeServer((req) => {
    if (req.path === '/robots.txt') return { status: 404, body: '' };
    if (req.path === '/') {
      return page(
        'Home',
        '<p>Welcome to the documentation of the service, with guides.</p><a href="/guide">Guide</a> <a href="/broken">Broken</a> <a href="/missing">Missing</a>',
      );
    }
    if (req.path === '/guide')
      return page('Guide', '<p>The guide explains how to deploy and configure it.</p>');
    if (req.path === '/broken') return { status: 500, body: 'boom' };
    return { status: 404, body: 'not found' };
  });
}

describe('no secret reaches the logs of a full run', () => {
  let raw = '';
  let t: TestApp;
  let pool: WorkerPool;
  let wiki: FakeConfluence;
  let notion: FakeServer;
  let zendesk: FakeServer;
  let auth: FakeServer;
  let site: FakeServer;
  const codes: string[] = [];
  const secrets: Record<string, string> = {};

  before(async () => {
    wiki = await startFakeConfluence();
    notion = await startFakeNotion();
    zendesk = await startFakeZendesk();
    auth = await startAuthServer(codes);
    site = await startSite();
    const stream = new Writable({
      write(chunk, _enc, done) {
        raw += chunk.toString();
        done();
      },
    });
    t = await startTestApp('pglite', {
      config: {
        KB_CRAWL_ALLOW_PRIVATE: 'true',
        KB_ADMIN_TOKEN: ADMIN_TOKEN,
        KB_ENCRYPTION_KEY: ENCRYPTION_KEY,
        KB_WIKI_BASE_URL: wiki.url,
        KB_NOTES_BASE_URL: notion.url,
        KB_NOTES_OAUTH_BASE_URL: auth.url,
        KB_NOTES_CLIENT_ID: CLIENT_ID,
        KB_NOTES_CLIENT_SECRET: CLIENT_SECRET,
        KB_SUPPORT_DESK_BASE_URL: zendesk.url,
        KB_PUBLIC_URL: PUBLIC_URL,
      },
      parts: { sourceHttp: FAST_SOURCE_HTTP, crawler: FAST_CRAWLER },
      logger: createProcessLogger({ level: 'trace', stream }),
    });
    pool = t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
  });
  after(async () => {
    await pool?.stop();
    await t?.close();
    for (const s of [wiki, notion, zendesk, auth, site]) await s?.close();
  });

  test('connections, OAuth, syncs with failures, a crawl and refused requests log what happened and no secret', async () => {
    Object.assign(secrets, {
      orgAKey: t.orgA.key,
      orgBKey: t.orgB.key,
      adminToken: ADMIN_TOKEN,
      encryptionKey: ENCRYPTION_KEY,
      clientSecret: CLIENT_SECRET,
      notionToken: NOTION_GOOD_TOKEN,
      wikiToken: CONFLUENCE_GOOD.api_token,
      wikiEmail: CONFLUENCE_GOOD.email,
      zendeskToken: ZENDESK_GOOD.api_token,
      zendeskEmail: ZENDESK_GOOD.email,
      wrongToken: WRONG_TOKEN,
    });

    // Provisioning through the admin API.
    const org = await t.call('POST', '/api/admin/organizations', {
      key: ADMIN_TOKEN,
      body: { name: 'tenant-x' },
    });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    secrets['provisionedKey'] = org.body.apiKey;
    assert.equal((await t.call('GET', '/api/connect/connections', { key: org.body.apiKey })).status, 200);

    // Connections: refused (a wrong token), accepted (basic auth, API token).
    const refused = await t.call('POST', '/api/connect/connection', {
      body: {
        source: {
          type: 'wiki',
          domain_name: 'acme.atlassian.net',
          email: CONFLUENCE_GOOD.email,
          api_token: WRONG_TOKEN,
        },
      },
    });
    assert.equal(refused.status, 400);
    const wikiConn = await t.call('POST', '/api/connect/connection', {
      body: { source: { type: 'wiki', domain_name: 'acme.atlassian.net', ...CONFLUENCE_GOOD }, sync: false },
    });
    assert.equal(wikiConn.status, 200, JSON.stringify(wikiConn.body));
    const desk = await t.call('POST', '/api/connect/connection', {
      body: { source: { type: 'support_desk', subdomain: 'acme', ...ZENDESK_GOOD }, sync: false },
    });
    assert.equal(desk.status, 200, JSON.stringify(desk.body));

    // OAuth consent for notes: initiate, the browser's consent, the callback, the connection.
    const init = await t.call('POST', '/api/connect/oauth/initiate', { body: { type: 'notes' } });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    secrets['secretId'] = init.body.secretId;
    const granted = await fetch(init.body.consentUrl, { redirect: 'manual' });
    const callback = new URL(granted.headers.get('location')!);
    secrets['oauthState'] = callback.searchParams.get('state')!;
    secrets['oauthCode'] = codes.at(-1)!;
    assert.equal((await t.call('GET', callback.pathname + callback.search, { key: null })).status, 200);
    const notes = await t.call('POST', '/api/connect/connection', {
      body: { source: { type: 'notes' }, secretId: init.body.secretId, sync: false },
    });
    assert.equal(notes.status, 200, JSON.stringify(notes.body));

    // A wiki sync where one page fails, then one whose credentials were revoked at the source.
    wiki.site.addSpace('ENG', 'Engineering');
    wiki.site.addPage({ space: 'ENG', title: 'Runbook', storage: '<p>Deploy with care.</p>' });
    wiki.site.addPage({ space: 'ENG', title: 'Broken', storage: '<p>Not <strong>closed</p>' });
    const runWiki = async () => {
      const res = await t.call('POST', '/api/connect/run-sync', { body: { type: 'wiki' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return waitForJob(t, res.body.jobId as number);
    };
    const partial = await runWiki();
    assert.equal(partial.status, 'incomplete', JSON.stringify(partial));
    wiki.site.credentials.api_token = `rotated-${randomBytes(6).toString('hex')}`;
    const revoked = await runWiki();
    assert.equal(revoked.status, 'failed', JSON.stringify(revoked));

    // A crawl with a failing and a missing page.
    const crawl = await t.call('POST', '/api/connect/crawling/', {
      body: { url: `${site.url}/`, limit: 10 },
    });
    assert.equal(crawl.status, 200, JSON.stringify(crawl.body));
    for (let i = 0; ; i++) {
      const job = await t.call('GET', `/api/connect/crawling/${crawl.body.id}`);
      if (['completed', 'failed', 'cancelled'].includes(job.body.status)) break;
      assert.ok(i < 600, 'the crawl ends');
      await sleep(25);
    }

    // Refused requests carrying secrets in every place a client might put them.
    await t.call('POST', '/api/connect/knowledgebase-items/query', {
      key: `${t.orgA.key.slice(0, -3)}xyz`,
      body: {},
    });
    await t.call('POST', '/api/connect/connection', {
      body: {
        source: { type: 'wiki', domain_name: 'acme', email: CONFLUENCE_GOOD.email, api_token: WRONG_TOKEN },
        extra: 1,
      },
    });
    await t.call('GET', `/api/connect/secret-id-exists?secretId=${secrets['secretId']}`);
    await t.call(
      'GET',
      `/api/connect/oauth/callback?code=${secrets['oauthCode']}&state=${secrets['oauthState']}`,
      { key: null },
    );
    await t.call('GET', `/api/admin/organizations?token=${ADMIN_TOKEN}`, { key: ADMIN_TOKEN });

    // The log is not empty: it tells the story...
    for (const told of [
      '/api/connect/connection',
      '/api/connect/oauth/callback',
      '/api/connect/run-sync',
      '/api/connect/crawling/',
    ]) {
      assert.ok(raw.includes(told), `the log mentions ${told}`);
    }
    // Many lines (one a request, plus the jobs'), not counting the crawl's status polls (how many there are depends on the crawl's speed).
    const lines = raw
      .split('\n')
      .filter((l) => l !== '' && !/"GET","url":"\/api\/connect\/crawling\//.test(l));
    assert.ok(lines.length > 15, `a full run logs many lines (${lines.length})`);
    // ...and never a secret, whole or in a recognisable part.
    for (const [name, value] of Object.entries(secrets)) {
      assert.ok(value && value.length >= 8, `${name} is a real value`);
      assert.ok(!raw.includes(value), `${name} appears in the log`);
      const middle = value.slice(Math.floor(value.length / 4), Math.floor(value.length / 4) + 12);
      assert.ok(!raw.includes(middle), `a part of ${name} appears in the log`);
    }
  });
});
