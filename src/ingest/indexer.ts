import type { Database } from '../db/database.ts';
import type { Embedder } from '../embedding/index.ts';
import { toVectorLiteral } from '../embedding/vector.ts';
import type { Logger } from '../lib/logger.ts';
import { type Chunk, chunkMarkdown } from './chunker.ts';

interface PendingItem {
  id: string;
  organization_id: string;
  title: string;
  content: string;
  content_hash: string;
  tags: string[];
  visibility: string;
  source_type: string;
}

/**
 * Chunks stay passage-sized even when the model's window is much larger (remote models take 8k tokens):
 * a retrieved chunk is shown to people and fed to LLMs, and smaller chunks rank more precisely.
 */
const MAX_CHUNK_TOKENS = 512;

interface Round {
  items: PendingItem[];
  perItem: Chunk[][];
  /** One vector per chunk, in the order of `perItem.flat()`. */
  vectors: Float32Array[];
  /** Stops renewing the round's leases (after its commit). */
  release: () => void;
}

/**
 * The default indexing lease. Short, because a worker that dies mid-round (kill -9, a lost machine)
 * leaves its items leased and nobody can tell it is dead: its items wait out the lease. A live worker
 * renews its round's leases while it embeds, so a slow round keeps them however long it takes.
 */
export const DEFAULT_LEASE_SECONDS = 30;

export interface IndexerOptions {
  /** Items leased per round. */
  batchItems?: number;
  /** Texts per call to the model. */
  embedBatch?: number;
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
  /** Called after each committed round with the number of items indexed. */
  onProgress?: (indexed: number) => void;
}

/**
 * The embedding half of the pipeline: takes items in `pending`, chunks them (markdown-aware, in the
 * model's tokens), embeds the chunks in batches off the request path, and swaps the item's chunks in
 * one transaction. An item whose content changed while it was being embedded is left pending and
 * taken again, so search never serves chunks of content that is no longer there.
 */
export class Indexer {
  readonly #db: Database;
  readonly #embedder: Embedder;
  readonly #opts: Required<Omit<IndexerOptions, 'log' | 'onProgress'>> &
    Pick<IndexerOptions, 'log' | 'onProgress'>;
  #wake: (() => void) | null = null;
  #dirty = true;
  #stopping = false;
  #loop: Promise<void> | null = null;
  #indexedSinceAnalyze = 0;
  #lastAnalyze = 0;
  readonly #abort = new AbortController();

