/**
 * Outbound webhooks: an organization's endpoints, their deliveries (the queue the delivery task works
 * off, one endpoint at a time under a lease, in `seq` order) and the items indexed since the last
 * `items.indexed` events. The events themselves are written by the triggers of migration 023.
 */
import type { Queryable } from '../database.ts';

const ISO = (expr: string) =>
  `CASE WHEN ${expr} IS NULL THEN NULL ELSE to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END`;

/** An endpoint as the API shows it: never its secret. */
export interface WebhookEndpointView {
  id: string;
  url: string;
  description: string | null;
  /** The event types delivered; null: every type. */
  events: string[] | null;
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  failingSince: string | null;
  createdAt: string;
}

const ENDPOINT_VIEW = `SELECT id, url, description, event_types AS events, enabled,
    disabled_reason AS "disabledReason", ${ISO('disabled_at')} AS "disabledAt",
    ${ISO('failing_since')} AS "failingSince", ${ISO('created_at')} AS "createdAt"
  FROM webhook_endpoints`;

export async function insertWebhookEndpoint(
  q: Queryable,
  e: {
    id: string;
    organizationId: string;
    url: string;
    description: string | null;
    events: string[] | null;
    secretEncrypted: string;
  },
): Promise<WebhookEndpointView> {
  await q.query(
    `INSERT INTO webhook_endpoints (id, organization_id, url, description, event_types, secret_encrypted)
       VALUES ($1, $2, $3, $4, $5, $6)`,
    [e.id, e.organizationId, e.url, e.description, e.events, e.secretEncrypted],
  );
  return (await getWebhookEndpoint(q, e.organizationId, e.id))!;
}

export async function listWebhookEndpoints(
  q: Queryable,
  organizationId: string,
): Promise<WebhookEndpointView[]> {
  return q.query<WebhookEndpointView>(`${ENDPOINT_VIEW} WHERE organization_id = $1 ORDER BY created_at, id`, [
    organizationId,
  ]);
}

export async function getWebhookEndpoint(
  q: Queryable,
  organizationId: string,
  id: string,
): Promise<WebhookEndpointView | null> {
  const rows = await q.query<WebhookEndpointView>(`${ENDPOINT_VIEW} WHERE organization_id = $1 AND id = $2`, [
    organizationId,
    id,
  ]);
  return rows[0] ?? null;
}

/** Deletes the endpoint and its deliveries; false when the organization has no such endpoint. */
export async function deleteWebhookEndpoint(
  q: Queryable,
  organizationId: string,
  id: string,
): Promise<boolean> {
  const rows = await q.query(
    'DELETE FROM webhook_endpoints WHERE organization_id = $1 AND id = $2 RETURNING id',
    [organizationId, id],
  );
  return rows.length > 0;
}

/**
 * Changes what the caller sent. Enabling clears the reason it was disabled and its failure streak, so its
 * pending deliveries are tried again at once. False when the organization has no such endpoint.
 */
export async function updateWebhookEndpoint(
  q: Queryable,
  organizationId: string,
  id: string,
  change: { enabled?: boolean; events?: string[] | null; description?: string | null },
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE webhook_endpoints SET
        enabled = COALESCE($3, enabled),
        disabled_reason = CASE WHEN $3 THEN NULL ELSE disabled_reason END,
        disabled_at = CASE WHEN $3 THEN NULL WHEN $3 = false AND enabled THEN now() ELSE disabled_at END,
        failing_since = CASE WHEN $3 THEN NULL ELSE failing_since END,
        event_types = CASE WHEN $4 THEN $5::text[] ELSE event_types END,
        description = CASE WHEN $6 THEN $7 ELSE description END,
        updated_at = now()
      WHERE organization_id = $1 AND id = $2 RETURNING id`,
    [
      organizationId,
      id,
      change.enabled ?? null,
      change.events !== undefined,
      change.events ?? null,
      change.description !== undefined,
      change.description ?? null,
    ],
  );
  if (rows.length > 0 && change.enabled) {
    await q.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_id = $1 AND status = 'pending'`,
      [id],
    );
  }
  return rows.length > 0;
}

