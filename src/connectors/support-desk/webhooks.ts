/**
 * Zendesk's event webhooks for Help Center articles (developer.zendesk.com: "Webhooks API"
 * `/api-reference/webhooks/webhooks-api/webhooks/`, "Anatomy of a webhook request"
 * `/documentation/webhooks/anatomy-of-a-webhook-request/`, "Verifying webhook authenticity"
 * `/documentation/webhooks/verifying/`, "Webhook event types" and "Article events"
 * `/api-reference/webhooks/event-types/article-events/`).
 *
 * Set-up: the service subscribes through the Webhooks API when a connection is created with a public
 * URL: `POST /api/v2/webhooks` with the article event types, then `GET /api/v2/webhooks/{id}/signing_secret`
 * for the secret Zendesk issued to that webhook; disconnecting deletes it (`DELETE /api/v2/webhooks/{id}`).
 * Creating webhooks needs an admin (or an agent whose role may manage webhooks).
 *
 * Proof: every request carries `X-Zendesk-Webhook-Signature`, base64 of HMAC-SHA256 keyed with the
 * webhook's signing secret over the `X-Zendesk-Webhook-Signature-Timestamp` value (ISO 8601, e.g.
 * `2021-03-25T05:09:27Z`) followed directly by the raw body; compared here in constant time.
 *
 * Replay: Zendesk signs its send time but documents no window. A request is refused as stale when that
 * time is more than {@link REPLAY_WINDOW_MS} from our clock either way: Zendesk sends within seconds of the
 * event and gives a request 10 seconds before retrying it, so five minutes holds its retries and clock
 * skew, while a captured request cannot be played again later. Within the window a replay repeats the
 * event's `id`, which the receiver records once; and an event never carries content, so the worst a
 * replay can do is make the service read again an article it would read anyway.
 *
 * Account: Zendesk names the account only by its number (`x-zendesk-account-id`, `account_id`), never by
 * the subdomain a connection knows, so the webhook the service creates carries the subdomain in a custom
 * header ({@link ACCOUNT_HEADER}; Zendesk's `custom_headers` exist to "deliver additional non-credential
 * info"). It only narrows which connections' secrets are tried: the signature is the proof.
 *
 * Events: `article.published` (an article or one of its translations published; whether updating a
 * published article sends it again is not documented) and `article.unpublished` (back to draft). Zendesk
 * sends no event when an article is archived or deleted: the scheduled sync's listing still finds those.
 * Votes, comments, subscriptions and author changes change nothing an item shows: acknowledged, ignored.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { joinUrl, pathSegment } from '../base-url.ts';
import { sourceName } from '../credential-check.ts';
import type { ConnectorContext, SourceWebhooks, WebhookMessage, WebhookSubscription } from '../types.ts';
import { ARTICLES_TABLE } from './articles.ts';
import { SUPPORT_DESK_SOURCE, type SupportDeskCredentials, zendeskAuthHeader } from './client.ts';

/** How far a request's signed time may be from our clock, either way. */
export const REPLAY_WINDOW_MS = 5 * 60_000;

const SIGNATURE_HEADER = 'x-zendesk-webhook-signature';
const TIMESTAMP_HEADER = 'x-zendesk-webhook-signature-timestamp';
/** The custom header the service's webhook sends: the connection's subdomain. */
export const ACCOUNT_HEADER = 'x-kb-zendesk-subdomain';

export const ARTICLE_PUBLISHED = 'zen:event-type:article.published';
export const ARTICLE_UNPUBLISHED = 'zen:event-type:article.unpublished';
/** The event types the service subscribes to. */
export const ARTICLE_EVENT_TYPES = [ARTICLE_PUBLISHED, ARTICLE_UNPUBLISHED] as const;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Ids come as strings in event payloads (`"7005414006398"`), as numbers elsewhere. */
const numericId = z.union([z.string().regex(/^\d{1,20}$/), z.number().int().nonnegative()]).transform(String);

const eventSchema = z.looseObject({
  id: z.string().min(1).max(200),
  type: z.string().min(1).max(200),
  time: z.string().max(100).optional(),
  subject: z.string().max(300).optional(),
  detail: z.looseObject({ id: numericId.optional(), brand_id: numericId.optional() }).nullish(),
});
type ZendeskEvent = z.infer<typeof eventSchema>;

export const supportDeskWebhooks: SourceWebhooks<SupportDeskCredentials> = {
  accountOf(req) {
    const named = req.headers[ACCOUNT_HEADER]?.trim().toLowerCase();
    return named !== undefined && LABEL.test(named) ? named : null;
  },

  connectionAccount(credentials) {
    return credentials.subdomain;
  },

  signingSecrets({ subscription }) {
    return subscription?.secret ? [subscription.secret] : [];
  },

  verify(req, secret, { now }) {
    const signature = req.headers[SIGNATURE_HEADER];
    const timestamp = req.headers[TIMESTAMP_HEADER];
    if (!signature || !timestamp || !secret) return 'bad_signature';
    if (!signatureMatches({ secret, timestamp, rawBody: req.rawBody, signature })) return 'bad_signature';
    const signedAt = Date.parse(timestamp);
    if (Number.isNaN(signedAt) || Math.abs(now - signedAt) > REPLAY_WINDOW_MS) return 'stale';
    return 'valid';
  },

  parse(req) {
    let body: unknown;
    try {
      body = JSON.parse(req.rawBody.toString('utf8'));
    } catch {
      throw notAnEvent();
    }
    const event = eventSchema.safeParse(body);
    if (!event.success) throw notAnEvent();
    return messageOf(event.data);
  },

  subscribe: subscribeToArticles,
  unsubscribe: deleteWebhooks,
};

