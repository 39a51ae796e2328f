import { z } from 'zod';
import type { SourceRegistry } from '../../connectors/registry.ts';
import { deleteConnection } from '../../db/repositories/connections.ts';
import { storedSubscription, unsubscribeConnection } from '../../jobs/source-webhooks.ts';
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
  z.strictObject(connectionRefFields(registry)).meta(CONNECTION_REF_ONE_OF);

/**
 * Endpoint 2: disconnect. Cancels the connection's pending and running jobs (their workers stop at
 * once), deletes its credentials and every item (and chunk) it produced.
 */
export function register(app: App, deps: RouteDeps): void {
  app.delete(
    '/api/connect/connection',
    {
      schema: {
        tags: ['connections'],
        summary: 'Disconnect a connection',
        description: 'Body: `{"type"}` or `{"connectionId"}`. Unknown connection: 404 not_found.',
        body: bodySchema(deps.sources.registry),
        response: {
          200: z.object({
            success: z.boolean(),
            connectionId: z.string(),
            deletedItems: z.number(),
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
      const result = await deps.db.transaction(async (tx) => {
        const connection = await resolveConnection(tx, organizationId, ref);
        // Jobs first: a worker's batch holds its job row while it writes, so cancelling waits for that
        // batch and the items it committed are deleted below; later batches find the job cancelled.
        const cancelled = await cancelConnectionSyncs(tx, connection.id, 'The connection was disconnected.');
        // Read before the delete removes it: the subscription at the source is removed after the commit.
        const subscription = await storedSubscription(tx, deps.sources, connection.id);
        const { items } = await deleteConnection(tx, organizationId, connection.id);
        return { connectionId: connection.id, cancelled, items, subscription, connection };
      });
      deps.jobs.cancel(result.cancelled);
      const connector = deps.sources.connectorOf(result.connection.type);
      if (result.subscription && connector) {
        await unsubscribeConnection(
          { sources: deps.sources, log: request.log },
          {
            connectionId: result.connectionId,
            connector,
            credentials: deps.sources.decryptCredentials(
              result.connectionId,
              result.connection.credentialsEncrypted,
            ),
            subscription: result.subscription,
          },
        );
      }
      return {
        success: true,
        connectionId: result.connectionId,
        deletedItems: result.items,
        cancelledJobs: result.cancelled,
      };
    },
  );
}
