/**
 * GitBook's change notifications for `docs_space`, as its Webhook integration delivers them
 * (gitbook.com/docs "Receive webhook notifications"; GitbookIO/integrations `integrations/webhook`,
 * `src/common.ts` `deliverWebhook` and `generateHmacSignature`).
 *
 * Set-up: GitBook has no API to subscribe with a personal access token. An organization admin installs
 * the **Webhook** integration on the space, sets the service's URL (`/api/connect/webhooks/gitbook`),
 * turns on **Content updates**, and gives the connection the secret that installation shows
 * (`source.webhook_secret`); an operator whose installations all use one secret may set
 * `KB_DOCS_SPACE_WEBHOOK_SECRET` instead. The secret is per installation, hence per space: a connection's
 * own is tried first.
 *
 * Proof: `X-GitBook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, compared here in
 * constant time. GitBook signs once and sends the same `t` and signature on each of its (up to 3) retries,
 * seconds apart, so a signed time older than {@link REPLAY_WINDOW_MS} is refused as stale.
 *
 * Event: `{"eventId", "type": "space_content_updated", "spaceId", "installationId", "revisionId"}`: the
 * space's primary content has a new revision. It names no page: syncChanged (changes.ts) reads what the
 * revision changed. Other types (site views, page feedback, visibility) are acknowledged and ignored.
 *
 * The account of an event is its `spaceId`; a connection's is the one space it reads.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import type { SourceWebhooks, WebhookRequest, WebhookVerdict } from '../types.ts';
import type { DocsSpaceCredentials } from './client.ts';

/** How old a signed time may be: GitBook's retries come seconds after the first attempt. */
export const REPLAY_WINDOW_MS = 10 * 60_000;
/** How far ahead of our clock a signed time may be (clock skew). */
const FUTURE_SKEW_MS = 5 * 60_000;

const SIGNATURE_HEADER = 'x-gitbook-signature';

/**
 * The table a space-revision change is filed under: the work names a revision of the connection's space
 * (never an item), and syncChanged expands it into the pages it changed.
 */
export const DOCS_SPACE_REVISIONS = 'docs_space_revisions';

const CONTENT_UPDATED = 'space_content_updated';

const idSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_-]+$/);
const eventSchema = z.looseObject({
  eventId: z.string().min(1).max(200),
  type: z.string().min(1).max(200),
  spaceId: idSchema.optional(),
  revisionId: idSchema.optional(),
});

export const docsSpaceWebhooks: SourceWebhooks<DocsSpaceCredentials> = {
  accountOf(req) {
    const parsed = z.looseObject({ spaceId: idSchema }).safeParse(tryJson(req));
    return parsed.success ? parsed.data.spaceId : null;
  },

  connectionAccount(credentials) {
    return credentials.space_id;
  },

  signingSecrets({ credentials, settings }) {
    const secrets = [credentials.webhook_secret, settings['webhookSecret']];
    return [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length > 0))];
  },

  verify(req, secret, { now }): WebhookVerdict {
    const signature = parseSignature(req.headers[SIGNATURE_HEADER]);
    if (!signature || !secret) return 'bad_signature';
    const expected = createHmac('sha256', secret).update(`${signature.t}.`).update(req.rawBody).digest();
    if (!signature.v1.some((given) => timingSafeEqual(given, expected))) return 'bad_signature';
    const at = Number(signature.t) * 1000;
    if (at < now - REPLAY_WINDOW_MS || at > now + FUTURE_SKEW_MS) return 'stale';
    return 'valid';
  },

  parse(req) {
    const event = eventSchema.safeParse(tryJson(req));
    if (!event.success) {
      throw new AppError(
        'invalid_request',
        'The body is not a GitBook integration event (eventId, type, spaceId, revisionId).',
      );
    }
    const { eventId, type, revisionId } = event.data;
    if (type !== CONTENT_UPDATED) return { kind: 'ignored', eventId };
    if (!revisionId || !event.data.spaceId) {
      throw new AppError(
        'invalid_request',
        'A space_content_updated event names its spaceId and revisionId.',
      );
    }
    return {
      kind: 'changes',
      eventId,
      changes: [{ table: DOCS_SPACE_REVISIONS, externalId: revisionId, deleted: false }],
    };
  },
};

/** `t=<seconds>,v1=<hex>[,v1=<hex>]`; null when it is not that shape. */
function parseSignature(header: string | undefined): { t: string; v1: Buffer[] } | null {
  if (!header) return null;
  let t: string | undefined;
  const v1: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d{1,12}$/.test(value)) t = value;
    else if (key === 'v1' && value && /^[0-9a-fA-F]{64}$/.test(value)) v1.push(Buffer.from(value, 'hex'));
  }
  return t !== undefined && v1.length > 0 ? { t, v1 } : null;
}

/** The body as JSON, or undefined when it is not JSON. */
function tryJson(req: WebhookRequest): unknown {
  try {
    return JSON.parse(req.rawBody.toString('utf8'));
  } catch {
    return undefined;
  }
}
