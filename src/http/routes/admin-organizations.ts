import { z } from 'zod';
import { createApiKey, createOrganization, findOrganization } from '../../db/repositories/organizations.ts';
import { AppError } from '../../lib/errors.ts';
import { requireAdmin } from '../auth.ts';
import type { App, RouteDeps } from '../context.ts';
import { commonErrors, errorBodySchema, nonBlankText } from '../schemas.ts';

const adminSecurity = [{ adminToken: [] }];

/** Admin API (only with KB_ADMIN_TOKEN): provision organizations and their keys. */
export function register(app: App, deps: RouteDeps): void {
  const onRequest = requireAdmin(deps.config.KB_ADMIN_TOKEN);

  app.post(
    '/api/admin/organizations',
    {
      onRequest,
      schema: {
        tags: ['admin'],
        summary: 'Create an organization and its first API key',
        security: adminSecurity,
        body: z.strictObject({ name: nonBlankText(200) }),
        response: {
          200: z.object({ id: z.string(), name: z.string(), apiKey: z.string() }),
          ...commonErrors,
          409: errorBodySchema,
        },
      },
    },
    async (request) => {
      return deps.db.transaction(async (tx) => {
        if (await findOrganization(tx, request.body.name)) {
          throw new AppError('conflict', `An organization named "${request.body.name}" exists already.`);
        }
        const org = await createOrganization(tx, request.body.name);
        const key = await createApiKey(tx, org.id);
        return { id: org.id, name: org.name, apiKey: key.apiKey };
      });
    },
  );

  app.post(
    '/api/admin/organizations/:id/keys',
    {
      onRequest,
      schema: {
        tags: ['admin'],
        summary: 'Create another API key for an organization',
        security: adminSecurity,
        params: z.object({ id: z.string().min(1).max(200) }),
        response: {
          200: z.object({ id: z.string(), apiKey: z.string() }),
          ...commonErrors,
          404: errorBodySchema,
        },
      },
    },
    async (request) => {
      return deps.db.transaction(async (tx) => {
        const org = await findOrganization(tx, request.params.id);
        if (!org || org.id !== request.params.id)
          throw new AppError('not_found', 'No organization has this id.');
        return createApiKey(tx, org.id);
      });
    },
  );
}
