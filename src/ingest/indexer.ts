import type { Database } from '../db/database.ts';
import {
  analyzeItemsAndChunks,
  checkpointWhenWalGrew,
  deleteGenerationChunksBatch,
  deleteStagedGeneration,
  endIndexingLeases,
  type LeasedItem,
  leasePendingItems,
  listStagedGenerations,
  reclaimIndexingLeases,
  renewIndexingLeases,
  vacuumPostings,
} from '../db/repositories/chunks.ts';
import type { Embedder } from '../embedding/index.ts';
import type { Logger } from '../lib/logger.ts';
import { chunkForIndexingOffThread, DEFAULT_OVERLAP_TOKENS } from './chunk.ts';
import { attachVectors, type EmbedCall, requestVectors } from './embed.ts';
import type { Chunk } from './markdown-chunker.ts';
import { type ItemWrite, type Part, planTransactions, writeTransaction } from './write.ts';

/** Items leased per round unless `batchItems` says otherwise. */
export const DEFAULT_BATCH_ITEMS = 16;

interface Round {
  items: LeasedItem[];
  /**
   * The round's transactions (planTransactions), in the order they are written; their items' vectors are
   * filled in as their calls answer.
   */
  transactions: Part[][];
  /**
   * The round's calls to the model, made when the round is leased, in order: each covers transactions
   * `from` to `to` (exclusive) and answers one vector per chunk of theirs, in their order. Awaited when
   * they are written (a rejection is handled there).
   */
  calls: EmbedCall[];
  /** Stops renewing the round's leases (after its commit). */
  release: () => void;
}

/**
 * The default indexing lease. Short, because a worker that dies mid-round (kill -9, a lost machine)
 * leaves its items leased and nobody can tell it is dead: its items wait out the lease. A live worker
 * renews its round's leases while it embeds, so a slow round keeps them however long it takes.
 */
export const DEFAULT_LEASE_SECONDS = 30;

/**
 * See {@link IndexerOptions.commitChunks}. An HNSW insert (384 dimensions) took 5 ms a chunk on PGlite
 * with real vectors and 10-25 ms with near-random ones on a loaded 2-core machine: 32 chunks hold the
 * database for 0.2-0.8 s. Smaller parts cost no measurable throughput (docs/benchmarks.md, bench/indexer-commit.ts).
 */
export const DEFAULT_COMMIT_CHUNKS = 32;

/**
 * Embedded mode's default instead: every query of every organization waits for PGlite's open transaction,
 * and a search makes several (its key, its statement), each of which could wait for one commit. With 32
 * chunks a commit held PGlite for a second and more while a large item was written on a loaded machine
 * (reads' p99 over 3 s); parts of 8 bound that wait to a quarter for a few more statements per item.
 */
export const PGLITE_COMMIT_CHUNKS = 8;

/**
 * See {@link IndexerOptions.embedCallChunks}. A round is embedded in several calls of whole commit
 * transactions, and each call's transactions are written as soon as it answers while the model works on
 * the next. With one call a round, a round with a large page (1,800 chunks) was written only after all of
 * it was embedded: 12.5 s of PGlite commits with the model idle at the end of a crawl (docs/benchmarks.md,
 * bench/crawl.ts). Large enough that a remote model's requests stay few.
 */
export const DEFAULT_EMBED_CALL_CHUNKS = 128;

/**
 * Embedded mode: items indexed between two VACUUMs of the BM25 postings during a drain. About 1,000
 * SciFact chunks, some 60,000 postings: a VACUUM of that size holds PGlite for tens of milliseconds
 * (a bulk load of 100k chunks took 4.6 s at once).
 */
const VACUUM_EVERY_ITEMS = 500;

/**
 * Embedded mode: WAL written since the last checkpoint after which a drain that ran out of work
 * checkpoints (PGlite has no checkpointer, so `pg_wal` would otherwise only grow: src/db/pglite.ts).
 */
