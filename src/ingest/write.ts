/**
 * The pipeline's write step: an item's chunks and vectors into `chunks`, so that search sees all of its
 * old chunks or all of its new ones, never a mix, and never chunks of content that is no longer the item's.
 *
 * An item whose chunks fit in one transaction (the indexer's `commitChunks`) is swapped in it, several
 * small items to a transaction. A larger one is written in parts under a new generation listed in
 * `chunk_staging`, whose chunks search skips; its last part flips it: the item turns `indexed`, its row in
 * `chunk_staging` and its other generations' chunks go. Each part first checks that the item still holds
 * the content that was embedded and is still pending: if not, the attempt drops what it staged and the
 * item stays pending, to be taken again. A crash between parts leaves the old chunks served, the item
 * pending and a staged generation nobody sees, which the item's next attempt removes with the old chunks
 * (and the embedded service removes at start).
 */
import type { Database, Queryable } from '../db/database.ts';
import { toRealArrayParam } from '../db/real-array-param.ts';
import {
  type ChunkRows,
  deleteItemChunks,
  deleteItemGenerationChunks,
  deleteItemStaging,
  deleteOtherGenerationsChunks,
  deleteStagedGeneration,
  endIndexingLease,
  insertChunks,
  insertStagedChunks,
  type LeasedItem,
  lockItemForPart,
  markIndexed,
  markIndexedIfUnchanged,
  stageGeneration,
} from '../db/repositories/chunks.ts';
import { toVectorLiteral } from '../embedding/vector.ts';
import type { Chunk } from './markdown-chunker.ts';

/** An item of a round on its way into `chunks`. */
export interface ItemWrite {
  item: LeasedItem;
  chunks: Chunk[];
  vectors: Float32Array[];
  /** The generation its chunks are written under, once its first part is written. */
  generation: number | null;
  /** Its content changed (or another attempt indexed it) meanwhile: nothing more is written. */
  dropped: boolean;
}

/** Chunks `from` to `to` (exclusive) of one item, written in one transaction. */
export interface Part {
  write: ItemWrite;
  from: number;
  to: number;
}

/** Where chunks are written, and by which model their vectors were made. */
interface ChunkTarget {
  db: Database;
  modelId: string;
  dimensions: number;
}

/**
 * Embedded mode writes a large item's staged chunks this many to a statement, each statement on its own
 * rather than in a transaction. PGlite has one connection: a transaction holds it from its first
 * statement to its commit, and every other organization's search waits behind it, while a statement
 * alone is one turn of PGlite's queue, after which the reads that queued meanwhile run. An HNSW insert
 * costs 5 ms a chunk on a quiet machine and several times that on a loaded one, so one chunk a statement
 * keeps a read's wait short: another organization's search p95 while a 5,000,000-character document was
 * written went from 40 ms with two to 27 ms with one, and the document took no longer to index
 * (docs/benchmarks.md, bench/event-loop.ts). Staged chunks need no transaction: search skips them, and each
 * insert checks by itself that the item is unchanged and the generation still staged. Server mode keeps
 * the parts' transactions: there reads do not wait for writers.
 */
const STAGED_STATEMENT_CHUNKS = 1;

/**
 * The longest a write waits for the requests in progress before it goes anyway (Database.foreground):
 * longer than a search takes, short enough that indexing goes on under constant traffic.
 */
const MAX_WAIT_FOR_REQUESTS_MS = 100;

/** Embedded mode: the next write starts between requests (ForegroundGate says why). */
function giveWayToRequests(target: ChunkTarget): Promise<void> | undefined {
  return target.db.foreground?.quiet(MAX_WAIT_FOR_REQUESTS_MS);
}

/**
 * A round's transactions: items packed whole while they fit in `maxChunks` (an item without chunks
 * counts one), and an item larger than that alone in parts of `maxChunks`, its last part sharing its
 * transaction with the items after it.
 */
export function planTransactions(writes: ItemWrite[], maxChunks: number): Part[][] {
  const txs: Part[][] = [];
  let current: Part[] = [];
  let room = maxChunks;
  const close = () => {
    if (current.length > 0) txs.push(current);
    current = [];
    room = maxChunks;
  };
  for (const write of writes) {
    const n = write.chunks.length;
    if (n <= maxChunks) {
      const cost = Math.max(1, n);
      if (cost > room) close();
      current.push({ write, from: 0, to: n });
      room -= cost;
      continue;
    }
    close();
    for (let from = 0; from < n; from += maxChunks) {
      const to = Math.min(n, from + maxChunks);
      current.push({ write, from, to });
      room -= to - from;
      if (to < n) close();
    }
  }
  close();
  return txs;
}

/**
 * Writes one planned transaction's parts. In embedded mode the part of a large item goes statement by
 * statement ({@link STAGED_STATEMENT_CHUNKS} says why), and the whole items in one transaction.
 */
