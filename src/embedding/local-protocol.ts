/**
 * What the local model's worker thread (local-worker.ts) and its owner (LocalEmbedder in local.ts) say to
 * each other. Both ends parse what they receive, as at any boundary.
 */
import { z } from 'zod';

/**
 * Who waits for a call. Queries are a person's search waiting on one inference; documents are the
 * indexer's backlog. The thread runs every query before the next document inference.
 */
const embedPrioritySchema = z.enum(['query', 'document']);
export type EmbedPriority = z.infer<typeof embedPrioritySchema>;

/** The model to load, and how to run it (the thread's `workerData`). */
export const modelThreadSettingsSchema = z.object({
  /** What transformers.js loads: a directory name under `localModelPath`, or a hub id. */
  modelRef: z.string().min(1),
  /** The model is in a local directory (no download). */
  local: z.boolean(),
  /** transformers.js' `localModelPath` when local, its `cacheDir` for a hub model. */
  modelRoot: z.string().min(1),
  allowRemote: z.boolean(),
  quantized: z.boolean(),
  /** ONNX runtime intra-op threads. */
  threads: z.number().int().positive(),
  /** Texts per inference (see DEFAULT_BATCH_SIZE in local.ts for why int8 embeds one at a time). */
  batchSize: z.number().int().positive(),
  maxTokens: z.number().int().positive(),
  pooling: z.enum(['mean', 'cls']),
  /**
   * The thread embeds documents only (a thread of its own answers queries): it lowers its scheduling
   * priority before loading, so the runtime's threads inherit it (thread-priority.ts says why).
   */
  background: z.boolean(),
});
export type ModelThreadSettings = z.infer<typeof modelThreadSettingsSchema>;

/** Owner → thread. */
export const toModelThreadSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('embed'),
    id: z.number().int(),
    /** Already prefixed (query/passage instructions are added by the owner). */
    texts: z.array(z.string()),
    priority: embedPrioritySchema,
  }),
  /** The caller gave up (its signal aborted): drop the call's inferences not yet run. */
  z.object({ type: z.literal('cancel'), id: z.number().int() }),
  /** Free the model and end the thread. */
  z.object({ type: z.literal('close') }),
]);
export type ToModelThread = z.infer<typeof toModelThreadSchema>;

/** Thread → owner. */
export const fromModelThreadSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('ready'),
    dimensions: z.number().int().positive(),
    /** The thread's scheduling niceness where the system tells it (Linux), else null. */
    niceness: z.number().int().nullable(),
  }),
  z.object({ type: z.literal('load-failed'), message: z.string() }),
  /** One vector per text, in the call's order; their buffers are transferred, not copied. */
  z.object({
    type: z.literal('vectors'),
    id: z.number().int(),
    vectors: z.array(z.custom<Float32Array>((v) => v instanceof Float32Array, 'expected a Float32Array')),
  }),
  z.object({ type: z.literal('failed'), id: z.number().int(), message: z.string() }),
]);
export type FromModelThread = z.infer<typeof fromModelThreadSchema>;
