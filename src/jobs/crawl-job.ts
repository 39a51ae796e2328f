/**
 * The `crawl` job kind, wired like `sync` (sync-job.ts): queueing a crawl in the caller's transaction,
 * and the handler that runs the crawler on one crawl job (payload `{ crawlJobId }`).
 */
import { z } from 'zod';
import { CrawlFailure } from '../crawler/messages.ts';
import { runCrawlJob } from '../crawler/run.ts';
import type { CrawlerRuntime } from '../crawler/runtime.ts';
import { crawlBounds } from '../crawler/settings.ts';
import type { Database, Queryable } from '../db/database.ts';
import { insertCrawlJob, type NewCrawlJob } from '../db/repositories/crawl-jobs.ts';
import { enqueueJob, JobLostError } from './queue.ts';
import { defineJobKind, JobError, type JobKind } from './registry.ts';

const CRAWL_JOB_KIND = 'crawl';
/** Attempts of a crawl whose worker keeps dying; each attempt resumes the frontier where it was. */
const CRAWL_MAX_ATTEMPTS = 5;

const payloadSchema = z.object({ crawlJobId: z.string().min(1) });

/**
 * Queue a crawl and record its crawl job (its fetch cap derived from `limit`: settings.ts `crawlBounds`),
 * in the caller's transaction. Call `JobSignals.wake()` after the commit.
 */
export async function enqueueCrawlJob(
  tx: Queryable,
  crawl: Omit<NewCrawlJob, 'jobId' | 'fetchLimit'>,
): Promise<void> {
  const jobId = await enqueueJob(tx, {
    kind: CRAWL_JOB_KIND,
    organizationId: crawl.organizationId,
    payload: { crawlJobId: crawl.id },
    maxAttempts: CRAWL_MAX_ATTEMPTS,
  });
  if (jobId === null) throw new Error('enqueue without a dedupe key returned no job');
  await insertCrawlJob(tx, { ...crawl, jobId, fetchLimit: crawlBounds(crawl.limit).fetchLimit });
}

interface CrawlJobDeps {
  db: Database;
  crawler: CrawlerRuntime;
  /** Wakes the indexer after pages were stored or removed. */
  itemsChanged: () => void;
}

/** The `crawl` job kind. */
export function crawlJobKind(deps: CrawlJobDeps): JobKind {
  return defineJobKind({
    kind: CRAWL_JOB_KIND,
    maxAttempts: CRAWL_MAX_ATTEMPTS,
    async handler(jc) {
      const payload = payloadSchema.safeParse(jc.job.payload);
      if (!payload.success) throw new JobError('The crawl job payload is malformed.');
      try {
        await runCrawlJob(
          {
            ...deps,
            withLease: jc.withLease,
            lease: {
              jobId: jc.job.id,
              token: jc.job.leaseToken,
              lost: () => new JobLostError(jc.job.id),
              transaction: jc.leaseTransaction,
            },
            log: jc.log,
          },
          payload.data.crawlJobId,
          jc.signal,
        );
      } catch (err) {
        if (err instanceof CrawlFailure) throw new JobError(err.message);
        throw err;
      }
      return { status: 'succeeded' };
    },
  });
}
