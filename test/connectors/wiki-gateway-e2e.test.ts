/**
 * `wiki` with a scoped API token through the HTTP API and the job engine, in both storage modes: the
 * create-connection check finds that the token works only through Atlassian's gateway, the connection
 * stores that (encrypted, with the cloud id), and every sync then calls the gateway alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  CONFLUENCE_CLOUD_ID,
  CONFLUENCE_SCOPED,
  type FakeConfluence,
  FakeConfluenceSite,
  startFakeConfluence,
} from '../fakes/confluence.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from '../jobs/helpers.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

/** Twenty documents: enough for the unchanged sync's share to mean something. */
function site(): FakeConfluenceSite {
  const s = new FakeConfluenceSite();
  s.addSpace('ENG', 'Engineering');
  for (let n = 1; n <= 19; n++) s.addPage({ space: 'ENG', title: `Page ${n}`, storage: `<p>Text ${n}.</p>` });
  s.addBlogPost({ space: 'ENG', title: 'Launch week' });
  s.addScopedToken(CONFLUENCE_SCOPED);
  return s;
}

for (const mode of STORAGE_MODES) {
  describe(`wiki (Confluence) with a scoped token through the API (${mode})`, () => {
    let fake: FakeConfluence;
    let t: TestApp;
    before(async () => {
      fake = await startFakeConfluence({ site: site() });
      t = await startTestApp(mode, {
        config: {
          KB_CRAWL_ALLOW_PRIVATE: 'true',
          KB_WIKI_BASE_URL: fake.url,
          KB_ATLASSIAN_API_BASE_URL: fake.gateway.url,
        },
        parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
      });
      t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    test('connect remembers the gateway route; syncs call only the gateway', async () => {
      const created = await t.call('POST', '/api/connect/connection', {
        // The test counts each sync's requests, so it starts the first one itself.
        body: { source: { type: 'confluence', domain_name: 'acme', ...CONFLUENCE_SCOPED }, sync: false },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));

      const rows = await t.db.query<{ id: string; credentials_encrypted: string }>(
        'SELECT id::text AS id, credentials_encrypted FROM connections WHERE type = $1',
        ['wiki'],
      );
      assert.equal(rows.length, 1);
      assert.ok(!rows[0]!.credentials_encrypted.includes(CONFLUENCE_SCOPED.api_token), 'encrypted at rest');
      const stored = t.service.sources.decryptCredentials(rows[0]!.id, rows[0]!.credentials_encrypted);
      assert.equal(stored['api_route'], 'gateway');
      assert.equal(stored['cloud_id'], CONFLUENCE_CLOUD_ID);

      const siteBefore = fake.requests.length;
      const gatewayBefore = fake.gateway.requests.length;
      const first = await runAndWait(t);
      assert.equal(first.status, 'succeeded', JSON.stringify(first));
      assert.equal(first.rowsSynced, 20);
      const firstRequests = fake.gateway.requests.length - gatewayBefore;

      const gatewayMid = fake.gateway.requests.length;
      const second = await runAndWait(t);
      assert.equal(second.status, 'succeeded', JSON.stringify(second));
      assert.equal(second.rowsSynced, 0);
      const secondRequests = fake.gateway.requests.length - gatewayMid;
      assert.equal(fake.requests.length, siteBefore, 'the syncs never called the site');
      console.log(
        `# wiki through the gateway (${mode}): first sync ${firstRequests} requests, unchanged second sync ${secondRequests}`,
      );
      assert.ok(secondRequests * 4 <= firstRequests, `${secondRequests} of ${firstRequests}`);
    });
  });
}

async function runAndWait(t: TestApp) {
  const run = await t.call('POST', '/api/connect/run-sync', { body: { type: 'wiki' } });
  assert.equal(run.status, 200, JSON.stringify(run.body));
  return waitForJob(t, run.body.jobId as number, undefined, 60_000);
}
