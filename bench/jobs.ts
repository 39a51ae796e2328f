/**
 * Job-engine benchmark (`node bench/jobs.ts`): prints a table, writes bench/results/jobs.json.
 *
 * 1. run-sync → running: time from the API call queueing a job to a worker claiming it (database
 *    timestamps), in-process workers (woken directly) and a separate worker process (woken by NOTIFY).
 * 2. Runner throughput: 10k small documents from the fake source through the sync runner into items
 *    (embedding excluded: no indexer runs), first sync (all new) and a reset (all unchanged), per mode.
 * 3. Scale-out on native Postgres: four connections of 5k documents each, synced by one worker process
 *    or by two (one job loop each).
 *
 * Options: BENCH_DOCS (default 10000), BENCH_SCALE_DOCS (5000), BENCH_LATENCY_RUNS (20).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { upsertConnection } from '../src/db/repositories/connections.ts';
import { createOrganization } from '../src/db/repositories/organizations.ts';
import { enqueueSyncJob } from '../src/jobs/sync-job.ts';
import {
  startTestSource,
  TEST_SOURCE_TOKEN,
  TEST_SPACE_ID,
} from '../test/connectors/test-connector-source.ts';
import { connect, runSyncJob, type SyncApp, startSyncApp, waitForJob } from '../test/jobs/helpers.ts';
import { composeTestService, freshDatabase, type StorageMode, testConfig } from '../test/support/harness.ts';
import { startWorkerProcess } from '../test/support/worker-process.ts';

const DOCS = Number(process.env['BENCH_DOCS'] ?? 10_000);
const SCALE_DOCS = Number(process.env['BENCH_SCALE_DOCS'] ?? 5_000);
const LATENCY_RUNS = Number(process.env['BENCH_LATENCY_RUNS'] ?? 20);

interface Row {
  benchmark: string;
  storage: string;
  value: string;
  detail: string;
}
const rows: Row[] = [];
const raw: Record<string, unknown> = {};

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Queue-to-claim time of a job, from the database's own timestamps. */
async function claimLatencyMs(db: Database, jobId: number): Promise<number> {
  const [r] = await db.query<{ ms: number }>(
    'SELECT (extract(epoch FROM started_at - created_at) * 1000)::float8 AS ms FROM jobs WHERE id = $1',
    [jobId],
  );
  return r!.ms;
}

/** Start-to-finish time and rows of a job, from the database. */
async function runTime(db: Database, jobId: number): Promise<{ ms: number; rows: number }> {
  const [r] = await db.query<{ ms: number; rows: number }>(
    `SELECT (extract(epoch FROM j.finished_at - j.started_at) * 1000)::float8 AS ms, s.rows_synced::float8 AS rows
       FROM jobs j JOIN sync_jobs s ON s.job_id = j.id WHERE j.id = $1`,
    [jobId],
  );
  return r!;
}

async function inProcess(mode: StorageMode): Promise<void> {
  const s: SyncApp = await startSyncApp(mode, {
    workers: { pollMs: 1_000, heartbeatMs: 2_000, staleMs: 30_000 },
  });
  try {
    const { t, source } = s;
    source.put('x', 'One document');
    await connect(t);
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_RUNS; i++) {
      const jobId = await runSyncJob(t);
      await waitForJob(t, jobId, ['succeeded'], 30_000);
      latencies.push(await claimLatencyMs(t.db, jobId));
    }
    raw[`latency_${mode}`] = latencies;
    rows.push({
      benchmark: 'run-sync → running (in-process worker)',
      storage: mode,
      value: `p50 ${percentile(latencies, 50).toFixed(1)} ms`,
      detail: `p95 ${percentile(latencies, 95).toFixed(1)} ms, ${LATENCY_RUNS} runs, poll interval 1 s`,
    });

    source.docs.clear();
    source.seed(DOCS);
    for (const jobType of ['sync', 'reset'] as const) {
      const jobId = await runSyncJob(t, jobType);
      const job = await waitForJob(t, jobId, ['succeeded', 'failed', 'incomplete'], 600_000);
      if (job.status !== 'succeeded') throw new Error(`bench job failed: ${JSON.stringify(job)}`);
      const { ms, rows: changed } = await runTime(t.db, jobId);
      raw[`throughput_${mode}_${jobType}`] = { ms, changed, docs: DOCS };
      rows.push({
        benchmark:
          jobType === 'sync'
            ? `runner: ${DOCS} new docs (no embedding)`
            : `runner: reset of ${DOCS} unchanged docs`,
        storage: mode,
        value: `${Math.round((DOCS / ms) * 1000)} docs/s`,
        detail: `${(ms / 1000).toFixed(2)} s, ${changed} rows changed, ${(job.bytesSynced / 1e6).toFixed(1)} MB from source`,
      });
    }
  } finally {
    await s.close();
  }
}

async function stopWorkers(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          c.removeAllListeners('exit');
          c.once('exit', () => resolve());
          c.kill('SIGTERM');
        }),
    ),
  );
}

