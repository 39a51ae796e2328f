import type { Database } from './db/database.ts';
import type { Embedder } from './embedding/index.ts';
import { Indexer } from './ingest/indexer.ts';
import type { Logger } from './lib/logger.ts';
import { ensureVectorIndex } from './search/vector-index.ts';

/**
 * The embedding side of a running process: loads the model (in the background, so the API answers at
 * once), binds the database to it, and runs the indexer when this process runs workers. `problem`
 * feeds /readyz.
 */
export class EmbeddingRuntime {
  #embedder: Embedder | undefined;
  #indexer: Indexer | null = null;
  /** Only a model this runtime loaded is closed with it; one handed in belongs to the caller. */
  #ownsEmbedder = false;
  problem: string | null;
  readonly ready: Promise<void>;
  readonly #db: Database;
  readonly #log: Logger;
  readonly #runIndexer: boolean;

  /**
   * `load`: where the model comes from (the config's provider); null when the process starts without
   * one (tests hand a ready model to {@link use}).
   */
  constructor(
    db: Database,
    log: Logger,
    opts: { load: (() => Promise<Embedder>) | null; runIndexer: boolean },
  ) {
    this.#db = db;
    this.#log = log;
    this.#runIndexer = opts.runIndexer;
    const load = opts.load;
    if (!load) {
      this.problem = 'no embedding model configured';
      this.ready = Promise.resolve();
      return;
    }
    this.problem = 'embedding model loading';
    const started = Date.now();
    this.ready = Promise.resolve()
      .then(load)
      .then(async (embedder) => {
        await this.use(embedder);
        this.#ownsEmbedder = true;
        this.#log.info({ model: embedder.modelId, ms: Date.now() - started }, 'embedding model loaded');
      })
      .catch((err: Error) => {
        this.problem = err.message;
        log.error(
          { err: { message: err.message } },
          'embedding model unavailable: search and indexing are off',
        );
      });
  }

  /** The model for query embeddings, once loaded. */
  embedder(): Embedder | undefined {
    return this.#embedder;
  }

  /** Binds the database to a ready model and starts the indexer (if this process runs one). */
  async use(embedder: Embedder): Promise<void> {
    await ensureVectorIndex(this.#db, { id: embedder.modelId, dimensions: embedder.dimensions });
    this.#embedder = embedder;
    if (this.#runIndexer && !this.#indexer) {
      this.#indexer = new Indexer(this.#db, embedder, { log: this.#log });
      this.#indexer.start();
    }
    this.problem = null;
  }

  /** Items were written: the indexer looks for pending work now. */
  notify(): void {
    this.#indexer?.notify();
  }

  async close(): Promise<void> {
    await this.ready;
    await this.#indexer?.stop();
    if (this.#ownsEmbedder) await this.#embedder?.close();
  }
}
