import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  AutoModel,
  AutoTokenizer,
  env,
  type PreTrainedModel,
  type PreTrainedTokenizer,
  type Tensor,
} from '@huggingface/transformers';
import { z } from 'zod';
import { AppError } from '../lib/errors.ts';
import type { LocalEmbedderConfig } from './config.ts';
import type { Embedder } from './types.ts';
import { l2Normalize } from './vector.ts';

/** How token vectors become one sentence vector. */
export type Pooling = 'mean' | 'cls';

/** What a model needs besides its weights: pooling, window and the instructions its training used. */
export interface ModelProfile {
  pooling: Pooling;
  maxTokens: number;
  /** Prepended to queries (bge: "Represent this sentence for searching relevant passages: "). */
  queryPrefix: string;
  /** Prepended to documents (e5: "passage: "). */
  passagePrefix: string;
}

/**
 * Texts per inference call. Int8 models quantize activations with one scale per call, so a text's vector
 * would depend on its batch-mates (cosine ~0.99 to its lone vector); one text per call keeps vectors
 * reproducible and equal to the query path, and at chunk lengths (~256 tokens) costs no throughput on CPU.
 * fp32 vectors do not depend on the batch, so fp32 batches.
 */
const DEFAULT_BATCH_SIZE = { q8: 1, fp32: 32 } as const;
const BGE_QUERY_INSTRUCTION = 'Represent this sentence for searching relevant passages: ';

const poolingFileSchema = z.object({
  pooling_mode_cls_token: z.boolean().optional(),
  pooling_mode_mean_tokens: z.boolean().optional(),
});
const sentenceBertConfigSchema = z.object({ max_seq_length: z.number().int().positive().optional() });
const sentenceTransformersConfigSchema = z.object({
  prompts: z.record(z.string(), z.string()).optional(),
});
const modelConfigSchema = z.object({
  hidden_size: z.number().int().positive().optional(),
  max_position_embeddings: z.number().int().positive().optional(),
});

function readJson<T>(file: string, schema: z.ZodType<T>): T | undefined {
  if (!existsSync(file)) return undefined;
  const parsed = schema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  return parsed.success ? parsed.data : undefined;
}

/**
 * Works out pooling, window and prompts from the sentence-transformers files next to the model when they
 * exist, and from the model's family name otherwise (bge: CLS pooling and a query instruction; e5: the
 * "query: "/"passage: " prefixes; everything else: mean pooling).
 */
export function modelProfile(name: string, dir: string | undefined): ModelProfile {
  const lower = name.toLowerCase();
  const isBge = lower.includes('bge-');
  const isE5 = /(^|[/-])e5-/.test(lower);
  const profile: ModelProfile = {
    pooling: isBge ? 'cls' : 'mean',
    maxTokens: 512,
    queryPrefix: isBge && lower.includes('-en') ? BGE_QUERY_INSTRUCTION : isE5 ? 'query: ' : '',
    passagePrefix: isE5 ? 'passage: ' : '',
  };
  if (!dir) return profile;
  const pooling = readJson(path.join(dir, '1_Pooling', 'config.json'), poolingFileSchema);
  if (pooling?.pooling_mode_cls_token) profile.pooling = 'cls';
  else if (pooling?.pooling_mode_mean_tokens) profile.pooling = 'mean';
  const modelConfig = readJson(path.join(dir, 'config.json'), modelConfigSchema);
  const sbert = readJson(path.join(dir, 'sentence_bert_config.json'), sentenceBertConfigSchema);
  profile.maxTokens = Math.min(
    sbert?.max_seq_length ?? 512,
    modelConfig?.max_position_embeddings ?? Number.POSITIVE_INFINITY,
  );
  const prompts = readJson(
    path.join(dir, 'config_sentence_transformers.json'),
    sentenceTransformersConfigSchema,
  );
  if (prompts?.prompts?.['query'] !== undefined) profile.queryPrefix = prompts.prompts['query'];
  const docPrompt = prompts?.prompts?.['document'] ?? prompts?.prompts?.['passage'];
  if (docPrompt !== undefined) profile.passagePrefix = docPrompt;
  return profile;
}

let loading: Promise<unknown> = Promise.resolve();

/**
 * A sentence-embedding model run in-process by transformers.js (ONNX runtime, CPU). Inference calls are
 * serialized: the runtime already uses every core for one batch, so parallel calls would only contend.
 */
