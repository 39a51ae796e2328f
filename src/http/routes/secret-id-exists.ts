import { z } from 'zod';
import { oauthSecretExists } from '../../db/repositories/connections.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors } from '../schemas.ts';

const querySchema = z.strictObject({ secretId: z.string().min(1).max(200) });

/** OAuth step 3: whether the consent finished and its token is stored (this organization's secrets only). */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/api/connect/secret-id-exists',
    {
      schema: {
        tags: ['connections'],
        summary: 'Whether an OAuth token is stored under a secretId',
        querystring: querySchema,
        response: { 200: z.object({ exists: z.boolean() }), ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      return { exists: await oauthSecretExists(deps.db, organizationId, request.query.secretId) };
    },
  );
}
