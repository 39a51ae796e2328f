/**
 * Connections and OAuth secrets. Credentials only ever pass through here encrypted; the routes and the
 * sync job encrypt and decrypt with the service's CredentialCipher (the row id is the associated data).
 */
import { newId } from '../../lib/ids.ts';
import type { Queryable } from '../database.ts';

export type ConnectionStatus = 'active' | 'inactive';

export interface ConnectionRow {
  id: string;
  organizationId: string;
  type: string;
  status: ConnectionStatus;
  credentialsEncrypted: string;
  scheduleIntervalMinutes: number | null;
  cursor: unknown;
  createdAt: number;
  updatedAt: number;
}

const EPOCH_MS = (col: string) => `floor(extract(epoch FROM ${col}) * 1000)::float8`;

const CONNECTION_COLUMNS = `id, organization_id AS "organizationId", type, status,
  credentials_encrypted AS "credentialsEncrypted", schedule_interval_minutes AS "scheduleIntervalMinutes",
  cursor, ${EPOCH_MS('created_at')} AS "createdAt", ${EPOCH_MS('updated_at')} AS "updatedAt"`;

/** How routes name a connection: by source type or by id (API.md "Connections"). */
export type ConnectionRef = { type: string } | { connectionId: string };

export async function findConnection(
  q: Queryable,
  organizationId: string,
  ref: ConnectionRef,
  opts: { forUpdate?: boolean } = {},
): Promise<ConnectionRow | null> {
  const [col, value] = 'type' in ref ? ['type', ref.type] : ['id', ref.connectionId];
  const rows = await q.query<ConnectionRow>(
    `SELECT ${CONNECTION_COLUMNS} FROM connections WHERE organization_id = $1 AND ${col} = $2${opts.forUpdate ? ' FOR UPDATE' : ''}`,
    [organizationId, value],
  );
  return rows[0] ?? null;
}

export async function getConnectionById(q: Queryable, id: string): Promise<ConnectionRow | null> {
  const rows = await q.query<ConnectionRow>(`SELECT ${CONNECTION_COLUMNS} FROM connections WHERE id = $1`, [
    id,
  ]);
  return rows[0] ?? null;
}

interface UpsertConnection {
  organizationId: string;
  type: string;
  /** Encrypts the credentials for the row id the connection ends up with. */
  encrypt(connectionId: string): string;
  /** undefined: keep the current schedule; null: none; a number: every so many minutes. */
  scheduleIntervalMinutes?: number | null | undefined;
}

/**
 * Create the organization's connection of this type, or replace its credentials (token rotation: the
 * id, status, cursor and synced items stay). Safe against two concurrent creates of the same type.
 */
export async function upsertConnection(
  q: Queryable,
  c: UpsertConnection,
): Promise<{ id: string; created: boolean; status: ConnectionStatus; consentWasNeeded: boolean }> {
  const id = newId();
  const schedule = c.scheduleIntervalMinutes ?? null;
  const inserted = await q.query<{ id: string }>(
    `INSERT INTO connections (id, organization_id, type, credentials_encrypted, schedule_interval_minutes, next_sync_at)
     VALUES ($1, $2, $3, $4, $5::int, CASE WHEN $5::int IS NULL THEN NULL ELSE now() + $5::int * interval '1 minute' END)
     ON CONFLICT (organization_id, type) DO NOTHING RETURNING id`,
    [id, c.organizationId, c.type, c.encrypt(id), schedule],
  );
  if (inserted.length > 0) return { id, created: true, status: 'active', consentWasNeeded: false };
  const existing = await q.query<{ id: string; status: ConnectionStatus; consentWasNeeded: boolean }>(
    `SELECT id, status, consent_needed IS NOT NULL AS "consentWasNeeded"
       FROM connections WHERE organization_id = $1 AND type = $2 FOR UPDATE`,
    [c.organizationId, c.type],
  );
  const { id: existingId, status, consentWasNeeded } = existing[0]!;
  const setSchedule = c.scheduleIntervalMinutes !== undefined;
  await q.query(
    `UPDATE connections SET credentials_encrypted = $2, updated_at = now(), consent_needed = NULL,
            schedule_interval_minutes = CASE WHEN $3 THEN $4::int ELSE schedule_interval_minutes END,
            next_sync_at = CASE WHEN NOT $3 THEN next_sync_at
                                WHEN $4::int IS NULL THEN NULL
                                ELSE now() + $4::int * interval '1 minute' END
      WHERE id = $1`,
    [existingId, c.encrypt(existingId), setSchedule, schedule],
  );
  return { id: existingId, created: false, status, consentWasNeeded };
}

