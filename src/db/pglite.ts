import { type Dirent, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Database, Queryable } from './database.ts';

/**
 * Embedded Postgres (PGlite, WASM) with pgvector, persisted in `dataDir` (or in memory when null).
 * PGlite has one connection; it serializes queries and transactions itself, so a transaction here is
 * exclusive for its duration.
 */
export async function openPglite(
  dataDir: string | null,
  opts: { sharedBuffersMb?: number | undefined } = {},
): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const pg = await PGlite.create(dataDir ?? undefined, {
    extensions: { vector },
    startParams: pgliteStartParams(opts.sharedBuffersMb ?? defaultSharedBuffersMb(dataDir)),
  });
  return pgliteDatabase(pg);
}

/** PGlite's start parameters with `shared_buffers` set (benchmarks that create PGlite themselves use it too). */
export function pgliteStartParams(sharedBuffersMb: number): string[] {
  return [...PGlite.defaultStartParams, '-c', `shared_buffers=${Math.trunc(sharedBuffersMb)}MB`];
}

/** A PGlite instance as a Database (benchmarks that open PGlite with other options wrap theirs with it). */
export function pgliteDatabase(pg: PGlite): Database {
  const wrap = (q: PGlite | Transaction): Queryable => ({
    async query<T>(sql: string, params?: readonly unknown[]) {
      const res = await q.query<T>(sql, params as unknown[] | undefined);
      return res.rows;
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
  });
  const base = wrap(pg);
  let closed = false;
  return {
    kind: 'pglite',
    query: base.query,
    exec: base.exec,
    transaction: (fn) => pg.transaction((tx) => fn(wrap(tx))),
    async close() {
      if (closed) return;
      closed = true;
      await pg.close();
    },
  };
}

/** PGlite's own shared_buffers, and the most the default grows to (RSS grows by about as much). */
export const SHARED_BUFFERS_MIN_MB = 128;
export const SHARED_BUFFERS_MAX_MB = 512;

/**
 * shared_buffers for a data directory: a quarter of its size on disk, between 128 MB (PGlite's default)
 * and 512 MB, in steps of 64 MB. A page missing from PGlite's buffers is read with a synchronous file read
 * from WASM: at 100k chunks (3.2 GB on disk, a 215 MB HNSW index) those reads were a fifth of the main
 * thread's time under search, and 512 MB took the endpoint's p95 from 24 to 19 ms with one client and from
 * 278 to 220 ms with 16 (BENCHMARKS.md "Search latency and recall"). PGlite touches the whole buffer pool
 * at start, so a small knowledge base keeps the small default. KB_PGLITE_SHARED_BUFFERS_MB overrides it.
 */
export function defaultSharedBuffersMb(dataDir: string | null): number {
  if (!dataDir) return SHARED_BUFFERS_MIN_MB;
  const quarterMb = directoryBytes(dataDir) / 4 / 2 ** 20;
  const stepped = Math.ceil(quarterMb / 64) * 64;
  return Math.min(SHARED_BUFFERS_MAX_MB, Math.max(SHARED_BUFFERS_MIN_MB, stepped));
}

function directoryBytes(dir: string): number {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (const e of entries) {
    if (!e.isFile()) continue;
    try {
      total += statSync(path.join(e.parentPath, e.name)).size;
    } catch {
      // Removed meanwhile: nothing to count.
    }
  }
  return total;
}
