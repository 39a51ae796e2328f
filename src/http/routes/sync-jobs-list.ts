import { z } from 'zod';
import type { SourceRegistry } from '../../connectors/registry.ts';
import { listSyncJobs } from '../../db/repositories/sync-jobs.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, errorBodySchema, queryInteger } from '../schemas.ts';
import {
  connectionRefFields,
  connectionRefOf,
  publicOrigin,
  resolveConnection,
  syncJobSchema,
} from './connection-shared.ts';

const querySchema = (registry: SourceRegistry) =>
  z.strictObject({
    ...connectionRefFields(registry),
    limit: queryInteger(1, 100).default(20),
    offset: queryInteger(0, 1_000_000).default(0),
  });

/** Endpoint 5: a connection's sync jobs, newest first, paged with absolute next/previous links. */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/api/connect/connection-sync-jobs',
    {
      schema: {
        tags: ['sync jobs'],
        summary: 'Get all sync jobs of a connection',
        description:
          'Query: `type` or `connectionId`, exactly one of them (400 otherwise; OpenAPI cannot tie query ' +
          'parameters together), `limit` (1-100, default 20), `offset` (default 0). `next` and ' +
          '`previous` are absolute URLs of the adjacent pages, absent when there is none.',
        querystring: querySchema(deps.sources.registry),
        response: {
          200: z.object({
            data: z.array(syncJobSchema),
            previous: z.string().optional(),
            next: z.string().optional(),
            total: z.number().describe('Jobs of the connection'),
          }),
          404: errorBodySchema,
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const q = request.query;
      const ref = connectionRefOf(q, deps.sources.registry);
      const connection = await resolveConnection(deps.db, organizationId, ref);
      const { jobs, total } = await listSyncJobs(deps.db, connection.id, {
        limit: q.limit,
        offset: q.offset,
      });
      const origin = publicOrigin(deps.config.KB_PUBLIC_URL, request);
      const link = (offset: number) => {
        const params = new URLSearchParams();
        if (q.connectionId !== undefined) params.set('connectionId', q.connectionId);
        if (q.type !== undefined) params.set('type', q.type);
        params.set('limit', String(q.limit));
        params.set('offset', String(offset));
        return `${origin}/api/connect/connection-sync-jobs?${params}`;
      };
      const next = q.offset + q.limit < total ? link(q.offset + q.limit) : undefined;
      const previous =
        q.offset > 0 ? link(Math.max(0, Math.min(q.offset - q.limit, total - q.limit))) : undefined;
      return {
        data: jobs,
        ...(previous === undefined ? {} : { previous }),
        ...(next === undefined ? {} : { next }),
        total,
      };
    },
  );
}
