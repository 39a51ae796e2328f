/**
 * The local embedding model's thread (started by LocalEmbedder in local.ts). onnxruntime-node runs a
 * session synchronously on the thread that calls it: on the service's main thread one inference stalled
 * HTTP and PGlite for its whole length, and inference was 44% of a saturated main thread under load
 * (docs/benchmarks.md, bench/load.ts).
 *
 * The queue lives here, not in the owner, so the model never waits for a busy main thread to hand it the
 * next inference. Calls are cut into single inferences (the indexer's 32-text call is 32 of them with an
 * int8 model); between two, the thread reads its messages and runs queries before the next document
 * inference, so a search waits for at most one document inference, never for the indexer's backlog.
 * Documents keep their order among themselves, and a share of the model under search load
 * (QUERY_TIME_PER_DOCUMENT_INFERENCE).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import {
  AutoModel,
  AutoTokenizer,
  env,
  type PreTrainedModel,
  type PreTrainedTokenizer,
  type Tensor,
} from '@huggingface/transformers';
import { z } from 'zod';
import {
  type EmbedPriority,
  type FromModelThread,
  type ModelThreadSettings,
  modelThreadSettingsSchema,
  toModelThreadSchema,
} from './local-protocol.ts';
import { lowerThisThreadPriority, thisThreadNiceness } from '../lib/thread-priority.ts';
import { l2Normalize } from './vector.ts';

interface Call {
  id: number;
  priority: EmbedPriority;
  texts: string[];
  /** Text indexes by length, so each inference pads little; vectors go back by index. */
  order: number[];
  /** How much of `order` has been handed to the model. */
  next: number;
  vectors: Float32Array[];
  cancelled: boolean;
}

const port = parentPort;
if (!port) throw new Error('local-worker.ts runs as a worker thread (LocalEmbedder starts it)');
const settings = modelThreadSettingsSchema.parse(workerData);
const modelConfigSchema = z.object({ hidden_size: z.number().int().positive() });

/**
 * Queries go first, but not forever: while documents wait, once queries have held the model this many
 * times as long as the last document inference took, one document inference runs. A steady stream of
 * searches thus still leaves the indexer a third of the model, and a query waits for at most one
 * document inference. (With strict priority, the indexer embedded 4 chunks in the minute of the Postgres
 * load benchmark, whose searches keep the model busy.)
 */
const QUERY_TIME_PER_DOCUMENT_INFERENCE = 2;