/** `X-Zendesk-Webhook-Signature` of a body sent at `timestamp` (the header's value, as sent). */
export function zendeskSignature(opts: {
  secret: string;
  timestamp: string;
  rawBody: Buffer | string;
}): string {
  return createHmac('sha256', opts.secret).update(opts.timestamp).update(opts.rawBody).digest('base64');
}

function signatureMatches(opts: {
  secret: string;
  timestamp: string;
  rawBody: Buffer;
  signature: string;
}): boolean {
  const expected = Buffer.from(zendeskSignature(opts), 'base64');
  const given = Buffer.from(opts.signature.trim(), 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function notAnEvent(): AppError {
  return new AppError(
    'invalid_request',
    'The body is not a Zendesk webhook event (a JSON object with id and type, as Zendesk event subscriptions send).',
  );
}

/** The article an event names: `detail.id`, else the id in its `subject` (`zen:article:{id}`). */
function articleIdOf(event: ZendeskEvent): string | undefined {
  if (event.detail?.id !== undefined) return event.detail.id;
  const m = /^zen:article:(\d{1,20})$/.exec(event.subject ?? '');
  return m?.[1];
}

function messageOf(event: ZendeskEvent): WebhookMessage {
  if (event.type !== ARTICLE_PUBLISHED && event.type !== ARTICLE_UNPUBLISHED) {
    return { kind: 'ignored', eventId: event.id };
  }
  const id = articleIdOf(event);
  if (id === undefined) {
    throw new AppError('invalid_request', `The Zendesk ${event.type} event names no article (detail.id).`);
  }
  return {
    kind: 'changes',
    eventId: event.id,
    ...(event.time ? { occurredAt: event.time } : {}),
    // The article's key in the connection's own help center, default language; syncChanged reads every
    // language (and finds the brand's help center) itself.
    changes: [{ table: ARTICLES_TABLE, externalId: id, deleted: event.type === ARTICLE_UNPUBLISHED }],
  };
}

// ---------------------------------------------------------------------------------------------------
// Subscription (Webhooks API)
// ---------------------------------------------------------------------------------------------------

type Ctx = ConnectorContext<SupportDeskCredentials>;

const createdSchema = z.object({ webhook: z.object({ id: z.string().min(1) }) });
const signingSecretSchema = z.object({
  signing_secret: z.object({ algorithm: z.string().optional(), secret: z.string().min(1) }),
});

const webhooksPath = (id?: string) =>
  id === undefined ? '/api/v2/webhooks' : `/api/v2/webhooks/${pathSegment(id)}`;

/**
 * Creates an active webhook subscribed to the article events, POSTing JSON to `callbackUrl` with the
 * subdomain in {@link ACCOUNT_HEADER}, and reads the signing secret Zendesk issued to it. A webhook whose
 * secret cannot be read is deleted again: it would send what nothing can verify.
 */
async function subscribeToArticles(ctx: Ctx, opts: { callbackUrl: string }): Promise<WebhookSubscription> {
  const auth = { authorization: zendeskAuthHeader(ctx.credentials) };
  const created = await ctx.http.postJson(
    joinUrl(ctx.baseUrl, webhooksPath()),
    {
      webhook: {
        name: `Knowledge base: Help Center articles (${ctx.credentials.subdomain})`,
        description: 'Tells the knowledge base which Help Center articles to read again.',
        status: 'active',
        endpoint: opts.callbackUrl,
        http_method: 'POST',
        request_format: 'json',
        subscriptions: [...ARTICLE_EVENT_TYPES],
        custom_headers: { [ACCOUNT_HEADER]: ctx.credentials.subdomain },
      },
    },
    createdSchema,
    { headers: auth },
  );
  const id = created.webhook.id;
  try {
    const shown = await ctx.http.getJson(
      joinUrl(ctx.baseUrl, `${webhooksPath(id)}/signing_secret`),
      signingSecretSchema,
      { headers: auth },
    );
    return { ids: [id], secret: shown.signing_secret.secret };
  } catch (err) {
    await deleteWebhooks(ctx, { ids: [id] }).catch(() => undefined);
    throw err;
  }
}

/** Deletes the webhooks a subscription created; one already gone (404) is not an error. */
async function deleteWebhooks(ctx: Ctx, subscription: WebhookSubscription): Promise<void> {
  const auth = { authorization: zendeskAuthHeader(ctx.credentials) };
  for (const id of subscription.ids) {
    const res = await ctx.http.request('DELETE', joinUrl(ctx.baseUrl, webhooksPath(id)), { headers: auth });
    if (res.status === 404 || (res.status >= 200 && res.status < 300)) continue;
    throw new Error(
      `${sourceName(SUPPORT_DESK_SOURCE)} answered ${res.status} to deleting the service's webhook ${id}.`,
    );
  }
}
