/**
 * The thread that owns embedded mode's PGlite (started by openPgliteThread in pglite-thread.ts). It runs
 * what the main thread posts, each as soon as it arrives (PGlite queues them on its own locks, in order);
 * a transaction stays open here, its statements arriving one by one, until the main thread ends it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Database, Queryable } from './database.ts';
import { openPgliteUnderLock } from './pglite.ts';
import {
  ANSWERED,
  type ErrorFields,
  type FromDbThread,
  type PgliteThreadData,
  SIGNAL,
  type ToDbThread,
} from './pglite-thread.ts';

if (!parentPort)
  throw new Error('pglite-thread-worker.ts runs as a worker thread (openPgliteThread starts it)');
const port = parentPort;
const { settings, syncPort, signal: signalBuffer } = workerData as PgliteThreadData;
const signal = new Int32Array(signalBuffer);
/** Ids of the synchronous calls (statements of open transactions) not yet answered. */
const synchronous = new Set<number>();

function send(message: FromDbThread): void {
  const to =
    (message.type === 'rows' || message.type === 'error') && synchronous.delete(message.id) ? syncPort : port;
  try {
    to.postMessage(message);
  } catch (err) {
    // Rows that cannot be copied to the other thread: the caller gets an error, not silence.
    if (message.type !== 'rows') throw err;
    to.postMessage({ type: 'error', id: message.id, error: errorFields(err) } satisfies FromDbThread);
  }
  if (to === syncPort) {
    Atomics.store(signal, SIGNAL, ANSWERED);
    Atomics.notify(signal, SIGNAL);
  }
}

// A thread that ends while the main thread waits on a synchronous call must wake it (it then finds no answer).
process.on('exit', () => {
  Atomics.store(signal, SIGNAL, ANSWERED);
  Atomics.notify(signal, SIGNAL);
});

function errorFields(err: unknown): ErrorFields {
  if (!(err instanceof Error)) return { message: String(err) };
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) {
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) fields[k] = v;
  }
  return { ...fields, name: err.name, message: err.message };
}

/** The statements of one open transaction, in order, until its end. */
class TransactionInbox {
  readonly #queue: Array<ToDbThread & { type: 'query' | 'exec' | 'end' }> = [];
  #wake: (() => void) | null = null;

  push(m: ToDbThread & { type: 'query' | 'exec' | 'end' }): void {
    this.#queue.push(m);
    this.#wake?.();
    this.#wake = null;
  }

  async next(): Promise<ToDbThread & { type: 'query' | 'exec' | 'end' }> {
    while (this.#queue.length === 0) await new Promise<void>((resolve) => (this.#wake = resolve));
    return this.#queue.shift()!;
  }
}

/** Thrown inside PGlite's transaction to roll it back when the main thread's side failed. */
class RollBack extends Error {}

let db: Database;
try {
  // The opening thread holds the directory's lock (openPgliteThread).
  db = await openPgliteUnderLock(settings.dataDir, {
    sharedBuffersMb: settings.sharedBuffersMb,
    image: settings.image,
  });
} catch (err) {
  send({ type: 'open-failed', error: errorFields(err) });
  port.close();
  throw err;
}
send({ type: 'ready' });

const inboxes = new Map<number, TransactionInbox>();
/** Work started and not yet answered: close() waits for it. */
const inFlight = new Set<Promise<void>>();

function answer(id: number, work: Promise<unknown[]>): void {
  const done = work.then(
    (rows) => send({ type: 'rows', id, rows }),
    (err: unknown) => send({ type: 'error', id, error: errorFields(err) }),
  );
  inFlight.add(done);
  void done.finally(() => inFlight.delete(done));
}

async function statement(q: Queryable, m: ToDbThread & { type: 'query' | 'exec' }): Promise<unknown[]> {
  if (m.type === 'query') return q.query(m.sql, m.params);
  await q.exec(m.sql);
  return [];
}

/** Opens a transaction; answers `begin` once PGlite's transaction lock is held, `end` once it is over. */
function transaction(m: ToDbThread & { type: 'begin' }): void {
  const inbox = new TransactionInbox();
  inboxes.set(m.tx, inbox);
  let endId: number | null = null;
  const work = db.transaction(async (tx) => {
    send({ type: 'rows', id: m.id, rows: [] });
    for (;;) {
      const next = await inbox.next();
      if (next.type === 'end') {
        endId = next.id;
        if (next.commit) return;
        throw new RollBack();
      }
      // A failed statement is the main thread's to handle (it rolls back by throwing).
      const rows = statement(tx, next);
      answer(next.id, rows);
      await rows.catch(() => {});
    }
  });
  const done = work
    .then(
      () => send({ type: 'rows', id: endId!, rows: [] }),
      (err: unknown) => {
        if (endId === null) send({ type: 'error', id: m.id, error: errorFields(err) });
        else if (err instanceof RollBack) send({ type: 'rows', id: endId, rows: [] });
        else send({ type: 'error', id: endId, error: errorFields(err) });
      },
    )
    .finally(() => inboxes.delete(m.tx));
  inFlight.add(done);
  void done.finally(() => inFlight.delete(done));
}

function toTransaction(m: ToDbThread & { type: 'query' | 'exec' | 'end' }): void {
  const inbox = m.tx === null ? undefined : inboxes.get(m.tx);
  if (inbox) inbox.push(m);
  else send({ type: 'error', id: m.id, error: { message: `transaction ${m.tx} is not open` } });
}

syncPort.on('message', (m: ToDbThread & { type: 'query' | 'exec' | 'end' }) => {
  synchronous.add(m.id);
  toTransaction(m);
});

port.on('message', (m: ToDbThread) => {
  switch (m.type) {
    case 'query':
    case 'exec':
      if (m.tx === null) answer(m.id, statement(db, m));
      else toTransaction(m);
      return;
    case 'end':
      toTransaction(m);
      return;
    case 'with-settings':
      answer(m.id, db.queryWithSettings(m.settings, m.sql, m.params));
      return;
    case 'begin':
      transaction(m);
      return;
    case 'close':
      void (async () => {
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        await db.close();
        send({ type: 'rows', id: m.id, rows: [] });
        syncPort.close();
        port.close();
      })();
      return;
  }
});
