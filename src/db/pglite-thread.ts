import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { lockDataDir } from './data-dir-lock.ts';
import type { Database, Queryable } from './database.ts';

/**
 * Embedded mode's database: PGlite on a thread of its own (pglite-thread-worker.ts runs it with
 * `openPgliteUnderLock` of pglite.ts), so the main thread only posts statements and reads their rows.
 * The directory's lock (data-dir-lock.ts) is taken here, before the thread starts, and released when the
 * thread has ended, however it ends: a second opener is refused with DataDirInUseError as it is thrown.
 *
 * Why: PGlite runs Postgres as WASM on the thread that calls it, and under search load that was 73% of a
 * saturated main thread (the HNSW scan itself most of it) while HTTP, JSON and auth waited their turn; on
 * its own thread the two overlap. A long statement outside a transaction (the indexer's VACUUM after a
 * bulk load) no longer stops `/healthz` either. PGlite still runs one statement at a time.
 *
 * A transaction is held open on the thread while the main thread sends its statements one by one, and
 * PGlite's lock is held meanwhile, so nothing else can use the database until it ends. Its statements are
 * therefore synchronous calls: the main thread blocks until the answer is there (as it did while PGlite
 * ran on it) instead of waiting for its event loop's next turn to read it, which under a crawl's load cost
 * each commit several milliseconds of everyone's time (crawls were 12% slower with asynchronous answers).
 * Statements outside a transaction, and `begin` (which waits for the lock, perhaps held by a transaction
 * that needs the main thread to go on), are asynchronous: there the two threads work in parallel. Hot paths
 * with settings use {@link Database.queryWithSettings}, one asynchronous message.
 *
 * Rows and parameters are copied between threads (structured clone: Date, Uint8Array, bigint and plain
 * objects survive). A Postgres error keeps its fields (code, detail, constraint...).
 */
export async function openPgliteThread(
  dataDir: string | null,
  opts: { sharedBuffersMb?: number | undefined } = {},
): Promise<Database> {
  const lock = dataDir ? lockDataDir(dataDir) : null;
  try {
    return await startPgliteThread({ dataDir, sharedBuffersMb: opts.sharedBuffersMb }, () => lock?.release());
  } catch (err) {
    lock?.release();
    throw err;
  }
}

/** {@link openPgliteThread} once the directory is locked; `ended` runs when the thread has ended. */
async function startPgliteThread(settings: PgliteThreadSettings, ended: () => void): Promise<Database> {
  // The synchronous calls' channel: the thread answers on it, then sets `signal` and wakes the waiter.
  const { port1: syncPort, port2: threadSyncPort } = new MessageChannel();
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const threadData: PgliteThreadData = {
    settings,
    syncPort: threadSyncPort,
    signal: signal.buffer as SharedArrayBuffer,
  };
  const worker = new Worker(new URL('./pglite-thread-worker.ts', import.meta.url), {
    workerData: threadData,
    transferList: [threadSyncPort],
    name: 'pglite',
  });
  const pending = new Map<
    number,
    { resolve: (rows: unknown[]) => void; reject: (err: Error) => void; origin: Error }
  >();
  let nextId = 1;
  let nextTx = 1;
  let closed = false;
  let stopped: Error | null = null;
  let failure: string | undefined;
  let openFailure: Error | undefined;

  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (m: FromDbThread) => {
      if (m.type === 'ready') return resolve();
      // Answered once the thread has ended (it ends right after), so the lock outlives what it opened.
      if (m.type === 'open-failed') {
        openFailure = asError(m.error, new Error());
        return;
      }
      const call = pending.get(m.id);
      pending.delete(m.id);
      // Idle, the thread does not keep the process alive (PGlite on the main thread did not either);
      // closing, it does until it has ended.
      if (pending.size === 0 && !closed) worker.unref();
      if (!call) return;
      if (m.type === 'rows') call.resolve(m.rows);
      else call.reject(asError(m.error, call.origin));
    });
    // Without an 'error' listener an exception in the thread would be rethrown here and end the service.
    worker.on('error', (err) => {
      failure = err.message;
    });
    worker.once('exit', (code) => {
      ended();
      stopped = new Error(`The embedded database's thread stopped (${failure ?? `exit code ${code}`})`);
      for (const call of pending.values()) call.reject(stopped);
      pending.clear();
      reject(openFailure ?? stopped);
    });
  });

  const call = (m: ToDbThread): Promise<unknown[]> => {
    if (stopped) return Promise.reject(stopped);
    // The caller's stack, for an error that comes back: the thread's own says nothing about who asked.
    // (Kept as an Error: V8 formats its stack only if an error needs it.)
    const origin = new Error();
    return new Promise((resolve, reject) => {
      pending.set(m.id, { resolve, reject, origin });
      worker.ref();
      worker.postMessage(m);
    });
  };
  /** A statement of an open transaction: the main thread blocks until the thread has answered. */
  const callNow = async (m: ToDbThread & { type: 'query' | 'exec' | 'end' }): Promise<unknown[]> => {
    if (stopped) throw stopped;
    Atomics.store(signal, SIGNAL, WAITING);
    syncPort.postMessage(m);
    waitForAnswer(signal);
    const answer = receiveMessageOnPort(syncPort)?.message as FromDbThread | undefined;
    if ((answer?.type !== 'rows' && answer?.type !== 'error') || answer.id !== m.id) {
      // No answer to this call: the thread woke it as it ended (pglite-thread-worker.ts).
      stopped ??= new Error("The embedded database's thread stopped during a transaction");
      throw stopped;
    }
    if (answer.type === 'error') throw asError(answer.error, new Error());
    return answer.rows;
  };
  const on = (tx: number | null, yieldOnLarge = false): Queryable => ({
    query: <T>(sql: string, params?: readonly unknown[]) => {
      const m = { type: 'query', id: nextId++, tx, sql, params } as const;
      const synchronous = tx !== null && (!yieldOnLarge || isSmall(params));
      return (synchronous ? callNow(m) : call(m)) as Promise<T[]>;
    },
    exec: async (sql: string) => {
      const m = { type: 'exec', id: nextId++, tx, sql } as const;
      await (tx === null ? call(m) : callNow(m));
    },
  });

  await ready;
  const base = on(null);
  return {
    kind: 'pglite',
    query: base.query,
    exec: base.exec,
    queryWithSettings: <T>(settings: string, sql: string, params?: readonly unknown[]) =>
      call({ type: 'with-settings', id: nextId++, settings, sql, params }) as Promise<T[]>,
    async transaction(fn, opts) {
      const tx = nextTx++;
      await call({ type: 'begin', id: nextId++, tx });
      let out: Awaited<ReturnType<typeof fn>>;
      try {
        out = await fn(on(tx, opts?.yieldOnLargeStatements ?? false));
      } catch (err) {
        await callNow({ type: 'end', id: nextId++, tx, commit: false }).catch(() => {});
        throw err;
      }
      await callNow({ type: 'end', id: nextId++, tx, commit: true });
      return out;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (stopped) return;
      // The thread answers what was sent before, then closes PGlite and ends.
      await call({ type: 'close', id: nextId++ });
      await new Promise<void>((resolve) => {
        if (stopped) resolve();
        else worker.once('exit', () => resolve());
      });
    },
  };
}

