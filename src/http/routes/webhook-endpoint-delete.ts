import { z } from 'zod';
import { deleteWebhookEndpoint } from '../../db/repositories/webhooks.ts';
import { AppError } from '../../lib/errors.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, errorBodySchema } from '../schemas.ts';
import { webhookEndpointIdParams } from './webhook-endpoint-shared.ts';

/** Deletes an endpoint and its pending deliveries. Other organizations' ids are not found. */
export function register(app: App, deps: RouteDeps): void {
  app.delete(
    '/api/connect/webhook-endpoints/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook endpoint',
        params: webhookEndpointIdParams,
        response: {
          200: z.object({ success: z.boolean(), id: z.string() }),
          404: errorBodySchema,
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const { id } = request.params;
      if (!(await deleteWebhookEndpoint(deps.db, organizationId, id))) {
        throw new AppError('not_found', `No webhook endpoint with id ${id}.`);
      }
      return { success: true, id };
    },
  );
}