export async function setConnectionStatus(q: Queryable, id: string, status: ConnectionStatus): Promise<void> {
  await q.query(
    `UPDATE connections SET status = $2, updated_at = now(),
            next_sync_at = CASE WHEN $2 = 'active' AND schedule_interval_minutes IS NOT NULL AND status <> 'active'
                                THEN now() + schedule_interval_minutes * interval '1 minute' ELSE next_sync_at END
      WHERE id = $1`,
    [id, status],
  );
}

/** Save the checkpoint incremental syncs of this connection start from. */
export async function saveConnectionCursor(q: Queryable, id: string, cursor: unknown): Promise<void> {
  await q.query('UPDATE connections SET cursor = $2::jsonb WHERE id = $1', [
    id,
    JSON.stringify(cursor ?? null),
  ]);
}

/**
 * Delete a connection with everything it produced: its items (chunks cascade) and their tombstones, its
 * jobs, its credentials. Returns how many items went.
 */
export async function deleteConnection(
  q: Queryable,
  organizationId: string,
  id: string,
): Promise<{ items: number }> {
  const items = await q.query(
    'DELETE FROM items WHERE organization_id = $1 AND connection_id = $2 RETURNING id',
    [organizationId, id],
  );
  await q.query(`DELETE FROM item_tombstones WHERE organization_id = $1 AND starts_with(source_key, $2)`, [
    organizationId,
    `integration:${id}:`,
  ]);
  await q.query('DELETE FROM jobs WHERE id IN (SELECT job_id FROM sync_jobs WHERE connection_id = $1)', [id]);
  await q.query('DELETE FROM connections WHERE id = $1', [id]);
  return { items: items.length };
}

/**
 * Connections whose schedule is due, locked (SKIP LOCKED: several workers may look at once), with their
 * next time moved on by one interval. `now` is the database clock unless a test passes a time.
 */
export async function takeDueSchedules(
  q: Queryable,
  opts: { limit: number; now?: Date },
): Promise<Array<{ id: string; organizationId: string }>> {
  return q.query(
    `UPDATE connections AS c SET next_sync_at = COALESCE($2::timestamptz, now()) + c.schedule_interval_minutes * interval '1 minute'
      WHERE c.id IN (SELECT id FROM connections
                      WHERE status = 'active' AND schedule_interval_minutes IS NOT NULL
                        AND next_sync_at <= COALESCE($2::timestamptz, now())
                      ORDER BY next_sync_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING c.id, c.organization_id AS "organizationId"`,
    [opts.limit, opts.now ?? null],
  );
}

interface ConnectionListEntry {
  id: string;
  type: string;
  status: ConnectionStatus;
  /** Why the connection needs the user's consent again (its OAuth refresh was refused), or null. */
  consentNeeded: string | null;
  scheduleIntervalMinutes: number | null;
  nextSyncAt: number | null;
  createdAt: number;
  updatedAt: number;
  lastJobId: number | null;
}

export async function listConnections(q: Queryable, organizationId: string): Promise<ConnectionListEntry[]> {
  return q.query<ConnectionListEntry>(
    `SELECT c.id, c.type, c.status, c.consent_needed AS "consentNeeded",
            c.schedule_interval_minutes AS "scheduleIntervalMinutes",
            CASE WHEN c.next_sync_at IS NULL THEN NULL ELSE ${EPOCH_MS('c.next_sync_at')} END AS "nextSyncAt",
            ${EPOCH_MS('c.created_at')} AS "createdAt", ${EPOCH_MS('c.updated_at')} AS "updatedAt",
            (SELECT s.job_id FROM sync_jobs s WHERE s.connection_id = c.id
              ORDER BY s.job_seq DESC LIMIT 1)::float8 AS "lastJobId"
       FROM connections c WHERE c.organization_id = $1 ORDER BY c.created_at, c.id`,
    [organizationId],
  );
}

// ---------------------------------------------------------------------------------------------------
// OAuth
// ---------------------------------------------------------------------------------------------------

interface NewOAuthState {
  id: string;
  organizationId: string;
  sourceType: string;
  secretId: string;
  callbackUri: string;
  redirectUri: string | null;
  /** The account the consent is for (`subdomain`), for sources where each has its own; else null. */
  tenant: string | null;
  ttlMs: number;
}

export async function insertOAuthState(q: Queryable, s: NewOAuthState): Promise<void> {
  // Expired states are useless: clear them out while we are here.
  await q.query(`DELETE FROM oauth_states WHERE expires_at < now() - interval '1 day'`);
  await q.query(
    `INSERT INTO oauth_states (id, organization_id, source_type, secret_id, callback_uri, redirect_uri, tenant, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + ($8::float8 * interval '1 millisecond'))`,
    [s.id, s.organizationId, s.sourceType, s.secretId, s.callbackUri, s.redirectUri, s.tenant, s.ttlMs],
  );
}

