import { generateApiKey } from '../../lib/crypto.ts';
import { newId } from '../../lib/ids.ts';
import type { Queryable } from '../database.ts';

export interface Organization {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKeyRecord {
  id: string;
  organization_id: string;
  secret_hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export async function createOrganization(q: Queryable, name: string): Promise<Organization> {
  const rows = await q.query<Organization>(
    'INSERT INTO organizations (id, name) VALUES ($1, $2) RETURNING id, name, created_at::text',
    [newId(), name],
  );
  return rows[0]!;
}

export async function findOrganization(q: Queryable, idOrName: string): Promise<Organization | null> {
  const rows = await q.query<Organization>(
    'SELECT id, name, created_at::text FROM organizations WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1',
    [idOrName],
  );
  return rows[0] ?? null;
}

export async function countOrganizations(q: Queryable): Promise<number> {
  const rows = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM organizations');
  return rows[0]!.n;
}

/** Create a key; the plaintext key is returned once and never stored. */
export async function createApiKey(
  q: Queryable,
  organizationId: string,
): Promise<{ id: string; apiKey: string }> {
  const { keyId, apiKey, secretHash } = generateApiKey();
  await q.query('INSERT INTO api_keys (id, organization_id, secret_hash) VALUES ($1, $2, $3)', [
    keyId,
    organizationId,
    secretHash,
  ]);
  return { id: keyId, apiKey };
}

export async function findApiKey(q: Queryable, keyId: string): Promise<ApiKeyRecord | null> {
  const rows = await q.query<ApiKeyRecord>(
    `SELECT id, organization_id, secret_hash, created_at::text, last_used_at::text, revoked_at::text
       FROM api_keys WHERE id = $1`,
    [keyId],
  );
  return rows[0] ?? null;
}

export async function listApiKeys(
  q: Queryable,
  organizationId: string,
): Promise<Omit<ApiKeyRecord, 'secret_hash'>[]> {
  return q.query(
    `SELECT id, organization_id, created_at::text, last_used_at::text, revoked_at::text
       FROM api_keys WHERE organization_id = $1 ORDER BY created_at`,
    [organizationId],
  );
}

/** Revoke; true when a live key was revoked. */
export async function revokeApiKey(q: Queryable, keyId: string): Promise<boolean> {
  const rows = await q.query(
    'UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id',
    [keyId],
  );
  return rows.length > 0;
}

export async function touchApiKey(q: Queryable, keyId: string): Promise<void> {
  // Only write once a minute per key: a write per request would make every read a write.
  await q.query(
    `UPDATE api_keys SET last_used_at = now()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [keyId],
  );
}

/**
 * Takes the transaction-scoped lock under which a first start creates the default organization, so two
 * processes starting at once on an empty database create one, not two.
 */
export async function lockDefaultOrganizationCreation(q: Queryable): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock(7240511932)');
}
