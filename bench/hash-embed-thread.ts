/**
 * The event-loop benchmark's hash embedder on a thread of its own, as the real model's is (its own
 * thread, so the vectors of an indexing round never hold the service's event loop). Messages: `{ id,
 * texts }` in, `{ id, vectors }` out.
 */
import { parentPort } from 'node:worker_threads';
import { lowerThisThreadPriority } from '../src/lib/thread-priority.ts';
import { hashEmbedder } from '../test/support/hash-embedder.ts';

const port = parentPort;
if (!port) throw new Error('hash-embed-thread.ts runs as a worker thread');
// The service's model thread for documents runs at a lower scheduling priority (src/embedding/local-worker.ts);
// its stand-in does too, or the bench would measure a contention the service does not have.
lowerThisThreadPriority();
const hash = hashEmbedder({ dimensions: 384, maxTokens: Number(process.env.BENCH_HASH_MAX_TOKENS ?? 256) });

port.on('message', async (msg: { id: number; texts: string[] }) => {
  const vectors = await hash.embed(msg.texts);
  port.postMessage(
    { id: msg.id, vectors },
    vectors.map((v) => v.buffer as ArrayBuffer),
  );
});