  constructor(db: Database, embedder: Embedder, opts: IndexerOptions = {}) {
    this.#db = db;
    this.#embedder = embedder;
    this.#opts = {
      batchItems: opts.batchItems ?? 16,
      embedBatch: opts.embedBatch ?? 32,
      overlapTokens: opts.overlapTokens ?? 32,
      leaseSeconds: opts.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
      pollMs: opts.pollMs ?? 2000,
      reclaimOnStart: opts.reclaimOnStart ?? db.kind === 'pglite',
      log: opts.log,
      onProgress: opts.onProgress,
    };
  }

  /** Items were written: index them soon. */
  notify(): void {
    this.#dirty = true;
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
   * would otherwise sit `pending` until the leases expire.
   */
  async #reclaimLeases(): Promise<void> {
    try {
      const taken = await this.#db.query(
        `UPDATE items SET indexing_lease_until = NULL
          WHERE indexing_status = 'pending' AND indexing_lease_until IS NOT NULL RETURNING id`,
      );
      if (taken.length > 0)
        this.#opts.log?.warn({ items: taken.length }, 'took back indexing leases left by a previous run');
    } catch (err) {
      this.#opts.log?.error({ err }, 'could not take back indexing leases');
    }
  }

  /**
   * Index until nothing is pending (CLI, tests, benchmarks). The commit of one round overlaps the
   * embedding of the next, so the model is kept busy. Returns the number of items indexed.
   */
  async drain(): Promise<number> {
    const total = await this.#drainRounds();
    await this.#maybeAnalyze(total);
    return total;
  }

  /**
   * Embedded PGlite runs no autovacuum: refresh planner statistics after large changes so the items
   * listing and filters keep good plans (server-mode Postgres does this by itself).
   */
  async #maybeAnalyze(indexed: number): Promise<void> {
    if (this.#db.kind !== 'pglite' || indexed === 0) return;
    this.#indexedSinceAnalyze += indexed;
    if (this.#indexedSinceAnalyze < 200 && Date.now() - this.#lastAnalyze < 10 * 60_000) return;
    this.#indexedSinceAnalyze = 0;
    this.#lastAnalyze = Date.now();
    await this.#db.exec('ANALYZE items; ANALYZE chunks');
  }

  async #drainRounds(): Promise<number> {
    let total = 0;
    let committing: Promise<number> | null = null;
    try {
      for (;;) {
        const round = await this.#prepare();
        if (committing) total += await committing;
        committing = null;
        if (!round) return total;
        committing = this.#commit(round);
      }
    } finally {
      if (committing) await committing.catch(() => {});
    }
  }

  /** One round: lease a batch of pending items, embed, commit. Returns items indexed. */
  async indexOnce(): Promise<number> {
    const round = await this.#prepare();
    return round ? this.#commit(round) : 0;
  }

  /** Lease pending items, chunk them and embed the chunks (no transaction held meanwhile). */
  async #prepare(): Promise<Round | null> {
    const items = await this.#db.query<PendingItem>(
      `UPDATE items SET indexing_lease_until = now() + make_interval(secs => $2)
        WHERE id IN (SELECT id FROM items
                      WHERE indexing_status = 'pending'
                        AND (indexing_lease_until IS NULL OR indexing_lease_until < now())
                      ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING id, organization_id, title, content, content_hash, tags, visibility, source_type`,
      [this.#opts.batchItems, this.#opts.leaseSeconds],
    );
    if (items.length === 0) return null;
    const release = this.#keepLeased(items.map((i) => i.id));
    try {
      return { ...(await this.#embedRound(items)), items, release };
    } catch (err) {
      release();
      throw err;
    }
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
        this.#db
          .query(
            `UPDATE items SET indexing_lease_until = now() + make_interval(secs => $2)
            WHERE id = ANY($1::text[]) AND indexing_status = 'pending'`,
            [ids, leaseSeconds],
          )
          .catch((err: unknown) => this.#opts.log?.warn({ err }, 'could not renew indexing leases'));
      },
      (leaseSeconds * 1000) / 3,
    );
    // A round in flight must not keep a stopping process alive.
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Chunks and embeds a round's items. */
  async #embedRound(items: PendingItem[]): Promise<Omit<Round, 'items' | 'release'>> {
    const e = this.#embedder;
    const perItem = items.map((item) =>
      chunkMarkdown(
        { title: item.title, markdown: item.content },
        {
          maxTokens: Math.min(e.maxTokens, MAX_CHUNK_TOKENS),
          overlapTokens: this.#opts.overlapTokens,
          countTokens: (s) => e.countTokens(s),
        },
      ),
    );
    const texts = perItem.flat().map((c) => c.embedText);
    // Batches of similar length waste less compute on padding; vectors go back to text order after.
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const vectors: Float32Array[] = new Array(texts.length);
    for (let i = 0; i < order.length; i += this.#opts.embedBatch) {
      const slice = order.slice(i, i + this.#opts.embedBatch);
      const out = await e.embed(
        slice.map((k) => texts[k]!),
        this.#abort.signal,
      );
      slice.forEach((k, j) => {
        vectors[k] = out[j]!;
      });
    }
    return { perItem, vectors };
  }

  /** Swap each item's chunks in one transaction, unless its content changed while it was embedded. */
  async #commit(round: Round): Promise<number> {
    try {
      return await this.#commitRound(round);
    } finally {
      round.release();
    }
  }

  async #commitRound({ items, perItem, vectors }: Round): Promise<number> {
    const e = this.#embedder;
    let v = 0;
    await this.#db.transaction(async (tx) => {
      for (const [n, item] of items.entries()) {
        const chunks = perItem[n]!;
        const mine = vectors.slice(v, v + chunks.length);
        v += chunks.length;
        const still = await tx.query(
          `UPDATE items SET indexing_status = 'indexed', indexing_error = NULL, indexing_lease_until = NULL, indexed_at = now()
            WHERE id = $1 AND content_hash = $2 AND indexing_status = 'pending' RETURNING id`,
          [item.id, item.content_hash],
        );
        if (still.length === 0) continue;
        await tx.query('DELETE FROM chunks WHERE item_id = $1', [item.id]);
        if (chunks.length === 0) continue;
        await tx.query(
          `INSERT INTO chunks (item_id, organization_id, chunk_index, text, embedding, model_id, tsv, tags, visibility, source_type)
           SELECT $1, $2, u.idx, u.txt, u.emb::vector, $3, to_tsvector('english', u.et), i.tags, i.visibility, i.source_type
             FROM unnest($4::int[], $5::text[], $6::text[], $7::text[]) AS u(idx, txt, emb, et)
             JOIN items AS i ON i.id = $1`,
          [
            item.id,
            item.organization_id,
            e.modelId,
            chunks.map((c) => c.index),
            chunks.map((c) => c.text),
            mine.map(toVectorLiteral),
            chunks.map((c) => c.embedText),
          ],
        );
      }
    });
    this.#opts.onProgress?.(items.length);
    return items.length;
  }
}
