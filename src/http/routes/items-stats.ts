import { z } from 'zod';
import { itemStats, RATE_WINDOW_SECONDS } from '../../db/repositories/item-stats.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors } from '../schemas.ts';

const byStatus = z.object({ pending: z.number(), indexed: z.number(), failed: z.number() });

const statsSchema = z
  .object({
    total: z.number().describe("The organization's items"),
    byIndexingStatus: byStatus.describe(
      '`indexed` items are searchable; `pending` ones wait for the indexer',
    ),
    bySourceType: z.object({ integration: z.number(), crawl: z.number(), upload: z.number() }),
    byConnection: z.array(
      z.object({ connectionId: z.string(), type: z.string(), total: z.number(), byIndexingStatus: byStatus }),
    ),
    chunks: z.number().describe('Searchable passages'),
    indexer: z.object({
      ratePerSecond: z
        .number()
        .nullable()
        .describe(
          `Items indexed per second of indexing work, by every worker for every organization, over the last ${RATE_WINDOW_SECONDS / 60} minutes (time with nothing to index does not count); null when too few were`,
        ),
      queuedAhead: z
        .number()
        .describe("Pending items the indexer takes up to and including this organization's last pending one"),
      etaSeconds: z
        .number()
        .nullable()
        .describe(
          'Estimated seconds until every pending item is searchable: 0 when none is pending, null when no rate is known',
        ),
    }),
  })
  .meta({ id: 'ItemStats' });

/** Extension: how far the knowledge base is (counts, chunks, the indexer's rate and time to drain). */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/api/connect/knowledgebase-items/stats',
    {
      schema: {
        tags: ['knowledge base'],
        summary: 'Knowledge base progress (extension)',
        querystring: z.strictObject({}),
        response: { 200: statsSchema, ...commonErrors },
      },
    },
    async (request) => itemStats(deps.db, callerOf(request).organizationId),
  );
}
