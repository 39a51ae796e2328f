/** The webhook endpoint and delivery shapes every webhook-endpoint route shows, and the id param. */
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../../jobs/webhook-delivery.ts';

export const webhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);

/** An event filter: distinct types, at least one; null or absent means every type. */
export const webhookEventsSchema = z
  .array(webhookEventTypeSchema)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((types) => new Set(types).size === types.length, 'must not repeat an event type')
  .describe('the event types delivered; absent or null: every type');

export const webhookEndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.string()).nullable().describe('the event types delivered; null: every type'),
    enabled: z.boolean(),
    disabledReason: z
      .string()
      .nullable()
      .describe('why the service disabled the endpoint (every attempt failed for a day); null otherwise'),
    disabledAt: z.string().nullable(),
    failingSince: z
      .string()
      .nullable()
      .describe('ISO 8601 UTC of the first failed attempt since the last success; null while it answers'),
    createdAt: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });

export const webhookDeliverySchema = z
  .object({
    id: z.string(),
    messageId: z.string().describe('the `webhook-id` header: the same on every attempt'),
    eventType: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.number(),
    lastStatusCode: z.number().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: z.string().nullable().describe('ISO 8601 UTC; null unless pending'),
    lastAttemptAt: z.string().nullable(),
    deliveredAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });

export const webhookEndpointIdParams = z.object({ id: z.string().min(1).max(100) });
