import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AnyConnector, SourceWebhooks, WebhookRequest } from '../../connectors/types.ts';
import {
  addDocumentWork,
  connectionsForWebhookAccount,
  insertHandshakeSecret,
  insertSourceEvent,
  listTrustedHandshakeSecrets,
  type WebhookCandidate,
} from '../../db/repositories/source-events.ts';
import { enqueueSourceChangesJob } from '../../jobs/source-changes-job.ts';
import {
  handshakeSecretAad,
  recordMissingWebhookAccounts,
  storedSubscription,
} from '../../jobs/source-webhooks.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { App, RouteDeps } from '../context.ts';
import { errorBodySchema } from '../schemas.ts';

/** Notifications are small (Shopify's product payloads included); anything larger is refused unread. */
const MAX_NOTIFICATION_BYTES = 1024 * 1024;

/** Trusted handshake secrets tried per source type (the newest): a subscription re-verified now and then. */
const HANDSHAKE_SECRETS_TRIED = 10;

/**
 * Pending handshakes kept per source type (the newest): enough for an operator's retries, and a flood of
 * forged ones costs no more rows than this.
 */
const PENDING_HANDSHAKES_KEPT = 20;

const paramsSchema = z.object({
  type: z.string().min(1).max(64).describe('The source type (or its alias) the notification is from'),
});

const answerSchema = z
  .looseObject({ success: z.boolean().optional() })
  .describe('`{"success": true}`, or the answer a vendor handshake asks for');

/**
 * Inbound change notifications of the sources (their webhooks), public: each request is proven by the
 * vendor's own signature, checked by the connector against the secrets of the connections the request
 * names. An accepted event is stored with the work it makes, in one transaction, before the answer.
 */
export function register(app: App, deps: RouteDeps): void {
  // Signatures are computed over the raw bytes: this scope keeps the body as received, whatever its type.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: MAX_NOTIFICATION_BYTES },
      (_req, body, done) => done(null, body),
    );
    scope.withTypeProvider<ZodTypeProvider>().post(
      '/api/connect/webhooks/:type',
      {
        // A vendor's burst comes from a few addresses; every request is verified before it costs a write.
        config: { rateLimit: false },
        schema: {
          tags: ['connections'],
          summary: "Receive a source's change notification (public)",
          description:
            'No API key: the vendor signs each request (Shopify: `X-Shopify-Hmac-Sha256`, base64 HMAC-SHA256 of ' +
            'the raw body with the app secret). The connection is found from the request (shop domain, ' +
            'subdomain, workspace) and must hold a secret that proves the signature: otherwise 401 and ' +
            'nothing is stored. An accepted event is stored before the 200, deduplicated by the vendor’s ' +
            'event id, and the documents it names are read again from the source (never from the event). ' +
            "A set-up handshake (Notion's unsigned `verification_token`) is answered 200 and its token kept " +
            'pending: it proves no event until an operator takes it with ' +
            '`POST /api/admin/source-webhooks/{type}/verification-token`. ' +
            'A source type that receives no notifications: 404.',
          security: [],
          params: paramsSchema,
          response: { 200: answerSchema, 401: errorBodySchema, 404: errorBodySchema, 400: errorBodySchema },
        },
      },
      async (request) => {
        const connector = deps.sources.connectorOf(request.params.type);
        const hooks = connector?.webhooks;
        if (!connector || !hooks) {
          throw new AppError('not_found', 'This source type sends no change notifications to this service.');
        }
        const req: WebhookRequest = {
          headers: lowerCaseHeaders(request.headers),
          rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        };
        return receive(deps, connector, hooks, req);
      },
    );
  });
}

