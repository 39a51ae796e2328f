import { z } from 'zod';
import { AppError } from '../lib/errors.ts';
import { retrying } from '../net/retry.ts';
import type { OpenAIEmbedderConfig } from './config.ts';
import { UTF8_THIRDS_TOKEN_COUNTER, utf8ThirdsTokenCounter } from './token-counters.ts';
import type { Embedder } from './types.ts';
import { l2Normalize } from './vector.ts';

/** Native widths of OpenAI's models, so a service can start without a probe request. */
const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

const embeddingsResponseSchema = z.object({
  data: z.array(z.object({ index: z.number().int().min(0), embedding: z.array(z.number()) })).min(1),
});

const RETRY_CAP_MS = 10_000;

/**
 * Embeddings from any server speaking OpenAI's `POST {baseUrl}/embeddings`. Vectors are re-normalized
 * because compatible servers do not all return unit vectors. `countTokens` has no tokenizer for remote
 * models: it estimates one token per three UTF-8 bytes, which over-counts English (about four characters
 * a token), so chunks sized with it fit the window.
 */
export class OpenAIEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  readonly maxTokens: number;
  private readonly config: OpenAIEmbedderConfig;
  private readonly url: string;

  private constructor(config: OpenAIEmbedderConfig, dimensions: number) {
    this.config = config;
    this.dimensions = dimensions;
    this.maxTokens = config.maxTokens ?? 8191;
    this.url = `${config.baseUrl.replace(/\/+$/, '')}/embeddings`;
    this.modelId = `openai/${config.model}/${dimensions}`;
  }

  /** Builds the provider; asks the server once for the vector width when neither config nor table says it. */
  static async create(config: OpenAIEmbedderConfig, signal?: AbortSignal): Promise<OpenAIEmbedder> {
    const known = config.dimensions ?? KNOWN_DIMENSIONS[config.model];
    if (known !== undefined) return new OpenAIEmbedder(config, known);
    const probe = new OpenAIEmbedder(config, 0);
    const [vec] = await probe.request(['dimension probe'], signal);
    return new OpenAIEmbedder(config, vec!.length);
  }

  readonly tokenCounter = UTF8_THIRDS_TOKEN_COUNTER;
  readonly #countTokens = utf8ThirdsTokenCounter();

  countTokens(text: string): number {
    return this.#countTokens(text);
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const batchSize = this.config.batchSize ?? 64;
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      signal?.throwIfAborted();
      out.push(...(await this.request(texts.slice(start, start + batchSize), signal)));
    }
    return out;
  }

  async embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array> {
    const [vec] = await this.request([text], signal);
    return vec!;
  }

  async close(): Promise<void> {}

  private async request(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const attempts = this.config.maxAttempts ?? 3;
    const body = JSON.stringify({
      model: this.config.model,
      input,
      encoding_format: 'float',
      ...(this.config.dimensions ? { dimensions: this.config.dimensions } : {}),
    });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.config.apiKey) headers['authorization'] = `Bearer ${this.config.apiKey}`;

    const outcome = await retrying<Response>(
      async () => {
        const timeout = AbortSignal.timeout(this.config.timeoutMs ?? 30_000);
        try {
          const res = await fetch(this.url, {
            method: 'POST',
            headers,
            body,
            signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
          });
          // An error body is never read: free the connection before waiting for the next attempt.
          if (!res.ok) await res.body?.cancel();
          return { response: res, status: res.status, headers: res.headers };
        } catch (err) {
          signal?.throwIfAborted();
          return { error: err, retryable: true };
        }
      },
      { maxAttempts: attempts, baseDelayMs: 250, maxDelayMs: RETRY_CAP_MS, maxWaitMs: 60_000, signal },
    );
    if ('error' in outcome) {
      throw new AppError('unavailable', `Embedding service unreachable: ${(outcome.error as Error).name}`);
    }
    const res = outcome.response;
    if (res.ok) return this.parse(await res.json(), input.length);
    throw new AppError('unavailable', `Embedding service answered HTTP ${res.status}`, {
      upstreamStatus: res.status,
    });
  }

  private parse(json: unknown, expected: number): Float32Array[] {
    const parsed = embeddingsResponseSchema.safeParse(json);
    if (!parsed.success || parsed.data.data.length !== expected) {
      throw new AppError('unavailable', 'Embedding service answered with an unexpected body');
    }
    const out: Float32Array[] = new Array(expected);
    for (const item of parsed.data.data) {
      const width = item.embedding.length;
      if (item.index >= expected || (this.dimensions !== 0 && width !== this.dimensions)) {
        throw new AppError('unavailable', `Embedding service answered with a vector of width ${width}`);
      }
      out[item.index] = l2Normalize(Float32Array.from(item.embedding));
    }
    // A hole means a duplicated index left another input without its vector (`some` would skip holes).
    for (let i = 0; i < expected; i++) {
      if (out[i] === undefined)
        throw new AppError('unavailable', 'Embedding service left inputs without a vector');
    }
    return out;
  }
}
