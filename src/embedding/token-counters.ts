/**
 * Token counters a worker thread can build for itself: a function cannot cross threads, so an embedder
 * names one of these (its module, the factory and plain options: {@link TokenCounterSpec}) and the thread
 * that chunks documents (src/ingest/chunk-worker.ts) loads the same counter the embedder uses.
 */
import type { PreTrainedTokenizer } from '@huggingface/transformers';
import type { TokenCounterSpec } from './types.ts';

export type CountTokens = (text: string) => number;

/** Where a local model's tokenizer files are, as LocalEmbedder found them. */
export interface LocalTokenizerOptions {
  modelRef: string;
  local: boolean;
  modelRoot: string;
  allowRemote: boolean;
}

/** The local model's tokenizer (tokenizer.json), for the embedder and for the chunking thread alike. */
export async function loadLocalTokenizer(opts: LocalTokenizerOptions): Promise<PreTrainedTokenizer> {
  // Loaded here, not with the module: the other counters' threads need none of it.
  const { AutoTokenizer, env } = await import('@huggingface/transformers');
  // transformers.js reads these globals while it loads; each load sets every one it depends on, so no
  // earlier load's choices leak into this one.
  env.allowRemoteModels = opts.allowRemote;
  env.allowLocalModels = true;
  if (opts.local) env.localModelPath = opts.modelRoot;
  else env.cacheDir = opts.modelRoot;
  return AutoTokenizer.from_pretrained(opts.modelRef, { local_files_only: opts.local });
}

/** The local model's own tokenizer, counting special tokens as `encode` does. */
export async function localTokenCounter(opts: LocalTokenizerOptions): Promise<CountTokens> {
  const tokenizer = await loadLocalTokenizer(opts);
  return (text) => tokenizer.encode(text).length;
}

/**
 * Remote models' estimate: one token per three UTF-8 bytes, which over-counts English (about four
 * characters a token), so chunks sized with it fit the window.
 */
export function utf8ThirdsTokenCounter(): CountTokens {
  return (text) => Math.ceil(Buffer.byteLength(text, 'utf8') / 3);
}

/** The spec of {@link utf8ThirdsTokenCounter}. */
export const UTF8_THIRDS_TOKEN_COUNTER: TokenCounterSpec = {
  module: import.meta.url,
  factory: 'utf8ThirdsTokenCounter',
};

/** Builds the counter a spec names (in the thread that calls it). */
export async function loadTokenCounter(spec: TokenCounterSpec): Promise<CountTokens> {
  const mod = (await import(spec.module)) as Record<string, unknown>;
  const factory = mod[spec.factory];
  if (typeof factory !== 'function') throw new TypeError(`${spec.module} exports no ${spec.factory}`);
  const counter = (await factory(spec.options)) as unknown;
  if (typeof counter !== 'function') throw new TypeError(`${spec.factory} did not return a token counter`);
  return counter as CountTokens;
}
