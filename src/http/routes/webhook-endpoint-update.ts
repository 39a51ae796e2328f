import { z } from 'zod';
import { getWebhookEndpoint, updateWebhookEndpoint } from '../../db/repositories/webhooks.ts';
import { AppError } from '../../lib/errors.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, errorBodySchema, nonBlankText } from '../schemas.ts';
import {
  webhookEndpointIdParams,
  webhookEndpointSchema,
  webhookEventsSchema,
} from './webhook-endpoint-shared.ts';

const bodySchema = z
  .strictObject({
    enabled: z.boolean().optional(),
    events: webhookEventsSchema.nullable().optional(),
    description: nonBlankText(500).nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'send at least one of enabled, events, description');

/**
 * Extension: enable or disable an endpoint, change its event filter or description. Enabling an
 * endpoint the service disabled sends its pending deliveries again, in order.
 */
export function register(app: App, deps: RouteDeps): void {
  app.patch(
    '/api/connect/webhook-endpoints/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Update a webhook endpoint (extension)',
        params: webhookEndpointIdParams,
        body: bodySchema,
        response: { 200: webhookEndpointSchema, 404: errorBodySchema, ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const { id } = request.params;
      const endpoint = await deps.db.transaction(async (tx) => {
        if (!(await updateWebhookEndpoint(tx, organizationId, id, request.body))) return null;
        return getWebhookEndpoint(tx, organizationId, id);
      });
      if (!endpoint) throw new AppError('not_found', `No webhook endpoint with id ${id}.`);
      return endpoint;
    },
  );
}
