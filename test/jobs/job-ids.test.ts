/**
 * Job ids are shown to callers (a sync's `jobId`), so they must say nothing about other organizations:
 * no shared counter. Yet everything that read "newest" off the id (listings, a connection's latest job,
 * the order workers claim jobs in) still follows creation order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cancelJobs, claimJob, enqueueJob } from '../../src/jobs/queue.ts';
import { expectError, STORAGE_MODES, type TestApp } from '../support/harness.ts';
import { connect, type SyncApp, startSyncApp } from './helpers.ts';

/** Starts a sync of the caller's docs_space connection through the API and ends it (cancelled): its id. */
async function startedSync(t: TestApp, key: string): Promise<number> {
  const res = await t.call('POST', '/api/connect/run-sync', { key, body: { type: 'docs_space' } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const jobId = res.body.jobId as number;
  // No workers run here: cancelling frees the connection for its next sync (one active job each).
  assert.deepEqual(await cancelJobs(t.db, [jobId], 'test'), [jobId]);
  return jobId;
}

for (const mode of STORAGE_MODES) {
  describe(`job ids leak nothing across organizations (${mode})`, () => {
    let s: SyncApp;
    before(async () => {
      s = await startSyncApp(mode, { workers: false });
      await connect(s.t);
      await connect(s.t, {}, s.t.orgB.key);
    });
    after(async () => s?.close());

    test("the gap between two of A's job ids does not count B's jobs started in between", async () => {
      const { t } = s;
      // B starts 0, 1, 3, 2 and 4 syncs between A's successive ones. With one counter for every
      // organization, A's next id was its last + 1 + B's count: exactly what this forbids.
      const bBetween = [0, 1, 3, 2, 4];
      const aIds = [await startedSync(t, t.orgA.key)];
      const all = [...aIds];
      for (const k of bBetween) {
        for (let i = 0; i < k; i++) all.push(await startedSync(t, t.orgB.key));
        const next = await startedSync(t, t.orgA.key);
        aIds.push(next);
        all.push(next);
      }
      for (const [i, k] of bBetween.entries()) {
        const gap = aIds[i + 1]! - aIds[i]!;
        assert.notEqual(gap - 1, k, `A's ids ${aIds[i]} then ${aIds[i + 1]} tell that B started ${k} jobs`);
      }
      for (const id of all) {
        assert.ok(Number.isSafeInteger(id) && id > 0, `${id} is a positive JSON-safe integer`);
      }
      assert.equal(new Set(all).size, all.length, 'ids are unique');
      // Drawn from the whole 53-bit range, not counted: 21 draws spread this little by chance about once
      // in 2^250.
      assert.ok(Math.max(...all) - Math.min(...all) > 2 ** 40, `ids ${all.join(', ')} look counted`);
    });

    test("a connection's jobs list newest first, and its last job is the newest, whatever the ids", async () => {
      const { t } = s;
      const created: number[] = [];
      for (let i = 0; i < 6; i++) {
        created.push(await startedSync(t, t.orgA.key));
        // With random ids the largest is the newest one time in i + 1: six in a row is one in 720.
        const connections = await t.call('GET', '/api/connect/connections');
        assert.equal(connections.status, 200, JSON.stringify(connections.body));
        assert.equal(connections.body.data[0].lastJob.jobId, created.at(-1), 'lastJob is the newest job');
      }
      const listed = await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space&limit=100');
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      const ids = (listed.body.data as Array<{ jobId: number }>).map((j) => j.jobId);
      assert.deepEqual(ids.slice(0, created.length), [...created].reverse());
      const paged = await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space&limit=2&offset=2');
      assert.deepEqual(
        (paged.body.data as Array<{ jobId: number }>).map((j) => j.jobId),
        ids.slice(2, 4),
      );
      // B's listing has only B's jobs.
      const other = await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space&limit=100', {
        key: t.orgB.key,
      });
      assert.ok((other.body.data as Array<{ jobId: number }>).every((j) => !ids.includes(j.jobId)));
    });

    test('crawls list newest first', async () => {
      const { t } = s;
      const created: string[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await t.call('POST', '/api/connect/crawling/', {
          body: { url: `http://127.0.0.1:9/page-${i}`, limit: 1 },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        created.push(res.body.id as string);
      }
      const listed = await t.call('GET', '/api/connect/crawling/?limit=100');
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.deepEqual(
        (listed.body.data as Array<{ id: string }>).map((c) => c.id).slice(0, created.length),
        [...created].reverse(),
      );
      expectError(
        await t.call('GET', `/api/connect/crawling/${created[0]}`, { key: t.orgB.key }),
        404,
        'not_found',
      );
    });

    test('workers claim due jobs in the order they were queued, not by id', async () => {
      const { t } = s;
      // One transaction: every job has the same run_after, so only the creation order tells them apart.
      const queued = await t.db.transaction(async (tx) => {
        const ids: number[] = [];
        for (let i = 0; i < 8; i++) {
          ids.push((await enqueueJob(tx, { kind: 'ids-claim-order', organizationId: t.orgA.id }))!);
        }
        return ids;
      });
      const claimed: number[] = [];
      for (;;) {
        const job = await claimJob(t.db, { kinds: ['ids-claim-order'], workerId: 'w' });
        if (!job) break;
        claimed.push(job.id);
      }
      assert.deepEqual(claimed, queued);
      await cancelJobs(t.db, claimed, 'test');
    });
  });
}
