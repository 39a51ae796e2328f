/**
 * The crawl's bounds are properties of the frontier's SQL, not of one runner's bookkeeping: admissions
 * from many concurrent transactions (native Postgres, real concurrency) never take more than the
 * frontier's bound, and the table refuses a writer that counts stored pages or fetches past their limits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admitUrls } from '../../src/crawler/frontier.ts';
import { migrate } from '../../src/db/migrate.ts';
import { insertCrawlJob, lockCrawlJob, saveCrawlJob } from '../../src/db/repositories/crawl-jobs.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { enqueueJob } from '../../src/jobs/queue.ts';
import { newId } from '../../src/lib/ids.ts';
import { freshDatabase } from '../support/harness.ts';

test('concurrent admissions never pass the bound; stored pages and fetches never pass their limits (postgres)', async () => {
  const fresh = await freshDatabase('postgres');
  const db = fresh.db;
  try {
    await migrate(db);
    const org = await createOrganization(db, 'budget');
    const id = newId();
    const limit = 37;
    await db.transaction(async (tx) => {
      const jobId = (await enqueueJob(tx, {
        kind: 'crawl-budget-test',
        organizationId: org.id,
        payload: {},
      }))!;
      const options = { includePaths: [], excludePaths: [], allowExternalLinks: false, tags: [] };
      await insertCrawlJob(tx, {
        id,
        jobId,
        organizationId: org.id,
        url: 'https://example.com/',
        limit,
        fetchLimit: 3 * limit,
        options,
      });
    });
    // 20 pages finishing at once, each discovering 10 new links and 5 shared ones.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, page) =>
        db.transaction(async (tx) => {
          const locked = await lockCrawlJob(tx, id);
          const urls = [
            ...Array.from({ length: 10 }, (_, i) => `https://example.com/p${page}-${i}`),
            ...Array.from({ length: 5 }, (_, i) => `https://example.com/shared-${i}`),
          ];
          const candidates = urls.map((url) => ({
            url,
            key: url.slice(6),
            depth: 1,
            priority: 3,
            pattern: '',
          }));
          const { admitted } = await admitUrls(tx, id, locked, limit, candidates, (c, s) =>
            s.isDuplicate(c.key)
              ? { ok: false, reason: 'duplicate' }
              : s.admitted >= s.limit
                ? { ok: false, reason: 'budget' }
                : { ok: true },
          );
          await saveCrawlJob(tx, id, locked);
          return admitted.length;
        }),
      ),
    );
    assert.equal(
      results.reduce((a, b) => a + b, 0),
      limit,
    );
    const [row] = await db.query<{ total: number; rows: number }>(
      `SELECT c.admitted_pages AS total, (SELECT count(*)::int FROM crawl_frontier f WHERE f.crawl_job_id = c.id AND f.admitted) AS rows
         FROM crawl_jobs c WHERE c.id = $1`,
      [id],
    );
    assert.deepEqual(row, { total: limit, rows: limit });
    // The table refuses a writer that would count past the limits.
    await db.query(
      'UPDATE crawl_jobs SET stored_pages = page_limit, fetched_pages = fetch_limit WHERE id = $1',
      [id],
    );
    await assert.rejects(db.query('UPDATE crawl_jobs SET stored_pages = page_limit + 1 WHERE id = $1', [id]));
    await assert.rejects(
      db.query('UPDATE crawl_jobs SET fetched_pages = fetch_limit + 1 WHERE id = $1', [id]),
    );
  } finally {
    await fresh.drop();
  }
});
