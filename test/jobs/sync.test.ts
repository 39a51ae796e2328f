import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { knownDocuments } from '../../src/ingest/sync-runner.ts';
import { enqueueDueSyncs } from '../../src/jobs/sync-job.ts';
import { TEST_SOURCE_TOKEN } from '../connectors/test-connector-source.ts';
import { expectError, STORAGE_MODES } from '../support/harness.ts';
import {
  connect,
  itemTitles,
  runSyncJob,
  type SyncApp,
  startSyncApp,
  syncAndWait,
  waitFor,
  waitForJob,
} from './helpers.ts';

for (const mode of STORAGE_MODES) {
  describe(`sync jobs through the runner (${mode})`, () => {
    let s: SyncApp;
    before(async () => {
      s = await startSyncApp(mode);
    });
    after(async () => s?.close());

    test('incremental sync stores documents, then fetches only changes and applies deletions', async () => {
      const { t, source } = s;
      source.put('a1', 'Alpha');
      source.put('a2', 'Beta');
      source.put('a3', 'Gamma');
      const connectionId = await connect(t);

      const before = s.itemsChanged.count;
      const first = await syncAndWait(t);
      assert.equal(first.status, 'succeeded', JSON.stringify(first));
      assert.equal(first.jobType, 'sync');
      assert.equal(first.connectionId, connectionId);
      assert.equal(first.rowsSynced, 3);
      assert.deepEqual(first.documents, { seen: 3, stored: 3, unchanged: 0, deleted: 0, failed: 0 });
      assert.ok(first.bytesSynced > 0);
      assert.ok(first.startTime > 0 && first.lastUpdatedAt >= first.startTime);
      assert.ok(first.duration >= 0);
      assert.equal(first.error, undefined);
      assert.deepEqual(await itemTitles(t), ['Alpha', 'Beta', 'Gamma']);
      assert.ok(s.itemsChanged.count > before, 'the indexer was told about new items');
      const items = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: {} });
      assert.equal(items.body.items[0].source_type, 'integration');
      assert.equal(items.body.items[0].source_table_name, 'docs_space_pages');
      const known = [];
      for await (const batch of knownDocuments(t.db, t.orgA.id, connectionId)) known.push(...batch);
      assert.deepEqual(
        known.map((d) => `${d.externalId} ${d.table} ${d.version}`).sort(),
        ['a1 docs_space_pages 1', 'a2 docs_space_pages 2', 'a3 docs_space_pages 3'],
        'known() lists the stored documents with the versions the source gave them',
      );

      source.put('a2', 'Beta v2');
      source.remove('a3');
      source.put('a4', 'Delta');
      const seenBefore = source.syncRequests().length;
      const second = await syncAndWait(t);
      assert.equal(second.status, 'succeeded');
      assert.equal(second.rowsSynced, 3, 'one update, one deletion, one creation');
      assert.deepEqual(second.documents, { seen: 2, stored: 2, unchanged: 0, deleted: 1, failed: 0 });
      assert.deepEqual(await itemTitles(t), ['Alpha', 'Beta v2', 'Delta']);
      const sent = source.syncRequests().slice(seenBefore);
      assert.equal(sent[0]!.path, '/test/changes');
      assert.notEqual(sent[0]!.query.get('since'), '0', 'the second sync starts at the checkpoint');

      const third = await syncAndWait(t);
      assert.equal(third.rowsSynced, 0, 'nothing changed');
    });

    test('a user-deleted item stays deleted on sync; reset brings it back and removes what the source lost', async () => {
      const { t, source } = s;
      const list = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'Alpha' },
      });
      const alpha = list.body.items[0].id as string;
      await t.call('DELETE', '/api/connect/knowledgebase-items', { body: { ids: [alpha] } });
      source.put('a1', 'Alpha');
      await syncAndWait(t);
      assert.deepEqual(await itemTitles(t), ['Beta v2', 'Delta']);

      // Gone at the source without a trace in its change feed: only a full pass can tell.
      source.docs.delete('a4');
      const reset = await syncAndWait(t, 'reset');
      assert.equal(reset.status, 'succeeded', JSON.stringify(reset));
      assert.equal(reset.jobType, 'reset');
      assert.equal(reset.rowsSynced, 2, 'Alpha re-created, Delta removed');
      // Every document again: Alpha stored anew, Beta v2 unchanged; Delta removed after the pass.
      assert.deepEqual(reset.documents, { seen: 2, stored: 1, unchanged: 1, deleted: 1, failed: 0 });
      assert.deepEqual(await itemTitles(t), ['Alpha', 'Beta v2']);

      // After the reset, incremental syncs continue from the feed position the pass began at.
      source.put('a5', 'Epsilon');
      const after = await syncAndWait(t);
      assert.equal(after.rowsSynced, 1);
      assert.deepEqual(await itemTitles(t), ['Alpha', 'Beta v2', 'Epsilon']);
    });

    test('documents that fail make the job incomplete and are listed; the rest land, nothing is deleted', async () => {
      const { t, source } = s;
      source.breakDoc('a1');
      source.put('a6', 'Zeta');
      const job = await syncAndWait(t);
      assert.equal(job.status, 'incomplete');
      assert.equal(job.failureCount, 1);
      assert.equal(job.documents.failed, 1);
      assert.equal(job.failures[0]!.externalId, 'a1');
      assert.match(job.failures[0]!.message, /cannot be exported/);
      assert.match(job.error ?? '', /1 document could not be synced/);
      assert.ok((await itemTitles(t)).includes('Zeta'));

      const reset = await syncAndWait(t, 'reset');
      assert.equal(reset.status, 'incomplete');
      assert.ok(
        (await itemTitles(t)).includes('Alpha'),
        'a document that failed in a full pass is not removed',
      );
      source.breakDoc('a1', false);
    });

    test('documents of two tables with one id are two items; each fails, changes and leaves on its own', async () => {
      const { t, source } = s;
      const titles = async () => (await itemTitles(t)).filter((x) => x.includes('seventy-seven'));
      source.put('77', 'Article seventy-seven');
      source.put('tickets/77', 'Ticket seventy-seven');
      const first = await syncAndWait(t);
      assert.equal(first.status, 'succeeded', JSON.stringify(first));
      assert.deepEqual(await titles(), ['Article seventy-seven', 'Ticket seventy-seven']);

      // The ticket fails in a full pass: it is kept, and the article beside it is untouched.
      source.breakDoc('tickets/77');
      const reset = await syncAndWait(t, 'reset');
      assert.equal(reset.status, 'incomplete');
      assert.deepEqual(
        reset.failures.map((f) => [f.externalId, f.table]),
        [['77', 'docs_space_tickets']],
      );
      assert.deepEqual(await titles(), ['Article seventy-seven', 'Ticket seventy-seven']);
      source.breakDoc('tickets/77', false);

      source.put('77', 'Article seventy-seven, edited');
      source.remove('tickets/77');
      const second = await syncAndWait(t);
      assert.equal(second.status, 'succeeded', JSON.stringify(second));
      assert.deepEqual(await titles(), ['Article seventy-seven, edited']);
    });

    test('a running job shows its documents as each batch commits', async () => {
      const { t, source } = s;
      const ids = source.seed(300, 'progress');
      source.pageDelayMs = 300;
      try {
        const jobId = await runSyncJob(t);
        let midway: { status: string; documents: { seen: number; stored: number } } | undefined;
        await waitFor(
          async () => {
            const res = await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space');
            const job = res.body.data.find((j: { jobId: number }) => j.jobId === jobId);
            if (job.status !== 'running') return job.status !== 'pending';
            if (job.documents.seen > 0) midway = job;
            return midway !== undefined;
          },
          30_000,
          'a committed batch of a running job',
        );
        assert.ok(midway, 'the job finished before any progress could be read');
        assert.ok(midway.documents.seen < 300, `midway: ${JSON.stringify(midway.documents)}`);
        assert.equal(midway.documents.stored, midway.documents.seen);
        const done = await waitForJob(t, jobId);
        assert.deepEqual(done.documents, { seen: 300, stored: 300, unchanged: 0, deleted: 0, failed: 0 });
      } finally {
        source.pageDelayMs = 0;
        for (const id of ids) source.remove(id);
        await syncAndWait(t);
      }
    });

    test('run-sync answers at once; a second one while the first is pending or running is 409', async () => {
      const { t, source } = s;
      const release = source.hold();
      try {
        // The source holds every request until release(): answering at all shows run-sync does not wait.
        const jobId = await runSyncJob(t);
        await waitForJob(t, jobId, ['running']);
        const again = await t.call('POST', '/api/connect/run-sync', {
          body: { type: 'docs_space', jobType: 'reset' },
        });
        expectError(again, 409, 'sync_in_progress');
        assert.equal(again.body.jobId, jobId);
      } finally {
        release();
      }
      const jobs = await t.call('GET', '/api/connect/connection-sync-jobs?type=gitbook&limit=1');
      assert.equal(jobs.status, 200);
      assert.equal(jobs.body.data.length, 1);
      await waitForJob(t, jobs.body.data[0].jobId);
    });

    test('the job list pages newest first with absolute next/previous links', async () => {
      const { t } = s;
      const all = await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space');
      assert.equal(all.status, 200);
      const ids = all.body.data.map((j: { jobId: number }) => j.jobId);
      assert.ok(ids.length >= 5);
      // Newest first by creation (job ids are random; test/jobs/job-ids.test.ts checks the exact order).
      const created = all.body.data.map((j: { createdAt: number }) => j.createdAt);
      assert.deepEqual(
        created,
        [...created].sort((a: number, b: number) => b - a),
      );
      assert.equal(all.body.next, undefined);
      assert.equal(all.body.previous, undefined);

      const page = await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space&limit=2&offset=2');
      assert.deepEqual(
        page.body.data.map((j: { jobId: number }) => j.jobId),
        ids.slice(2, 4),
      );
      const next = new URL(page.body.next);
      assert.equal(next.origin, 'http://localhost');
      assert.equal(next.pathname, '/api/connect/connection-sync-jobs');
      assert.equal(next.searchParams.get('offset'), '4');
      assert.equal(next.searchParams.get('type'), 'docs_space');
      assert.equal(new URL(page.body.previous).searchParams.get('offset'), '0');
      const followed = await t.call('GET', `${next.pathname}${next.search}`);
      assert.deepEqual(
        followed.body.data.map((j: { jobId: number }) => j.jobId),
        ids.slice(4, 6),
      );

      const other = await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space', {
        key: t.orgB.key,
      });
      expectError(other, 404, 'not_found');
      const bad = await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space&limit=101');
      expectError(bad, 400, 'invalid_request');
    });

    test('429 and 5xx at the source are retried; a source that keeps failing fails the job with a clear error', async () => {
      const { t, source } = s;
      source.server.rateLimitNext(1, 0);
      source.server.unavailableNext(1);
      const before = source.syncRequests().length;
      const ok = await syncAndWait(t);
      assert.equal(ok.status, 'succeeded', JSON.stringify(ok));
      assert.ok(source.syncRequests().length - before >= 3, 'two failed attempts, then the real one');

      source.server.unavailableNext(3);
      const failed = await syncAndWait(t);
      assert.equal(failed.status, 'failed');
      assert.match(failed.error ?? '', /Test source \(docs_space\)/);
      assert.match(failed.error ?? '', /HTTP 503/);
      assert.doesNotMatch(failed.error ?? '', new RegExp(TEST_SOURCE_TOKEN));
    });

    test('inactive: run-sync is 409 and a running job is cancelled; active again syncs', async () => {
      const { t, source } = s;
      const release = source.hold();
      const jobId = await runSyncJob(t);
      await waitForJob(t, jobId, ['running']);
      const off = await t.call('PATCH', '/api/connect/set-connection-status', {
        body: { type: 'docs_space', status: 'inactive' },
      });
      assert.equal(off.status, 200);
      assert.deepEqual(off.body.cancelledJobs, [jobId]);
      const job = await waitForJob(t, jobId);
      assert.equal(job.status, 'cancelled');
      await waitFor(() => s.pool!.running === 0, 60_000, 'the handler to stop');
      release();
      expectError(
        await t.call('POST', '/api/connect/run-sync', { body: { type: 'docs_space' } }),
        409,
        'connection_inactive',
      );
      const on = await t.call('PATCH', '/api/connect/set-connection-status', {
        body: { type: 'docs_space', status: 'active' },
      });
      assert.equal(on.status, 200);
      assert.equal((await syncAndWait(t)).status, 'succeeded');
    });

    test('schedules queue ordinary sync jobs when due', async () => {
      const { t } = s;
      await connect(t, { schedule: { intervalMinutes: 5 } });
      const listed = await t.call('GET', '/api/connect/connections');
      const conn = listed.body.data.find((c: { type: string }) => c.type === 'docs_space');
      assert.deepEqual(conn.schedule, { intervalMinutes: 5 });
      assert.ok(conn.nextSyncAt > Date.now() + 4 * 60_000);

      assert.deepEqual(await enqueueDueSyncs(t.db, t.service.jobs), [], 'not due yet');
      const later = new Date(Date.now() + 6 * 60_000);
      const [jobId] = await enqueueDueSyncs(t.db, t.service.jobs, { now: later });
      assert.ok(jobId);
      const job = await waitForJob(t, jobId);
      assert.equal(job.status, 'succeeded');
      assert.equal(job.trigger, 'schedule');
      assert.deepEqual(
        await enqueueDueSyncs(t.db, t.service.jobs, { now: later }),
        [],
        'the next one is an interval later',
      );
      const listedAfter = await t.call('GET', '/api/connect/connections');
      const withJob = listedAfter.body.data.find((c: { type: string }) => c.type === 'docs_space');
      assert.equal(withJob.lastJob.jobId, jobId);
      assert.equal(withJob.lastJob.status, 'succeeded');

      const evenLater = new Date(Date.now() + 12 * 60_000);
      await t.call('PATCH', '/api/connect/set-connection-status', {
        body: { type: 'docs_space', status: 'inactive' },
      });
      assert.deepEqual(
        await enqueueDueSyncs(t.db, t.service.jobs, { now: evenLater }),
        [],
        'inactive: no scheduled syncs',
      );
      await t.call('PATCH', '/api/connect/set-connection-status', {
        body: { type: 'docs_space', status: 'active' },
      });
      await connect(t, { schedule: null });
      assert.deepEqual(
        await enqueueDueSyncs(t.db, t.service.jobs, { now: new Date(Date.now() + 3600_000) }),
        [],
      );
    });

    test('disconnect cancels a running job at once (its request is aborted) and purges the items', async () => {
      const { t, source } = s;
      assert.ok((await itemTitles(t)).length > 0);
      const release = source.hold();
      const jobId = await runSyncJob(t, 'reset');
      await waitForJob(t, jobId, ['running']);
      await waitFor(() => s.pool!.running === 1, 60_000, 'the job to run');
      const res = await t.call('DELETE', '/api/connect/connection', { body: { type: 'docs_space' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.cancelledJobs, [jobId]);
      assert.ok(res.body.deletedItems > 0);
      // The page request is still held by the source until release(): only the AbortSignal can end the
      // handler before that.
      await waitFor(() => s.pool!.running === 0, 60_000, 'the cancelled handler to stop');
      release();
      assert.deepEqual(await itemTitles(t), []);
      expectError(await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space'), 404, 'not_found');
      const rows = await t.db.query('SELECT 1 FROM jobs WHERE id = $1', [jobId]);
      assert.equal(rows.length, 0);
    });
  });
}
