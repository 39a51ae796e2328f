/**
 * Change notifications for `wiki` (Confluence Cloud). What Atlassian offers, and what this service can use:
 *
 * - Confluence Cloud has no REST resource through which a client holding an API token (classic, scoped,
 *   a service account's) registers a webhook. Cloud webhooks are declared by apps: a Connect app's
 *   descriptor (`modules.webhooks`, each request a JWT signed with the app's install secret; Connect is
 *   being retired in favour of Forge) or a Forge app's product-event triggers (`avi:confluence:updated:page`
 *   ...), delivered to the app's own functions, not to a URL of ours. So the service subscribes nothing
 *   (no `subscribe`): the set-up is the site admin's.
 * - Confluence Data Center's `POST /rest/api/webhooks` takes a `configuration.secret` and signs each
 *   request with it (`X-Hub-Signature`, HMAC-SHA256 of the body); that is the Data Center product, which
 *   this source (Cloud's v2 API, API tokens) does not connect to.
 * - What a Cloud admin can point at this service: an Automation rule (Confluence Premium and Enterprise)
 *   triggered by page and blog post events ("Page published", "Page edited", "Page moved", "Page deleted",
 *   "Page restored", "Page archived", and the blog post ones), whose "Send web request" action POSTs to
 *   `/api/connect/webhooks/wiki` with a header holding the connection's `webhook_secret` and this body
 *   (its custom data, with Automation's smart values):
 *
 *   ```json
 *   {"site": "acme.atlassian.net", "contentType": "{{content.type}}", "contentId": "{{content.id}}",
 *    "event": "page_updated", "at": "{{now}}"}
 *   ```
 *
 * Proof: the request carries {@link SECRET_HEADER} equal to the connection's `webhook_secret` (compared in
 * constant time), or, for a sender that can sign (a relay, a Data Center-style sender), `X-Hub-Signature:
 * sha256=<hex>`, the HMAC-SHA256 of the raw body keyed with that secret. A signed request whose signature
 * does not match is refused even when it also carries the secret header. Automation signs nothing and
 * sends no time the receiver could bound, so a shared-secret request proves only that its sender knows the
 * secret; a notification never carries content, so the worst a forger who knows it could do is make the
 * connection read again a page it may read anyway.
 *
 * Account: the site host the body names (`site`), the connection's `domain_name`: it only narrows which
 * connections' secrets are tried. Event id (deduplication): a digest of the raw body, which is why `at`
 * (the rule's `{{now}}`) is required: a retry of one request repeats it, the next edit of the page differs.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { normalizeSiteHost } from '../normalize.ts';
import type { ChangedDocument, SourceWebhooks, WebhookMessage, WebhookRequest } from '../types.ts';
import type { WikiCredentials } from './route.ts';
import { BLOGPOSTS_TABLE, PAGES_TABLE } from './sync.ts';

/** The header the Automation rule sends the connection's `webhook_secret` in. */
export const SECRET_HEADER = 'x-kb-webhook-secret';
/** Data Center's signature header: `sha256=` and the hex HMAC-SHA256 of the body. */
export const SIGNATURE_HEADER = 'x-hub-signature';

/** `{{content.type}}` says `page` or `blogpost`; other spellings a person may type are taken too. */
const TABLE_OF_TYPE: Record<string, string> = {
  page: PAGES_TABLE,
  pages: PAGES_TABLE,
  blogpost: BLOGPOSTS_TABLE,
  blogposts: BLOGPOSTS_TABLE,
  blog_post: BLOGPOSTS_TABLE,
  blog: BLOGPOSTS_TABLE,
};

/** Event names that say the document left (Data Center's `page_trashed`, an Automation "Page deleted"). */
const GONE = /trash|delet|remov|archiv|purg/i;

/** Content ids are numbers; smart values render them as strings. */
const contentIdSchema = z
  .union([
    z
      .string()
      .trim()
      .regex(/^\d{1,30}$/),
    z.number().int().nonnegative(),
  ])
  .transform(String);

