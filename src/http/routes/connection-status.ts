import { z } from 'zod';
import type { SourceRegistry } from '../../connectors/registry.ts';
import { setConnectionStatus } from '../../db/repositories/connections.ts';
import { cancelConnectionSyncs } from '../../jobs/sync-job.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, errorBodySchema } from '../schemas.ts';
import {
  CONNECTION_REF_ONE_OF,
  connectionRefFields,
  connectionRefOf,
  resolveConnection,
} from './connection-shared.ts';

const bodySchema = (registry: SourceRegistry) =>
  z
    .strictObject({
      ...connectionRefFields(registry),
      status: z
        .enum(['active', 'inactive'])
        .describe('inactive: no syncs (scheduled or requested); items stay searchable'),
    })
    .meta(CONNECTION_REF_ONE_OF);

/**
 * Endpoint 3: set a connection `active` or `inactive`. Deactivating cancels its pending and running
 * jobs; an inactive connection keeps its items searchable but does not sync.
 */
export function register(app: App, deps: RouteDeps): void {
  app.patch(
    '/api/connect/set-connection-status',
    {
      schema: {
        tags: ['connections'],
        summary: 'Set the status of a connection',
        description:
          'Body: `{"type"|"connectionId", "status": "active"|"inactive"}`. Unknown connection: 404.',
        body: bodySchema(deps.sources.registry),
        response: {
          200: z.object({
            success: z.boolean(),
            connectionId: z.string(),
            status: z.enum(['active', 'inactive']),
            cancelledJobs: z.array(z.number()),
          }),
          404: errorBodySchema,
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const ref = connectionRefOf(request.body, deps.sources.registry);
      const { status } = request.body;
      const result = await deps.db.transaction(async (tx) => {
        const connection = await resolveConnection(tx, organizationId, ref);
        const cancelled =
          status === 'inactive'
            ? await cancelConnectionSyncs(tx, connection.id, 'The connection was set inactive.')
            : [];
        await setConnectionStatus(tx, connection.id, status);
        return { connectionId: connection.id, cancelled };
      });
      deps.jobs.cancel(result.cancelled);
      return { success: true, connectionId: result.connectionId, status, cancelledJobs: result.cancelled };
    },
  );
}
