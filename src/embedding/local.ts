import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { PreTrainedTokenizer } from '@huggingface/transformers';
import { z } from 'zod';
import { AppError } from '../lib/errors.ts';
import type { LocalEmbedderConfig } from './config.ts';
import {
  type EmbedPriority,
  fromModelThreadSchema,
  type ModelThreadSettings,
  type ToModelThread,
} from './local-protocol.ts';
import { type LocalTokenizerOptions, loadLocalTokenizer } from './token-counters.ts';
import type { Embedder, TokenCounterSpec } from './types.ts';

/** Where the thread's settings say the tokenizer's files are. */
function tokenizerOptions(s: ModelThreadSettings): LocalTokenizerOptions {
  return { modelRef: s.modelRef, local: s.local, modelRoot: s.modelRoot, allowRemote: s.allowRemote };
}

/** How token vectors become one sentence vector. */
type Pooling = 'mean' | 'cls';

/** What a model needs besides its weights: pooling, window and the instructions its training used. */
interface ModelProfile {
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
/**
 * The model's threads leave one core to the service's main thread (HTTP, PGlite, chunking). With the
 * runtime's default (every core) the model ran beside the main thread on both cores of the 2-core
 * benchmark machine and the load benchmark served about 20% fewer requests and embedded about a third
 * fewer chunks than with one thread (docs/benchmarks.md, bench/load.ts); the model alone, with nothing
 * else running, is about 20% faster on both. Vectors do not depend on the thread count.
 */
function defaultModelThreads(): number {
  return Math.max(1, os.availableParallelism() - 1);
}

/**
 * Whether queries get a model thread of their own. With one thread, a search waits for the document
 * inference in progress (tens of milliseconds with int8 MiniLM on these cores): while another organization's
 * large document was embedded, search p50 went from 10 to 22 ms and p95 from 22 to 45 (bench/event-loop.ts
 * with the real model). A second session answers queries at once, and the documents' thread runs at a lower
 * scheduling priority so a query's inference gets a core first. It costs a second copy of the model in
 * memory (about 90 MB for int8 MiniLM), so a single-core machine, where the two could only take turns
 * anyway, keeps one.
 */
function defaultQueryThread(): boolean {
  return os.availableParallelism() >= 2;
}
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

/** How long `close()` lets the model's thread free its session before ending the thread outright. */
const CLOSE_GRACE_MS = 5_000;

interface PendingCall {
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: unknown) => void;
}

/**
 * One worker thread running the model (local-worker.ts). Calls are posted to it at once and it keeps the
 * queue, so it never idles waiting for a busy main thread to hand it the next inference. Like the model in
 * the main thread before, it keeps the process alive only while a call is pending (or while it loads).
 */
class ModelThread {
  dimensions = 0;
  /** The thread's scheduling niceness as it reported it (null where the system does not say). */
  niceness: number | null = null;
  private readonly name: string;
  private readonly worker: Worker;
  private readonly pending = new Map<number, PendingCall>();
  private readonly loaded: Promise<void>;
  private readonly exited: Promise<void>;
  private settleLoad: { resolve: () => void; reject: (err: AppError) => void } | undefined;
  private nextId = 1;
  /** Why the thread takes no more calls (it exited); null while it runs. */
  private stopped: AppError | null = null;
  /** The last error the thread threw, to say why it stopped. */
  private failure: string | undefined;
  private closing = false;

  /** Starts a thread on `settings`; fails with `unavailable` when the model cannot be loaded. */
  static async start(settings: ModelThreadSettings, name: string): Promise<ModelThread> {
    const thread = new ModelThread(settings, name);
    await thread.loaded;
    return thread;
  }

