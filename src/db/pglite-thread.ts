import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { ForegroundGate } from '../lib/foreground-gate.ts';
import { lockDataDir } from './data-dir-lock.ts';
import type { Database, Queryable, TransactionOptions } from './database.ts';
import type { PgliteOpenOptions } from './pglite.ts';

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
  opts: PgliteOpenOptions = {},
): Promise<Database> {
  const lock = dataDir ? lockDataDir(dataDir) : null;
  try {
    const settings = { dataDir, sharedBuffersMb: opts.sharedBuffersMb, image: opts.image };
    return await startPgliteThread(settings, () => lock?.release());
  } catch (err) {
    lock?.release();
    throw err;
  }
}

/** {@link openPgliteThread} once the directory is locked; `ended` runs when the thread has ended. */
async function startPgliteThread(settings: PgliteThreadSettings, ended: () => void): Promise<Database> {
  const thread = new PgliteThreadChannel(settings, ended);
  await thread.ready;
  const base = thread.queryable(null);
  return {
    kind: 'pglite',
    foreground: new ForegroundGate(),
    query: base.query,
    exec: base.exec,
    queryWithSettings: <T>(settings: string, sql: string, params?: readonly unknown[]) =>
      thread.call({ type: 'with-settings', id: thread.nextId(), settings, sql, params }) as Promise<T[]>,
    transaction: (fn, opts) => thread.transaction(fn, opts),
    close: () => thread.close(),
  };
}

/** The main thread's end of the database thread: the messages it sends and the answers it waits for. */
class PgliteThreadChannel {
  readonly ready: Promise<void>;
  readonly #worker: Worker;
  /** The synchronous calls' channel: the thread answers on it, then sets `signal` and wakes the waiter. */
  readonly #syncPort: MessagePort;
  readonly #signal = new Int32Array(new SharedArrayBuffer(4));
  readonly #pending = new Map<
    number,
    { resolve: (rows: unknown[]) => void; reject: (err: Error) => void; origin: Error }
  >();
  #nextId = 1;
  #nextTx = 1;
  #closed = false;
  #stopped: Error | null = null;
  #failure: string | undefined;
  #openFailure: Error | undefined;

  constructor(settings: PgliteThreadSettings, ended: () => void) {
    const { port1, port2: threadSyncPort } = new MessageChannel();
    this.#syncPort = port1;
    const threadData: PgliteThreadData = {
      settings,
      syncPort: threadSyncPort,
      signal: this.#signal.buffer as SharedArrayBuffer,
    };
    this.#worker = new Worker(new URL('./pglite-thread-worker.ts', import.meta.url), {
      workerData: threadData,
      transferList: [threadSyncPort],
      name: 'pglite',
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.#worker.on('message', (m: FromDbThread) => {
        if (m.type === 'ready') resolve();
        else this.#answered(m);
      });
      // Without an 'error' listener an exception in the thread would be rethrown here and end the service.
      this.#worker.on('error', (err) => {
        this.#failure = err.message;
      });
      this.#worker.once('exit', (code) => {
        ended();
        this.#stopped = new Error(
          `The embedded database's thread stopped (${this.#failure ?? `exit code ${code}`})`,
        );
        for (const call of this.#pending.values()) call.reject(this.#stopped);
        this.#pending.clear();
        reject(this.#openFailure ?? this.#stopped);
      });
    });
  }

  nextId(): number {
    return this.#nextId++;
  }

  #answered(m: Exclude<FromDbThread, { type: 'ready' }>): void {
    // Answered once the thread has ended (it ends right after), so the lock outlives what it opened.
    if (m.type === 'open-failed') {
      this.#openFailure = asError(m.error, new Error());
      return;
    }
    const call = this.#pending.get(m.id);
    this.#pending.delete(m.id);
    // Idle, the thread does not keep the process alive (PGlite on the main thread did not either);
    // closing, it does until it has ended.
    if (this.#pending.size === 0 && !this.#closed) this.#worker.unref();
    if (!call) return;
    if (m.type === 'rows') call.resolve(m.rows);
    else call.reject(asError(m.error, call.origin));
  }

  /** An asynchronous call: the main thread goes on, and the answer comes as a message. */
  call(m: ToDbThread): Promise<unknown[]> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    // The caller's stack, for an error that comes back: the thread's own says nothing about who asked.
    // (Kept as an Error: V8 formats its stack only if an error needs it.)
    const origin = new Error();
    return new Promise((resolve, reject) => {
      this.#pending.set(m.id, { resolve, reject, origin });
      this.#worker.ref();
      this.#worker.postMessage(m);
    });
  }

  /** A statement of an open transaction: the main thread blocks until the thread has answered. */
  async callNow(m: ToDbThread & { type: 'query' | 'exec' | 'end' }): Promise<unknown[]> {
    if (this.#stopped) throw this.#stopped;
    Atomics.store(this.#signal, SIGNAL, WAITING);
    this.#syncPort.postMessage(m);
    waitForAnswer(this.#signal);
    const answer = receiveMessageOnPort(this.#syncPort)?.message as FromDbThread | undefined;
    if ((answer?.type !== 'rows' && answer?.type !== 'error') || answer.id !== m.id) {
      // No answer to this call: the thread woke it as it ended (pglite-thread-worker.ts).
      this.#stopped ??= new Error("The embedded database's thread stopped during a transaction");
      throw this.#stopped;
    }
    if (answer.type === 'error') throw asError(answer.error, new Error());
    return answer.rows;
  }

  /** Statements outside a transaction (`tx` null) or in open transaction `tx`. */
  queryable(tx: number | null, opts: { yieldOnLarge?: boolean } = {}): Queryable {
    return {
      query: <T>(sql: string, params?: readonly unknown[]) => {
        const m = { type: 'query', id: this.nextId(), tx, sql, params } as const;
        const synchronous = tx !== null && (!opts.yieldOnLarge || isSmall(params));
        return (synchronous ? this.callNow(m) : this.call(m)) as Promise<T[]>;
      },
      exec: async (sql: string) => {
        const m = { type: 'exec', id: this.nextId(), tx, sql } as const;
        await (tx === null ? this.call(m) : this.callNow(m));
      },
    };
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>, opts?: TransactionOptions): Promise<T> {
    const tx = this.#nextTx++;
    await this.call({ type: 'begin', id: this.nextId(), tx });
    let out: T;
    try {
      out = await fn(this.queryable(tx, { yieldOnLarge: opts?.yieldOnLargeStatements ?? false }));
    } catch (err) {
      await this.callNow({ type: 'end', id: this.nextId(), tx, commit: false }).catch(() => {});
      throw err;
    }
    await this.callNow({ type: 'end', id: this.nextId(), tx, commit: true });
    return out;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#stopped) return;
    // The thread answers what was sent before, then closes PGlite and ends.
    await this.call({ type: 'close', id: this.nextId() });
    await new Promise<void>((resolve) => {
      if (this.#stopped) resolve();
      else this.#worker.once('exit', () => resolve());
    });
  }
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
  image: string | undefined;
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
