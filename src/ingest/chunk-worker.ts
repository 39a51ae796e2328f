/**
 * Worker-thread entry of the chunking pool (chunk-pool.ts): lexing, sentence segmentation and the model's
 * tokenizer cost about 3 ms of CPU per 1,000 characters, so a 5,000,000-character document is 15 s or
 * more, which must not run on the event loop that answers every organization's requests.
 */
import { type CountTokens, loadTokenCounter } from '../embedding/token-counters.ts';
import type { TokenCounterSpec } from '../embedding/types.ts';
import { lowerThisThreadPriority } from '../lib/thread-priority.ts';
import { isLinkListPage } from './link-lists.ts';
import { type Chunk, chunkMarkdown } from './markdown-chunker.ts';

export interface ChunkTask {
  /** The embedder's token counter, built here once per spec. */
  counter: TokenCounterSpec;
  title: string;
  markdown: string;
  maxTokens: number;
  overlapTokens: number;
  minTokens: number;
  /** A list of links (link-lists.ts) gets no chunks. */
  skipLinkLists: boolean;
}

// Chunking is background work: where cores are short, requests' threads go first.
lowerThisThreadPriority();

const counters = new Map<string, Promise<CountTokens>>();

function counterFor(spec: TokenCounterSpec): Promise<CountTokens> {
  const key = JSON.stringify(spec);
  let counter = counters.get(key);
  if (!counter) {
    counter = loadTokenCounter(spec);
    counters.set(key, counter);
    // A counter that failed to load is tried again by the next task rather than failing every one.
    counter.catch(() => counters.delete(key));
  }
  return counter;
}

export default async function chunk(task: ChunkTask): Promise<Chunk[]> {
  const countTokens = await counterFor(task.counter);
  if (task.skipLinkLists && isLinkListPage(task.markdown)) return [];
  return chunkMarkdown(
    { title: task.title, markdown: task.markdown },
    { maxTokens: task.maxTokens, overlapTokens: task.overlapTokens, minTokens: task.minTokens, countTokens },
  );
}
