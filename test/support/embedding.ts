import { createEmbedder, type Embedder } from '../../src/embedding/index.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import type { TestApp } from './harness.ts';
import { testModelDir } from './model.ts';

let shared: Promise<Embedder> | null = null;

/** The real local model (fixture from PyPI), loaded once per test process. */
export function testEmbedder(): Promise<Embedder> {
  shared ??= testModelDir().then((modelDir) => createEmbedder({ provider: 'local', modelDir }));
  return shared;
}

/**
 * Give a test app the real model and an indexer; `drain()` embeds everything pending (tests call it
 * instead of waiting on the background loop, so they are deterministic).
 */
export async function withSearch(
  t: TestApp,
): Promise<{ embedder: Embedder; indexer: Indexer; drain(): Promise<number> }> {
  const embedder = await testEmbedder();
  await t.service.embedding.use(embedder);
  const indexer = new Indexer(t.db, embedder);
  return { embedder, indexer, drain: () => indexer.drain() };
}
