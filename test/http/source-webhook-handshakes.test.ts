/**
 * A vendor's set-up handshake arrives unsigned (Notion's `{"verification_token": ...}`), so anyone can post
 * one: its token stays pending, proving no event, until an operator takes the newest with the admin API,
 * which shows it (Notion asks for it back) and trusts it. Pending handshakes are bounded per type, and no
 * token reaches the logs.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createProcessLogger } from '../../src/lib/logger.ts';
import { NotionWebhookSender } from '../fakes/notion-webhooks.ts';
import {
  type FakeNotion,
  NOTION_GOOD_TOKEN,
  type SampleIds,
  sampleWorkspace,
  startFakeNotion,
} from '../fakes/notion.ts';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

const ADMIN = 'admin-token-for-handshake-tests-0123456789';
const TAKE = '/api/admin/source-webhooks/notion/verification-token';

for (const mode of STORAGE_MODES) {
  describe(`source webhook handshakes are trusted only by an operator (${mode})`, () => {
    let fake: FakeNotion;
    let ids: SampleIds;
    let t: TestApp;
    let notion: NotionWebhookSender;
    let stranger: NotionWebhookSender;
    let logs = '';
    before(async () => {
      const sample = sampleWorkspace();
      ids = sample.ids;
      fake = await startFakeNotion({ workspace: sample.workspace });
      const stream = new Writable({
        write(chunk, _enc, done) {
          logs += chunk.toString();
          done();
        },
      });
      t = await startTestApp(mode, {
        config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_NOTES_BASE_URL: fake.url, KB_ADMIN_TOKEN: ADMIN },
        logger: createProcessLogger({ level: 'trace', stream }),
      });
      const transport = (body: string, headers: Record<string, string>) =>
        t.call('POST', '/api/connect/webhooks/notion', { key: null, body, headers });
      notion = new NotionWebhookSender({ workspace: sample.workspace, transport });
      // Someone who knows the URL and the workspace id, not the subscription's token.
      stranger = new NotionWebhookSender({ workspace: sample.workspace, transport });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    test('a posted handshake proves nothing until the operator takes it; then only its token does', async () => {
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'notion', access_token: NOTION_GOOD_TOKEN }, sync: false },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));

      // Both handshakes are answered as Notion expects, whoever sent them.
      assert.equal((await stranger.handshake()).status, 200);
      assert.equal((await notion.handshake()).status, 200);
      const forged = await stranger.send('page.content_updated', ids.handbook);
      expectError(forged, 401, 'unauthorized');
      // Not even the real token proves an event while it is pending.
      expectError(await notion.send('page.content_updated', ids.handbook), 401, 'unauthorized');
      assert.equal(await eventCount(t), 0);

      // Only the admin token takes it.
      expectError(await t.call('POST', TAKE, { key: null }), 401, 'unauthorized');
      expectError(await t.call('POST', TAKE, { key: t.orgA.key }), 401, 'unauthorized');
      expectError(
        await t.call('POST', '/api/admin/source-webhooks/nope/verification-token', { key: ADMIN }),
        404,
        'not_found',
      );
      expectError(
        await t.call('POST', '/api/admin/source-webhooks/shopify/verification-token', { key: ADMIN }),
        404,
        'not_found',
      );

      const taken = await t.call('POST', TAKE, { key: ADMIN });
      assert.equal(taken.status, 200, JSON.stringify(taken.body));
      assert.equal(taken.body.verificationToken, notion.verificationToken);
      assert.equal(taken.body.type, 'notes');
      assert.equal(taken.body.othersDropped, 1);
      assert.ok(!Number.isNaN(Date.parse(taken.body.receivedAt)), taken.body.receivedAt);
      assert.equal(taken.headers['cache-control'], 'no-store');
      // The stranger's pending handshake went with it: nothing is left to take.
      expectError(await t.call('POST', TAKE, { key: ADMIN }), 404, 'not_found');

      const delivered = await notion.send('page.content_updated', ids.handbook);
      assert.equal(delivered.status, 200, JSON.stringify(delivered.body));
      assert.equal(await eventCount(t), 1);
      expectError(await stranger.send('page.content_updated', ids.handbook), 401, 'unauthorized');

      // A flood of handshakes keeps 20 pending rows and leaves the trusted token working.
      for (let i = 0; i < 25; i++) assert.equal((await stranger.handshake()).status, 200);
      const rows = await t.db.query<{ trusted: boolean; n: string | number }>(
        `SELECT trusted_at IS NOT NULL AS trusted, count(*) AS n FROM source_webhook_handshakes
          GROUP BY 1 ORDER BY 1`,
      );
      assert.deepEqual(
        rows.map((r) => [r.trusted, Number(r.n)]),
        [
          [false, 20],
          [true, 1],
        ],
      );
      expectError(await stranger.send('page.content_updated', ids.handbook), 401, 'unauthorized');
      assert.equal((await notion.send('page.created', ids.handbook)).status, 200);
      assert.equal(await eventCount(t), 2);

      // Another organization's key cannot take the stranger's flood either.
      expectError(await t.call('POST', TAKE, { key: t.orgB.key }), 401, 'unauthorized');

      assert.ok(logs.length > 0, 'the app logged its requests');
      assert.ok(!logs.includes(notion.verificationToken), 'the trusted token is in the logs');
      assert.ok(!logs.includes(stranger.verificationToken), 'a handshake token is in the logs');
    });
  });
}

async function eventCount(t: TestApp): Promise<number> {
  const rows = await t.db.query<{ n: string | number }>('SELECT count(*) AS n FROM source_events');
  return Number(rows[0]?.n ?? 0);
}