const CHECKPOINT_WAL_BYTES = 64 * 2 ** 20;

export interface IndexerOptions {
  /** Items leased per round. */
  batchItems?: number;
  /** Token overlap between consecutive chunks of a section. */
  overlapTokens?: number;
  /**
   * How long an item stays leased to a worker that stopped renewing it (then another may take it); a live
   * worker renews its round's leases every third of this. Default {@link DEFAULT_LEASE_SECONDS}.
   */
  leaseSeconds?: number;
  /** Poll interval when idle (other processes may write items). */
  pollMs?: number;
  /**
   * On start, take back every indexing lease instead of waiting for it to expire. Only right when no
   * other live process can hold leases: default true on PGlite (one process owns the database), false
   * on Postgres, where a dead worker's leases return after `leaseSeconds` (it no longer renews them).
   */
  reclaimOnStart?: boolean;
  log?: Pick<Logger, 'error' | 'warn'>;
  /**
   * The most chunks one commit transaction writes. On PGlite a transaction holds the one connection (every
   * other query waits) and each chunk's HNSW insert costs milliseconds there; a larger item is written in
   * parts under a staged generation. Default {@link DEFAULT_COMMIT_CHUNKS} ({@link PGLITE_COMMIT_CHUNKS} on
   * PGlite).
   */
  commitChunks?: number;
  /**
   * The most chunks in one call to the model (whole commit transactions; one transaction larger than
   * this is a call of its own). Default {@link DEFAULT_EMBED_CALL_CHUNKS}.
   */
  embedCallChunks?: number;
  /** Called after each committed round with the number of items indexed. */
  onProgress?: (indexed: number) => void;
  /** Embedded mode: WAL bytes since the last checkpoint after which an idle drain checkpoints. */
  checkpointWalBytes?: number;
  /**
   * Called after each commit transaction of a round, before the next one starts (tests stop the indexer
   * or fail there to leave what a crash between two transactions leaves).
   */
  afterCommitTransaction?: () => void | Promise<void>;
}

/**
 * The embedding half of the pipeline: takes items in `pending`, chunks them (markdown-aware, in the
 * model's tokens), embeds the chunks in batches off the request path, and replaces the item's chunks.
 *
 * Each round goes through the pipeline's steps: chunk (chunk.ts), embed (embed.ts), write (write.ts,
 * which says how search never sees a mix of an item's old and new chunks).
 *
 * Which items first: pending items form queues, one per organization and source (a connection; an
 * organization's crawls and its uploads are a queue each), oldest change first within a queue, and a
 * lease takes the queues' items in turns: every queue's first, then every queue's second, and so on.
 * Oldest-first across everything made an upload wait behind a whole sync's backlog (15 minutes in
 * docs/benchmarks.md, bench/load.ts); uploads-first would still leave one organization's 5-page sync
 * behind another's 100,000 pages. Turns bound the wait of a small queue by the number of queues, not by
 * the size of the others, and a big queue still gets its share whenever others are pending.
 */
export class Indexer {
  readonly #db: Database;
  readonly #embedder: Embedder;
  readonly #opts: Required<Omit<IndexerOptions, 'log' | 'onProgress' | 'afterCommitTransaction'>> &
    Pick<IndexerOptions, 'log' | 'onProgress' | 'afterCommitTransaction'>;
  #wake: (() => void) | null = null;
  #dirty = true;
  /** Calls of notify() so far: a drain that saw none while it ran ends with the upkeep (see drain). */
  #notifies = 0;
  #stopping = false;
  #loop: Promise<void> | null = null;
  #indexedSinceAnalyze = 0;
  #indexedSinceVacuum = 0;
  #lastAnalyze = 0;
  readonly #abort = new AbortController();