/** One delivery as the log shows it. */
export interface WebhookDeliveryView {
  id: string;
  messageId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

/** The endpoint's latest deliveries, newest first. */
export async function listWebhookDeliveries(
  q: Queryable,
  endpointId: string,
  limit: number,
): Promise<WebhookDeliveryView[]> {
  return q.query<WebhookDeliveryView>(
    `SELECT id, message_id AS "messageId", event_type AS "eventType", status, attempts,
            last_status_code AS "lastStatusCode", last_error AS "lastError",
            CASE WHEN status = 'pending' THEN ${ISO('next_attempt_at')} END AS "nextAttemptAt",
            ${ISO('last_attempt_at')} AS "lastAttemptAt", ${ISO('delivered_at')} AS "deliveredAt",
            ${ISO('created_at')} AS "createdAt"
       FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY seq DESC LIMIT $2`,
    [endpointId, limit],
  );
}

/** An endpoint a delivery task holds. */
export interface LeasedEndpoint {
  id: string;
  organizationId: string;
  url: string;
  secretEncrypted: string;
  failingSince: Date | null;
}

/**
 * Leases up to `limit` enabled endpoints whose first pending delivery is due at `now` and that no live
 * task holds. SKIP LOCKED: concurrent tasks (other processes) take other endpoints.
 */
export async function leaseDueEndpoints(
  q: Queryable,
  opts: { now: Date; leaseToken: string; leaseMs: number; limit: number; exclude?: readonly string[] },
): Promise<LeasedEndpoint[]> {
  return q.query<LeasedEndpoint>(
    `UPDATE webhook_endpoints SET lease_token = $2, lease_until = $1::timestamptz + make_interval(secs => $3)
      WHERE id IN (
        SELECT e.id FROM webhook_endpoints e
         WHERE e.enabled AND NOT (e.id = ANY ($5::text[])) AND (e.lease_until IS NULL OR e.lease_until < $1::timestamptz)
           AND (SELECT d.next_attempt_at FROM webhook_deliveries d
                 WHERE d.endpoint_id = e.id AND d.status = 'pending' ORDER BY d.seq LIMIT 1) <= $1::timestamptz
         ORDER BY e.lease_until NULLS FIRST, e.id
         LIMIT $4 FOR UPDATE SKIP LOCKED)
      RETURNING id, organization_id AS "organizationId", url, secret_encrypted AS "secretEncrypted",
                failing_since AS "failingSince"`,
    [opts.now, opts.leaseToken, opts.leaseMs / 1000, opts.limit, opts.exclude ?? []],
  );
}

/** Gives the endpoint back (when `leaseToken` still holds it). */
export async function releaseEndpointLease(q: Queryable, id: string, leaseToken: string): Promise<void> {
  await q.query(
    'UPDATE webhook_endpoints SET lease_token = NULL, lease_until = NULL WHERE id = $1 AND lease_token = $2',
    [id, leaseToken],
  );
}

/** A delivery about to be sent. */
export interface QueuedDelivery {
  seq: number;
  id: string;
  messageId: string;
  body: string;
  attempts: number;
  nextAttemptAt: Date;
}

/** The endpoint's next pending deliveries in order (the first may not be due yet). */
export async function nextPendingDeliveries(
  q: Queryable,
  endpointId: string,
  limit: number,
): Promise<QueuedDelivery[]> {
  const rows = await q.query<QueuedDelivery & { seq: string | number }>(
    `SELECT seq, id, message_id AS "messageId", body, attempts, next_attempt_at AS "nextAttemptAt"
       FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending' ORDER BY seq LIMIT $2`,
    [endpointId, limit],
  );
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

/** How one attempt went, as the delivery task records it. */
export interface AttemptRecord {
  endpointId: string;
  leaseToken: string;
  seq: number;
  at: Date;
  /** `succeeded`, `failed` (given up) or `pending` (to be tried at `nextAttemptAt`). */
  status: 'succeeded' | 'failed' | 'pending';
  statusCode: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
  /** The endpoint's lease runs until then. */
  leaseUntil: Date;
}

/**
 * Records an attempt, while `leaseToken` still holds the endpoint (else nothing changes: another task
 * took it over). A success ends the endpoint's failure streak; a failure starts one. Returns the streak's
 * start after the write, or undefined when the lease was lost.
 */
export async function recordDeliveryAttempt(
  q: Queryable,
  a: AttemptRecord,
): Promise<{ failingSince: Date | null } | undefined> {
  const held = await q.query<{ failingSince: Date | null }>(
    `UPDATE webhook_endpoints SET lease_until = $3,
            failing_since = CASE WHEN $4 = 'succeeded' THEN NULL ELSE COALESCE(failing_since, $5::timestamptz) END
      WHERE id = $1 AND lease_token = $2 RETURNING failing_since AS "failingSince"`,
    [a.endpointId, a.leaseToken, a.leaseUntil, a.status, a.at],
  );
  if (held.length === 0) return undefined;
  await q.query(
    `UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, last_attempt_at = $3,
            last_status_code = $4, last_error = $5, next_attempt_at = COALESCE($6, next_attempt_at),
            delivered_at = CASE WHEN $2 = 'succeeded' THEN $3::timestamptz END
      WHERE seq = $1`,
    [a.seq, a.status, a.at, a.statusCode, a.error, a.nextAttemptAt],
  );
  return held[0];
}

/** Disables an endpoint the service gave up on, with the reason its owner reads. */
export async function disableWebhookEndpoint(
  q: Queryable,
  id: string,
  opts: { reason: string; at: Date },
): Promise<void> {
  await q.query(
    `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, disabled_at = $3,
            lease_token = NULL, lease_until = NULL, updated_at = now()
      WHERE id = $1`,
    [id, opts.reason, opts.at],
  );
}

/** An item indexed since the last `items.indexed` events. */
export interface IndexedItemRow {
  organizationId: string;
  itemId: string;
  sourceType: string;
  connectionId: string | null;
  crawlJobId: string | null;
}

/** Takes (deletes) up to `limit` of the oldest indexed-item rows, for events in the same transaction. */
export async function takeIndexedItems(q: Queryable, limit: number): Promise<IndexedItemRow[]> {
  return q.query<IndexedItemRow>(
    `DELETE FROM webhook_indexed_items WHERE seq IN (
        SELECT seq FROM webhook_indexed_items ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING organization_id AS "organizationId", item_id AS "itemId", source_type AS "sourceType",
                connection_id AS "connectionId", crawl_job_id AS "crawlJobId"`,
    [limit],
  );
}

/** Emits one event to the organization's endpoints that want it (migration 023's `webhook_emit`). */
export async function emitWebhookEvent(
  q: Queryable,
  organizationId: string,
  type: string,
  data: unknown,
): Promise<void> {
  await q.query('SELECT webhook_emit($1, $2, $3::jsonb)', [organizationId, type, JSON.stringify(data)]);
}
