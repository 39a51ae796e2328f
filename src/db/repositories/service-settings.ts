/**
 * The installation's own settings (service_settings: one JSON value per key), such as the OAuth state's
 * HMAC key and the embedding model the stored vectors came from. Shared by every process of a deployment,
 * since they live in its database.
 */
import type { Queryable } from '../database.ts';

/** The value stored under `key`, or null when there is none. */
export async function readServiceSetting<T>(q: Queryable, key: string): Promise<T | null> {
  const rows = await q.query<{ value: T }>('SELECT value FROM service_settings WHERE key = $1', [key]);
  return rows[0]?.value ?? null;
}

/** Store `valueJson` under `key` unless a value is there already (then the first writer's stays). */
export async function insertServiceSettingIfAbsent(
  q: Queryable,
  key: string,
  valueJson: string,
): Promise<void> {
  await q.query(
    'INSERT INTO service_settings (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO NOTHING',
    [key, valueJson],
  );
}

/** Store `valueJson` under `key`, replacing any value there. */
export async function writeServiceSetting(q: Queryable, key: string, valueJson: string): Promise<void> {
  await q.query(
    'INSERT INTO service_settings (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value',
    [key, valueJson],
  );
}

/** Replace the value stored under `key` (nothing when there is none). */
export async function updateServiceSetting(q: Queryable, key: string, valueJson: string): Promise<void> {
  await q.query('UPDATE service_settings SET value = $2::jsonb WHERE key = $1', [key, valueJson]);
}
