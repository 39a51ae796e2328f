import { z } from 'zod';
import { deleteItems } from '../../db/repositories/items.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors } from '../schemas.ts';

const bodySchema = z.strictObject({ ids: z.array(z.string().min(1).max(200)).min(1).max(1000) });

/** Endpoint 10: delete items (and their chunks) of the caller's organization. */
export function register(app: App, deps: RouteDeps): void {
  app.delete(
    '/api/connect/knowledgebase-items',
    {
      schema: {
        tags: ['knowledge base'],
        summary: 'Delete knowledge base items',
        body: bodySchema,
        response: { 200: z.object({ success: z.boolean(), deleted: z.number() }), ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const ids = [...new Set(request.body.ids)];
      const deleted = await deps.db.transaction((tx) => deleteItems(tx, organizationId, ids));
      return { success: true, deleted };
    },
  );
}
