import { z } from 'zod';
import { insertWebhookEndpoint } from '../../db/repositories/webhooks.ts';
import { webhookSecretScope } from '../../jobs/webhook-delivery.ts';
import { AppError } from '../../lib/errors.ts';
import { newShortId } from '../../lib/ids.ts';
import { newWebhookSecret } from '../../lib/webhook-signature.ts';
import { webhookTargetProblem } from '../../net/webhook-target.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, httpUrl, nonBlankText } from '../schemas.ts';
import { webhookEndpointSchema, webhookEventsSchema } from './webhook-endpoint-shared.ts';

const bodySchema = z.strictObject({
  url: httpUrl(2000),
  events: webhookEventsSchema.nullable().optional(),
  description: nonBlankText(500).optional(),
});

/**
 * Registers an endpoint of the caller's organization. The answer carries the signing secret, this once:
 * it is stored encrypted and no later answer shows it. The URL must pass the outbound address policy.
 */
export function register(app: App, deps: RouteDeps): void {
  app.post(
    '/api/connect/webhook-endpoints',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Register a webhook endpoint',
        description:
          'Events are POSTed to `url`, signed per Standard Webhooks with the `secret` answered here (shown once). ' +
          'A private, loopback or link-local target is refused with 400 invalid_request.',
        body: bodySchema,
        response: { 200: webhookEndpointSchema.extend({ secret: z.string() }), ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const { url, events, description } = request.body;
      const problem = await webhookTargetProblem(url, { allowPrivate: deps.config.KB_CRAWL_ALLOW_PRIVATE });
      if (problem)
        throw new AppError('invalid_request', `${problem}: webhooks are only sent to public addresses.`);
      const id = `whe_${newShortId(10)}`;
      const secret = newWebhookSecret();
      const endpoint = await insertWebhookEndpoint(deps.db, {
        id,
        organizationId,
        url,
        description: description ?? null,
        events: events ?? null,
        secretEncrypted: deps.sources.encryptCredentials(webhookSecretScope(id), { secret }),
      });
      return { ...endpoint, secret };
    },
  );
}
