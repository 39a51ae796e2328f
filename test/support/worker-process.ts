/**
 * A job worker in a process of its own (test/jobs/fixtures/worker.ts, over the native Postgres), for what
 * needs real separate processes: a SIGKILL mid-sync or mid-crawl, scale-out benchmarks.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('../jobs/fixtures/worker.ts', import.meta.url));

/** Starts a worker with `env` over this process's environment; resolves once it polls for jobs. */
export function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [WORKER], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`worker exited before it was ready (${code})`)));
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('ready')) resolve(child);
    });
  });
}
