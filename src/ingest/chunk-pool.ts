/**
 * Chunking off the main thread: one piscina worker thread per process (chunk-worker.ts), started on
 * demand and ended when idle, so an idle service holds none. One thread, because the indexer chunks a
 * round at a time and the thread already outruns the model (hundreds of chunks a second against tens);
 * a second one would only compete with the model's thread for the cores.
 */
import { Piscina } from 'piscina';
import type { Chunk } from './markdown-chunker.ts';
import type { ChunkTask } from './chunk-worker.ts';

/** How long an idle thread stays up: the tokenizer takes a few hundred milliseconds to load again. */
const IDLE_TIMEOUT_MS = 60_000;

let pool: Piscina<ChunkTask, Chunk[]> | null = null;

/**
 * Chunks a document in the chunking thread, exactly as `chunkMarkdown` does with the counter `task`
 * names. Rejects with an `AbortError` once `signal` aborts (the thread is then ended, and started again
 * by the next task).
 */
export function chunkOffThread(task: ChunkTask, signal?: AbortSignal): Promise<Chunk[]> {
  pool ??= new Piscina<ChunkTask, Chunk[]>({
    filename: new URL('./chunk-worker.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: IDLE_TIMEOUT_MS,
  });
  return pool.run(task, signal ? { signal } : {});
}
