/**
 * A source is declared once: a connector from its own folder, registered with one line, is accepted by
 * the create-connection request and its OpenAPI shape, has its base-URL setting read by the config, is
 * checked against its (fake) API, and syncs through the job engine, with no file under src/ naming it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FakeServer } from '../fakes/fake-server.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from '../jobs/helpers.ts';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';
import { bulletinConnector } from './extra-source/connector.ts';
import { BULLETIN_KEY, startFakeBulletin } from './extra-source/fake-bulletin.ts';

for (const mode of STORAGE_MODES) {
  describe(`a source registered from its own folder (${mode})`, () => {
    let fake: FakeServer;
    let t: TestApp;
    before(async () => {
      fake = await startFakeBulletin();
      t = await startTestApp(mode, {
        config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_BULLETIN_BASE_URL: fake.url },
        parts: { connectors: [bulletinConnector], sourceHttp: FAST_SOURCE_HTTP },
      });
      t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    test('is part of the API: OpenAPI shape, credential check, connection, sync, items', async () => {
      const spec = (await t.call('GET', '/openapi.json', { key: null })).body;
      assert.match(
        JSON.stringify(spec),
        /bulletinboard/,
        'the request schema names the new source and its alias',
      );

      expectError(
        await t.call('POST', '/api/connect/connection', {
          body: { source: { type: 'bulletin', api_key: 'wrong-key-123' } },
        }),
        400,
        'source_auth_failed',
      );
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'bulletinboard', api_key: BULLETIN_KEY } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.ok(
        fake.requests.some((r) => r.path === '/v1/me'),
        'the check went to KB_BULLETIN_BASE_URL',
      );

      // The connection's first sync, queued by the create.
      const job = await waitForJob(t, created.body.jobId);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));

      const items = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { limit: 10 } });
      assert.equal(items.status, 200, JSON.stringify(items.body));
      const titles = (items.body.items as Array<{ title: string }>).map((i) => i.title).sort();
      assert.deepEqual(titles, ['Lunch', 'Opening hours', 'Parking']);
      const listed = await t.call('GET', '/api/connect/connections');
      assert.ok(JSON.stringify(listed.body).includes('bulletin'), JSON.stringify(listed.body));
    });
  });
}
