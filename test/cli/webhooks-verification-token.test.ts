/**
 * `kb webhooks verification-token notion`: the operator takes the verification token Notion posted (the
 * admin API, with KB_ADMIN_TOKEN), which the service trusts from then on; the token is printed alone on
 * the last line to paste into Notion's Verify form. Without the admin token: a usage error; with a wrong
 * one or nothing pending: the API's refusal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NotionWebhookSender } from '../fakes/notion-webhooks.ts';
import { NOTION_GOOD_TOKEN, sampleWorkspace, startFakeNotion, type FakeNotion } from '../fakes/notion.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { hasStackTrace, kb, listen } from './helpers.ts';

const ADMIN = 'admin-token-for-cli-handshake-tests-0123';

describe('kb webhooks verification-token', () => {
  let fake: FakeNotion;
  let t: TestApp;
  let url: string;
  let notion: NotionWebhookSender;
  let ids: ReturnType<typeof sampleWorkspace>['ids'];
  before(async () => {
    const sample = sampleWorkspace();
    ids = sample.ids;
    fake = await startFakeNotion({ workspace: sample.workspace });
    t = await startTestApp('pglite', {
      config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_NOTES_BASE_URL: fake.url, KB_ADMIN_TOKEN: ADMIN },
    });
    url = await listen(t);
    notion = new NotionWebhookSender({
      workspace: sample.workspace,
      transport: (body, headers) =>
        t.call('POST', '/api/connect/webhooks/notion', { key: null, body, headers }),
    });
  });
  after(async () => {
    await t?.close();
    await fake?.close();
  });

  test('prints the pending token last and trusts it; refuses without the admin token', async () => {
    const created = await t.call('POST', '/api/connect/connection', {
      body: { source: { type: 'notion', access_token: NOTION_GOOD_TOKEN }, sync: false },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal((await notion.handshake()).status, 200);

    const noToken = await kb(['webhooks', 'verification-token', 'notion'], {
      url,
      key: null,
      env: { KB_ADMIN_TOKEN: null },
    });
    assert.equal(noToken.code, 2, noToken.stderr);
    assert.match(noToken.stderr, /KB_ADMIN_TOKEN/);
    const wrong = await kb(['webhooks', 'verification-token', 'notion'], {
      url,
      key: t.orgA.key,
      env: { KB_ADMIN_TOKEN: 'not-the-admin-token' },
    });
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, /401 unauthorized/);
    assert.ok(!hasStackTrace(wrong.stderr));
    // Nothing was taken: the event is still refused.
    assert.equal((await notion.send('page.content_updated', ids.handbook)).status, 401);

    const taken = await kb(['webhooks', 'verification-token', 'notion'], {
      url,
      key: null,
      env: { KB_ADMIN_TOKEN: ADMIN },
    });
    assert.equal(taken.code, 0, taken.stderr);
    assert.equal(taken.stdout.trim().split('\n').at(-1), notion.verificationToken);
    assert.match(taken.stdout, /^received \d{4}-\d\d-\d\dT/);
    assert.equal((await notion.send('page.content_updated', ids.handbook)).status, 200);

    const again = await kb(['webhooks', 'verification-token', 'notion', '--json'], {
      url,
      key: null,
      env: { KB_ADMIN_TOKEN: ADMIN },
    });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /No handshake of Notion is waiting.*\(404 not_found\)/);
  });
});
