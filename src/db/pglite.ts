import { type Dirent, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PGlite, parse, protocol, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { lockDataDir } from './data-dir-lock.ts';
import { type Database, queryWithSettingsInTransaction } from './database.ts';

/**
 * Embedded Postgres (PGlite, WASM) with pgvector, persisted in `dataDir` (or in memory when null).
 * PGlite has one connection; it serializes queries and transactions itself, so a transaction here is
 * exclusive for its duration. A directory is locked first (data-dir-lock.ts): while another process, or
 * another opener in this one, has it open, this throws DataDirInUseError and leaves the directory alone.
 */
export async function openPglite(dataDir: string | null, opts: PgliteOpenOptions = {}): Promise<Database> {
  const lock = dataDir ? lockDataDir(dataDir) : null;
  let db: Database;
  try {
    db = await openPgliteUnderLock(dataDir, opts);
  } catch (err) {
    lock?.release();
    throw err;
  }
  if (!lock) return db;
  return {
    ...db,
    async close() {
      // Released only once PGlite has closed the directory; a close that failed keeps it to this
      // process's end rather than let another process in beside an instance in an unknown state.
      await db.close();
      lock.release();
    },
  };
}

/**
 * {@link openPglite} for a caller that holds `dataDir`'s lock already (openPgliteThread takes it on the
 * opening thread and releases it when PGlite's thread has ended).
 */
export async function openPgliteUnderLock(
  dataDir: string | null,
  opts: PgliteOpenOptions = {},
): Promise<Database> {
  if (opts.image && dataDir) throw new Error('a PGlite image starts an in-memory database only');
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const pg = await PGlite.create(dataDir ?? undefined, {
    extensions: { vector },
    startParams: pgliteStartParams(opts.sharedBuffersMb ?? defaultSharedBuffersMb(dataDir)),
    ...(opts.image ? { loadDataDir: new Blob([readFileSync(opts.image)]) } : {}),
  });
  return pgliteDatabase(pg);
}

export interface PgliteOpenOptions {
  sharedBuffersMb?: number | undefined;
  /**
   * An in-memory database only: start from this tarball of a data directory (PGlite's `dumpDataDir`)
   * instead of running initdb. The tests start hundreds of empty databases; initdb is most of each start
   * (about 2 s of CPU against 0.4 s to unpack an image).
   */
  image?: string | undefined;
}

/** A tarball of `pg`'s data directory, as {@link PgliteOpenOptions.image} reads it. */
export async function pgliteImage(pg: PGlite): Promise<Uint8Array> {
  return new Uint8Array(await (await pg.dumpDataDir('none')).arrayBuffer());
}

/**
 * WAL kept on disk. PGlite runs Postgres as a single backend without a checkpointer: WAL is recycled only
 * at a checkpoint (the indexer's upkeep requests one, `checkpointWhenWalGrew`), which then keeps up to
 * `max_wal_size` of old segments for reuse (1 GB by default; a crawl of a few hundred pages left 80-96 MiB,
 * and without checkpoints `pg_wal` only grows).
 */
const PGLITE_WAL_PARAMS = ['-c', 'max_wal_size=64MB', '-c', 'min_wal_size=32MB'];

/** PGlite's start parameters with `shared_buffers` set (benchmarks that create PGlite themselves use it too). */
export function pgliteStartParams(sharedBuffersMb: number): string[] {
  return [
    ...PGlite.defaultStartParams,
    '-c',
    `shared_buffers=${Math.trunc(sharedBuffersMb)}MB`,
    ...PGLITE_WAL_PARAMS,
  ];
}

/** A PGlite instance as a Database (benchmarks that open PGlite with other options wrap theirs with it). */
export function pgliteDatabase(pg: PGlite): Database {
  const statements = new PreparedStatements(pg);
  // Inside a transaction PGlite's transaction lock is held already: only its statement lock is taken.
  const query =
    (tx: Transaction | null) =>
    async <T>(sql: string, params?: readonly unknown[]): Promise<T[]> => {
      if (STARTS_SCHEMA_CHANGE.test(sql)) {
        // A one-off (tests alter tables this way): not kept prepared, and what is prepared is dropped.
        const res = await (tx ?? pg).query<T>(sql, params as unknown[] | undefined);
        await statements.forgetAll();
        return res.rows;
      }
      const run = () => pg._runExclusiveQuery(() => statements.run<T>(sql, params ?? [], !tx));
      if (tx) return run();
      await pg._checkReady();
      return pg._runExclusiveTransaction(run);
    };
  let closed = false;
  const db: Database = {
    kind: 'pglite',
    query: query(null),
    exec: async (sql) => {
      await pg.exec(sql);
      if (CHANGES_SCHEMA.test(sql)) await statements.forgetAll();
    },
    transaction: (fn) =>
      pg.transaction((tx) =>
        fn({
          query: query(tx),
          async exec(sql: string) {
            await tx.exec(sql);
            if (CHANGES_SCHEMA.test(sql)) await pg._runExclusiveQuery(() => statements.forgetAllHeld());
          },
        }),
      ),
    async close() {
      if (closed) return;
      closed = true;
      await pg.close();
    },
    queryWithSettings: (settings, sql, params) => queryWithSettingsInTransaction(db, settings, sql, params),
  };
  return db;
}

/**
 * Scripts that can change what a prepared statement returns (its columns): after one, every prepared
 * statement is closed, so none fails with "cached plan must not change result type".
 */
const CHANGES_SCHEMA = /\b(CREATE|ALTER|DROP)\b/i;
const STARTS_SCHEMA_CHANGE = /^\s*(CREATE|ALTER|DROP)\b/i;

/** Most statements kept prepared at once (the service has about 150); the least recently used is closed beyond it. */
const MAX_PREPARED = 200;

/**
 * Runs queries as named prepared statements in one call into PGlite each, instead of `PGlite.query`
 * (which parses, describes, binds, describes and executes the unnamed statement in five calls into the
 * WASM module, and plans it every time). A statement is parsed once per SQL text; Postgres plans the
 * first five runs for their parameters, then keeps a generic plan when it costs no more (its
 * `plan_cache_mode = auto`, as every driver that prepares statements gets). Replaying the statements of a
 * crawl of fastapi-docs one by one: 13.7 ms of PGlite a page through `query`, 9.1 ms prepared
 * (docs/benchmarks.md, bench/crawl.ts). Parameters and rows are converted by PGlite's own
 * serializers and parsers, as `query` does.
 */
class PreparedStatements {
  readonly #pg: PGlite;
  readonly #byText = new Map<string, { name: string; paramTypes: number[] }>();
  #next = 0;

  constructor(pg: PGlite) {
    this.#pg = pg;
  }

  /** The caller holds PGlite's statement lock (`_runExclusiveQuery`). */
  async run<T>(sql: string, params: readonly unknown[], syncToFs: boolean): Promise<T[]> {
    const statement = await this.#prepared(sql);
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      // Bound as a binary parameter, in the type's own binary form (toVectorParam).
      if (value instanceof Uint8Array) return value;
      const serialize = this.#pg.serializers[statement.paramTypes[i] ?? 0];
      return serialize ? serialize(value) : String(value);
    });
    const messages = await this.#pg.execProtocolStream(
      concat([
        protocol.serialize.bind({ statement: statement.name, values }),
        protocol.serialize.describe({ type: 'P' }),
        protocol.serialize.execute({}),
        protocol.serialize.sync(),
      ]),
      { syncToFs: false },
    );
    if (syncToFs) await this.#pg.syncToFs();
    return (parse.parseResults(messages, this.#pg.parsers)[0]?.rows ?? []) as T[];
  }

  /** Closes every prepared statement (after a schema change); takes the statement lock. */
  forgetAll(): Promise<void> {
    return this.#pg._runExclusiveQuery(() => this.forgetAllHeld());
  }

  /** {@link forgetAll} for a caller that holds the statement lock. */
  async forgetAllHeld(): Promise<void> {
    if (this.#byText.size === 0) return;
    const closes = [...this.#byText.values()].map((s) =>
      protocol.serialize.close({ type: 'S', name: s.name }),
    );
    this.#byText.clear();
    await this.#pg.execProtocolStream(concat([...closes, protocol.serialize.sync()]), { syncToFs: false });
  }

  async #prepared(sql: string): Promise<{ name: string; paramTypes: number[] }> {
    const known = this.#byText.get(sql);
    if (known) {
      // Most recently used last: the first entry is the one to close when the map is full.
      this.#byText.delete(sql);
      this.#byText.set(sql, known);
      return known;
    }
    const messages: Uint8Array[] = [];
    if (this.#byText.size >= MAX_PREPARED) {
      const [oldestText, oldest] = this.#byText.entries().next().value!;
      this.#byText.delete(oldestText);
      messages.push(protocol.serialize.close({ type: 'S', name: oldest.name }));
    }
    const name = `kb_${this.#next++}`;
    messages.push(
      protocol.serialize.parse({ name, text: sql }),
      protocol.serialize.describe({ type: 'S', name }),
      protocol.serialize.sync(),
    );
    const described = await this.#pg.execProtocolStream(concat(messages), { syncToFs: false });
    const statement = { name, paramTypes: parse.parseDescribeStatementResults(described) };
    this.#byText.set(sql, statement);
    return statement;
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** PGlite's own shared_buffers, and the most the default grows to (RSS grows by about as much). */
const SHARED_BUFFERS_MIN_MB = 128;
export const SHARED_BUFFERS_MAX_MB = 512;

/**
 * shared_buffers for a data directory: a quarter of its size on disk, between 128 MB (PGlite's default)
 * and 512 MB, in steps of 64 MB. A page missing from PGlite's buffers is read with a synchronous file read
 * from WASM: at 100k chunks (3.2 GB on disk, a 215 MB HNSW index) those reads were a fifth of the main
 * thread's time under search, and 512 MB took the endpoint's p95 from 24 to 19 ms with one client and from
 * 278 to 220 ms with 16 (docs/benchmarks.md, bench/search-latency.ts). PGlite touches the whole buffer pool
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