export class LocalEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  readonly maxTokens: number;
  readonly profile: ModelProfile;
  /** Milliseconds the tokenizer and ONNX session took to load. */
  readonly loadMs: number;
  private readonly tokenizer: PreTrainedTokenizer;
  private readonly model: PreTrainedModel;
  private readonly batchSize: number;
  private readonly specialTokens: number;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(args: {
    modelId: string;
    dimensions: number;
    profile: ModelProfile;
    tokenizer: PreTrainedTokenizer;
    model: PreTrainedModel;
    batchSize: number;
    loadMs: number;
  }) {
    this.modelId = args.modelId;
    this.dimensions = args.dimensions;
    this.profile = args.profile;
    this.maxTokens = args.profile.maxTokens;
    this.tokenizer = args.tokenizer;
    this.model = args.model;
    this.batchSize = args.batchSize;
    this.loadMs = args.loadMs;
    this.specialTokens = args.tokenizer.encode('').length;
  }

  /** Loads the model described by `config`; fails with `unavailable` when there is no model to load. */
  static load(config: LocalEmbedderConfig): Promise<LocalEmbedder> {
    // transformers.js reads its settings from one global `env` while it loads, so loads take turns.
    const result = loading.then(() => LocalEmbedder.loadNow(config));
    loading = result.catch(() => undefined);
    return result;
  }

  private static async loadNow(config: LocalEmbedderConfig): Promise<LocalEmbedder> {
    const started = performance.now();
    const modelDir = path.resolve(config.modelDir);
    const local = existsSync(path.join(modelDir, 'config.json'));
    if (!local && !(config.allowRemote && config.modelName)) {
      throw new AppError(
        'unavailable',
        `No embedding model in ${modelDir} (config.json missing). Point KB_MODEL_DIR at a model directory ` +
          '(scripts/fixtures/model.sh makes one), or allow remote models and name one to fetch from the hub.',
      );
    }
    const name = config.modelName ?? path.basename(modelDir);
    // Each load sets every setting it depends on, so no earlier load's choices leak into this one.
    env.allowRemoteModels = !local && config.allowRemote === true;
    env.allowLocalModels = true;
    let modelRef: string;
    if (local) {
      env.localModelPath = path.dirname(modelDir);
      modelRef = path.basename(modelDir);
    } else {
      env.cacheDir = modelDir;
      modelRef = name;
    }
    const quantized =
      config.quantized ?? (local ? existsSync(path.join(modelDir, 'onnx', 'model_quantized.onnx')) : true);
    const options = { local_files_only: local };
    let tokenizer: PreTrainedTokenizer;
    let model: PreTrainedModel;
    try {
      tokenizer = await AutoTokenizer.from_pretrained(modelRef, options);
      model = await AutoModel.from_pretrained(modelRef, {
        ...options,
        device: 'cpu',
        dtype: quantized ? 'q8' : 'fp32',
        ...(config.threads ? { session_options: { intraOpNumThreads: config.threads } } : {}),
      });
    } catch (err) {
      throw new AppError('unavailable', `Could not load embedding model ${name}: ${(err as Error).message}`);
    }
    const profile = modelProfile(name, local ? modelDir : undefined);
    let dimensions = modelConfigSchema.safeParse(model.config).data?.hidden_size;
    if (dimensions === undefined) {
      // Unusual configs name the width differently; one inference tells it for sure.
      const probe = (await model(tokenizer(['dimension probe']))) as { last_hidden_state: Tensor };
      dimensions = probe.last_hidden_state.dims[2]!;
    }
    return new LocalEmbedder({
      modelId: `local/${name}/${quantized ? 'q8' : 'fp32'}`,
      dimensions,
      profile,
      tokenizer,
      model,
      batchSize: config.batchSize ?? DEFAULT_BATCH_SIZE[quantized ? 'q8' : 'fp32'],
      loadMs: performance.now() - started,
    });
  }

  countTokens(text: string): number {
    return this.tokenizer.encode(text).length;
  }

  /** Tokens the model adds to every input by itself ([CLS] and [SEP] for BERT). */
  get specialTokenCount(): number {
    return this.specialTokens;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const prefix = this.profile.passagePrefix;
    return this.enqueue(() => this.run(prefix ? texts.map((t) => prefix + t) : texts, signal));
  }

  async embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array> {
    const [vec] = await this.enqueue(() => this.run([this.profile.queryPrefix + text], signal));
    return vec!;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.catch(() => undefined);
    await this.model.dispose();
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'The embedding model is closed'));
    const result = this.queue.then(task, task);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async run(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = new Array(texts.length);
    // Batching texts of similar length keeps padding (wasted compute) small; results go back by index.
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length || a - b);
    for (let start = 0; start < order.length; start += this.batchSize) {
      signal?.throwIfAborted();
      const ids = order.slice(start, start + this.batchSize);
      const vectors = await this.infer(ids.map((i) => texts[i]!));
      ids.forEach((id, k) => {
        out[id] = vectors[k]!;
      });
    }
    return out;
  }

  private async infer(batch: string[]): Promise<Float32Array[]> {
    const inputs = this.tokenizer(batch, { padding: true, truncation: true, max_length: this.maxTokens });
    const outputs = (await this.model(inputs)) as { last_hidden_state: Tensor };
    const hidden = outputs.last_hidden_state;
    const [batchSize, seqLen, width] = hidden.dims as [number, number, number];
    const data = hidden.data as Float32Array;
    const mask = inputs.attention_mask.data as BigInt64Array;
    const vectors: Float32Array[] = [];
    for (let b = 0; b < batchSize; b++) {
      const vec = new Float32Array(width);
      const base = b * seqLen * width;
      if (this.profile.pooling === 'cls') {
        vec.set(data.subarray(base, base + width));
      } else {
        let count = 0;
        for (let t = 0; t < seqLen; t++) {
          if (mask[b * seqLen + t] === 0n) continue;
          count++;
          const offset = base + t * width;
          for (let d = 0; d < width; d++) vec[d] = vec[d]! + data[offset + d]!;
        }
        for (let d = 0; d < width; d++) vec[d] = vec[d]! / Math.max(count, 1);
      }
      vectors.push(l2Normalize(vec));
    }
    hidden.dispose();
    return vectors;
  }
}
