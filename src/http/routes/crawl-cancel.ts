import { crawlEngineJobId, getCrawlJob } from '../../db/repositories/crawl-jobs.ts';
import { cancelJobs } from '../../jobs/queue.ts';
import { AppError } from '../../lib/errors.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, errorBodySchema } from '../schemas.ts';
import { crawlIdParams, crawlJobSchema } from './crawl-shared.ts';

/**
 * Extension: cancel a crawl at once. The job is `cancelled` when this answers; its worker stops within
 * moments and commits nothing more. Pages stored before stay. Cancelling a cancelled job is a no-op;
 * a completed or failed one is a 409.
 */
export function register(app: App, deps: RouteDeps): void {
  app.delete(
    '/api/connect/crawling/:id',
    {
      schema: {
        tags: ['crawl jobs'],
        summary: 'Cancel a crawl job (extension)',
        params: crawlIdParams,
        response: { 200: crawlJobSchema, 404: errorBodySchema, 409: errorBodySchema, ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const id = request.params.id;
      const { job, cancelled } = await deps.db.transaction(async (tx) => {
        const jobId = await crawlEngineJobId(tx, organizationId, id);
        if (jobId === null) throw new AppError('not_found', `No crawl job with id ${id}.`);
        const ids = await cancelJobs(tx, [jobId], 'Cancelled by the caller.');
        return { job: await getCrawlJob(tx, organizationId, id), cancelled: ids };
      });
      if (cancelled.length > 0) deps.jobs.cancel(cancelled);
      if (job && (job.status === 'completed' || job.status === 'failed')) {
        throw new AppError(
          'conflict',
          `The crawl job already ended (${job.status}); there is nothing to cancel.`,
        );
      }
      return job!;
    },
  );
}
