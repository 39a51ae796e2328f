/**
 * Sends an organization's webhook events to its endpoints. The events are delivery rows the triggers of
 * migration 023 wrote with their cause; this task (every worker process runs it) leases an endpoint whose
 * first pending delivery is due, sends that endpoint's deliveries one after another in their order,
 * signed per Standard Webhooks, and records each attempt. A failure holds the endpoint's later deliveries
 * back (their order) until it succeeds or is given up (webhook-retry.ts); an endpoint that failed every
 * attempt for `disableAfterMs` is disabled, with the reason on the endpoint and a warning in the log.
 *
 * It also turns the items indexed since its last run into `items.indexed` events: one per organization
 * and run (a bounded number of items each), so a sync of ten thousand documents makes tens of events,
 * not ten thousand.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';
import {
  disableWebhookEndpoint,
  emitWebhookEvent,
  type IndexedItemRow,
  type LeasedEndpoint,
  leaseDueEndpoints,
  nextPendingDeliveries,
  type QueuedDelivery,
  recordDeliveryAttempt,
  releaseEndpointLease,
  takeIndexedItems,
} from '../db/repositories/webhooks.ts';
import type { Logger } from '../lib/logger.ts';
import { signWebhook } from '../lib/webhook-signature.ts';
import type { OutboundFetch } from '../net/outbound.ts';
import type { PeriodicTask } from './registry.ts';
import type { SourceServices } from './source-services.ts';
import { isDelivered, WEBHOOK_RETRY_DELAYS_MS, webhookRetryDelayMs } from './webhook-retry.ts';

/** The event types an endpoint can ask for (written by migration 023's triggers and the flush below). */
export const WEBHOOK_EVENT_TYPES = [
  'sync.started',
  'sync.finished',
  'crawl.finished',
  'items.indexed',
  'connection.needs_consent',
] as const;

export const WEBHOOK_USER_AGENT = 'kb-webhooks/1.0';

/** The associated data an endpoint's secret is encrypted with: the ciphertext cannot move to another row. */
export function webhookSecretScope(endpointId: string): string {
  return `webhook-endpoint:${endpointId}`;
}

export interface WebhookDeliverySettings {
  /** Waits after each failed attempt (webhook-retry.ts); tests shorten them. */
  retryDelaysMs: readonly number[];
  /** An endpoint whose every attempt failed for this long is disabled. Default 24 h. */
  disableAfterMs: number;
  /** Endpoints sent to at once by one process. Default 8. */
  concurrency: number;
  /** Items listed in one `items.indexed` event at most. Default 100. */
  itemsPerEvent: number;
  /** How often the task runs. Default 500 ms. */
  everyMs: number;
  /** The clock attempts are scheduled on; tests move it hours ahead instead of waiting. */
  now: () => Date;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookDeliverySettings = {
  retryDelaysMs: WEBHOOK_RETRY_DELAYS_MS,
  disableAfterMs: 24 * 3_600_000,
  concurrency: 8,
  itemsPerEvent: 100,
  everyMs: 500,
  now: () => new Date(),
};

export interface WebhookDeliveryDeps {
  db: Database;
  /** Decrypts endpoint secrets (the credential cipher). */
  sources: Pick<SourceServices, 'decryptCredentials'>;
  /** The guarded fetch (the crawler's address policy), without redirects. */
  fetch: OutboundFetch;
  log: Logger;
  settings: WebhookDeliverySettings;
}

/** A lease outlives the slowest attempt (the fetch's deadline) with room to spare; each attempt renews it. */
const LEASE_MS = 120_000;
/** Deliveries read per query; an endpoint is given back after this many rounds so others get a turn. */
const DELIVERY_BATCH = 50;
const ROUNDS_PER_LEASE = 4;

/** What one run did (tests and the benchmark read it). */
export interface DeliveryRunOutcome {
  delivered: number;
  failed: number;
  disabled: string[];
}

/** Items indexed since the last call become `items.indexed` events; returns the events emitted. */
export async function flushIndexedItems(db: Database, opts: { itemsPerEvent: number }): Promise<number> {
  let events = 0;
  for (;;) {
    const emitted = await db.transaction(async (tx) => {
      const taken = await takeIndexedItems(tx, 20 * opts.itemsPerEvent);
      const byOrg = new Map<string, IndexedItemRow[]>();
      for (const row of taken) byOrg.set(row.organizationId, [...(byOrg.get(row.organizationId) ?? []), row]);
      let n = 0;
      for (const [organizationId, rows] of byOrg) {
        for (let i = 0; i < rows.length; i += opts.itemsPerEvent) {
          const items = rows.slice(i, i + opts.itemsPerEvent).map((r) => ({
            id: r.itemId,
            sourceType: r.sourceType,
            connectionId: r.connectionId,
            crawlId: r.crawlJobId,
          }));
          await emitWebhookEvent(tx, organizationId, 'items.indexed', { count: items.length, items });
          n++;
        }
      }
      return { n, more: taken.length === 20 * opts.itemsPerEvent };
    });
    events += emitted.n;
    if (!emitted.more) return events;
  }
}

/** Sends every delivery due now, `concurrency` endpoints at a time. */
export async function deliverDueWebhooks(deps: WebhookDeliveryDeps): Promise<DeliveryRunOutcome> {
  const outcome: DeliveryRunOutcome = { delivered: 0, failed: 0, disabled: [] };
  const leaseToken = randomBytes(12).toString('base64url');
  // Endpoints where this run made no progress (a secret that cannot be decrypted, a lease taken over):
  // not leased again by this run, or it would spin on them.
  const stuck: string[] = [];
  const lane = async () => {
    for (;;) {
      const [endpoint] = await leaseDueEndpoints(deps.db, {
        now: deps.settings.now(),
        leaseToken,
        leaseMs: LEASE_MS,
        limit: 1,
        exclude: stuck,
      });
      if (!endpoint) return;
      try {
        const before = outcome.delivered + outcome.failed;
        await deliverToEndpoint(deps, endpoint, leaseToken, outcome);
        if (outcome.delivered + outcome.failed === before) stuck.push(endpoint.id);
      } finally {
        await releaseEndpointLease(deps.db, endpoint.id, leaseToken);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, deps.settings.concurrency) }, lane));
  return outcome;
}

