import { z } from 'zod';
import { getWebhookEndpoint, listWebhookDeliveries } from '../../db/repositories/webhooks.ts';
import { AppError } from '../../lib/errors.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, errorBodySchema, queryInteger } from '../schemas.ts';
import { webhookDeliverySchema, webhookEndpointIdParams } from './webhook-endpoint-shared.ts';

/** The endpoint's recent deliveries, newest first: the delivery log. */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/api/connect/webhook-endpoints/:id/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: "List a webhook endpoint's recent deliveries",
        params: webhookEndpointIdParams,
        querystring: z.strictObject({ limit: queryInteger(1, 500).optional() }),
        response: {
          200: z.object({ deliveries: z.array(webhookDeliverySchema) }),
          404: errorBodySchema,
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const { id } = request.params;
      if (!(await getWebhookEndpoint(deps.db, organizationId, id))) {
        throw new AppError('not_found', `No webhook endpoint with id ${id}.`);
      }
      return { deliveries: await listWebhookDeliveries(deps.db, id, request.query.limit ?? 50) };
    },
  );
}
