/**
 * A text-embedding model. Every vector it returns is L2-normalized, so cosine distance is `1 - dot(a, b)`.
 */
export interface Embedder {
  /**
   * Names the model and everything that changes its vectors (provider, model, precision). Stored vectors
   * record it; vectors with different ids must never be compared.
   */
  readonly modelId: string;
  /** Length of every vector. */
  readonly dimensions: number;
  /**
   * The model's input window in its own tokens, as `countTokens` counts them. Longer inputs are truncated
   * by `embed`, so chunks are sized to fit it.
   */
  readonly maxTokens: number;
  /** Embeds documents/passages, in input order. Rejects with an `AbortError` once `signal` aborts. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** Embeds a search query, with the model's query instruction when it has one (bge, e5). */
  embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array>;
  /** Tokens `text` occupies in the model's window, special tokens included. */
  countTokens(text: string): number;
  /**
   * How another thread builds the same `countTokens`, so documents can be chunked off the event loop.
   * Absent: tokens are counted only where the embedder lives (the indexer then chunks on its thread).
   */
  readonly tokenCounter?: TokenCounterSpec;
  /** Frees the model; the embedder is unusable afterwards. */
  close(): Promise<void>;
}

/**
 * A token counter another thread can build: `module` (a URL) exports `factory`, which takes `options`
 * (structured-cloneable) and returns, or resolves to, `(text) => number` (src/embedding/token-counters.ts).
 */
export interface TokenCounterSpec {
  module: string;
  factory: string;
  options?: unknown;
}
