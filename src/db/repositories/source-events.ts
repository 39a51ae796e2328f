/**
 * Inbound change notifications of the sources (migration 025): the account each connection receives them
 * for, the events accepted (deduplicated by the vendor's event id), the work per document they make
 * (coalesced, one row per document), the subscriptions made at the sources and the handshakes' secrets.
 * Secrets only pass through here encrypted.
 */
import type { Queryable } from '../database.ts';

/** A connection a notification may belong to, with what verifying it needs. */
export interface WebhookCandidate {
  connectionId: string;
  organizationId: string;
  type: string;
  status: string;
  credentialsEncrypted: string;
}

const CANDIDATE_COLUMNS = `c.id AS "connectionId", c.organization_id AS "organizationId", c.type,
  c.status, c.credentials_encrypted AS "credentialsEncrypted"`;

/** Records (or changes) the account a connection receives notifications for. */
export async function saveWebhookAccount(
  q: Queryable,
  a: { connectionId: string; organizationId: string; sourceType: string; account: string },
): Promise<void> {
  await q.query(
    `INSERT INTO source_webhook_accounts (connection_id, organization_id, source_type, account)
       VALUES ($1, $2, $3, $4)
     ON CONFLICT (connection_id) DO UPDATE SET account = EXCLUDED.account, source_type = EXCLUDED.source_type`,
    [a.connectionId, a.organizationId, a.sourceType, a.account],
  );
}

/** The connections of a source type that receive notifications for `account`. */
export async function connectionsForWebhookAccount(
  q: Queryable,
  sourceType: string,
  account: string,
): Promise<WebhookCandidate[]> {
  return q.query<WebhookCandidate>(
    `SELECT ${CANDIDATE_COLUMNS}
       FROM source_webhook_accounts a JOIN connections c ON c.id = a.connection_id
      WHERE a.source_type = $1 AND a.account = $2
      ORDER BY c.created_at, c.id`,
    [sourceType, account],
  );
}

/** Connections of a source type whose account is not recorded yet (made before notifications existed). */
export async function connectionsWithoutWebhookAccount(
  q: Queryable,
  sourceType: string,
  limit: number,
): Promise<WebhookCandidate[]> {
  return q.query<WebhookCandidate>(
    `SELECT ${CANDIDATE_COLUMNS} FROM connections c
      WHERE c.type = $1 AND NOT EXISTS (SELECT 1 FROM source_webhook_accounts a WHERE a.connection_id = c.id)
      ORDER BY c.id LIMIT $2`,
    [sourceType, limit],
  );
}

/** One document a notification named, as the work rows keep it. */
export interface ChangedDocumentRow {
  table: string;
  externalId: string;
  deleted: boolean;
}

/**
 * Records an accepted notification for a connection. Returns its id, or null when the connection already
 * has the vendor's event id (a retry of an event accepted before: nothing to do).
 */
export async function insertSourceEvent(
  q: Queryable,
  e: {
    organizationId: string;
    connectionId: string;
    vendorEventId: string;
    occurredAt: string | null;
    changes: readonly ChangedDocumentRow[];
  },
): Promise<number | null> {
  const rows = await q.query<{ id: string | number }>(
    `INSERT INTO source_events (organization_id, connection_id, vendor_event_id, occurred_at, changes)
       VALUES ($1, $2, $3, $4::timestamptz, $5::jsonb)
     ON CONFLICT (connection_id, vendor_event_id) DO NOTHING
     RETURNING id`,
    [e.organizationId, e.connectionId, e.vendorEventId, e.occurredAt, JSON.stringify(e.changes)],
  );
  return rows[0] ? Number(rows[0].id) : null;
}

/**
 * Adds the documents of an event to the connection's pending work: a document already waiting gets its
 * revision counted up (one fetch covers every event), due at once, attempts reset.
 */
export async function addDocumentWork(
  q: Queryable,
  w: {
    organizationId: string;
    connectionId: string;
    eventId: number;
    changes: readonly ChangedDocumentRow[];
  },
): Promise<void> {
  // One row per document in the statement: ON CONFLICT cannot update a row twice in one statement.
  const unique = new Map<string, ChangedDocumentRow>();
  for (const c of w.changes) unique.set(JSON.stringify([c.table, c.externalId]), c);
  if (unique.size === 0) return;
  await q.query(
    `INSERT INTO source_document_work
       (connection_id, organization_id, source_table, external_id, deleted, event_id)
     SELECT $1, $2, d."table", d."externalId", d.deleted, $3
       FROM jsonb_to_recordset($4::jsonb) AS d("table" text, "externalId" text, deleted boolean)
     ON CONFLICT (connection_id, source_table, external_id) DO UPDATE SET
       revision = source_document_work.revision + 1, deleted = EXCLUDED.deleted,
       event_id = EXCLUDED.event_id, attempts = 0, last_error = NULL, not_before = now()`,
    [w.connectionId, w.organizationId, w.eventId, JSON.stringify([...unique.values()])],
  );
}

