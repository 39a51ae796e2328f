/**
 * A new connection starts its first sync in the request that creates it (the answer carries its job),
 * unless the body says `"sync": false`; new credentials start one only where the connection could not
 * sync before (consent needed again), never for a paused connection or a plain token rotation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { markConnectionConsentNeeded } from '../../src/db/repositories/connections.ts';
import { STORAGE_MODES, type TestApp } from '../support/harness.ts';
import { itemTitles, type SyncApp, startSyncApp, TEST_SOURCE_INPUT, waitForJob } from './helpers.ts';

async function create(t: TestApp, extra: Record<string, unknown> = {}) {
  const res = await t.call('POST', '/api/connect/connection', {
    body: { source: TEST_SOURCE_INPUT, ...extra },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { connectionId: string; created: boolean; jobId?: number };
}

async function jobIds(t: TestApp): Promise<number[]> {
  const res = await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.map((j: { jobId: number }) => j.jobId);
}

for (const mode of STORAGE_MODES) {
  describe(`a new connection syncs at once (${mode})`, () => {
    let s: SyncApp;
    before(async () => {
      s = await startSyncApp(mode);
    });
    after(async () => s?.close());

    test('create answers the queued job, which syncs the source with no run-sync', async () => {
      const { t, source } = s;
      source.put('f1', 'First page');
      source.put('f2', 'Second page');
      const created = await create(t);
      assert.equal(created.created, true);
      assert.equal(typeof created.jobId, 'number', 'the answer names the first sync');
      const job = await waitForJob(t, created.jobId!);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.equal(job.connectionId, created.connectionId);
      assert.equal(job.jobType, 'sync');
      assert.deepEqual(await itemTitles(t), ['First page', 'Second page']);
      assert.deepEqual(await jobIds(t), [created.jobId]);
    });

    test('new working credentials for a connection start nothing', async () => {
      const { t } = s;
      const rotated = await create(t);
      assert.equal(rotated.created, false);
      assert.equal(rotated.jobId, undefined);
      assert.equal((await jobIds(t)).length, 1);
    });

    test('credentials given after the source asked for consent again start a sync; a paused one stays paused', async () => {
      const { t } = s;
      const { connectionId } = await create(t);
      await markConnectionConsentNeeded(t.db, connectionId, 'The token was revoked.');
      const renewed = await create(t);
      assert.equal(typeof renewed.jobId, 'number');
      assert.equal((await waitForJob(t, renewed.jobId!)).status, 'succeeded');

      const off = await t.call('PATCH', '/api/connect/set-connection-status', {
        body: { connectionId, status: 'inactive' },
      });
      assert.equal(off.status, 200);
      await markConnectionConsentNeeded(t.db, connectionId, 'The token was revoked.');
      const paused = await create(t);
      assert.equal(paused.jobId, undefined, 'an inactive connection gets no sync');
      assert.equal((await jobIds(t)).length, 2);
    });

    test('"sync": false connects without a sync', async () => {
      const { t } = s;
      const gone = await t.call('DELETE', '/api/connect/connection', { body: { type: 'docs_space' } });
      assert.equal(gone.status, 200);
      const created = await create(t, { sync: false });
      assert.equal(created.created, true);
      assert.equal(created.jobId, undefined);
      assert.deepEqual(await jobIds(t), []);
      const listed = await t.call('GET', '/api/connect/connections');
      assert.equal(listed.body.data[0].lastJob, null);
    });

    test('"sync" must be a boolean', async () => {
      const { t } = s;
      const res = await t.call('POST', '/api/connect/connection', {
        body: { source: TEST_SOURCE_INPUT, sync: 'no' },
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'invalid_request');
      assert.match(res.body.message, /sync/);
    });
  });
}
