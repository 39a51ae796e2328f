import { z } from 'zod';
import { AppError } from '../lib/errors.ts';
import { type EmbedderConfig, embedderConfigSchema } from './config.ts';
import { LocalEmbedder } from './local.ts';
import { OpenAIEmbedder } from './openai.ts';
import type { Embedder } from './types.ts';

export type { EmbedderConfig, LocalEmbedderConfig, OpenAIEmbedderConfig } from './config.ts';
export { embedderConfigSchema, localEmbedderConfigSchema, openaiEmbedderConfigSchema } from './config.ts';
export { LocalEmbedder, modelProfile } from './local.ts';
export { OpenAIEmbedder } from './openai.ts';
export type { Embedder, TokenCounterSpec } from './types.ts';
export { dot, l2Normalize } from './vector.ts';

/**
 * Validates `config` and builds the embedder it describes: the local model is loaded (and, for remote
 * providers without a known width, the width probed) before this resolves, so a returned embedder is ready.
 * Invalid configs fail with `invalid_request`; a model that cannot be loaded or reached with `unavailable`.
 */
export async function createEmbedder(
  config: EmbedderConfig | unknown,
  signal?: AbortSignal,
): Promise<Embedder> {
  const parsed = embedderConfigSchema.safeParse(config);
  if (!parsed.success) {
    // prettifyError names paths and expectations, never the values (so no api key leaks).
    throw new AppError('invalid_request', `Invalid embedder configuration: ${z.prettifyError(parsed.error)}`);
  }
  const valid = parsed.data;
  return valid.provider === 'local' ? LocalEmbedder.load(valid) : OpenAIEmbedder.create(valid, signal);
}