async function receive(
  deps: RouteDeps,
  connector: AnyConnector,
  hooks: SourceWebhooks<unknown>,
  req: WebhookRequest,
): Promise<Record<string, unknown>> {
  const account = hooks.accountOf(req);
  if (account === null) return handshake(deps, connector, hooks, req);
  const accepted = await verifiedConnections(deps, connector, hooks, req, account);
  const message = hooks.parse(req);
  if (message.kind === 'handshake') return handshake(deps, connector, hooks, req);
  if (message.kind === 'ignored') return { success: true };
  const queued = await deps.db.transaction(async (tx) => {
    let jobs = 0;
    // Each connection the signature proves re-reads the documents with its own credentials.
    for (const c of accepted) {
      const eventId = await insertSourceEvent(tx, {
        organizationId: c.organizationId,
        connectionId: c.connectionId,
        vendorEventId: message.eventId,
        occurredAt: validTime(message.occurredAt),
        changes: message.changes,
      });
      if (eventId === null || message.changes.length === 0) continue;
      // The job's row before the work's rows, the order the running job's own transaction takes them in
      // (its lease, then the work it finished): the other order deadlocked with a job finishing the same
      // document while its next event arrived.
      if (c.status === 'active' && (await enqueueSourceChangesJob(tx, c)) !== null) jobs++;
      await addDocumentWork(tx, { ...c, eventId, changes: message.changes });
    }
    return jobs;
  });
  if (queued > 0) deps.jobs.wake();
  return { success: true };
}

/**
 * The connections of `account` whose secrets prove the request's signature. None: 401, the same answer
 * whether the account is unknown or the signature wrong, so the route tells a stranger nothing.
 */
async function verifiedConnections(
  deps: RouteDeps,
  connector: AnyConnector,
  hooks: SourceWebhooks<unknown>,
  req: WebhookRequest,
  account: string,
): Promise<WebhookCandidate[]> {
  let candidates = await connectionsForWebhookAccount(deps.db, connector.type, account);
  if (candidates.length === 0) {
    await recordMissingWebhookAccounts(deps.db, deps.sources, connector);
    candidates = await connectionsForWebhookAccount(deps.db, connector.type, account);
  }
  const settings = deps.sources.webhookSettings(connector.type);
  const handshakeSecrets = candidates.length > 0 ? await handshakeSecretsOf(deps, connector.type) : [];
  const now = Date.now();
  const accepted: WebhookCandidate[] = [];
  let stale = false;
  for (const c of candidates) {
    const credentials = deps.sources.decryptCredentials(c.connectionId, c.credentialsEncrypted);
    const subscription = await storedSubscription(deps.db, deps.sources, c.connectionId);
    const secrets = hooks.signingSecrets({ credentials, subscription, settings, handshakeSecrets });
    const verdicts = secrets.map((secret) => hooks.verify(req, secret, { now }));
    if (verdicts.includes('valid')) accepted.push(c);
    else if (verdicts.includes('stale')) stale = true;
  }
  if (accepted.length > 0) return accepted;
  throw new AppError(
    'unauthorized',
    stale
      ? 'The notification is outside the replay window; it was not accepted.'
      : 'The notification’s signature does not match a connection of this service; it was not accepted.',
  );
}

/**
 * A vendor's set-up handshake: its secret is kept encrypted and pending (it came unsigned, so anyone may
 * have sent it) until an operator takes it with the admin API; answers its reply either way.
 */
async function handshake(
  deps: RouteDeps,
  connector: AnyConnector,
  hooks: SourceWebhooks<unknown>,
  req: WebhookRequest,
): Promise<Record<string, unknown>> {
  const message = hooks.parse(req);
  if (message.kind !== 'handshake') {
    throw new AppError(
      'unauthorized',
      'The notification names no account of this service; it was not accepted.',
    );
  }
  if (message.secret) {
    const id = newId();
    const secretEncrypted = deps.sources.cipher.encrypt(message.secret, handshakeSecretAad(id));
    await deps.db.transaction((tx) =>
      insertHandshakeSecret(tx, {
        id,
        sourceType: connector.type,
        secretEncrypted,
        keepPending: PENDING_HANDSHAKES_KEPT,
      }),
    );
  }
  const reply = message.reply;
  return reply !== null && typeof reply === 'object' ? (reply as Record<string, unknown>) : { success: true };
}

/** The handshake secrets an operator trusted, newest first. */
async function handshakeSecretsOf(deps: RouteDeps, type: string): Promise<string[]> {
  const rows = await listTrustedHandshakeSecrets(deps.db, type, HANDSHAKE_SECRETS_TRIED);
  return rows.map((r) => deps.sources.cipher.decrypt(r.secretEncrypted, handshakeSecretAad(r.id)));
}

function lowerCaseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** The vendor's event time when it is one; an unreadable one is not worth refusing the event for. */
function validTime(value: string | undefined): string | null {
  if (!value) return null;
  return Number.isNaN(Date.parse(value)) ? null : new Date(value).toISOString();
}
