import path from 'node:path';
import type { Config } from '../config.ts';
import type { Database } from './database.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

/** Open the database the configuration names: Postgres when DATABASE_URL is set, else PGlite in the data dir. */
export async function openDatabase(config: Pick<Config, 'DATABASE_URL' | 'dataDir'>): Promise<Database> {
  if (config.DATABASE_URL) return openPostgres(config.DATABASE_URL);
  return openPglite(path.join(config.dataDir, 'pgdata'));
}