/** Native Postgres with separate worker processes: NOTIFY latency and scale-out. */
async function workerProcesses(): Promise<void> {
  const source = await startTestSource();
  source.seed(SCALE_DOCS);
  const key = randomBytes(32).toString('base64');
  const env = {
    KB_ENCRYPTION_KEY: key,
    KB_DOCS_SPACE_BASE_URL: source.url,
    KB_CRAWL_ALLOW_PRIVATE: 'true',
    KB_LOG_LEVEL: 'silent',
    // One job loop per process, so the comparison is about processes.
    KB_TEST_WORKERS: '1',
    KB_TEST_HEARTBEAT_MS: '2000',
  };
  const setup = async (connections: number) => {
    const fresh = await freshDatabase('postgres');
    await migrate(fresh.db);
    const { sources } = composeTestService(fresh.db, testConfig(env));
    const conns: Array<{ org: string; id: string }> = [];
    for (let i = 0; i < connections; i++) {
      const org = (await createOrganization(fresh.db, `bench-${i}`)).id;
      const creds = { access_token: TEST_SOURCE_TOKEN, space_id: TEST_SPACE_ID };
      const { id } = await fresh.db.transaction((tx) =>
        upsertConnection(tx, {
          organizationId: org,
          type: 'docs_space',
          encrypt: (cid) => sources.encryptCredentials(cid, creds),
        }),
      );
      conns.push({ org, id });
    }
    return { ...fresh, conns };
  };
  const enqueue = (db: Database, c: { org: string; id: string }) =>
    db.transaction((tx) =>
      enqueueSyncJob(tx, { organizationId: c.org, connectionId: c.id, jobType: 'sync', trigger: 'api' }),
    );
  const waitDone = async (db: Database, ids: number[]) => {
    for (;;) {
      const r = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::bigint[]) AND status IN ('succeeded', 'failed', 'incomplete', 'cancelled')`,
        [ids],
      );
      if (r[0]!.n === ids.length) return;
      await sleep(50);
    }
  };

  try {
    // Latency to a worker in another process, woken by LISTEN/NOTIFY.
    {
      const env1 = await setup(1);
      const child = await startWorkerProcess({ ...env, DATABASE_URL: env1.url! });
      try {
        const latencies: number[] = [];
        for (let i = 0; i < LATENCY_RUNS; i++) {
          const id = (await enqueue(env1.db, env1.conns[0]!))!;
          await waitDone(env1.db, [id]);
          latencies.push(await claimLatencyMs(env1.db, id));
        }
        raw['latency_worker_process'] = latencies;
        rows.push({
          benchmark: 'run-sync → running (worker process, NOTIFY)',
          storage: 'postgres',
          value: `p50 ${percentile(latencies, 50).toFixed(1)} ms`,
          detail: `p95 ${percentile(latencies, 95).toFixed(1)} ms, ${LATENCY_RUNS} runs (each job syncs ${SCALE_DOCS} docs; later ones unchanged)`,
        });
      } finally {
        await stopWorkers([child]);
        await env1.drop();
      }
    }

    // Scale-out: 4 connections × SCALE_DOCS docs.
    const results: Record<string, number> = {};
    for (const processes of [1, 2]) {
      const e = await setup(4);
      const children = await Promise.all(
        Array.from({ length: processes }, () => startWorkerProcess({ ...env, DATABASE_URL: e.url! })),
      );
      try {
        const started = Date.now();
        const ids: number[] = [];
        for (const c of e.conns) ids.push((await enqueue(e.db, c))!);
        await waitDone(e.db, ids);
        const ms = Date.now() - started;
        const [tot] = await e.db.query<{ n: number }>('SELECT count(*)::int AS n FROM items');
        results[processes] = ms;
        rows.push({
          benchmark: `scale-out: 4 connections × ${SCALE_DOCS} docs`,
          storage: 'postgres',
          value: `${Math.round((tot!.n / ms) * 1000)} docs/s`,
          detail: `${processes} worker process${processes === 1 ? '' : 'es'} × 1 loop, ${(ms / 1000).toFixed(2)} s, ${tot!.n} items`,
        });
      } finally {
        await stopWorkers(children);
        await e.drop();
      }
    }
    raw['scale_out_ms'] = results;
    rows.push({
      benchmark: 'scale-out ratio (2 processes / 1)',
      storage: 'postgres',
      value: `${(results[1]! / results[2]!).toFixed(2)}×`,
      detail: 'speed-up of the same workload; fake source, Postgres and workers share this machine',
    });
  } finally {
    await source.close();
  }
}

await inProcess('pglite');
await inProcess('postgres');
await workerProcesses();

const widths = (['benchmark', 'storage', 'value', 'detail'] as const).map((k) =>
  Math.max(k.length, ...rows.map((r) => r[k].length)),
);
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(line(['benchmark', 'storage', 'value', 'detail']));
console.log(line(widths.map((w) => '-'.repeat(w))));
for (const r of rows) console.log(line([r.benchmark, r.storage, r.value, r.detail]));

mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('./results/jobs.json', import.meta.url),
  JSON.stringify({ date: new Date().toISOString(), docs: DOCS, scaleDocs: SCALE_DOCS, rows, raw }, null, 2),
);
process.exit(0);
