import { z } from 'zod';
import { listCrawlJobs } from '../../db/repositories/crawl-jobs.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, queryInteger } from '../schemas.ts';
import { publicOrigin } from './connection-shared.ts';
import { crawlJobSchema } from './crawl-shared.ts';

const querySchema = z.strictObject({
  limit: queryInteger(1, 100).default(20),
  offset: queryInteger(0, 1_000_000).default(0),
});

/** Extension: the organization's crawl jobs, newest first, paged like the sync job list. */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/api/connect/crawling/',
    {
      schema: {
        tags: ['crawl jobs'],
        summary: 'List crawl jobs (extension)',
        description:
          'Query: `limit` (1-100, default 20), `offset` (default 0). `next` and `previous` are absolute URLs of the ' +
          'adjacent pages, absent when there is none.',
        querystring: querySchema,
        response: {
          200: z.object({
            data: z.array(crawlJobSchema),
            previous: z.string().optional(),
            next: z.string().optional(),
            total: z.number().describe("the organization's crawl jobs"),
          }),
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const { limit, offset } = request.query;
      const { jobs, total } = await listCrawlJobs(deps.db, organizationId, { limit, offset });
      const origin = publicOrigin(deps.config.KB_PUBLIC_URL, request);
      const link = (o: number) => `${origin}/api/connect/crawling/?limit=${limit}&offset=${o}`;
      const next = offset + limit < total ? link(offset + limit) : undefined;
      const previous = offset > 0 ? link(Math.max(0, Math.min(offset - limit, total - limit))) : undefined;
      return {
        data: jobs,
        ...(previous === undefined ? {} : { previous }),
        ...(next === undefined ? {} : { next }),
        total,
      };
    },
  );
}