/**
 * In a transaction opened with `yieldOnLargeStatements`, a statement is synchronous only when it is small: parameters of at most this many
 * characters of text, and arrays (rows written at once) of at most {@link SYNC_MAX_ARRAY_ELEMENTS}. A
 * larger one is asynchronous, as statements outside transactions are, because PGlite's time grows with
 * what it writes and a synchronous call stops every other request meanwhile: the insert of a
 * 5,000,000-character item took 0.8-1.6 s (compression, search words), the indexer's insert of 8 chunks
 * 40 ms on a quiet machine and hundreds on a loaded one (an HNSW insert a row). The transaction's lock
 * is held either way.
 */
const SYNC_MAX_PARAM_CHARS = 100_000;
const SYNC_MAX_ARRAY_ELEMENTS = 4;

function isSmall(params: readonly unknown[] | undefined): boolean {
  let chars = 0;
  for (const p of params ?? []) {
    if (typeof p === 'string') chars += p.length;
    else if (Array.isArray(p)) {
      if (p.length > SYNC_MAX_ARRAY_ELEMENTS) return false;
      for (const e of p) if (typeof e === 'string') chars += e.length;
    }
  }
  return chars <= SYNC_MAX_PARAM_CHARS;
}

/**
 * Blocks until `signal` says answered, not merely until woken: the wake-up of the previous call can come
 * late (the thread stored its answer, was descheduled, then notified) and would wake this one before its
 * answer is there. A thread that dies sets the value too (pglite-thread-worker.ts).
 */
export function waitForAnswer(signal: Int32Array): void {
  while (Atomics.load(signal, SIGNAL) === WAITING) Atomics.wait(signal, SIGNAL, WAITING, SYNC_CHECK_MS);
}

/** A Postgres error (or any other) from the thread, as an Error with its fields and the stack of `origin` (the caller's). */
function asError(fields: ErrorFields, origin: Error): Error {
  const err = new Error(fields.message);
  Object.assign(err, fields);
  const callerStack = origin.stack?.split('\n').slice(2).join('\n') ?? '';
  err.stack = `${fields.name ?? 'Error'}: ${fields.message}\n${callerStack}`;
  return err;
}

// ---- Messages between the two threads ---------------------------------------------------------------

export interface PgliteThreadSettings {
  dataDir: string | null;
  sharedBuffersMb: number | undefined;
}

export interface PgliteThreadData {
  settings: PgliteThreadSettings;
  /** Where the thread answers the statements of open transactions (synchronous calls). */
  syncPort: MessagePort;
  /** Int32 at {@link SIGNAL}: {@link WAITING} while a synchronous call waits, {@link ANSWERED} once answered. */
  signal: SharedArrayBuffer;
}

export const SIGNAL = 0;
export const WAITING = 0;
export const ANSWERED = 1;
/** How long one wait of a synchronous call lasts before it looks again (a statement may take longer). */
const SYNC_CHECK_MS = 1_000;

/** An error's message, name and own fields of plain values (an Error's own fields do not survive a clone). */
export type ErrorFields = { message: string; name?: string } & Record<string, unknown>;

export type ToDbThread =
  | { type: 'query'; id: number; tx: number | null; sql: string; params: readonly unknown[] | undefined }
  | { type: 'exec'; id: number; tx: number | null; sql: string }
  | {
      type: 'with-settings';
      id: number;
      settings: string;
      sql: string;
      params: readonly unknown[] | undefined;
    }
  | { type: 'begin'; id: number; tx: number }
  | { type: 'end'; id: number; tx: number; commit: boolean }
  | { type: 'close'; id: number };

export type FromDbThread =
  | { type: 'ready' }
  | { type: 'open-failed'; error: ErrorFields }
  | { type: 'rows'; id: number; rows: unknown[] }
  | { type: 'error'; id: number; error: ErrorFields };
