/** Runs a node script of this checkout as a child process and collects what it printed (stdout and stderr). */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export async function runNode(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; killAfterMs: number; killSignal?: NodeJS.Signals },
): Promise<{ code: number | null; out: string; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (c: string) => {
    out += c;
  };
  child.stdout.setEncoding('utf8').on('data', collect);
  child.stderr.setEncoding('utf8').on('data', collect);
  // Only keeps a child that never ends from hanging the test file.
  const guard = setTimeout(() => child.kill(opts.killSignal ?? 'SIGKILL'), opts.killAfterMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(guard);
  return { code, out, ms: performance.now() - started };
}
