/**
 * Two worker processes against one (politeness across processes): `node bench/crawl-workers.ts`. Prints a
 * table and writes bench/results/crawl-workers.json.
 *
 * Two crawl jobs of the same loopback host (two organizations; one job runs in one worker at a time), on a
 * native Postgres, run by one worker process with two job loops or by two processes with one each, with
 * the per-host slots in the database (the default over Postgres) or in each process (`hostSlots:
 * 'process'`, what every process did before). The site (test/support/recording-site.ts) holds each response
 * BENCH_HOLD_MS (default 20) like a remote host, and records the requests in flight and every start.
 *
 * - `polite`: per-host concurrency 2, no delay: the host's own cap is 2 / hold (100 requests/s at 20 ms).
 *   What matters: the peak in flight at the host (at most 2 when the limit holds) and the rate against the
 *   cap; two processes with slots in each process exceed the limit.
 * - `delay`: concurrency 2 and a 50 ms delay between starts (at most 20 requests/s): the least gap seen
 *   between two starts at the host.
 * - `open`: per-host concurrency 4, no delay, no hold: the limit never binds, so this is the shared
 *   stage's own cost (two statements per request) against the in-process gate, pages per second.
 * - `docs`: one crawl of the fastapi-docs mirror (154 pages, extraction and item writes as in
 *   bench/crawl.ts) by one worker process with the tests' crawler settings (per-host concurrency 4, no
 *   delay): what the shared stage costs a real crawl, pages stored per second.
 *
 * `db xacts / request`: transactions the database committed per request to the host (pg_stat_database),
 * the crawl's own writes and this script's polling included: the difference between the two slot kinds is
 * the shared stage's statements (a slot, its release, the waits' polls).
 *
 * Options: BENCH_PAGES (pages per crawl, default 100), BENCH_HOLD_MS (20), BENCH_ROUNDS (2, interleaved),
 * BENCH_SCENARIOS (comma list of polite,delay,open,docs).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { getCrawlJob } from '../src/db/repositories/crawl-jobs.ts';
import { createOrganization } from '../src/db/repositories/organizations.ts';
import { enqueueCrawlJob } from '../src/jobs/crawl-job.ts';
import { newId } from '../src/lib/ids.ts';
import { freshDatabase } from '../test/support/harness.ts';
import { serveDirectory } from '../test/support/sites.ts';
import { type RecordingSite, recordingSite } from '../test/support/recording-site.ts';
import { startWorkerProcess } from '../test/support/worker-process.ts';
import { printTable, writeResult, loadAverage } from './lib.ts';

const PAGES = Number(process.env['BENCH_PAGES'] ?? 100);
const HOLD_MS = Number(process.env['BENCH_HOLD_MS'] ?? 20);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 2);
const SCENARIOS = (process.env['BENCH_SCENARIOS'] ?? 'polite,delay,open,docs').split(',');

type Slots = 'database' | 'process';
interface Scenario {
  name: string;
  crawler: Record<string, unknown>;
  holdMs: number;
}
const SETTINGS: Record<string, Scenario> = {
  polite: { name: 'polite', crawler: { perHostConcurrency: 2, minDelayMs: 0 }, holdMs: HOLD_MS },
  delay: { name: 'delay', crawler: { perHostConcurrency: 2, minDelayMs: 50 }, holdMs: HOLD_MS },
  open: { name: 'open', crawler: { perHostConcurrency: 4, minDelayMs: 0 }, holdMs: 0 },
  docs: { name: 'docs', crawler: {}, holdMs: 0 },
};
const FASTAPI_DOCS = new URL('../../shared/data/sites/fastapi-docs', import.meta.url).pathname;
const ONE_PROCESS = new Set(['open', 'docs']);

interface Run {
  scenario: string;
  processes: number;
  slots: Slots;
  seconds: number;
  requests: number;
  perSecond: number;
  peak: number;
  minGapMs: number;
  byWorker: Record<string, number>;
  /** Times the worker changes from one request start to the next (0 with one process; few: one waited). */
  switches: number;
  /** Transactions the database committed per request (every statement of the workers and of this poller). */
  xactsPerRequest: number;
  load: string;
}

