/**
 * The pipeline's chunk step: an item's markdown cut into passages measured in the embedding model's
 * tokens (markdown-chunker.ts says how), off the event loop in the chunking thread (chunk-pool.ts).
 */
import type { Embedder } from '../embedding/index.ts';
import { chunkOffThread } from './chunk-pool.ts';
import { isLinkListPage } from './link-lists.ts';
import { type Chunk, chunkMarkdown } from './markdown-chunker.ts';

/**
 * Chunks stay passage-sized even when the model's window is much larger (remote models take 8k tokens):
 * a retrieved chunk is shown to people and fed to LLMs, and smaller chunks rank more precisely.
 */
const MAX_CHUNK_TOKENS = 512;

/** Tokens shared by consecutive chunks of a section unless `overlapTokens` says otherwise. */
export const DEFAULT_OVERLAP_TOKENS = 32;

/**
 * Fewest content tokens of a chunk (markdown-chunker.ts `minTokens`): a section with fewer joins its
 * neighbour, unless the whole document is that short. docs/search.md says how it was chosen.
 */
export const MIN_CHUNK_TOKENS = 64;

/**
 * The minimum for a window of `maxTokens`: at most a quarter of it, so that a small window (a test's
 * 64-token embedder) still holds several sections' worth of choice rather than one merged block.
 */
export function minChunkTokens(maxTokens: number): number {
  return Math.min(MIN_CHUNK_TOKENS, Math.floor(maxTokens / 4));
}

/** An item as the chunk step reads it. */
export interface ChunkableItem {
  title: string;
  content: string;
  /** `crawl`: a page that is a list of links (link-lists.ts) gets no chunks unless `index_list_pages`. */
  source_type?: string;
  /** The crawl that stored the page asked for its list pages to be searchable too. */
  index_list_pages?: boolean;
}

/** Whether the item is left out of search as a list of links (the test itself runs where the chunking does). */
function skipsLinkLists(item: ChunkableItem): boolean {
  return item.source_type === 'crawl' && item.index_list_pages !== true;
}

/**
 * An item cut into chunks as the indexer cuts it for `embedder`, on the calling thread (benchmarks use it
 * for the raw model's rate; the indexer itself uses {@link chunkForIndexingOffThread}). A crawled page
 * that is a list of links gets none, unless its crawl asked for them.
 */
export function chunkForIndexing(
  embedder: Embedder,
  item: ChunkableItem,
  overlapTokens = DEFAULT_OVERLAP_TOKENS,
): Chunk[] {
  if (skipsLinkLists(item) && isLinkListPage(item.content)) return [];
  return chunkMarkdown(
    { title: item.title, markdown: item.content },
    {
      maxTokens: Math.min(embedder.maxTokens, MAX_CHUNK_TOKENS),
      overlapTokens,
      minTokens: minChunkTokens(Math.min(embedder.maxTokens, MAX_CHUNK_TOKENS)),
      countTokens: (s) => embedder.countTokens(s),
    },
  );
}

/**
 * The same chunks as {@link chunkForIndexing}, cut in the chunking thread (chunk-pool.ts), so the event
 * loop stays free however large the item: a 5,000,000-character document held it 7-19 s. An embedder
 * that names no token counter a thread can build (`Embedder.tokenCounter`) is chunked on the calling
 * thread, one item per turn of the event loop.
 */
export async function chunkForIndexingOffThread(
  embedder: Embedder,
  item: ChunkableItem,
  opts: { overlapTokens?: number; signal?: AbortSignal | undefined } = {},
): Promise<Chunk[]> {
  const overlapTokens = opts.overlapTokens ?? DEFAULT_OVERLAP_TOKENS;
  const counter = embedder.tokenCounter;
  if (!counter) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    opts.signal?.throwIfAborted();
    return chunkForIndexing(embedder, item, overlapTokens);
  }
  return chunkOffThread(
    {
      counter,
      title: item.title,
      markdown: item.content,
      maxTokens: Math.min(embedder.maxTokens, MAX_CHUNK_TOKENS),
      overlapTokens,
      minTokens: minChunkTokens(Math.min(embedder.maxTokens, MAX_CHUNK_TOKENS)),
      skipLinkLists: skipsLinkLists(item),
    },
    opts.signal,
  );
}