/** A document waiting to be read again. */
export interface DocumentWork extends ChangedDocumentRow {
  revision: number;
  attempts: number;
}

/** The connection's due work, oldest first. */
export async function dueDocumentWork(
  q: Queryable,
  connectionId: string,
  limit: number,
): Promise<DocumentWork[]> {
  const rows = await q.query<DocumentWork & { revision: string | number }>(
    `SELECT source_table AS "table", external_id AS "externalId", deleted, revision, attempts
       FROM source_document_work
      WHERE connection_id = $1 AND not_before <= now()
      ORDER BY received_at, source_table, external_id LIMIT $2`,
    [connectionId, limit],
  );
  return rows.map((r) => ({ ...r, revision: Number(r.revision) }));
}

/** A document's work at the revision that was read. */
export interface WorkDone {
  table: string;
  externalId: string;
  revision: number;
}

/**
 * Removes the work that was done, each row only at the revision read: a row an event touched meanwhile
 * stays for another fetch.
 */
export async function finishDocumentWork(
  q: Queryable,
  connectionId: string,
  done: readonly WorkDone[],
): Promise<void> {
  if (done.length === 0) return;
  await q.query(
    `DELETE FROM source_document_work w
      USING jsonb_to_recordset($2::jsonb) AS d("table" text, "externalId" text, revision bigint)
      WHERE w.connection_id = $1 AND w.source_table = d."table" AND w.external_id = d."externalId"
        AND w.revision = d.revision`,
    [connectionId, JSON.stringify(done)],
  );
}

/**
 * Puts work that failed back for a later attempt (at the revision read), or drops it once it has had
 * `maxAttempts`: the scheduled sync is the safety net from there.
 */
export async function retryDocumentWork(
  q: Queryable,
  connectionId: string,
  failed: readonly (WorkDone & { error: string })[],
  opts: { delaySeconds: number; maxAttempts: number },
): Promise<void> {
  if (failed.length === 0) return;
  const params = [connectionId, JSON.stringify(failed), opts.delaySeconds, opts.maxAttempts];
  const failedRows = `jsonb_to_recordset($2::jsonb) AS d("table" text, "externalId" text, revision bigint, error text)`;
  const sameRevision = `w.connection_id = $1 AND w.source_table = d."table" AND w.external_id = d."externalId"
        AND w.revision = d.revision`;
  await q.query(
    `DELETE FROM source_document_work w USING ${failedRows}
      WHERE ${sameRevision} AND w.attempts + 1 >= $4::int AND $3::int >= 0`,
    params,
  );
  // Backoff doubles with each attempt: delaySeconds, 2x, 4x...
  await q.query(
    `UPDATE source_document_work w SET attempts = w.attempts + 1, last_error = d.error,
        not_before = now() + make_interval(secs => $3::int * power(2, w.attempts)::int)
       FROM ${failedRows}
      WHERE ${sameRevision} AND w.attempts + 1 < $4::int`,
    params,
  );
}

/** Marks the connection's queued events processed once no work of theirs is left. */
export async function markEventsProcessed(q: Queryable, connectionId: string): Promise<void> {
  await q.query(
    `UPDATE source_events e SET state = 'processed', processed_at = now()
      WHERE e.connection_id = $1 AND e.state = 'queued'
        AND NOT EXISTS (SELECT 1 FROM source_document_work w WHERE w.event_id = e.id)`,
    [connectionId],
  );
}

/** Active connections with due work (for the task that queues their jobs when none is queued). */
export async function connectionsWithDueWork(
  q: Queryable,
  limit: number,
): Promise<Array<{ connectionId: string; organizationId: string }>> {
  return q.query(
    `SELECT DISTINCT w.connection_id AS "connectionId", w.organization_id AS "organizationId"
       FROM source_document_work w JOIN connections c ON c.id = w.connection_id AND c.status = 'active'
      WHERE w.not_before <= now() LIMIT $1`,
    [limit],
  );
}