async function stop(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      c.kill('SIGTERM');
      await once(c, 'exit');
    }),
  );
}

async function xacts(db: Database): Promise<number> {
  const [row] = await db.query<{ n: string }>(
    'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()',
  );
  return Number(row!.n);
}

async function crawlTwice(db: Database, site: RecordingSite): Promise<void> {
  const jobs: Array<{ org: string; id: string }> = [];
  await db.transaction(async (tx) => {
    for (let i = 0; i < 2; i++) {
      const org = (await createOrganization(tx, `bench-${newId()}`)).id;
      const id = newId();
      const options = { includePaths: [], excludePaths: [], allowExternalLinks: false, tags: [] };
      await enqueueCrawlJob(tx, { id, organizationId: org, url: site.origin, limit: PAGES + 1, options });
      jobs.push({ org, id });
    }
  });
  for (;;) {
    const views = await Promise.all(jobs.map((j) => getCrawlJob(db, j.org, j.id)));
    if (views.some((v) => v?.status === 'failed')) throw new Error(`crawl failed: ${JSON.stringify(views)}`);
    if (views.every((v) => v?.status === 'completed')) return;
    await sleep(25);
  }
}

/** One crawl of the fastapi-docs mirror by one worker process: pages stored per second. */
async function docsRun(slots: Slots): Promise<Run> {
  const fresh = await freshDatabase('postgres');
  await migrate(fresh.db);
  const site = await serveDirectory(FASTAPI_DOCS);
  const children: ChildProcess[] = [];
  try {
    children.push(
      await startWorkerProcess({
        DATABASE_URL: fresh.url!,
        KB_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        KB_CRAWL_ALLOW_PRIVATE: 'true',
        KB_LOG_LEVEL: 'silent',
        KB_TEST_CRAWLER: JSON.stringify({ hostSlots: slots }),
      }),
    );
    const xacts0 = await xacts(fresh.db);
    const org = (await createOrganization(fresh.db, `bench-${newId()}`)).id;
    const id = newId();
    const options = { includePaths: [], excludePaths: [], allowExternalLinks: false, tags: [] };
    const t0 = performance.now();
    await fresh.db.transaction((tx) =>
      enqueueCrawlJob(tx, { id, organizationId: org, url: `${site.origin}/`, limit: 1000, options }),
    );
    let stored = 0;
    for (;;) {
      const view = await getCrawlJob(fresh.db, org, id);
      if (view?.status === 'failed') throw new Error(`crawl failed: ${view.error_message}`);
      if (view?.status === 'completed') {
        stored = view.completed_pages;
        break;
      }
      await sleep(25);
    }
    const seconds = (performance.now() - t0) / 1000;
    await stop(children);
    await sleep(1_500);
    return {
      scenario: 'docs',
      processes: 1,
      slots,
      seconds,
      requests: site.requests.length,
      perSecond: stored / seconds,
      peak: 0,
      minGapMs: Number.NaN,
      byWorker: { W1: site.requests.length },
      switches: 0,
      xactsPerRequest: ((await xacts(fresh.db)) - xacts0) / site.requests.length,
      load: loadAverage(),
    };
  } finally {
    await stop(children);
    await site.close();
    await fresh.drop();
  }
}

