import { createHash } from 'node:crypto';
import type { Embedder } from '../../src/embedding/index.ts';
import { l2Normalize } from '../../src/embedding/vector.ts';

function hashWords(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The hash embedder's tokens: its words, and two for the special tokens a real model adds. */
export function hashTokenCounter(): (text: string) => number {
  return (text) => hashWords(text).length + 2;
}

/**
 * A cheap deterministic embedder for tests and benchmarks that need many chunks but not the model's
 * meaning (the real model takes minutes for a 1,700-chunk item on two cores): every word has a fixed
 * pseudo-random direction and a text is the normalized sum of its words'. Texts sharing words are close,
 * so an HNSW graph over these vectors is shaped like one over real embeddings rather than uniform noise.
 * Tokens are words.
 */
export function hashEmbedder(opts: { dimensions?: number; maxTokens?: number } = {}): Embedder {
  const dimensions = opts.dimensions ?? 384;
  const maxTokens = opts.maxTokens ?? 256;
  const directions = new Map<string, Float32Array>();
  const direction = (word: string): Float32Array => {
    let v = directions.get(word);
    if (v) return v;
    v = new Float32Array(dimensions);
    // Enough bytes from SHA-256 in counter mode for one signed byte per dimension.
    for (let block = 0; block * 32 < dimensions; block++) {
      const bytes = createHash('sha256').update(`${block}:${word}`).digest();
      for (let i = 0; i < 32 && block * 32 + i < dimensions; i++)
        v[block * 32 + i] = (bytes[i]! - 127.5) / 127.5;
    }
    directions.set(word, l2Normalize(v));
    return v;
  };
  const words = hashWords;
  const embedOne = (text: string): Float32Array => {
    const sum = new Float32Array(dimensions);
    for (const w of words(text).slice(0, maxTokens)) {
      const d = direction(w);
      for (let i = 0; i < dimensions; i++) sum[i]! += d[i]!;
    }
    if (sum.every((x) => x === 0)) sum[0] = 1;
    return l2Normalize(sum);
  };
  return {
    modelId: `test-hash-words-${dimensions}`,
    dimensions,
    maxTokens,
    async embed(texts, signal) {
      signal?.throwIfAborted();
      return texts.map(embedOne);
    },
    async embedQuery(text, signal) {
      signal?.throwIfAborted();
      return embedOne(text);
    },
    countTokens: hashTokenCounter(),
    // The same count in the indexer's chunking thread.
    tokenCounter: { module: import.meta.url, factory: 'hashTokenCounter' },
    async close() {},
  };
}
