/**
 * One pass over a source's listing, the way every connector that walks one needs it:
 *
 * 1. the listing: what it shows is either an item (kept, compared, read when changed), a record that is
 *    no item (a draft, unpublished: a held copy leaves), or a record it could not read (its failure is
 *    yielded; with an id the held copy stays, without one the listing proves nothing);
 * 2. the comparison with the documents the connection holds: an entry whose change token equals the held
 *    version is skipped, the rest are read (all of them in a `full` pass, which holds nothing);
 * 3. the reads, a few in flight or in batches, events yielded in listing order, with a checkpoint every
 *    so many entries; a run of reads failing in a row for passing reasons (after the client's retries)
 *    means the source is down, and ends the pass with an error before anything is deleted;
 * 4. the deletion pass, only after a listing that completed: every held document it did not show as an
 *    item (and nothing the pass settled otherwise) is deleted.
 *
 * The per-source parts are callbacks: how to list, the change token, how to read a batch. The pieces
 * ({@link FailureRun}, {@link deleteUnlisted}) are exported for passes whose reads are not a listing's
 * (a change feed's records, a ledger of products), so that they count and delete the same way.
 */
import type { KnownDocument, SyncEvent } from '../types.ts';
import { mapInOrder } from './in-order.ts';

/** What a listing shows of one record. */
export type ListedRecord<Entry, Cursor> =
  /** An item of the source: present, compared with the held version, read when new or changed. */
  | { kind: 'item'; id: string; entry: Entry }
  /**
   * Listed, but not an item (a draft, unpublished, archived): its held copy leaves in the deletion pass.
   * With an entry it is still handed to the read (a listing that carries the records decides there).
   */
  | { kind: 'not_item'; id: string; entry?: Entry }
  /**
   * A record the listing could not read: its events are yielded; with an id its held copy stays, without
   * one the listing cannot tell what is gone and nothing is deleted.
   */
  | { kind: 'unreadable'; id: string | undefined; events: readonly SyncEvent<Cursor>[] };

/** What reading a batch of entries brought. */
export interface ReadOutcome<Cursor> {
  events: readonly SyncEvent<Cursor>[];
  /** The read failed for a reason another attempt may not have (5xx, network): counts toward the run. */
  transient?: Error | undefined;
  /** The read failed for good (a 4xx, a refused query): see {@link FailureRunOptions.permanentFailureResets}. */
  failed?: boolean;
  /** Ids the read found are no longer items (unpublished since the listing): they leave with the rest. */
  left?: readonly string[];
}

export interface ListingPassOptions<Entry, Cursor> {
  signal: AbortSignal;
  /** Held documents by external id; undefined in a `full` pass (read everything, delete nothing). */
  known: ReadonlyMap<string, KnownDocument> | undefined;
  /** The listing, record by record. */
  list: () => AsyncIterable<ListedRecord<Entry, Cursor>>;
  /**
   * When entries are read: `after_listing` (default; the token may need the whole listing, e.g. a parent's
   * title) or `as_listed` (a listing that carries its records: each is read as soon as it is listed).
   */
  readWhen?: 'after_listing' | 'as_listed';
  /**
   * The entry's change token, compared with the held version: equal means unchanged, not read. Without it
   * every item is read (and the read compares). Called after the listing with `after_listing`.
   */
  token?: (entry: Entry) => string;
  /** In a `full` pass, the index of the first entry to read (a retried pass goes on after its checkpoint). */
  resumeAt?: (entries: readonly Entry[]) => number;
  /** Reads a batch of entries (new or changed) into events. */
  read: (batch: readonly Entry[]) => Promise<ReadOutcome<Cursor>> | ReadOutcome<Cursor>;
  /** Entries a read takes. Default 1. */
  batchSize?: number;
  /** Reads in flight at once (events still come in listing order). Default 1. */
  concurrency?: number;
  /** The run of failing reads that ends the pass, and how its error names them. */
  failures: FailureRunOptions;
  /** A checkpoint every `every` entries read, saving the last one's position. */
  checkpoint?: { every: number; cursor: (last: Entry) => Cursor };
  /**
   * Ids whose fate this pass settled otherwise (deleted already, failed): the deletion pass leaves them.
   */
  settled?: (id: string) => boolean;
  /** Documents yielded earlier in this pass (not held before): they leave too when the listing misses them. */
  yieldedEarlier?: () => Iterable<{ id: string; table: string }>;
  /** Told of each deletion the deletion pass yields. */
  onDeleted?: (id: string) => void;
}

/** What the pass saw, for the caller's bookkeeping. */
export interface ListingSummary<Entry> {
  /** Whether every listed record had an id: only then were deletions made. */
  complete: boolean;
  /** Ids listed as items (or unreadable with an id). */
  present: ReadonlySet<string>;
  /** Every id the listing showed, items or not. */
  listed: ReadonlySet<string>;
  entries: readonly Entry[];
}

