/**
 * Notion's integration webhooks (developers.notion.com/reference/webhooks and
 * /reference/webhooks-events-delivery; payload types in makenotion/notion-sdk-js
 * `src/api-endpoints/webhooks.ts`, signature check in its `src/webhooks.ts`).
 *
 * Set-up: Notion has no API to subscribe. The integration's owner adds the service's URL in the
 * integration's **Webhooks** tab; Notion then POSTs `{"verification_token": "secret_..."}`, unsigned, to
 * it (a `handshake`: the route keeps the token, pending), and the owner takes it from the service
 * (`kb webhooks verification-token notion`, which also makes it trusted) and pastes it back into Notion's
 * **Verify** form to switch deliveries on.
 *
 * Proof: every later delivery carries `X-Notion-Signature: sha256=<hex>`, the HMAC-SHA256 of the raw body
 * keyed with that verification token, compared here in constant time. Which tokens may have signed: the
 * ones handshakes delivered and an operator trusted (a public integration has one subscription, hence one
 * token, for every workspace that installed it; an untrusted handshake could be anyone's) and the
 * connection's own `webhook_verification_token` when it set one.
 *
 * Replay: Notion signs no header time, but the signed body holds the event's `id` (the same on each of its
 * up to 8 delivery attempts) and `timestamp` (when the event happened). A replay within the window is
 * the same event id, which the receiver records once; past {@link REPLAY_WINDOW_MS} a signed body is
 * refused as stale. The window is wide because Notion's retries of an event keep its first timestamp
 * (and Notion does not document how far apart its attempts are), and a replay can only make the service
 * read again what it would read anyway: events never carry content.
 *
 * The account of an event is its `workspace_id`; a connection's is the `workspace_id` its credential check
 * learned from `GET /v1/users/me` (index.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import type { ChangedDocument, SourceWebhooks, WebhookMessage, WebhookRequest } from '../types.ts';
import { canon, TABLE_DATA_SOURCES, TABLE_PAGES, TABLE_ROWS } from './sync.ts';

/** How old a signed event may be (its `timestamp`): longer than any retry of it. */
export const REPLAY_WINDOW_MS = 3 * 24 * 60 * 60_000;
/** How far ahead of our clock an event's time may be (clock skew). */
const FUTURE_SKEW_MS = 5 * 60_000;

const SIGNATURE_HEADER = 'x-notion-signature';
const SIGNATURE_PREFIX = 'sha256=';

/** The credentials' part webhooks read (index.ts `NotesCredentials`). */
export interface NotesWebhookCredentials {
  workspace_id?: string;
  webhook_verification_token?: string;
}

const handshakeSchema = z.object({ verification_token: z.string().min(1).max(4096) });

const idSchema = z.string().min(1).max(100);
const parentSchema = z.looseObject({
  id: idSchema.optional(),
  type: z.string().optional(),
  data_source_id: idSchema.nullish(),
});
const eventSchema = z.looseObject({
  id: idSchema,
  type: z.string().min(1).max(200),
  timestamp: z.string().optional(),
  workspace_id: idSchema,
  entity: z.looseObject({ id: idSchema, type: z.string() }),
  data: z
    .looseObject({
      parent: parentSchema.nullish(),
      updated_blocks: z
        .array(z.looseObject({ id: idSchema, type: z.string() }))
        .max(1000)
        .nullish(),
    })
    .nullish(),
});
type NotionEvent = z.infer<typeof eventSchema>;

/** Page events that mean "read this page again"; `page.deleted` is the one that says it is gone. */
const PAGE_CHANGES = new Set([
  'page.created',
  'page.content_updated',
  'page.properties_updated',
  'page.moved',
  'page.undeleted',
  'page.deleted',
]);
/** Events about the rows of a database or data source (the older name, then the 2025-09-03 one). */
const CONTENT_CHANGES = new Set(['database.content_updated', 'data_source.content_updated']);

