import { z } from 'zod';
import type { SourceRegistry } from '../../connectors/registry.ts';
import { activeSyncJobIds } from '../../db/repositories/sync-jobs.ts';
import { enqueueSyncJob, sourceUnavailable } from '../../jobs/sync-job.ts';
import { AppError } from '../../lib/errors.ts';
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
      jobType: z
        .enum(['sync', 'reset'])
        .default('sync')
        .describe(
          'sync: what changed since the last sync; reset: re-read everything, remove what the source no longer has',
        ),
    })
    .meta(CONNECTION_REF_ONE_OF);

/** Endpoint 4: queue a sync job for a connection and answer at once with its id; a worker runs it. */
export function register(app: App, deps: RouteDeps): void {
  app.post(
    '/api/connect/run-sync',
    {
      schema: {
        tags: ['sync jobs'],
        summary: 'Trigger a sync',
        description:
          'Body: `{"type"|"connectionId", "jobType"?: "sync"|"reset"}`. 404 unknown connection; 409 ' +
          'sync_in_progress while a job of the connection is pending or running; 409 connection_inactive.',
        body: bodySchema(deps.sources.registry),
        response: {
          200: z.object({ success: z.boolean(), jobId: z.number() }),
          404: errorBodySchema,
          409: errorBodySchema.extend({
            jobId: z.number().optional().describe('sync_in_progress: the job that is pending or running'),
          }),
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const ref = connectionRefOf(request.body, deps.sources.registry);
      const jobId = await deps.db.transaction(async (tx) => {
        const connection = await resolveConnection(tx, organizationId, ref);
        if (connection.status !== 'active') {
          throw new AppError('connection_inactive', 'The connection is inactive; set it active to sync it.');
        }
        const connector = deps.sources.connectorOf(connection.type);
        if (!connector) throw sourceUnavailable(connection.type);
        const id = await enqueueSyncJob(tx, {
          organizationId,
          connectionId: connection.id,
          jobType: request.body.jobType,
          trigger: 'api',
        });
        if (id === null) {
          const [active] = await activeSyncJobIds(tx, connection.id);
          throw new AppError(
            'sync_in_progress',
            `A sync of this connection is already pending or running${active === undefined ? '' : ` (job ${active})`}; wait for it to finish.`,
            active === undefined ? undefined : { jobId: active },
          );
        }
        return id;
      });
      deps.jobs.wake();
      return { success: true, jobId };
    },
  );
}
