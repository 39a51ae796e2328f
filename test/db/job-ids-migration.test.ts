import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { listConnections } from '../../src/db/repositories/connections.ts';
import { crawlEngineJobId, getCrawlJob, listCrawlJobs } from '../../src/db/repositories/crawl-jobs.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { getSyncJob, insertSyncJob, listSyncJobs } from '../../src/db/repositories/sync-jobs.ts';
import { claimJob, enqueueJob } from '../../src/jobs/queue.ts';
import { freshDatabase, STORAGE_MODES } from '../support/harness.ts';

for (const mode of STORAGE_MODES) {
  describe(`migration 017: random job ids (${mode})`, () => {
    test('ids an older release handed out still resolve and keep their order; new ones are random', async () => {
      const fresh = await freshDatabase(mode);
      const db = fresh.db;
      try {
        await migrate(db, { through: 16 });
        const org = await createOrganization(db, 'old-org');
        await db.query(
          `INSERT INTO connections (id, organization_id, type, credentials_encrypted) VALUES ('conn1', $1, 'docs_space', 'x')`,
          [org.id],
        );
        // As release 016 wrote them: numbered by the one sequence of every organization's jobs.
        const oldJob = async (kind: string, status: string) => {
          const [row] = await db.query<{ id: number }>(
            `INSERT INTO jobs (kind, organization_id, status, run_after) VALUES ($1, $2, $3, now() - interval '1 hour')
             RETURNING id`,
            [kind, org.id, status],
          );
          return row!.id;
        };
        const oldSyncs: number[] = [];
        for (let i = 0; i < 3; i++) {
          const id = await oldJob('sync', i === 2 ? 'pending' : 'cancelled');
          await db.query(
            `INSERT INTO sync_jobs (job_id, connection_id, job_type) VALUES ($1, 'conn1', 'sync')`,
            [id],
          );
          oldSyncs.push(id);
        }
        const crawlJobId = await oldJob('crawl', 'cancelled');
        await db.query(
          `INSERT INTO crawl_jobs (id, job_id, organization_id, url, page_limit, fetch_limit)
           VALUES ('crawl-old', $1, $2, 'https://docs.test/', 5, 10)`,
          [crawlJobId, org.id],
        );
        assert.deepEqual(oldSyncs, [1, 2, 3], 'the old release counted');

        assert.equal((await migrate(db))[0], '017_random_job_ids.sql');

        // Every id handed out before resolves to the same job.
        for (const id of oldSyncs) assert.equal((await getSyncJob(db, org.id, id))?.jobId, id);
        assert.equal(await crawlEngineJobId(db, org.id, 'crawl-old'), crawlJobId);
        assert.equal((await getCrawlJob(db, org.id, 'crawl-old'))?.id, 'crawl-old');
        const listedOld = await listSyncJobs(db, 'conn1', { limit: 10, offset: 0 });
        assert.deepEqual(
          listedOld.jobs.map((j) => j.jobId),
          [...oldSyncs].reverse(),
        );
        assert.equal((await listConnections(db, org.id))[0]?.lastJobId, oldSyncs[2]);

        // A new job: a random id, and it is the newest in every listing and for claims after the old ones.
        const newId = await db.transaction(async (tx) => {
          const id = (await enqueueJob(tx, { kind: 'sync', organizationId: org.id }))!;
          await insertSyncJob(tx, { jobId: id, connectionId: 'conn1', jobType: 'sync', trigger: 'api' });
          return id;
        });
        assert.ok(Number.isSafeInteger(newId) && newId > 0);
        assert.notEqual(newId, crawlJobId + 1, 'the new id does not count on from the old ones');
        const [seq] = await db.query<{ seq: number }>('SELECT seq FROM jobs WHERE id = $1', [newId]);
        assert.equal(seq!.seq, crawlJobId + 1, 'the creation order counts on from the old ids, unseen');
        const listed = await listSyncJobs(db, 'conn1', { limit: 10, offset: 0 });
        assert.deepEqual(
          listed.jobs.map((j) => j.jobId),
          [newId, ...[...oldSyncs].reverse()],
        );
        assert.equal((await listConnections(db, org.id))[0]?.lastJobId, newId);
        assert.deepEqual(
          (await listCrawlJobs(db, org.id, { limit: 10, offset: 0 })).jobs.map((c) => c.id),
          ['crawl-old'],
        );
        // Both due at the same moment: the old job, queued first, is claimed first.
        await db.query(`UPDATE jobs SET run_after = '2000-01-01' WHERE id = ANY($1::bigint[])`, [
          [oldSyncs[2], newId],
        ]);
        const claimed = [
          (await claimJob(db, { kinds: ['sync'], workerId: 'w' }))?.id,
          (await claimJob(db, { kinds: ['sync'], workerId: 'w' }))?.id,
        ];
        assert.deepEqual(claimed, [oldSyncs[2], newId]);
      } finally {
        await fresh.drop();
      }
    });
  });
}