export interface OAuthStateRow {
  organizationId: string;
  sourceType: string;
  secretId: string;
  callbackUri: string;
  redirectUri: string | null;
  tenant: string | null;
}

/** Use a state once: returns it only if it exists, is unexpired and was not used before. */
export async function consumeOAuthState(q: Queryable, id: string): Promise<OAuthStateRow | null> {
  const rows = await q.query<OAuthStateRow>(
    `UPDATE oauth_states SET used_at = now()
      WHERE id = $1 AND used_at IS NULL AND expires_at > now()
      RETURNING organization_id AS "organizationId", source_type AS "sourceType", secret_id AS "secretId",
                callback_uri AS "callbackUri", redirect_uri AS "redirectUri", tenant`,
    [id],
  );
  return rows[0] ?? null;
}

export async function saveOAuthSecret(
  q: Queryable,
  s: {
    id: string;
    organizationId: string;
    sourceType: string;
    tokenEncrypted: string;
    workspaceName: string | null;
    tenant: string | null;
  },
): Promise<void> {
  await q.query(
    `INSERT INTO oauth_secrets (id, organization_id, source_type, token_encrypted, workspace_name, tenant)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (id) DO UPDATE SET token_encrypted = EXCLUDED.token_encrypted,
       workspace_name = EXCLUDED.workspace_name, tenant = EXCLUDED.tenant, created_at = now()
     WHERE oauth_secrets.organization_id = EXCLUDED.organization_id`,
    [s.id, s.organizationId, s.sourceType, s.tokenEncrypted, s.workspaceName, s.tenant],
  );
}

export async function oauthSecretExists(q: Queryable, organizationId: string, id: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM oauth_secrets WHERE organization_id = $1 AND id = $2', [
    organizationId,
    id,
  ]);
  return rows.length > 0;
}

/**
 * A stored secret by id, or the organization's newest of that source type (and account, when `tenant` is
 * given) when no id is given. A secret asked for by id comes back whatever its account: the caller says
 * what a mismatch means.
 */
export async function findOAuthSecret(
  q: Queryable,
  organizationId: string,
  sourceType: string,
  id: string | undefined,
  tenant: string | null = null,
): Promise<{ id: string; tokenEncrypted: string; tenant: string | null } | null> {
  const rows = await q.query<{ id: string; tokenEncrypted: string; tenant: string | null }>(
    `SELECT id, token_encrypted AS "tokenEncrypted", tenant FROM oauth_secrets
      WHERE organization_id = $1 AND source_type = $2
        AND ($3::text IS NULL OR id = $3) AND ($3::text IS NOT NULL OR $4::text IS NULL OR tenant = $4)
      ORDER BY created_at DESC LIMIT 1`,
    [organizationId, sourceType, id ?? null, tenant],
  );
  return rows[0] ?? null;
}

/** New credentials of a connection (a refreshed OAuth token), encrypted by the caller. */
export async function updateConnectionCredentials(
  q: Queryable,
  id: string,
  encrypted: string,
): Promise<void> {
  await q.query(
    'UPDATE connections SET credentials_encrypted = $2, updated_at = now(), consent_needed = NULL WHERE id = $1',
    [id, encrypted],
  );
}

/**
 * A connection's stored credentials, its row locked until the caller's transaction ends: one OAuth
 * refresh at a time per connection, whichever process (a sync, the scheduled refresh) wants one.
 * Null when the connection is gone.
 */
export async function lockConnectionCredentials(
  q: Queryable,
  id: string,
): Promise<{ credentialsEncrypted: string } | null> {
  const rows = await q.query<{ credentialsEncrypted: string }>(
    'SELECT credentials_encrypted AS "credentialsEncrypted" FROM connections WHERE id = $1 FOR UPDATE',
    [id],
  );
  return rows[0] ?? null;
}

/** Records that the source refused the connection's refresh: `message` says how to consent again. */
export async function markConnectionConsentNeeded(q: Queryable, id: string, message: string): Promise<void> {
  await q.query('UPDATE connections SET consent_needed = $2 WHERE id = $1', [id, message]);
}

/** Active connections of these source types that still hold their credentials, for the scheduled refresh. */
export async function listConnectionsForTokenRefresh(
  q: Queryable,
  types: readonly string[],
): Promise<Array<{ id: string; type: string; credentialsEncrypted: string; updatedAt: number }>> {
  if (types.length === 0) return [];
  return q.query(
    `SELECT id, type, credentials_encrypted AS "credentialsEncrypted", ${EPOCH_MS('updated_at')} AS "updatedAt"
       FROM connections
      WHERE status = 'active' AND consent_needed IS NULL AND type = ANY($1::text[])
      ORDER BY id`,
    [types],
  );
}
