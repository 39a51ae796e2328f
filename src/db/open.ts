import path from 'node:path';
import type { Database } from './database.ts';
import { openPgliteThread } from './pglite-thread.ts';
import { openPostgres } from './postgres.ts';

/** The settings that pick the storage (a `Config` has them). */
interface StorageSettings {
  /** Server mode: any Postgres with pgvector. */
  DATABASE_URL?: string | undefined;
  /** Embedded mode: PGlite keeps its files in `<dataDir>/pgdata`. */
  dataDir: string;
  /** Server mode: connections in the pool (default DEFAULT_POOL_MAX in postgres.ts). */
  KB_DB_POOL_MAX?: number | undefined;
  /** Embedded mode: PGlite's shared_buffers; default scaled to the data dir (src/db/pglite.ts). */
  KB_PGLITE_SHARED_BUFFERS_MB?: number | undefined;
}

/** Where embedded mode keeps PGlite's files inside the data directory. */
export function pgliteDataDir(dataDir: string): string {
  return path.join(dataDir, 'pgdata');
}

/** Open the database the settings name: Postgres when DATABASE_URL is set, else PGlite in the data dir (on a thread of its own). */
export async function openDatabase(settings: StorageSettings): Promise<Database> {
  if (settings.DATABASE_URL)
    return openPostgres(
      settings.DATABASE_URL,
      settings.KB_DB_POOL_MAX ? { max: settings.KB_DB_POOL_MAX } : {},
    );
  return openPgliteThread(pgliteDataDir(settings.dataDir), {
    sharedBuffersMb: settings.KB_PGLITE_SHARED_BUFFERS_MB,
  });
}