/** Runs one listing pass; see the file comment. */
export async function* listingPass<Entry, Cursor>(
  opts: ListingPassOptions<Entry, Cursor>,
): AsyncGenerator<SyncEvent<Cursor>, ListingSummary<Entry>> {
  const present = new Set<string>();
  const listed = new Set<string>();
  const left = new Set<string>();
  const items: Array<{ id: string; entry: Entry }> = [];
  let complete = true;
  const reader = new Reader(opts, left);
  for await (const record of opts.list()) {
    if (record.kind === 'unreadable') {
      if (record.id === undefined) complete = false;
      else {
        present.add(record.id);
        listed.add(record.id);
      }
      yield* record.events;
      continue;
    }
    listed.add(record.id);
    if (record.kind === 'item') present.add(record.id);
    if (record.entry === undefined) continue;
    const entry = record.entry;
    if (opts.readWhen === 'as_listed') {
      if (record.kind === 'not_item' || isChanged(opts, record.id, entry)) yield* reader.read([entry]);
    } else if (record.kind === 'item') items.push({ id: record.id, entry });
  }
  const entries = items.map((i) => i.entry);
  if (opts.readWhen !== 'as_listed') {
    const todo = opts.known
      ? items.filter((i) => isChanged(opts, i.id, i.entry)).map((i) => i.entry)
      : entries.slice(opts.resumeAt?.(entries) ?? 0);
    yield* reader.readAll(todo);
  }
  for (const id of left) present.delete(id);
  if (opts.known && complete) {
    yield* deleteUnlisted({
      signal: opts.signal,
      known: opts.known,
      present,
      ...(opts.settled ? { settled: opts.settled } : {}),
      ...(opts.yieldedEarlier ? { yieldedEarlier: opts.yieldedEarlier() } : {}),
      ...(opts.onDeleted ? { onDeleted: opts.onDeleted } : {}),
    });
  }
  return { complete, present, listed, entries };
}

function isChanged<Entry, Cursor>(
  opts: ListingPassOptions<Entry, Cursor>,
  id: string,
  entry: Entry,
): boolean {
  if (!opts.known || !opts.token) return true;
  return opts.known.get(id)?.version !== opts.token(entry);
}

/** Reads entries in batches, a few in flight, counting failures in a row and checkpointing. */
class Reader<Entry, Cursor> {
  private readonly opts: ListingPassOptions<Entry, Cursor>;
  private readonly left: Set<string>;
  private readonly run: FailureRun;
  private sinceCheckpoint = 0;

  constructor(opts: ListingPassOptions<Entry, Cursor>, left: Set<string>) {
    this.opts = opts;
    this.left = left;
    this.run = new FailureRun(opts.failures);
  }

  async *read(batch: readonly Entry[]): AsyncGenerator<SyncEvent<Cursor>> {
    yield* this.handle(batch, await this.opts.read(batch));
  }

  async *readAll(todo: readonly Entry[]): AsyncGenerator<SyncEvent<Cursor>> {
    const size = Math.max(1, this.opts.batchSize ?? 1);
    const batches: Entry[][] = [];
    for (let i = 0; i < todo.length; i += size) batches.push(todo.slice(i, i + size));
    const reads = mapInOrder(batches, Math.max(1, this.opts.concurrency ?? 1), async (b) =>
      this.opts.read(b),
    );
    for await (const [batch, outcome] of reads) yield* this.handle(batch, outcome);
  }

  private *handle(batch: readonly Entry[], outcome: ReadOutcome<Cursor>): Generator<SyncEvent<Cursor>> {
    yield* outcome.events;
    for (const id of outcome.left ?? []) this.left.add(id);
    this.run.record(outcome.transient, { failed: outcome.failed === true });
    const checkpoint = this.opts.checkpoint;
    if (!checkpoint) return;
    this.sinceCheckpoint += batch.length;
    if (this.sinceCheckpoint >= checkpoint.every) {
      this.sinceCheckpoint = 0;
      yield { kind: 'checkpoint', cursor: checkpoint.cursor(batch[batch.length - 1]!) };
    }
  }
}

export interface FailureRunOptions {
  /** Failures in a row that end the pass. */
  max: number;
  /** The error's start: `Confluence failed 10 document requests in a row` is `${source} failed N ${what}`. */
  source: string;
  /** What failed, plural: `document requests`. */
  what: string;
  /**
   * Whether a read that failed for good (not transient) ends a run, as a success does. Default true; false
   * where one request carries a batch, so that a batch refused for good between outages is not mistaken
   * for the source coming back.
   */
  permanentFailureResets?: boolean;
}

/**
 * Reads failing in a row for passing reasons: past `max`, the source is down, and the pass ends with an
 * error (a job failure, before any deletion) rather than failing every remaining document one by one.
 */
export class FailureRun {
  private readonly opts: FailureRunOptions;
  private inARow = 0;

  constructor(opts: FailureRunOptions) {
    this.opts = opts;
  }

  /** One read's result: its transient error, or undefined when it succeeded or failed for good. */
  record(transient: Error | undefined, how: { failed: boolean } = { failed: false }): void {
    if (!transient) {
      if (!how.failed || this.opts.permanentFailureResets !== false) this.inARow = 0;
      return;
    }
    if (++this.inARow >= this.opts.max) {
      throw new Error(
        `${this.opts.source} failed ${this.inARow} ${this.opts.what} in a row; last: ${transient.message}`,
      );
    }
  }
}

export interface DeletionPassOptions {
  signal: AbortSignal;
  /** Held documents by external id (their table comes from here). */
  known: ReadonlyMap<string, KnownDocument>;
  /** What a complete listing showed as items. */
  present: ReadonlySet<string>;
  settled?: (id: string) => boolean;
  yieldedEarlier?: Iterable<{ id: string; table: string }>;
  onDeleted?: (id: string) => void;
}

/**
 * The deletion pass, for a listing that completed: held documents (and ones yielded earlier in the pass)
 * it did not show as items leave, except what the pass settled otherwise. Each id once.
 */
export function* deleteUnlisted<Cursor>(opts: DeletionPassOptions): Generator<SyncEvent<Cursor>> {
  const done = new Set<string>();
  const candidates = [
    ...[...opts.known].map(([id, doc]) => ({ id, table: doc.table })),
    ...(opts.yieldedEarlier ?? []),
  ];
  for (const { id, table } of candidates) {
    opts.signal.throwIfAborted();
    if (done.has(id) || opts.present.has(id) || opts.settled?.(id)) continue;
    done.add(id);
    opts.onDeleted?.(id);
    yield { kind: 'deleted', externalId: id, table };
  }
}