/** The endpoint's due deliveries in order, until one fails, none is due or its turn is over. */
async function deliverToEndpoint(
  deps: WebhookDeliveryDeps,
  endpoint: LeasedEndpoint,
  leaseToken: string,
  outcome: DeliveryRunOutcome,
): Promise<void> {
  let secret: string;
  try {
    secret = String(
      deps.sources.decryptCredentials(webhookSecretScope(endpoint.id), endpoint.secretEncrypted).secret,
    );
  } catch {
    deps.log.error({ endpointId: endpoint.id }, 'webhook endpoint secret cannot be decrypted; not sending');
    return;
  }
  for (let round = 0; round < ROUNDS_PER_LEASE; round++) {
    const queued = await nextPendingDeliveries(deps.db, endpoint.id, DELIVERY_BATCH);
    for (const delivery of queued) {
      const at = deps.settings.now();
      if (delivery.nextAttemptAt.getTime() > at.getTime()) return;
      const next = await attemptDelivery(deps, { endpoint, delivery, secret, leaseToken, at });
      if (next === 'stop') return;
      if (next === 'delivered') outcome.delivered++;
      else outcome.failed++;
      if (next === 'disabled') {
        outcome.disabled.push(endpoint.id);
        return;
      }
      if (next === 'retry') return;
    }
    if (queued.length < DELIVERY_BATCH) return;
  }
}

/** Sends one delivery and records the attempt; says what the endpoint's loop does next. */
async function attemptDelivery(
  deps: WebhookDeliveryDeps,
  a: { endpoint: LeasedEndpoint; delivery: QueuedDelivery; secret: string; leaseToken: string; at: Date },
): Promise<'delivered' | 'given-up' | 'retry' | 'disabled' | 'stop'> {
  const { endpoint, delivery, at } = a;
  const sent = await send(deps.fetch, endpoint.url, delivery, a.secret, at);
  const failedAttempts = delivery.attempts + 1;
  const wait = sent.ok ? null : webhookRetryDelayMs(failedAttempts, deps.settings.retryDelaysMs);
  const status = sent.ok ? 'succeeded' : wait === null ? 'failed' : 'pending';
  const recorded = await deps.db.transaction((tx) =>
    recordDeliveryAttempt(tx, {
      endpointId: endpoint.id,
      leaseToken: a.leaseToken,
      seq: delivery.seq,
      at,
      status,
      statusCode: sent.statusCode,
      error: sent.error,
      nextAttemptAt: wait === null ? null : new Date(at.getTime() + wait),
      leaseUntil: new Date(deps.settings.now().getTime() + LEASE_MS),
    }),
  );
  if (!recorded) return 'stop';
  if (sent.ok) return 'delivered';
  const failingFor = recorded.failingSince ? at.getTime() - recorded.failingSince.getTime() : 0;
  if (failingFor >= deps.settings.disableAfterMs) {
    const hours = Math.round(deps.settings.disableAfterMs / 360_000) / 10;
    const reason = `Disabled by the service: every delivery attempt failed for ${hours} h (last: ${sent.error}). Fix the endpoint and enable it again; its pending deliveries are then sent in order.`;
    await disableWebhookEndpoint(deps.db, endpoint.id, { reason, at });
    deps.log.warn(
      { endpointId: endpoint.id, organizationId: endpoint.organizationId, lastError: sent.error },
      'webhook endpoint disabled after failing continuously',
    );
    return 'disabled';
  }
  return status === 'failed' ? 'given-up' : 'retry';
}

/** One POST, signed; never throws. The error text names no secret (URLs are redacted by the fetch). */
async function send(
  fetch: OutboundFetch,
  url: string,
  delivery: QueuedDelivery,
  secret: string,
  at: Date,
): Promise<{ ok: boolean; statusCode: number | null; error: string | null }> {
  const timestamp = Math.floor(at.getTime() / 1000);
  try {
    const res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      maxBytes: 4096,
      body: delivery.body,
      headers: {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'webhook-id': delivery.messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook({ secret, id: delivery.messageId, timestamp, body: delivery.body }),
      },
    });
    if (isDelivered(res.status)) return { ok: true, statusCode: res.status, error: null };
    const error =
      res.status >= 300 && res.status < 400
        ? `the endpoint answered a redirect (HTTP ${res.status}); webhooks do not follow redirects`
        : `the endpoint answered HTTP ${res.status}`;
    return { ok: false, statusCode: res.status, error };
  } catch (err) {
    return { ok: false, statusCode: null, error: (err as Error).message.slice(0, 500) };
  }
}

/** The periodic task every worker process runs: batch indexed items into events, then deliver. */
export function webhookDeliveryTask(deps: WebhookDeliveryDeps): PeriodicTask {
  return {
    name: 'webhook-delivery',
    everyMs: deps.settings.everyMs,
    run: async () => {
      await flushIndexedItems(deps.db, { itemsPerEvent: deps.settings.itemsPerEvent });
      await deliverDueWebhooks(deps);
    },
  };
}
