/**
 * Cold start of the real service process: from spawning `node src/main.ts` to the first `/healthz` 200
 * (the HTTP server answers) and the first `/readyz` 200 (database up, embedding model loaded, vector
 * index bound), plus the time a SIGTERM takes to bring the process down.
 *
 *   node bench/cold-start.ts [--runs 3]
 *
 * Scenarios: embedded mode on a fresh data dir (first start: migrations, `default` organization) and on an
 * existing one; server mode (DATABASE_URL to a native Postgres from startNativePostgres) on a fresh
 * database and on an existing one. Every scenario runs `--runs` times; the table shows medians.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { testModelDir } from '../test/support/model.ts';
import { startNativePostgres } from '../test/support/native-postgres.ts';
import { percentile, printTable, writeResult } from './lib.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const RUNS = Math.max(1, Number(values.runs));
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
/** Poll interval for the endpoints: the resolution of the numbers below. */
const POLL_MS = 5;
const START_TIMEOUT_MS = 120_000;

interface Run {
  /** ms from spawn to the first 200 of each endpoint, and from SIGTERM to exit. */
  healthz: number;
  readyz: number;
  shutdown: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function status(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** One start: spawn, poll both endpoints until 200, then SIGTERM and wait for the exit. */
async function startOnce(env: Record<string, string>, cwd: string): Promise<Run> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN], {
    cwd,
    // Only what the service needs: no stray KB_* or DATABASE_URL from the caller's shell.
    // No shutdown grace: the figure is the stop's own work (finishing requests, workers, the database),
    // not the time the service keeps accepting for a load balancer.
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? cwd,
      PORT: String(port),
      HOST: '127.0.0.1',
      KB_SHUTDOWN_GRACE_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const base = `http://127.0.0.1:${port}`;
  let healthz = 0;
  let readyz = 0;
  try {
    while (readyz === 0) {
      if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}:\n${output}`);
      if (performance.now() - started > START_TIMEOUT_MS)
        throw new Error(`service not ready in time:\n${output}`);
      if (healthz === 0 && (await status(`${base}/healthz`)) === 200) healthz = performance.now() - started;
      if (healthz !== 0 && (await status(`${base}/readyz`)) === 200) readyz = performance.now() - started;
      if (readyz === 0) await sleep(POLL_MS);
    }
  } catch (err) {
    child.kill('SIGKILL');
    await exited(child);
    throw err;
  }
  const stopping = performance.now();
  child.kill('SIGTERM');
  await exited(child);
  if (child.exitCode !== 0) throw new Error(`service exited with ${child.exitCode} on SIGTERM:\n${output}`);
  return { healthz, readyz, shutdown: performance.now() - stopping };
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

const modelDir = await testModelDir();
const work = mkdtempSync(path.join(tmpdir(), 'kb-bench-cold-'));
const native = await startNativePostgres();
const common = { KB_MODEL_DIR: modelDir, KB_LOG_LEVEL: 'info' };
const encryptionKey = randomBytes(32).toString('base64');

async function createDatabase(): Promise<string> {
  const name = `kbbench_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: native.url });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(native.url);
  url.pathname = `/${name}`;
  return url.toString();
}

const results: Record<string, Run[]> = {};
const record = async (scenario: string, run: () => Promise<Run>) => {
  results[scenario] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await run();
    results[scenario].push(r);
    process.stderr.write(
      `  ${scenario} #${i + 1}: healthz ${r.healthz.toFixed(0)} ms, readyz ${r.readyz.toFixed(0)} ms\n`,
    );
  }
};

try {
  // A run before any measurement so that the OS file cache holds node, the sources and the model for
  // every scenario alike (the first scenario would otherwise pay for the disk reads of all).
  await startOnce({ ...common, KB_DATA_DIR: path.join(work, 'warmup') }, work);

  let n = 0;
  await record('embedded, fresh data dir', () =>
    startOnce({ ...common, KB_DATA_DIR: path.join(work, `fresh-${n++}`) }, work),
  );
  const existing = path.join(work, 'existing');
  await startOnce({ ...common, KB_DATA_DIR: existing }, work);
  await record('embedded, existing data dir', () => startOnce({ ...common, KB_DATA_DIR: existing }, work));

  const server = { ...common, KB_ENCRYPTION_KEY: encryptionKey };
  await record('server, fresh database', async () =>
    startOnce({ ...server, DATABASE_URL: await createDatabase() }, work),
  );
  const existingUrl = await createDatabase();
  await startOnce({ ...server, DATABASE_URL: existingUrl }, work);
  await record('server, existing database', () => startOnce({ ...server, DATABASE_URL: existingUrl }, work));
} finally {
  await native.stop();
  rmSync(work, { recursive: true, force: true });
}

printTable(
  `Cold start, median of ${RUNS} (ms from spawning \`node src/main.ts\`)`,
  Object.entries(results).map(([scenario, runs]) => ({
    scenario,
    'first /healthz 200': median(runs.map((r) => r.healthz)).toFixed(0),
    'first /readyz 200': median(runs.map((r) => r.readyz)).toFixed(0),
    'readyz range': `${Math.min(...runs.map((r) => r.readyz)).toFixed(0)}-${Math.max(...runs.map((r) => r.readyz)).toFixed(0)}`,
    'SIGTERM to exit': median(runs.map((r) => r.shutdown)).toFixed(0),
  })),
);
writeResult('cold-start', { runs: RUNS, pollMs: POLL_MS, results });
process.exit(0);