  private constructor(settings: ModelThreadSettings, name: string) {
    this.name = name;
    this.loaded = new Promise((resolve, reject) => {
      this.settleLoad = { resolve, reject };
    });
    this.worker = new Worker(new URL('./local-worker.ts', import.meta.url), {
      workerData: settings,
      name: `embedding model ${name}`,
    });
    // Without an 'error' listener an exception in the thread would be rethrown here and end the service.
    this.worker.on('error', (err) => {
      this.failure = err.message;
    });
    this.worker.on('message', (raw: unknown) => this.receive(raw));
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        this.stop(code);
        resolve();
      });
    });
  }

  /** False once the thread has exited (crashed, killed or closed). */
  get running(): boolean {
    return this.stopped === null;
  }

  embed(texts: string[], priority: EmbedPriority, signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.stopped) return Promise.reject(this.stopped);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // A call that is given up leaves the thread's queue; an inference of it already running is discarded.
      const onAbort = (): void => {
        this.take(id);
        this.post({ type: 'cancel', id });
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: (vectors) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(vectors);
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      });
      this.worker.ref();
      this.post({ type: 'embed', id, texts, priority });
    });
  }

  /** Asks the thread to free the model and end (ends it outright after a grace period). */
  async close(): Promise<void> {
    if (this.stopped) return;
    this.closing = true;
    // Held open until the thread is gone, so `await close()` at the end of a script finishes.
    this.worker.ref();
    this.post({ type: 'close' });
    const timer = setTimeout(() => void this.worker.terminate(), CLOSE_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }

  private post(message: ToModelThread): void {
    this.worker.postMessage(message);
  }

  private take(id: number): PendingCall | undefined {
    const call = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0 && !this.closing && this.settleLoad === undefined) this.worker.unref();
    return call;
  }

  private receive(raw: unknown): void {
    const parsed = fromModelThreadSchema.safeParse(raw);
    if (!parsed.success) {
      this.failure = 'it sent a message outside the protocol';
      void this.worker.terminate();
      return;
    }
    const message = parsed.data;
    switch (message.type) {
      case 'ready':
        this.dimensions = message.dimensions;
        this.niceness = message.niceness;
        this.settleLoad?.resolve();
        this.settleLoad = undefined;
        if (this.pending.size === 0) this.worker.unref();
        return;
      case 'load-failed':
        // The thread ends by itself after this.
        this.settleLoad?.reject(
          new AppError('unavailable', `Could not load embedding model ${this.name}: ${message.message}`),
        );
        this.settleLoad = undefined;
        return;
      case 'vectors':
        this.take(message.id)?.resolve(message.vectors);
        return;
      case 'failed':
        this.take(message.id)?.reject(new Error(`Embedding failed: ${message.message}`));
        return;
    }
  }

  /** The thread exited: every call still waiting on it fails now rather than waiting forever. */
  private stop(code: number): void {
    const reason = this.failure ?? `exit code ${code}`;
    this.settleLoad?.reject(
      new AppError(
        'unavailable',
        `Could not load embedding model ${this.name}: its thread stopped (${reason})`,
      ),
    );
    this.settleLoad = undefined;
    this.stopped = new AppError(
      'unavailable',
      this.closing
        ? 'The embedding model is closed'
        : `The embedding model's thread stopped (${reason}) before the call finished; the next call starts it again`,
    );
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) call.reject(this.stopped);
  }
}

let loading: Promise<unknown> = Promise.resolve();

/**
 * A sentence-embedding model run by transformers.js (ONNX runtime, CPU) in worker threads, so inference
 * never blocks the service's event loop: one for documents and, on two cores or more, one for queries
 * (defaultQueryThread says why). A thread runs one inference at a time (the runtime already uses every
 * core it is given for one), queries before queued document inferences (local-worker.ts). The main thread keeps
 * a tokenizer of its own for `countTokens`, which the chunker calls synchronously and which is cheap.
 *
 * A thread that dies (an exception, a kill) fails the calls waiting on it with `unavailable`; the next
 * call starts a new thread and loads the model again, so one bad moment does not turn search and
 * indexing off until the service restarts.
 */
