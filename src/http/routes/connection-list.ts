import { z } from 'zod';
import { listConnections } from '../../db/repositories/connections.ts';
import { getSyncJob } from '../../db/repositories/sync-jobs.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors } from '../schemas.ts';
import { syncJobSchema } from './connection-shared.ts';

const connectionSchema = z
  .object({
    id: z.string(),
    type: z.string().describe('Canonical source type'),
    status: z.enum(['active', 'inactive']),
    consentNeeded: z
      .string()
      .nullable()
      .describe(
        'Set when the source refused to refresh the OAuth access: what to do (connect again through OAuth). Null otherwise.',
      ),
    schedule: z.object({ intervalMinutes: z.number() }).nullable(),
    nextSyncAt: z.number().nullable().describe('Unix epoch ms of the next scheduled sync'),
    createdAt: z.number().describe('Unix epoch ms'),
    updatedAt: z.number().describe('Unix epoch ms'),
    lastJob: syncJobSchema.nullable(),
  })
  .meta({ id: 'Connection' });

/** Extension: the organization's connections (never their credentials). */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/api/connect/connections',
    {
      schema: {
        tags: ['connections'],
        summary: 'List connections (extension)',
        // No parameters: an unknown one is an error here as on every other route.
        querystring: z.strictObject({}),
        response: { 200: z.object({ data: z.array(connectionSchema) }), ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const rows = await listConnections(deps.db, organizationId);
      const data = await Promise.all(
        rows.map(async (c) => ({
          id: c.id,
          type: c.type,
          status: c.status,
          consentNeeded: c.consentNeeded,
          schedule:
            c.scheduleIntervalMinutes === null ? null : { intervalMinutes: c.scheduleIntervalMinutes },
          nextSyncAt: c.nextSyncAt,
          createdAt: c.createdAt,
          updatedAt: c.updatedAt,
          lastJob: c.lastJobId === null ? null : await getSyncJob(deps.db, organizationId, c.lastJobId),
        })),
      );
      return { data };
    },
  );
}