export async function writeTransaction(target: ChunkTarget, parts: Part[]): Promise<void> {
  const byStatement = target.db.kind === 'pglite' ? parts.filter((p) => !isWhole(p)) : [];
  for (const part of byStatement) {
    if (!part.write.dropped) await writeStagedPartByStatements(target, part);
  }
  const inTransaction = parts.filter((p) => !byStatement.includes(p) && !p.write.dropped);
  if (inTransaction.length === 0) return;
  await giveWayToRequests(target);
  // The chunks' inserts (an HNSW insert a row) may take PGlite hundreds of milliseconds on a loaded
  // machine: the event loop serves other requests meanwhile.
  await target.db.transaction(
    async (tx) => {
      for (const part of inTransaction) {
        if (!part.write.dropped) await writePartInTransaction(tx, target, part);
      }
    },
    { yieldOnLargeStatements: true },
  );
}

function isWhole({ write, from, to }: Part): boolean {
  return from === 0 && to === write.chunks.length;
}

/**
 * One part of an item's chunks, in the caller's transaction. Every step first locks the item's row and
 * checks that it still holds the content that was embedded and is still pending: the writers of an
 * item (other workers' attempts, a new version being stored) take that lock first, so they serialize.
 */
async function writePartInTransaction(tx: Queryable, target: ChunkTarget, part: Part): Promise<void> {
  const { write, from, to } = part;
  const { item } = write;
  if (isWhole(part)) {
    // Fits in one transaction: the swap, under a generation of its own.
    const generation = await markIndexedIfUnchanged(tx, item.id, item.content_hash);
    if (generation === null) {
      await endIndexingLease(tx, item.id);
      return;
    }
    write.generation = generation;
    // Every other generation: the visible one and any an interrupted attempt staged.
    await deleteItemChunks(tx, item.id);
    await deleteItemStaging(tx, item.id);
    await insertChunks(tx, chunkRows(target, write, from, to));
    return;
  }
  const locked = await lockItemForPart(tx, item.id, item.content_hash, write.generation);
  if (from === 0) {
    if (locked === null) {
      write.dropped = true;
      await endIndexingLease(tx, item.id);
      return;
    }
    write.generation = await stageGeneration(tx, item.id);
  } else if (locked === null || !locked.staged) {
    // The content changed, or another attempt finished the item (and removed this one's staged part).
    await dropStaged(tx, write);
    return;
  }
  if (to > from) await insertChunks(tx, chunkRows(target, write, from, to));
  if (to === write.chunks.length) await flipStaged(tx, write);
}

/**
 * One part of a large item in embedded mode: its generation staged in a small transaction (first part),
 * its chunks in statements of their own that each check the item themselves, and the flip in a small
 * transaction (last part). Between two statements PGlite runs what queued meanwhile.
 */
async function writeStagedPartByStatements(target: ChunkTarget, part: Part): Promise<void> {
  const { db } = target;
  const { write, from, to } = part;
  const { item } = write;
  if (from === 0) {
    await giveWayToRequests(target);
    write.generation = await db.transaction(async (tx) => {
      if ((await lockItemForPart(tx, item.id, item.content_hash, null)) !== null) {
        return stageGeneration(tx, item.id);
      }
      await endIndexingLease(tx, item.id);
      return null;
    });
    if (write.generation === null) {
      write.dropped = true;
      return;
    }
  }
  for (let at = from; at < to; at += STAGED_STATEMENT_CHUNKS) {
    const rows = chunkRows(target, write, at, Math.min(to, at + STAGED_STATEMENT_CHUNKS));
    await giveWayToRequests(target);
    if ((await insertStagedChunks(db, rows, item.content_hash)) === 0) {
      await db.transaction((tx) => dropStaged(tx, write));
      return;
    }
  }
  if (to < write.chunks.length) return;
  await giveWayToRequests(target);
  await db.transaction(async (tx) => {
    const locked = await lockItemForPart(tx, item.id, item.content_hash, write.generation);
    if (locked === null || !locked.staged) await dropStaged(tx, write);
    else await flipStaged(tx, write);
  });
}

/** The attempt gives up: what it staged goes (if it is still there), the item stays pending. */
async function dropStaged(tx: Queryable, write: ItemWrite): Promise<void> {
  write.dropped = true;
  await deleteItemGenerationChunks(tx, write.item.id, write.generation);
  await deleteStagedGeneration(tx, write.generation);
  await endIndexingLease(tx, write.item.id);
}

/** The staged generation becomes the item's chunks, the others go, in the caller's one commit. */
async function flipStaged(tx: Queryable, write: ItemWrite): Promise<void> {
  await markIndexed(tx, write.item.id);
  await deleteOtherGenerationsChunks(tx, write.item.id, write.generation);
  await deleteItemStaging(tx, write.item.id);
}

/** Chunks `from` to `to` of an item as rows, vectors in embedded mode's binary form (insertChunks says why). */
function chunkRows(target: ChunkTarget, write: ItemWrite, from: number, to: number): ChunkRows {
  const chunks = write.chunks.slice(from, to);
  const dims = Math.trunc(target.dimensions);
  const vectors = write.vectors.slice(from, to);
  return {
    itemId: write.item.id,
    organizationId: write.item.organization_id,
    modelId: target.modelId,
    generation: write.generation,
    indexes: chunks.map((c) => c.index),
    texts: chunks.map((c) => c.text),
    embedTexts: chunks.map((c) => c.embedText),
    vectors:
      target.db.kind === 'pglite'
        ? { realArray: toRealArrayParam(vectors, dims), dims }
        : { literals: vectors.map(toVectorLiteral) },
  };
}