/** The connection's work rows, due or not (status, tests). */
export async function countDocumentWork(q: Queryable, connectionId: string): Promise<number> {
  const rows = await q.query<{ n: string | number }>(
    'SELECT count(*) AS n FROM source_document_work WHERE connection_id = $1',
    [connectionId],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Forgets processed events older than `days` (the vendor retries for hours, not days). */
export async function pruneProcessedEvents(q: Queryable, days: number): Promise<number> {
  const rows = await q.query(
    `DELETE FROM source_events WHERE state = 'processed' AND processed_at < now() - make_interval(days => $1::int)
     RETURNING id`,
    [days],
  );
  return rows.length;
}

/** A subscription the service made at the source, as stored (its secret still encrypted). */
export interface StoredSubscription {
  ids: string[];
  secretEncrypted: string | null;
  callbackUrl: string;
}

export async function saveWebhookSubscription(
  q: Queryable,
  s: {
    connectionId: string;
    organizationId: string;
    ids: readonly string[];
    secretEncrypted: string | null;
    callbackUrl: string;
  },
): Promise<void> {
  await q.query(
    `INSERT INTO source_webhook_subscriptions
       (connection_id, organization_id, subscription_ids, secret_encrypted, callback_url)
       VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (connection_id) DO UPDATE SET subscription_ids = EXCLUDED.subscription_ids,
       secret_encrypted = EXCLUDED.secret_encrypted, callback_url = EXCLUDED.callback_url, created_at = now()`,
    [s.connectionId, s.organizationId, [...s.ids], s.secretEncrypted, s.callbackUrl],
  );
}

export async function getWebhookSubscription(
  q: Queryable,
  connectionId: string,
): Promise<StoredSubscription | null> {
  const rows = await q.query<StoredSubscription>(
    `SELECT subscription_ids AS ids, secret_encrypted AS "secretEncrypted", callback_url AS "callbackUrl"
       FROM source_webhook_subscriptions WHERE connection_id = $1`,
    [connectionId],
  );
  return rows[0] ?? null;
}

/**
 * Keeps a handshake's secret as pending (never tried against a signature until an operator takes it) and
 * drops the pending ones of the type beyond the newest `keepPending`, so a flood of forged handshakes
 * costs a bounded number of rows.
 */
export async function insertHandshakeSecret(
  q: Queryable,
  h: { id: string; sourceType: string; secretEncrypted: string; keepPending: number },
): Promise<void> {
  await q.query(
    'INSERT INTO source_webhook_handshakes (id, source_type, secret_encrypted) VALUES ($1, $2, $3)',
    [h.id, h.sourceType, h.secretEncrypted],
  );
  await q.query(
    `DELETE FROM source_webhook_handshakes
      WHERE source_type = $1 AND trusted_at IS NULL AND id NOT IN (
        SELECT id FROM source_webhook_handshakes WHERE source_type = $1 AND trusted_at IS NULL
         ORDER BY received_at DESC, id DESC LIMIT $2)`,
    [h.sourceType, h.keepPending],
  );
}

/**
 * The trusted handshakes' secrets of a source type, the most recently trusted first (still encrypted; the
 * row id is the associated data). Pending ones are never listed: anyone could have posted them.
 */
export async function listTrustedHandshakeSecrets(
  q: Queryable,
  sourceType: string,
  limit: number,
): Promise<Array<{ id: string; secretEncrypted: string }>> {
  return q.query(
    `SELECT id, secret_encrypted AS "secretEncrypted" FROM source_webhook_handshakes
      WHERE source_type = $1 AND trusted_at IS NOT NULL
      ORDER BY trusted_at DESC, received_at DESC, id LIMIT $2`,
    [sourceType, limit],
  );
}

/** A pending handshake an operator took. */
export interface TakenHandshake {
  id: string;
  secretEncrypted: string;
  receivedAt: string;
  /** The other pending handshakes of the type, dropped now. */
  othersDropped: number;
}

/**
 * Marks the newest pending handshake of a source type trusted and drops the other pending ones; null
 * when none is pending. Run it in a transaction: the row is locked so two operators take one handshake.
 */
export async function trustNewestPendingHandshake(
  q: Queryable,
  sourceType: string,
): Promise<TakenHandshake | null> {
  const rows = await q.query<{ id: string; secretEncrypted: string; receivedAt: string | Date }>(
    `UPDATE source_webhook_handshakes SET trusted_at = now()
      WHERE id = (SELECT id FROM source_webhook_handshakes WHERE source_type = $1 AND trusted_at IS NULL
                   ORDER BY received_at DESC, id DESC LIMIT 1 FOR UPDATE)
      RETURNING id, secret_encrypted AS "secretEncrypted", received_at AS "receivedAt"`,
    [sourceType],
  );
  const taken = rows[0];
  if (!taken) return null;
  const dropped = await q.query(
    `DELETE FROM source_webhook_handshakes WHERE source_type = $1 AND trusted_at IS NULL RETURNING id`,
    [sourceType],
  );
  return {
    id: taken.id,
    secretEncrypted: taken.secretEncrypted,
    receivedAt: new Date(taken.receivedAt).toISOString(),
    othersDropped: dropped.length,
  };
}
