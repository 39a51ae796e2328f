import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { createEmbedder, type Embedder } from './embedding/index.ts';
import { embedderConfigFrom } from './embedding/from-config.ts';
import { Indexer } from './ingest/indexer.ts';
import { ensureVectorIndex } from './search/vector-index.ts';

export interface Logger {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * The embedding side of a running process: loads the model (in the background, so the API answers at
 * once), binds the database to it, and runs the indexer. `status` feeds /readyz.
 */
export class EmbeddingRuntime {
  embedder: Embedder | null = null;
  indexer: Indexer | null = null;
  problem: string | null = 'embedding model loading';
  readonly ready: Promise<void>;

  readonly config: Config;
  readonly db: Database;
  readonly log: Logger;

  constructor(
    config: Config,
    db: Database,
    log: Logger,
    opts: { runIndexer: boolean; onReady?: (embedder: Embedder) => void },
  ) {
    this.config = config;
    this.db = db;
    this.log = log;
    this.ready = this.#load(opts).catch((err: Error) => {
      this.problem = err.message;
      log.error({ err: { message: err.message } }, 'embedding model unavailable: search and indexing are off');
    });
  }

  async #load(opts: { runIndexer: boolean; onReady?: (embedder: Embedder) => void }): Promise<void> {
    const started = Date.now();
    const embedder = await createEmbedder(embedderConfigFrom(this.config));
    await ensureVectorIndex(this.db, { id: embedder.modelId, dimensions: embedder.dimensions });
    this.embedder = embedder;
    if (opts.runIndexer) {
      this.indexer = new Indexer(this.db, embedder, { log: this.log });
      this.indexer.start();
    }
    this.problem = null;
    opts.onReady?.(embedder);
    this.log.info({ model: embedder.modelId, ms: Date.now() - started }, 'embedding model loaded');
  }

  notify(): void {
    this.indexer?.notify();
  }

  async close(): Promise<void> {
    await this.ready;
    await this.indexer?.stop();
    await this.embedder?.close();
  }
}