export class LocalEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  readonly maxTokens: number;
  readonly profile: ModelProfile;
  private readonly tokenizer: PreTrainedTokenizer;
  private readonly specialTokens: number;
  readonly tokenCounter: TokenCounterSpec;
  /** The thread that embeds documents, and queries too when there is no query thread. */
  private readonly documents: ThreadSlot;
  /** The queries' own thread (defaultQueryThread says when there is one). */
  private readonly queries: ThreadSlot | null;
  /** Calls not yet settled (close() waits for them). */
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  private constructor(args: {
    modelId: string;
    profile: ModelProfile;
    settings: ModelThreadSettings;
    tokenizer: PreTrainedTokenizer;
    documents: ThreadSlot;
    queries: ThreadSlot | null;
  }) {
    this.modelId = args.modelId;
    this.dimensions = args.documents.thread.dimensions;
    this.profile = args.profile;
    this.maxTokens = args.profile.maxTokens;
    this.tokenizer = args.tokenizer;
    this.documents = args.documents;
    this.queries = args.queries;
    this.specialTokens = args.tokenizer.encode('').length;
    this.tokenCounter = {
      module: new URL('./token-counters.ts', import.meta.url).href,
      factory: 'localTokenCounter',
      options: tokenizerOptions(args.settings),
    };
  }

  /** Loads the model described by `config`; fails with `unavailable` when there is no model to load. */
  static load(config: LocalEmbedderConfig): Promise<LocalEmbedder> {
    // transformers.js reads its settings from one global `env` while it loads, so loads take turns.
    const result = loading.then(() => LocalEmbedder.loadNow(config));
    loading = result.catch(() => undefined);
    return result;
  }

  private static async loadNow(config: LocalEmbedderConfig): Promise<LocalEmbedder> {
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
    const quantized =
      config.quantized ?? (local ? existsSync(path.join(modelDir, 'onnx', 'model_quantized.onnx')) : true);
    const profile = modelProfile(name, local ? modelDir : undefined);
    const settings: ModelThreadSettings = {
      modelRef: local ? path.basename(modelDir) : name,
      local,
      modelRoot: local ? path.dirname(modelDir) : modelDir,
      allowRemote: !local && config.allowRemote === true,
      quantized,
      threads: config.threads ?? defaultModelThreads(),
      batchSize: config.batchSize ?? DEFAULT_BATCH_SIZE[quantized ? 'q8' : 'fp32'],
      maxTokens: profile.maxTokens,
      pooling: profile.pooling,
      background: false,
    };
    const queryThread = config.queryThread ?? defaultQueryThread();
    // The threads load first: a hub model's files are downloaded there, and the tokenizer below finds them cached.
    const documentSettings = { ...settings, background: queryThread };
    const querySettings: ModelThreadSettings = { ...settings, threads: 1, background: false };
    const started = await Promise.allSettled([
      ThreadSlot.start(documentSettings, name),
      queryThread ? ThreadSlot.start(querySettings, name) : Promise.resolve(null),
    ]);
    const [documents = null, queries = null] = started.map((r) =>
      r.status === 'fulfilled' ? r.value : null,
    );
    const failed = started.find((r) => r.status === 'rejected');
    if (failed || !documents) {
      await Promise.all([documents?.close(), queries?.close()]);
      throw (failed as PromiseRejectedResult).reason;
    }
    let tokenizer: PreTrainedTokenizer;
    try {
      tokenizer = await loadLocalTokenizer(tokenizerOptions(settings));
    } catch (err) {
      await Promise.all([documents.close(), queries?.close()]);
      throw new AppError('unavailable', `Could not load embedding model ${name}: ${(err as Error).message}`);
    }
    return new LocalEmbedder({
      modelId: `local/${name}/${quantized ? 'q8' : 'fp32'}`,
      profile,
      settings,
      tokenizer,
      documents,
      queries,
    });
  }

  countTokens(text: string): number {
    return this.tokenizer.encode(text).length;
  }

  /** Tokens the model adds to every input by itself ([CLS] and [SEP] for BERT). */
  get specialTokenCount(): number {
    return this.specialTokens;
  }

  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const prefix = this.profile.passagePrefix;
    return this.call(prefix ? texts.map((t) => prefix + t) : texts, 'document', signal);
  }

  async embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array> {
    const [vec] = await this.call([this.profile.queryPrefix + text], 'query', signal);
    return vec!;
  }

  /** Waits for the calls already made, then frees the model and ends its thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.inFlight);
    await Promise.all([this.documents.close(), this.queries?.close()]);
  }

  /** Each model thread and its scheduling niceness as it reported it (null where the system does not say). */
  get threads(): Array<{ lane: 'documents' | 'queries'; niceness: number | null }> {
    const lanes: Array<{ lane: 'documents' | 'queries'; niceness: number | null }> = [
      { lane: 'documents', niceness: this.documents.thread.niceness },
    ];
    if (this.queries) lanes.push({ lane: 'queries', niceness: this.queries.thread.niceness });
    return lanes;
  }

  private call(texts: string[], priority: EmbedPriority, signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'The embedding model is closed'));
    if (texts.length === 0) return Promise.resolve([]);
    const slot = priority === 'query' && this.queries ? this.queries : this.documents;
    const result = slot.running().then((thread) => thread.embed(texts, priority, signal));
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
    return result;
  }
}

/** A model thread, started again by the next call after it died. */
class ThreadSlot {
  readonly #settings: ModelThreadSettings;
  readonly #name: string;
  #thread: ModelThread;
  /** A new thread being started after the last one died. */
  #restarting: Promise<ModelThread> | null = null;

  private constructor(settings: ModelThreadSettings, name: string, thread: ModelThread) {
    this.#settings = settings;
    this.#name = name;
    this.#thread = thread;
  }

  static async start(settings: ModelThreadSettings, name: string): Promise<ThreadSlot> {
    return new ThreadSlot(settings, name, await ModelThread.start(settings, name));
  }

  get thread(): ModelThread {
    return this.#thread;
  }

  /** The thread, started again when the last one died. */
  running(): Promise<ModelThread> {
    if (this.#thread.running) return Promise.resolve(this.#thread);
    this.#restarting ??= ModelThread.start(this.#settings, this.#name)
      .then((thread) => {
        this.#thread = thread;
        return thread;
      })
      .finally(() => {
        this.#restarting = null;
      });
    return this.#restarting;
  }

  close(): Promise<void> {
    return this.#thread.close();
  }
}