  constructor(db: Database, embedder: Embedder, opts: IndexerOptions = {}) {
    this.#db = db;
    this.#embedder = embedder;
    this.#opts = {
      batchItems: opts.batchItems ?? DEFAULT_BATCH_ITEMS,
      overlapTokens: opts.overlapTokens ?? DEFAULT_OVERLAP_TOKENS,
      leaseSeconds: opts.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
      pollMs: opts.pollMs ?? 2000,
      reclaimOnStart: opts.reclaimOnStart ?? db.kind === 'pglite',
      commitChunks: Math.max(
        1,
        opts.commitChunks ?? (db.kind === 'pglite' ? PGLITE_COMMIT_CHUNKS : DEFAULT_COMMIT_CHUNKS),
      ),
      embedCallChunks: Math.max(1, opts.embedCallChunks ?? DEFAULT_EMBED_CALL_CHUNKS),
      checkpointWalBytes: opts.checkpointWalBytes ?? CHECKPOINT_WAL_BYTES,
      log: opts.log,
      onProgress: opts.onProgress,
      afterCommitTransaction: opts.afterCommitTransaction,
    };
  }

  /** Items were written: index them soon. */
  notify(): void {
    this.#dirty = true;
    this.#notifies++;
    this.#wake?.();
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#abort.abort();
    this.#wake?.();
    await this.#loop;
  }

  async #run(): Promise<void> {
    if (this.#opts.reclaimOnStart) await this.#reclaimLeases();
    while (!this.#stopping) {
      let did = 0;
      try {
        this.#dirty = false;
        did = await this.drain();
      } catch (err) {
        if (this.#stopping) break;
        this.#opts.log?.error({ err }, 'indexer round failed');
      }
      if (did > 0 || this.#dirty) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#opts.pollMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  /**
   * Leases left by a previous run of this process that died mid-round (kill -9, power loss): its items
   * would otherwise sit `pending` until the leases expire. Generations it was staging are removed too
   * (no attempt of this process is running yet), a part at a time like they were written.
   */
  async #reclaimLeases(): Promise<void> {
    try {
      const taken = await reclaimIndexingLeases(this.#db);
      if (taken.length > 0)
        this.#opts.log?.warn({ items: taken.length }, 'took back indexing leases left by a previous run');
      const staged = await listStagedGenerations(this.#db);
      for (const generation of staged) await this.#removeStaged(generation);
      if (staged.length > 0)
        this.#opts.log?.warn({ generations: staged.length }, 'removed chunks staged by a previous run');
    } catch (err) {
      this.#opts.log?.error({ err }, 'could not take back indexing leases');
    }
  }

  /** Deletes a staged generation's chunks in bounded transactions, then its row (they stay unseen until then). */
  async #removeStaged(generation: number): Promise<void> {
    for (;;) {
      const gone = await deleteGenerationChunksBatch(this.#db, generation, this.#opts.commitChunks * 8);
      if (gone === 0) break;
    }
    await deleteStagedGeneration(this.#db, generation);
  }

  /**
   * Index until nothing is pending (CLI, tests, benchmarks). Rounds overlap (see {@link #drainRounds}), so
   * the model is kept busy. Returns the number of items indexed.
   */
  async drain(): Promise<number> {
    const notifiesBefore = this.#notifies;
    const total = await this.#drainRounds();
    // Items written meanwhile (a notify during the drain) go to the model first: this upkeep waits for
    // the drain that runs out of work, so a VACUUM or ANALYZE never stands between waiting items and the
    // model (and a process killed then leaves them leased, not waiting unleased behind the upkeep).
    const idle = this.#notifies === notifiesBefore;
    await this.#vacuumPostings(0, idle);
    await this.#maybeAnalyze(total, idle);
    if (idle && this.#db.kind === 'pglite')
      await checkpointWhenWalGrew(this.#db, this.#opts.checkpointWalBytes);
    return total;
  }

  /**
   * Embedded PGlite runs no autovacuum: refresh planner statistics after large changes so the items
   * listing and filters keep good plans (server-mode Postgres does this by itself).
   */
  async #maybeAnalyze(indexed: number, idle: boolean): Promise<void> {
    if (this.#db.kind !== 'pglite') return;
    this.#indexedSinceAnalyze += indexed;
    if (!idle || this.#indexedSinceAnalyze === 0) return;
    if (this.#indexedSinceAnalyze < 200 && Date.now() - this.#lastAnalyze < 10 * 60_000) return;
    this.#indexedSinceAnalyze = 0;
    this.#lastAnalyze = Date.now();
    await analyzeItemsAndChunks(this.#db);
  }

  /**
   * Embedded PGlite runs no autovacuum either: VACUUM the BM25 postings every {@link VACUUM_EVERY_ITEMS}
   * items indexed and at the end of each drain, so their new heap pages are marked all-visible and
   * keyword search keeps reading postings from the index alone (migration 015: at 100k chunks its p95 went
   * from 92 to 20 ms). VACUUM reads only the pages changed since the last one (4.6 s once after a bulk load
   * of 100k chunks, about 1 ms when nothing changed), and PGlite runs nothing else meanwhile, hence the
   * small steps during a long drain rather than one at its end. It cannot run in a transaction or a
   * multi-statement string, hence its own call. Server Postgres' autovacuum does this after inserts.
   */
  async #vacuumPostings(indexed: number, force: boolean): Promise<void> {
    if (this.#db.kind !== 'pglite') return;
    this.#indexedSinceVacuum += indexed;
    if (this.#indexedSinceVacuum === 0 || (!force && this.#indexedSinceVacuum < VACUUM_EVERY_ITEMS)) return;
    this.#indexedSinceVacuum = 0;
    await vacuumPostings(this.#db);
  }

  /**
   * The next round is leased, chunked and queued at the model before this one is written, so the model
   * goes from one round's texts to the next without waiting for this round's commit, the next lease or its
   * chunking (waiting for them left it idle a fifth to a quarter of the time: docs/benchmarks.md,
   * bench/ingest.ts). At most two rounds are leased at once. The next round is prepared while this one
   * is written: chunking runs in its own thread, and a large item's chunking (seconds) would otherwise
   * hold back the commits of the round before it.
   */
  async #drainRounds(): Promise<number> {
    let total = 0;
    /** Leased and not yet written, oldest first. */
    const open: Round[] = [];
    try {
      const first = await this.#prepare();
      if (first) open.push(first);
      while (open.length > 0) {
        const [ahead, committed] = await Promise.allSettled([this.#prepare(), this.#commit(open[0]!)]);
        if (ahead.status === 'fulfilled' && ahead.value) open.push(ahead.value);
        if (committed.status === 'rejected') throw committed.reason;
        open.shift();
        total += committed.value;
        await this.#vacuumPostings(committed.value, false);
        if (ahead.status === 'rejected') throw ahead.reason;
      }
      return total;
    } finally {
      // Rounds left unwritten are given back now rather than when their leases run out: on a stop all of
      // them, after a failure the rounds behind the one that failed (which waits out its lease, so a
      // failing item is not retried at once).
      for (const [n, round] of open.entries()) {
        if (n > 0 || this.#stopping) await this.#giveBack(round);
      }
    }
  }

  /** One round: lease a batch of pending items, embed, commit. Returns items indexed. */
  async indexOnce(): Promise<number> {
    const round = await this.#prepare();
    return round ? this.#commit(round) : 0;
  }

  /**
   * Lease pending items, chunk them and hand their chunks to the model in calls of whole commit
   * transactions, at most `embedCallChunks` chunks each (no transaction held meanwhile). Returns
   * once the calls are made, not when their vectors are in: the model's queue is the embedder's (the local
   * model's thread keeps it, and cuts each call into inferences, queries first).
   */
  async #prepare(): Promise<Round | null> {
    const items = await leasePendingItems(this.#db, {
      limit: this.#opts.batchItems,
      leaseSeconds: this.#opts.leaseSeconds,
    });
    if (items.length === 0) return null;
    const release = this.#keepLeased(items.map((i) => i.id));
    try {
      const writes: ItemWrite[] = (await this.#chunk(items)).map((chunks, n) => ({
        item: items[n]!,
        chunks,
        vectors: new Array<Float32Array>(chunks.length),
        generation: null,
        dropped: false,
      }));
      const transactions = planTransactions(writes, this.#opts.commitChunks);
      const calls = requestVectors(this.#embedder, transactions, {
        maxCallChunks: this.#opts.embedCallChunks,
        signal: this.#abort.signal,
      });
      return { items, transactions, calls, release };
    } catch (err) {
      release();
      // Stopped while chunking: the items go back now rather than when their leases run out.
      if (this.#stopping) await this.#giveBack({ items, release });
      throw err;
    }
  }

  /** A round leased but not written: stop renewing its leases and end them. */
  async #giveBack(round: Pick<Round, 'items' | 'release'>): Promise<void> {
    round.release();
    await endIndexingLeases(
      this.#db,
      round.items.map((i) => i.id),
    ).catch((err: unknown) => this.#opts.log?.warn({ err }, 'could not give back indexing leases'));
  }

  /**
   * Renews the leases of a round's items every third of the lease until released, so another worker
   * never takes (and embeds twice) items of a round that is slow but alive. A renewal that fails is
   * logged: at worst another worker embeds those items again, and the commit checks content and status,
   * so a lost lease costs work, never a wrong result.
   */
  #keepLeased(ids: string[]): () => void {
    const { leaseSeconds } = this.#opts;
    const timer = setInterval(
      () => {
        renewIndexingLeases(this.#db, ids, leaseSeconds).catch((err: unknown) =>
          this.#opts.log?.warn({ err }, 'could not renew indexing leases'),
        );
      },
      (leaseSeconds * 1000) / 3,
    );
    // A round in flight must not keep a stopping process alive.
    timer.unref();
    return () => clearInterval(timer);
  }

  /** A round's items in chunks of the model's tokens, cut off the event loop. */
  #chunk(items: LeasedItem[]): Promise<Chunk[][]> {
    const opts = { overlapTokens: this.#opts.overlapTokens, signal: this.#abort.signal };
    return Promise.all(items.map((item) => chunkForIndexingOffThread(this.#embedder, item, opts)));
  }

  /** Write the round's chunks (see {@link Indexer}), then stop renewing its leases. */
  async #commit(round: Round): Promise<number> {
    try {
      return await this.#commitRound(round);
    } finally {
      round.release();
    }
  }

  /**
   * Writes the round in transactions of at most `commitChunks` chunks: small items whole, several to a
   * transaction; a larger item in parts under a staged generation, flipped visible by its last part. A
   * call's transactions are written once it answers, while the model works on the round's next calls.
   * Between transactions the event loop turns, and on PGlite the queries that queued meanwhile run.
   */
  async #commitRound({ items, transactions, calls }: Round): Promise<number> {
    const target = { db: this.#db, modelId: this.#embedder.modelId, dimensions: this.#embedder.dimensions };
    for (const { from, to, vectors } of calls) {
      const covered = transactions.slice(from, to);
      attachVectors(covered, await vectors);
      for (const parts of covered) {
        if (this.#stopping) {
          // A large item's staged part stays behind, unseen by search and removed by the item's next
          // attempt (or the next start): what a crash here leaves too. The round's items not written yet
          // are given back now rather than when their leases run out.
          await endIndexingLeases(
            this.#db,
            items.map((i) => i.id),
          );
          throw new IndexerStoppedError();
        }
        await writeTransaction(target, parts);
        await this.#opts.afterCommitTransaction?.();
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    this.#opts.onProgress?.(items.length);
    return items.length;
  }
}

/** The indexer stopped between two transactions of a round (what is left is cleaned up later). */
export class IndexerStoppedError extends Error {
  override name = 'IndexerStoppedError';
  constructor() {
    super('the indexer stopped in the middle of a round');
  }
}
