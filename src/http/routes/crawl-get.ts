import { z } from 'zod';
import { crawlItemsPending, getCrawlJob } from '../../db/repositories/crawl-jobs.ts';
import { AppError } from '../../lib/errors.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, errorBodySchema } from '../schemas.ts';
import { crawlIdParams, crawlJobSchema } from './crawl-shared.ts';

/** The crawl as every crawl endpoint shows it, and how many of its items are still on their way into search. */
const crawlJobWithIndexingSchema = crawlJobSchema.extend({
  items_pending: z
    .number()
    .describe(
      "extension: items this crawl stored or updated that are not searchable yet (the indexer's queue); the " +
        'crawl is fully searchable when the job has ended and this is 0',
    ),
});

/** Extension: one crawl job with its live counters. Other organizations' ids are not found. */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/api/connect/crawling/:id',
    {
      schema: {
        tags: ['crawl jobs'],
        summary: 'Get a crawl job (extension)',
        params: crawlIdParams,
        response: { 200: crawlJobWithIndexingSchema, 404: errorBodySchema, ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const job = await getCrawlJob(deps.db, organizationId, request.params.id);
      if (!job) throw new AppError('not_found', `No crawl job with id ${request.params.id}.`);
      return { ...job, items_pending: await crawlItemsPending(deps.db, organizationId, job.id) };
    },
  );
}