function send(message: FromModelThread, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

async function load(
  s: ModelThreadSettings,
): Promise<{ tokenizer: PreTrainedTokenizer; model: PreTrainedModel }> {
  env.allowRemoteModels = !s.local && s.allowRemote;
  env.allowLocalModels = true;
  if (s.local) env.localModelPath = s.modelRoot;
  else env.cacheDir = s.modelRoot;
  const options = { local_files_only: s.local };
  const tokenizer = await AutoTokenizer.from_pretrained(s.modelRef, options);
  const model = await AutoModel.from_pretrained(s.modelRef, {
    ...options,
    device: 'cpu',
    dtype: s.quantized ? 'q8' : 'fp32',
    session_options: { intraOpNumThreads: s.threads },
  });
  return { tokenizer, model };
}

/** One inference: token vectors pooled (mean over the attention mask, or CLS) and L2-normalized. */
async function infer(
  tokenizer: PreTrainedTokenizer,
  model: PreTrainedModel,
  batch: string[],
): Promise<Float32Array[]> {
  const inputs = tokenizer(batch, { padding: true, truncation: true, max_length: settings.maxTokens });
  const outputs = (await model(inputs)) as { last_hidden_state: Tensor };
  const hidden = outputs.last_hidden_state;
  const [batchSize, seqLen, width] = hidden.dims as [number, number, number];
  const data = hidden.data as Float32Array;
  const mask = inputs.attention_mask.data as BigInt64Array;
  const vectors: Float32Array[] = [];
  for (let b = 0; b < batchSize; b++) {
    const vec = new Float32Array(width);
    const base = b * seqLen * width;
    if (settings.pooling === 'cls') {
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

/** The width of the model's vectors. */
async function modelDimensions(tokenizer: PreTrainedTokenizer, model: PreTrainedModel): Promise<number> {
  const dimensions = modelConfigSchema.safeParse(model.config).data?.hidden_size;
  if (dimensions !== undefined) return dimensions;
  // Unusual configs name the width differently; one inference tells it for sure.
  const probe = (await model(tokenizer(['dimension probe']))) as { last_hidden_state: Tensor };
  const width = probe.last_hidden_state.dims[2]!;
  probe.last_hidden_state.dispose();
  return width;
}

/** The calls' texts that one inference embeds, by call. */
type InferencePieces = Array<{ call: Call; ids: number[] }>;

/** The two lanes of calls and the one loop that runs their inferences on the model. */
class InferenceQueue {
  readonly #lanes: Record<EmbedPriority, Call[]> = { query: [], document: [] };
  readonly #calls = new Map<number, Call>();
  #closing = false;
  #working = false;
  /** Milliseconds of query inferences run while documents waited, since the last document inference. */
  #queryTimeWhileDocumentsWait = 0;
  #lastDocumentInferenceMs = 0;

  readonly #model: PreTrainedModel;
  readonly #infer: (batch: string[]) => Promise<Float32Array[]>;

  constructor(model: PreTrainedModel, infer: (batch: string[]) => Promise<Float32Array[]>) {
    this.#model = model;
    this.#infer = infer;
  }

  embed(id: number, priority: EmbedPriority, texts: string[]): void {
    if (texts.length === 0) {
      send({ type: 'vectors', id, vectors: [] });
      return;
    }
    const call: Call = {
      id,
      priority,
      texts,
      order: texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length || a - b),
      next: 0,
      vectors: new Array(texts.length),
      cancelled: false,
    };
    this.#calls.set(call.id, call);
    this.#lanes[priority].push(call);
    void this.#work();
  }

  cancel(id: number): void {
    const call = this.#calls.get(id);
    if (!call) return;
    call.cancelled = true;
    this.#drop(call);
  }

  async close(): Promise<void> {
    this.#closing = true;
    // An inference in progress finishes first (the loop stops at its next turn); then the session is freed.
    while (this.#working) await nextTurn();
    await this.#model.dispose();
    process.exit(0);
  }

  #nextCall(): Call | undefined {
    const query = this.#lanes.query[0];
    const document = this.#lanes.document[0];
    if (!query || !document) return query ?? document;
    return this.#queryTimeWhileDocumentsWait >=
      QUERY_TIME_PER_DOCUMENT_INFERENCE * this.#lastDocumentInferenceMs
      ? document
      : query;
  }

  #drop(call: Call): void {
    this.#calls.delete(call.id);
    for (const lane of Object.values(this.#lanes)) {
      const at = lane.indexOf(call);
      if (at >= 0) lane.splice(at, 1);
    }
  }

  /**
   * The texts of the next inference: up to `batchSize` of `call`'s, and when `call` is a query with room
   * left, the texts of the queries queued behind it, so concurrent searches share one inference instead of
   * waiting for one each. Only where the batch does not change the vectors: an int8 model embeds one text
   * per inference (see DEFAULT_BATCH_SIZE in local.ts), so its queries still go one by one.
   */
  #takeInference(call: Call): InferencePieces {
    const pieces: InferencePieces = [];
    let room = settings.batchSize;
    const take = (c: Call) => {
      const ids = c.order.slice(c.next, c.next + room);
      c.next += ids.length;
      room -= ids.length;
      if (ids.length > 0) pieces.push({ call: c, ids });
    };
    take(call);
    if (call.priority === 'query') {
      for (const other of this.#lanes.query) {
        if (room === 0) break;
        if (other !== call && !other.cancelled) take(other);
      }
    }
    return pieces;
  }

  /** Runs inferences until both lanes are empty; one loop at a time. */
  async #work(): Promise<void> {
    if (this.#working) return;
    this.#working = true;
    try {
      for (;;) {
        // Let messages in (a query, a cancellation) before choosing the next inference.
        await nextTurn();
        if (this.#closing) return;
        const call = this.#nextCall();
        if (!call) return;
        await this.#runInference(call);
      }
    } finally {
      this.#working = false;
    }
  }

  /** One inference for `call` (and the queries sharing it); a failure fails every call in it. */
  async #runInference(call: Call): Promise<void> {
    const documentsWait = this.#lanes.document.length > 0;
    const pieces = this.#takeInference(call);
    const started = performance.now();
    let vectors: Float32Array[];
    try {
      vectors = await this.#infer(pieces.flatMap(({ call: c, ids }) => ids.map((i) => c.texts[i]!)));
    } catch (err) {
      for (const { call: c } of pieces) {
        this.#drop(c);
        if (!c.cancelled) send({ type: 'failed', id: c.id, message: (err as Error).message });
      }
      return;
    } finally {
      this.#recordInferenceTime(call.priority, documentsWait, performance.now() - started);
    }
    this.#deliver(pieces, vectors);
  }

  #recordInferenceTime(priority: EmbedPriority, documentsWait: boolean, ms: number): void {
    if (priority === 'document') {
      this.#lastDocumentInferenceMs = ms;
      this.#queryTimeWhileDocumentsWait = 0;
    } else if (documentsWait) {
      this.#queryTimeWhileDocumentsWait += ms;
    }
  }

  /** Files the inference's vectors under their calls and sends each call whose texts are all embedded. */
  #deliver(pieces: InferencePieces, vectors: Float32Array[]): void {
    let k = 0;
    for (const { call: c, ids } of pieces) {
      for (const id of ids) c.vectors[id] = vectors[k++]!;
      if (c.cancelled || c.next < c.order.length) continue;
      this.#drop(c);
      send(
        { type: 'vectors', id: c.id, vectors: c.vectors },
        c.vectors.map((v) => v.buffer as ArrayBuffer),
      );
    }
  }
}

async function serve(tokenizer: PreTrainedTokenizer, model: PreTrainedModel): Promise<void> {
  const dimensions = await modelDimensions(tokenizer, model);
  const queue = new InferenceQueue(model, (batch) => infer(tokenizer, model, batch));
  port!.on('message', (raw: unknown) => {
    const message = toModelThreadSchema.parse(raw);
    switch (message.type) {
      case 'embed':
        queue.embed(message.id, message.priority, message.texts);
        return;
      case 'cancel':
        queue.cancel(message.id);
        return;
      case 'close':
        void queue.close();
        return;
    }
  });
  send({ type: 'ready', dimensions, niceness: thisThreadNiceness() });
}

// Before the session exists: the runtime's own threads, created while it loads, inherit the priority.
if (settings.background) lowerThisThreadPriority();
// Last, so that the class above is defined before the model is served.
const loaded = await load(settings).catch((err: unknown) => {
  // The thread then ends by itself: nothing listens on its port.
  send({ type: 'load-failed', message: (err as Error).message });
  return null;
});
if (loaded) await serve(loaded.tokenizer, loaded.model);
