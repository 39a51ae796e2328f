/**
 * The embedded service as users start it (`npm start`'s entry point, `src/main.ts`, PGlite on a data dir)
 * in a child process, for tests that signal or kill it: SIGTERM under load, kill -9 mid-ingestion.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface EmbeddedService {
  child: ChildProcess;
  /** Where it listens (from its `listening on` line). */
  url: string;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
}

/**
 * Starts the service on `dataDir` on a free port, with logs at `warn`, and resolves once it listens.
 * `env` adds settings (a model dir, private addresses allowed...); without KB_MODEL_DIR it runs with no
 * model.
 */
export async function startEmbeddedService(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<EmbeddedService> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      KB_DATA_DIR: dataDir,
      PORT: '0',
      DATABASE_URL: '',
      KB_LOG_LEVEL: 'warn',
      KB_MODEL_DIR: '/nonexistent-model',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${out}`)), 60_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`service exited:\n${out}`));
    });
  });
  return { child, url, output: () => out, exited };
}