const eventSchema = z.looseObject({
  site: z.string().min(1).max(300),
  contentType: z.string().trim().min(1).max(40),
  contentId: contentIdSchema,
  event: z.string().max(100).optional(),
  at: z.string().trim().min(1).max(100),
});
type WikiEvent = z.infer<typeof eventSchema>;

function readBody(req: WebhookRequest): unknown {
  try {
    return JSON.parse(req.rawBody.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The host a `site` value names: `acme`, `acme.atlassian.net`, `https://acme.atlassian.net/wiki`. */
export function siteHostOf(site: string): string | null {
  const trimmed = site.trim();
  let host = trimmed;
  if (/^https?:\/\//i.test(trimmed)) {
    try {
      host = new URL(trimmed).hostname;
    } catch {
      return null;
    }
  }
  try {
    return normalizeSiteHost('site', host, 'atlassian.net');
  } catch {
    return null;
  }
}

/** `X-Hub-Signature` of `rawBody` keyed with `secret`, as Data Center writes it. */
export function hubSignature(secret: string, rawBody: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** Equal strings, compared in constant time whatever their lengths (their digests are compared). */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function signatureMatches(req: WebhookRequest, signature: string, secret: string): boolean {
  const m = /^sha256=([0-9a-f]{64})$/i.exec(signature.trim());
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(req.rawBody).digest();
  return timingSafeEqual(Buffer.from(m[1]!, 'hex'), expected);
}

export const wikiWebhooks: SourceWebhooks<WikiCredentials> = {
  accountOf(req) {
    const body = readBody(req);
    if (!body || typeof body !== 'object' || !('site' in body) || typeof body.site !== 'string') return null;
    return siteHostOf(body.site);
  },

  connectionAccount(credentials) {
    return credentials.domain_name;
  },

  signingSecrets({ credentials }) {
    return credentials.webhook_secret ? [credentials.webhook_secret] : [];
  },

  verify(req, secret) {
    if (!secret) return 'bad_signature';
    const signature = req.headers[SIGNATURE_HEADER];
    if (signature !== undefined) return signatureMatches(req, signature, secret) ? 'valid' : 'bad_signature';
    const given = req.headers[SECRET_HEADER];
    if (given === undefined || given === '') return 'bad_signature';
    return sameSecret(given.trim(), secret) ? 'valid' : 'bad_signature';
  },

  parse(req) {
    const event = eventSchema.safeParse(readBody(req));
    if (!event.success) throw notAnEvent();
    return messageOf(event.data, req.rawBody);
  },
};

function notAnEvent(): AppError {
  return new AppError(
    'invalid_request',
    'The body is not a Confluence change notification: a JSON object with site, contentType (page or blogpost), contentId and at, as the Automation rule of docs/sources/wiki.md sends.',
  );
}

function messageOf(event: WikiEvent, rawBody: Buffer): WebhookMessage {
  const eventId = `body-sha256:${createHash('sha256').update(rawBody).digest('hex').slice(0, 40)}`;
  const table = TABLE_OF_TYPE[event.contentType.toLowerCase()];
  // Comments, attachments, spaces: nothing an item shows.
  if (!table) return { kind: 'ignored', eventId };
  const change: ChangedDocument = {
    table,
    externalId: event.contentId,
    deleted: event.event !== undefined && GONE.test(event.event),
  };
  const occurredAt = automationTime(event.at);
  return { kind: 'changes', eventId, ...(occurredAt ? { occurredAt } : {}), changes: [change] };
}

/**
 * `{{now}}` as Automation renders it (`2026-11-28T08:00:00.0+0000`: an offset without a colon, which
 * `Date.parse` refuses), as ISO 8601; undefined when it is not a time.
 */
function automationTime(at: string): string | undefined {
  const iso = at.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}
