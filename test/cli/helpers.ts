/**
 * The CLI tests run the real `kb` (bin/kb.js) as a child process against the real app listening on
 * loopback, with the key in KB_API_KEY as users give it. Output is collected apart (stdout, stderr), and
 * every output of a test file can be searched for the key afterwards.
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { TestApp } from '../support/harness.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/kb.js', import.meta.url));

export interface KbRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface KbProcess {
  stdout(): string;
  stderr(): string;
  /** Resolves when the process ends. */
  done: Promise<KbRun>;
}

/** Everything any `kb` run of this test process printed (for the never-print-the-key check). */
export const allOutput: string[] = [];

/** Makes the app listen on a free loopback port; returns its origin. */
export async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  if (!address || typeof address !== 'object') throw new Error('no address');
  return `http://127.0.0.1:${address.port}`;
}

/**
 * Starts `kb <args>` with KB_URL and KB_API_KEY (unless `env` overrides them; `null` removes one), in a
 * directory without a .env, with no terminal (stdin, stdout and stderr are pipes).
 */
export function startKb(
  args: string[],
  opts: {
    url: string;
    key: string | null;
    env?: Record<string, string | null>;
    stdin?: string;
    timeoutMs?: number;
  },
): KbProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, KB_URL: opts.url };
  delete env['KB_API_KEY'];
  if (opts.key !== null) env['KB_API_KEY'] = opts.key;
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === null) delete env[k];
    else env[k] = v;
  }
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  child.stdin.end(opts.stdin ?? '');
  // Only keeps a hung child from hanging the file; no test asserts on time.
  const guard = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const done = new Promise<KbRun>((resolve) => {
    child.once('close', (code) => {
      clearTimeout(guard);
      allOutput.push(stdout, stderr);
      resolve({ code, stdout, stderr });
    });
  });
  return { stdout: () => stdout, stderr: () => stderr, done };
}

export function kb(args: string[], opts: Parameters<typeof startKb>[1]): Promise<KbRun> {
  return startKb(args, opts).done;
}

/** The JSON lines of a --json run's stdout. */
export function jsonLines(stdout: string): Array<Record<string, any>> {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, any>);
}

export async function waitUntil(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** No stack trace: no `    at fn (file:line)` frame and no Node error banner. */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .+[:(]/m.test(text) || /node:internal|file:\/\/\//.test(text);
}

/**
 * The secret part of an API key (`kb_<16 hex>_<32 chars>`). Not `split('_')`: the secret's alphabet has
 * `_`, so a split can leave a fragment of a few characters (or none) that any output may contain.
 */
export function keySecret(key: string): string {
  const m = /^kb_[0-9a-f]{16}_(.{32})$/.exec(key);
  if (!m) throw new Error('not an API key');
  return m[1]!;
}