async function runOnce(s: Scenario, processes: number, slots: Slots): Promise<Run> {
  if (s.name === 'docs') return docsRun(slots);
  const fresh = await freshDatabase('postgres');
  await migrate(fresh.db);
  const site = await recordingSite({ pages: PAGES, holdMs: s.holdMs });
  const env = {
    DATABASE_URL: fresh.url!,
    KB_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    KB_CRAWL_ALLOW_PRIVATE: 'true',
    KB_LOG_LEVEL: 'silent',
  };
  const children: ChildProcess[] = [];
  try {
    for (let p = 0; p < processes; p++) {
      children.push(
        await startWorkerProcess({
          ...env,
          // One process runs both crawls at once, as two processes do.
          KB_TEST_WORKERS: String(2 / processes),
          KB_TEST_CRAWLER: JSON.stringify({ ...s.crawler, hostSlots: slots, userAgent: `W${p + 1}/1.0` }),
        }),
      );
    }
    const xacts0 = await xacts(fresh.db);
    const t0 = performance.now();
    await crawlTwice(fresh.db, site);
    const seconds = (performance.now() - t0) / 1000;
    // A backend's counts reach pg_stat_database when it exits (or within a second): stop the workers first.
    await stop(children);
    await sleep(1_500);
    const xactsPerRequest = ((await xacts(fresh.db)) - xacts0) / site.hits.length;
    const starts = site.hits.map((h) => h.start).sort((a, b) => a - b);
    let minGapMs = Number.POSITIVE_INFINITY;
    for (let i = 1; i < starts.length; i++) minGapMs = Math.min(minGapMs, starts[i]! - starts[i - 1]!);
    const agents = [...site.hits].sort((x, y) => x.start - y.start).map((h) => h.agent);
    const switches = agents.filter((a, i) => i > 0 && a !== agents[i - 1]).length;
    const byWorker: Record<string, number> = {};
    for (const h of site.hits) {
      const w = h.agent.split('/')[0]!;
      byWorker[w] = (byWorker[w] ?? 0) + 1;
    }
    return {
      scenario: s.name,
      processes,
      slots,
      seconds,
      requests: site.hits.length,
      perSecond: site.hits.length / seconds,
      peak: site.peak,
      minGapMs,
      byWorker,
      switches,
      xactsPerRequest,
      load: loadAverage(),
    };
  } finally {
    await stop(children);
    await site.close();
    await fresh.drop();
  }
}

const runs: Run[] = [];
const combos: Array<[number, Slots]> = [
  [1, 'process'],
  [1, 'database'],
  [2, 'process'],
  [2, 'database'],
];
for (let round = 0; round < ROUNDS; round++) {
  for (const name of SCENARIOS) {
    const s = SETTINGS[name];
    if (!s) throw new Error(`unknown scenario ${name}`);
    for (const [processes, slots] of ONE_PROCESS.has(name) ? combos.slice(0, 2) : combos) {
      const r = await runOnce(s, processes, slots);
      runs.push(r);
      console.log(
        `${r.scenario} ${processes}p ${slots}: ${r.perSecond.toFixed(1)} ${r.scenario === 'docs' ? 'pages stored' : 'req'}/s, peak ${r.peak}, min gap ${r.minGapMs.toFixed(1)} ms, ${r.xactsPerRequest.toFixed(1)} xacts/request, ${JSON.stringify(r.byWorker)}, load ${r.load}`,
      );
    }
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const rows: Array<Record<string, string>> = [];
for (const name of SCENARIOS) {
  for (const [processes, slots] of ONE_PROCESS.has(name) ? combos.slice(0, 2) : combos) {
    const rs = runs.filter((r) => r.scenario === name && r.processes === processes && r.slots === slots);
    rows.push({
      scenario: name,
      workers:
        name === 'docs'
          ? '1 process x 1 loop'
          : processes === 1
            ? '1 process x 2 loops'
            : '2 processes x 1 loop',
      slots,
      'requests/s (median; docs: pages stored/s)': median(rs.map((r) => r.perSecond)).toFixed(1),
      'peak in flight (max)': name === 'docs' ? '' : String(Math.max(...rs.map((r) => r.peak))),
      'least gap ms (min)': name === 'docs' ? '' : Math.min(...rs.map((r) => r.minGapMs)).toFixed(1),
      'db xacts / request': median(rs.map((r) => r.xactsPerRequest)).toFixed(1),
      'worker switches': rs.map((r) => r.switches).join(', '),
      'requests by worker': rs.map((r) => Object.values(r.byWorker).join('+')).join(', '),
      load: rs.map((r) => r.load.split(' ')[0]).join(', '),
    });
  }
}
printTable(
  `Two crawls of one host (${PAGES} pages each, responses held ${HOLD_MS} ms), ${ROUNDS} rounds`,
  rows,
);
writeResult('crawl-workers', { pages: PAGES, holdMs: HOLD_MS, rounds: ROUNDS, runs });
process.exit(0);
