import { z } from 'zod';
import { listWebhookEndpoints } from '../../db/repositories/webhooks.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors } from '../schemas.ts';
import { webhookEndpointSchema } from './webhook-endpoint-shared.ts';

/** The caller's organization's endpoints, oldest first; never their secrets. */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/api/connect/webhook-endpoints',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'List webhook endpoints',
        response: { 200: z.object({ endpoints: z.array(webhookEndpointSchema) }), ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      return { endpoints: await listWebhookEndpoints(deps.db, organizationId) };
    },
  );
}
