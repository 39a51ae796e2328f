import { z } from 'zod';

/** A model loaded with transformers.js on the ONNX runtime, from a directory (or the hub when allowed). */
export const localEmbedderConfigSchema = z
  .object({
    provider: z.literal('local'),
    /**
     * Directory holding the model as transformers.js lays it out (config.json, tokenizer.json, onnx/...).
     * When it has no config.json and `allowRemote` is set, the model `modelName` is fetched from the hub and
     * cached under this directory.
     */
    modelDir: z.string().min(1),
    /** Allow fetching `modelName` from the model hub when `modelDir` holds no model. Default false. */
    allowRemote: z.boolean().optional(),
    /** Name recorded in `modelId` (default: the directory's name); the hub id when fetching remotely. */
    modelName: z.string().min(1).optional(),
    /** Use onnx/model_quantized.onnx (int8). Default: when that file exists (always for remote models). */
    quantized: z.boolean().optional(),
    /** Texts per inference call. Default 1 for int8 weights (keeps vectors batch-independent), 32 for fp32. */
    batchSize: z.number().int().min(1).max(512).optional(),
    /** ONNX runtime intra-op threads. Default: one less than the cores (one is left to the service). */
    threads: z.number().int().min(1).max(256).optional(),
    /**
     * Queries get a model thread of their own, so a search never waits for a document's inference (a second
     * copy of the model in memory). Default: when the machine has two cores or more.
     */
    queryThread: z.boolean().optional(),
  })
  .strict();

/** Any server speaking OpenAI's `POST /embeddings`. */
export const openaiEmbedderConfigSchema = z
  .object({
    provider: z.literal('openai'),
    /** API root, e.g. `https://api.openai.com/v1`; requests go to `{baseUrl}/embeddings`. */
    baseUrl: z.url({ protocol: /^https?$/ }),
    model: z.string().min(1),
    /** Sent as `Authorization: Bearer`; never logged. */
    apiKey: z.string().min(1).optional(),
    /**
     * Vector length. Sent to the server as `dimensions` when set; when absent it is taken from a table of
     * known models or from one probe request at start-up.
     */
    dimensions: z.number().int().min(1).max(16_384).optional(),
    /** Input window in tokens. Default 8191 (OpenAI's embedding models). */
    maxTokens: z.number().int().min(16).optional(),
    /** Inputs per request. Default 64. */
    batchSize: z.number().int().min(1).max(2048).optional(),
    /** Per-request timeout. Default 30 s. */
    timeoutMs: z.number().int().min(100).optional(),
    /** Attempts per request for 429, 5xx and network errors. Default 3. */
    maxAttempts: z.number().int().min(1).max(10).optional(),
  })
  .strict();

/** How to build an `Embedder`; `provider` picks the implementation. */
export const embedderConfigSchema = z.discriminatedUnion('provider', [
  localEmbedderConfigSchema,
  openaiEmbedderConfigSchema,
]);

export type LocalEmbedderConfig = z.infer<typeof localEmbedderConfigSchema>;
export type OpenAIEmbedderConfig = z.infer<typeof openaiEmbedderConfigSchema>;
export type EmbedderConfig = z.infer<typeof embedderConfigSchema>;
