/**
 * The pipeline's embed step: a round's chunks handed to the model in calls of whole write transactions,
 * and each call's vectors put back on the chunks they belong to when it answers.
 */
import type { Embedder } from '../embedding/index.ts';
import type { Part } from './write.ts';

/**
 * A call to the model covering a round's transactions `from` to `to` (exclusive): one vector per chunk of
 * theirs, in their order.
 */
export interface EmbedCall {
  from: number;
  to: number;
  vectors: Promise<Float32Array[]>;
}

/**
 * Calls the model for a round's transactions, in order, at most `maxCallChunks` chunks a call (a
 * transaction larger than that is a call of its own). Returns once the calls are made, not when their
 * vectors are in: the model's queue is the embedder's (the local model's thread keeps it and cuts each
 * call into inferences, queries first), so the caller writes one call's transactions while the model
 * works on the next. A rejection is left to whoever awaits the call; a round given back unwritten never
 * does, so none is reported as unhandled.
 */
export function requestVectors(
  embedder: Embedder,
  transactions: Part[][],
  opts: { maxCallChunks: number; signal: AbortSignal },
): EmbedCall[] {
  const calls: EmbedCall[] = [];
  let from = 0;
  let texts: string[] = [];
  const call = (to: number) => {
    const vectors = embedder.embed(texts, opts.signal);
    vectors.catch(() => {});
    calls.push({ from, to, vectors });
    from = to;
    texts = [];
  };
  for (const [n, parts] of transactions.entries()) {
    const partTexts = parts.flatMap((p) => p.write.chunks.slice(p.from, p.to).map((c) => c.embedText));
    if (texts.length > 0 && texts.length + partTexts.length > opts.maxCallChunks) call(n);
    texts.push(...partTexts);
  }
  // The rest (an item without chunks alone makes an empty call, which the embedder answers at once).
  if (from < transactions.length) call(transactions.length);
  return calls;
}

/** Puts a call's answer on the chunks of the transactions it covered, in their order. */
export function attachVectors(transactions: Part[][], vectors: Float32Array[]): void {
  let v = 0;
  for (const parts of transactions) {
    for (const part of parts) {
      for (let i = part.from; i < part.to; i++) part.write.vectors[i] = vectors[v++]!;
    }
  }
}
