/**
 * A connection's side of its source's change notifications: the account it receives them for (recorded
 * with the connection, so a notification finds its candidates by index), and the subscription the
 * service makes at the source when it has a public URL (Shopify's webhook subscriptions), removed on
 * disconnect. A subscription that fails never fails the connection: the scheduled sync remains.
 */
import type { AnyConnector, WebhookSubscription } from '../connectors/types.ts';
import type { Database, Queryable } from '../db/database.ts';
import {
  connectionsWithoutWebhookAccount,
  getWebhookSubscription,
  saveWebhookAccount,
  saveWebhookSubscription,
  type WebhookCandidate,
} from '../db/repositories/source-events.ts';
import type { Logger } from '../lib/logger.ts';
import type { SourceServices } from './source-services.ts';
import { redactSecrets } from '../connectors/credential-check.ts';
import { secretValues } from './source-services.ts';

/** The bound of one subscribe or unsubscribe call (it runs inside the create or delete request). */
const SUBSCRIBE_TIMEOUT_MS = 15_000;

/** The path change notifications of a source type arrive at. */
export function sourceWebhookPath(type: string): string {
  return `/api/connect/webhooks/${type}`;
}

/** The associated data a subscription's secret is encrypted with. */
export function subscriptionSecretAad(connectionId: string): string {
  return `source-webhook-subscription:${connectionId}`;
}

/** The associated data a handshake's secret is encrypted with. */
export function handshakeSecretAad(id: string): string {
  return `source-webhook-handshake:${id}`;
}

/** Records the account a connection receives notifications for (in the connection's transaction). */
export async function recordWebhookAccount(
  q: Queryable,
  c: { connectionId: string; organizationId: string; connector: AnyConnector; credentials: object },
): Promise<void> {
  const hooks = c.connector.webhooks;
  if (!hooks) return;
  await saveWebhookAccount(q, {
    connectionId: c.connectionId,
    organizationId: c.organizationId,
    sourceType: c.connector.type,
    account: hooks.connectionAccount(c.credentials),
  });
}

/**
 * Records the accounts of a source type's connections made before notifications existed (once each:
 * afterwards they have one), so their notifications are recognized.
 */
export async function recordMissingWebhookAccounts(
  db: Database,
  sources: SourceServices,
  connector: AnyConnector,
): Promise<void> {
  for (;;) {
    const missing: WebhookCandidate[] = await connectionsWithoutWebhookAccount(db, connector.type, 100);
    if (missing.length === 0) return;
    for (const c of missing) {
      const credentials = sources.decryptCredentials(c.connectionId, c.credentialsEncrypted);
      await recordWebhookAccount(db, { ...c, connector, credentials });
    }
    if (missing.length < 100) return;
  }
}

/** The connector's subscribe step and the public URL, when the service subscribes (see {@link subscribesTo}). */
function howToSubscribe(connector: AnyConnector, publicUrl: string | undefined) {
  const subscribe = connector.webhooks?.subscribe;
  return subscribe && publicUrl ? { subscribe, publicUrl } : null;
}

/**
 * Whether the service subscribes a connection of this source to its change notifications: the connector
 * can subscribe and the service has a public URL for the vendor to call. A consent asks for what
 * subscribing needs by the same rule.
 */
export function subscribesTo(connector: AnyConnector, publicUrl: string | undefined): boolean {
  return howToSubscribe(connector, publicUrl) !== null;
}

/**
 * Subscribes a connection to its source's change notifications when the service does ({@link subscribesTo})
 * and the connection has no subscription yet (a rotation of credentials keeps the one it has); a failure
 * is logged (never with a secret) and changes nothing else.
 */
export async function subscribeConnection(
  deps: { db: Database; sources: SourceServices; log: Logger; publicUrl: string | undefined },
  c: { connectionId: string; organizationId: string; connector: AnyConnector; credentials: object },
): Promise<void> {
  const can = howToSubscribe(c.connector, deps.publicUrl);
  if (!can) return;
  if (await getWebhookSubscription(deps.db, c.connectionId)) return;
  const callbackUrl = `${can.publicUrl.replace(/\/+$/, '')}${sourceWebhookPath(c.connector.type)}`;
  const secrets = secretValues(c.credentials as Record<string, unknown>);
  try {
    const signal = AbortSignal.timeout(SUBSCRIBE_TIMEOUT_MS);
    const ctx = deps.sources.syncContext(c.connector, c.credentials, { signal, log: deps.log });
    const subscription: WebhookSubscription = await can.subscribe(ctx, { callbackUrl });
    await saveWebhookSubscription(deps.db, {
      connectionId: c.connectionId,
      organizationId: c.organizationId,
      ids: subscription.ids,
      secretEncrypted: subscription.secret
        ? deps.sources.cipher.encrypt(subscription.secret, subscriptionSecretAad(c.connectionId))
        : null,
      callbackUrl,
    });
    deps.log.info(
      { connectionId: c.connectionId, sourceType: c.connector.type, subscriptions: subscription.ids.length },
      'subscribed to the source’s change notifications',
    );
  } catch (err) {
    deps.log.warn(
      {
        connectionId: c.connectionId,
        sourceType: c.connector.type,
        err: redactSecrets(err instanceof Error ? err.message : String(err), secrets),
      },
      'could not subscribe to the source’s change notifications; the schedule keeps the connection current',
    );
  }
}

/** The stored subscription of a connection, its secret decrypted (read before the connection is deleted). */
export async function storedSubscription(
  q: Queryable,
  sources: SourceServices,
  connectionId: string,
): Promise<WebhookSubscription | null> {
  const stored = await getWebhookSubscription(q, connectionId);
  if (!stored) return null;
  return {
    ids: stored.ids,
    secret: stored.secretEncrypted
      ? sources.cipher.decrypt(stored.secretEncrypted, subscriptionSecretAad(connectionId))
      : null,
  };
}

/** Removes a subscription at the source after its connection was deleted; a failure is logged. */
export async function unsubscribeConnection(
  deps: { sources: SourceServices; log: Logger },
  c: {
    connectionId: string;
    connector: AnyConnector;
    credentials: object;
    subscription: WebhookSubscription;
  },
): Promise<void> {
  const unsubscribe = c.connector.webhooks?.unsubscribe;
  if (!unsubscribe) return;
  const secrets = secretValues(c.credentials as Record<string, unknown>);
  try {
    const signal = AbortSignal.timeout(SUBSCRIBE_TIMEOUT_MS);
    const ctx = deps.sources.syncContext(c.connector, c.credentials, { signal, log: deps.log });
    await unsubscribe(ctx, c.subscription);
  } catch (err) {
    deps.log.warn(
      {
        connectionId: c.connectionId,
        sourceType: c.connector.type,
        err: redactSecrets(err instanceof Error ? err.message : String(err), secrets),
      },
      'could not remove the subscription at the source; delete it there',
    );
  }
}
