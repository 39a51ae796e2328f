import { MissingExtensionError, type Queryable } from './database.ts';

/**
 * The oldest pgvector this service runs on. Search filters by organization, tags and visibility inside the
 * HNSW scan with `hnsw.iterative_scan` (src/search/search.ts), which pgvector added in 0.8.0; older versions
 * return too few hits for filtered searches or refuse the setting.
 */
export const MIN_PGVECTOR_VERSION = '0.8.0';

/** The database's pgvector is there but too old; main.ts and the CLI report it like a missing one. */
export class UnsupportedExtensionError extends MissingExtensionError {
  override name = 'UnsupportedExtensionError';
}

/** `0.8.1` → [0, 8, 1]; a suffix such as `-dev` is ignored; null when the text starts with no number. */
export function parseVersion(text: string): number[] | null {
  const m = /^\s*(\d+(?:\.\d+)*)/.exec(text);
  return m ? m[1]!.split('.').map(Number) : null;
}

/** Negative, zero or positive as `a` is older than, equal to or newer than `b` (numerically: 0.10 > 0.8). */
export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a) ?? [];
  const y = parseVersion(b) ?? [];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Refuses a database whose installed pgvector (the version of the `vector` extension in this database) is
 * older than {@link MIN_PGVECTOR_VERSION}, naming the version found and the one needed, and how to get there:
 * `ALTER EXTENSION vector UPDATE` when the server already has a newer pgvector, an upgrade of the server's
 * pgvector otherwise. Returns the installed version. Call it after the extension exists.
 */
export async function checkPgvectorVersion(db: Queryable): Promise<string> {
  const rows = await db.query<{ installed: string | null; available: string | null }>(
    `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS installed,
            (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS available`,
  );
  const installed = rows[0]?.installed ?? null;
  const available = rows[0]?.available ?? null;
  if (installed === null) {
    throw new MissingExtensionError('The database has no "vector" extension (pgvector) installed.');
  }
  if (parseVersion(installed) !== null && compareVersions(installed, MIN_PGVECTOR_VERSION) >= 0)
    return installed;
  const needed = `this service needs pgvector ${MIN_PGVECTOR_VERSION} or newer (iterative index scans)`;
  if (available !== null && compareVersions(available, MIN_PGVECTOR_VERSION) >= 0) {
    throw new UnsupportedExtensionError(
      `The database's pgvector extension is version ${installed}; ${needed}. The server has pgvector ` +
        `${available}: run ALTER EXTENSION vector UPDATE in this database (as its owner or a superuser), ` +
        'then start again.',
    );
  }
  throw new UnsupportedExtensionError(
    `The database's pgvector extension is version ${installed}; ${needed}. Upgrade pgvector on the Postgres ` +
      'server (https://github.com/pgvector/pgvector#installation; managed services: pick a version that ' +
      'offers pgvector 0.8), run ALTER EXTENSION vector UPDATE, then start again.',
  );
}