export const notesWebhooks: SourceWebhooks<NotesWebhookCredentials> = {
  accountOf(req) {
    const body = tryJson(req);
    const workspace = z.looseObject({ workspace_id: idSchema }).safeParse(body);
    return workspace.success ? canon(workspace.data.workspace_id) : null;
  },

  connectionAccount(credentials) {
    // A connection whose check predates webhooks has no workspace id yet: it matches no event until its
    // credentials are checked again (docs/sources/notes.md).
    return credentials.workspace_id ? canon(credentials.workspace_id) : '';
  },

  // `handshakeSecrets` are only those an operator trusted: a pending one proves nothing.
  signingSecrets({ credentials, handshakeSecrets }) {
    const own = credentials.webhook_verification_token;
    return [...new Set([...(own ? [own] : []), ...handshakeSecrets])];
  },

  verify(req, secret, { now }) {
    if (!signatureMatches(req, secret)) return 'bad_signature';
    const time = eventTime(req);
    if (time !== null && (time < now - REPLAY_WINDOW_MS || time > now + FUTURE_SKEW_MS)) return 'stale';
    return 'valid';
  },

  parse(req) {
    const body = readJson(req);
    const handshake = handshakeSchema.safeParse(body);
    if (handshake.success && !isEvent(body)) {
      return { kind: 'handshake', secret: handshake.data.verification_token };
    }
    const event = eventSchema.safeParse(body);
    if (!event.success) {
      throw new AppError(
        'invalid_request',
        'The body is neither a Notion webhook event (id, type, workspace_id, entity) nor a verification request.',
      );
    }
    return messageOf(event.data);
  },
};

/** What one verified event asks for. */
function messageOf(event: NotionEvent): WebhookMessage {
  const occurredAt = event.timestamp ? { occurredAt: event.timestamp } : {};
  const changes = changesOf(event);
  if (changes.length === 0) return { kind: 'ignored', eventId: event.id };
  return { kind: 'changes', eventId: event.id, ...occurredAt, changes };
}

/**
 * The documents an event names. Page events name their page (a row when its parent is a database or
 * data source). A database's content event names the rows it lists in `updated_blocks`, or, when it lists
 * none, the data source itself: syncChanged then reads its recently edited rows. Everything else
 * (comments, views, file uploads, schema changes, locks, a database created, moved or deleted) changes no
 * document the service holds by itself, and the scheduled sync still sees it.
 */
function changesOf(event: NotionEvent): ChangedDocument[] {
  if (PAGE_CHANGES.has(event.type) && event.entity.type === 'page') {
    const parent = event.data?.parent;
    const row = parent?.type === 'database' || parent?.type === 'data_source' || !!parent?.data_source_id;
    return [
      {
        table: row ? TABLE_ROWS : TABLE_PAGES,
        externalId: canon(event.entity.id),
        deleted: event.type === 'page.deleted',
      },
    ];
  }
  if (CONTENT_CHANGES.has(event.type) && event.entity.type !== 'block') {
    const rows = (event.data?.updated_blocks ?? []).filter((b) => b.type === 'page');
    if (rows.length > 0) {
      return rows.map((b) => ({ table: TABLE_ROWS, externalId: canon(b.id), deleted: false }));
    }
    return [{ table: TABLE_DATA_SOURCES, externalId: canon(event.entity.id), deleted: false }];
  }
  return [];
}

/** Whether the body is an event, whatever else it holds (a handshake carries only its token). */
function isEvent(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'type' in body && 'entity' in body;
}

function readJson(req: WebhookRequest): unknown {
  const body = tryJson(req);
  if (body === undefined) throw new AppError('invalid_request', 'The body of a Notion webhook must be JSON.');
  return body;
}

/** The body as JSON, or undefined when it is not JSON. */
function tryJson(req: WebhookRequest): unknown {
  try {
    return JSON.parse(req.rawBody.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The signed body's `timestamp` (ms), or null when it has none that parses. */
function eventTime(req: WebhookRequest): number | null {
  const parsed = z.looseObject({ timestamp: z.string() }).safeParse(tryJson(req));
  if (!parsed.success) return null;
  const ms = Date.parse(parsed.data.timestamp);
  return Number.isFinite(ms) ? ms : null;
}

/** `X-Notion-Signature` against the HMAC-SHA256 of the raw body, in constant time. */
function signatureMatches(req: WebhookRequest, secret: string): boolean {
  const header = req.headers[SIGNATURE_HEADER];
  if (!header?.startsWith(SIGNATURE_PREFIX) || !secret) return false;
  const given = header.slice(SIGNATURE_PREFIX.length).trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(given)) return false;
  const expected = createHmac('sha256', secret).update(req.rawBody).digest();
  return timingSafeEqual(Buffer.from(given, 'hex'), expected);
}
