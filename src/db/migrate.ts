import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Database, MissingExtensionError, type Queryable } from './database.ts';
import { checkPgvectorVersion } from './pgvector-version.ts';
import { rewriteItemSearchWords } from './repositories/items.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// Any constant works; it only has to be the same in every process of this service.
const MIGRATION_LOCK_KEY = 7_240_511_931;

interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Work a migration needs done in code: run right after its SQL, in the same transaction. Migration 016
 * moved the splitting of items' search words from SQL into the service; the rows it finds are split again.
 */
const AFTER_SQL: Record<number, (tx: Queryable) => Promise<unknown>> = {
  16: (tx) => rewriteItemSearchWords(tx),
};

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({
      version: Number.parseInt(f.slice(0, 3), 10),
      name: f,
      sql: readFileSync(path.join(dir, f), 'utf8'),
    }));
}

/**
 * Apply pending migrations in order, in one transaction under an advisory lock, so two processes
 * starting at once apply each migration exactly once (the second waits, then finds nothing to do).
 * Returns the names applied.
 */
export async function migrate(db: Database, opts: { through?: number } = {}): Promise<string[]> {
  await ensurePgvector(db);
  // Before any migration: a too-old pgvector must stop the start with its version, not fail a search later.
  await checkPgvectorVersion(db);
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set(
      (await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version),
    );
    const applied: string[] = [];
    for (const m of listMigrations()) {
      if (done.has(m.version)) continue;
      // Tests stop early to build a database as an older release left it, then migrate the rest.
      if (opts.through !== undefined && m.version > opts.through) break;
      await tx.exec(m.sql);
      await AFTER_SQL[m.version]?.(tx);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.name);
    }
    return applied;
  });
}

async function ensurePgvector(db: Database): Promise<void> {
  const available = await db.query<{ name: string }>(
    "SELECT name FROM pg_available_extensions WHERE name = 'vector'",
  );
  if (available.length === 0) {
    throw new MissingExtensionError(
      'The database has no "vector" extension (pgvector). Install pgvector on the Postgres server ' +
        '(https://github.com/pgvector/pgvector) or use a managed Postgres that offers it, then start again.',
    );
  }
  try {
    await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  } catch (err) {
    // Two processes racing on CREATE EXTENSION: one wins, the other sees a duplicate; both are fine after.
    const exists = await db.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'");
    if (exists.length === 0) {
      throw new MissingExtensionError(
        `The "vector" extension is available but could not be created (${(err as Error).message}). ` +
          'Run CREATE EXTENSION vector as a superuser once, then start again.',
      );
    }
  }
}
