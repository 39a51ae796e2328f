import { z } from 'zod';
import { revokeApiKey } from '../../db/repositories/organizations.ts';
import { AppError } from '../../lib/errors.ts';
import { requireAdmin } from '../auth.ts';
import type { App, RouteDeps } from '../context.ts';
import { commonErrors, errorBodySchema } from '../schemas.ts';

/** Admin API: revoke a key by its id (the 16 hex characters after `kb_`). */
export function register(app: App, deps: RouteDeps): void {
  app.delete(
    '/api/admin/keys/:id',
    {
      onRequest: requireAdmin(deps.config.KB_ADMIN_TOKEN),
      schema: {
        tags: ['admin'],
        summary: 'Revoke an API key',
        security: [{ adminToken: [] }],
        params: z.object({ id: z.string().min(1).max(200) }),
        response: { 200: z.object({ success: z.boolean() }), ...commonErrors, 404: errorBodySchema },
      },
    },
    async (request) => {
      const revoked = await revokeApiKey(deps.db, request.params.id);
      if (!revoked) throw new AppError('not_found', 'No live API key has this id.');
      return { success: true };
    },
  );
}
