/**
 * Latency and throughput of the items query endpoint (POST /api/connect/knowledgebase-items/query) on a
 * real listening server, at growing item counts, in both storage modes.
 *
 *   node bench/items-query.ts [--sizes 10000,100000] [--storage pglite,postgres] [--seconds 8]
 *
 * Data: items are bulk-inserted with SQL (not through the API: 100k uploads would take long and measure
 * the upload path instead), for the measured organization and as many again for a second organization,
 * so the tables hold other tenants' rows too. Titles and contents are real English: SciFact titles and
 * sentences (../shared/data/scifact), 250-700 characters of content per item, creation dates spread over
 * a year. Ten items of the organization (and ten of the other one) carry a rare word for the search case.
 *
 * Cases: the first page (no search), a `search` that matches those ten items, and a page 90% deep into
 * the list. Latency: one client, sequential requests, p50/p95. Throughput: autocannon with 32 connections
 * in a separate process. Embedded mode runs PGlite on a data dir on disk (as the service does); server
 * mode a native Postgres (startNativePostgres, default settings) after VACUUM ANALYZE, which autovacuum
 * would do shortly after such a bulk load. PGlite has no autovacuum, so it is measured as loaded.
 */
import { execFile } from 'node:child_process';
import { readFileSync, } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { createApiKey, createOrganization } from '../src/db/repositories/organizations.ts';
import { buildApp } from '../src/http/app.ts';
import type { App } from '../src/http/context.ts';
import { newId } from '../src/lib/ids.ts';
import { composeTestService } from '../test/support/harness.ts';
import { type NativePostgres, startNativePostgres } from '../test/support/native-postgres.ts';
import { openBenchDatabase, percentile, printTable, rng, writeResult } from './lib.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    storage: { type: 'string', default: 'pglite,postgres' },
    seconds: { type: 'string', default: '8' },
  },
});
const SIZES = values.sizes.split(',').map(Number).sort((a, b) => a - b);
const MODES = values.storage.split(',').filter((m): m is 'pglite' | 'postgres' => m === 'pglite' || m === 'postgres');
/** Time budget per case, for the latency loop and for autocannon each. */
const SECONDS = Number(values.seconds);
const MAX_SAMPLES = 200;
const MIN_SAMPLES = 10;
const CONNECTIONS = 32;
const PAGE_SIZE = 20;
const RARE_WORD = 'quokkaline';
const RARE_ITEMS = 10;
const ENDPOINT = '/api/connect/knowledgebase-items/query';

// ---- Text: real titles and sentences, a deterministic generator -------------------------------------

const corpus: Array<{ title: string; text: string }> = readFileSync(
  new URL('../../shared/data/scifact/corpus.jsonl', import.meta.url),
  'utf8',
)
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
const titles = corpus.map((d) => d.title).filter((t) => t.length > 0);
const sentences = corpus.flatMap((d) => d.text.split(/(?<=[.!?])\s+/)).filter((s) => s.length > 20 && s.length < 400);

const pick = <T>(r: () => number, xs: T[]): T => xs[Math.floor(r() * xs.length)]!;

function makeItem(r: () => number, rare: boolean): { title: string; content: string; ageSeconds: number } {
  const target = 250 + Math.floor(r() * 450);
  let content = '';
  while (content.length < target) content += (content ? ' ' : '') + pick(r, sentences);
  if (rare) content = content.replace(/ (\S+)$/, ` ${RARE_WORD} $1`);
  return { title: pick(r, titles), content, ageSeconds: Math.floor(r() * 365 * 86400) };
}

/** Insert `count` items for an organization, in batches; `rareAt` are indexes that get the rare word. */
async function insertItems(db: Database, orgId: string, from: number, count: number, rareAt: Set<number>, seed: number): Promise<void> {
  const r = rng(seed);
  const BATCH = 2000;
  for (let start = from; start < from + count; start += BATCH) {
    const n = Math.min(BATCH, from + count - start);
    const rows = Array.from({ length: n }, (_, k) => ({ id: newId(), ...makeItem(r, rareAt.has(start + k)) }));
    await db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO items (id, organization_id, title, content, content_hash, visibility, source_type, source_table_name,
                            source_url, source_key, tags, indexing_status, created_at, updated_at)
         SELECT u.id, $1, u.title, u.content, md5(u.content), 'public', 'upload', 'uploaded_documents',
                'https://docs.example.com/' || u.id, 'upload:' || u.id, '{}', 'indexed',
                now() - make_interval(secs => u.age), now() - make_interval(secs => u.age)
           FROM unnest($2::text[], $3::text[], $4::text[], $5::int[]) AS u(id, title, content, age)`,
        [orgId, rows.map((x) => x.id), rows.map((x) => x.title), rows.map((x) => x.content), rows.map((x) => x.ageSeconds)],
      );
    });
  }
}

// ---- The app under test ------------------------------------------------------------------------------

interface Bench {
  db: Database;
  app: App;
  url: string;
  keyA: string;
  orgA: string;
  orgB: string;
  close(): Promise<void>;
}

async function startBench(mode: 'pglite' | 'postgres', native: NativePostgres | null): Promise<Bench> {
  const { db, cleanup } = await openBenchDatabase(mode, native, 'kb-bench-items-');
  await migrate(db);
  const orgA = await createOrganization(db, 'bench-a');
  const orgB = await createOrganization(db, 'bench-b');
  const keyA = (await createApiKey(db, orgA.id)).apiKey;
  await createApiKey(db, orgB.id);
  const app = await buildApp(composeTestService(db).appDeps, { logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    db,
    app,
    url: `http://127.0.0.1:${port}`,
    keyA,
    orgA: orgA.id,
    orgB: orgB.id,
    async close() {
      await app.close();
      await db.close();
      await cleanup();
    },
  };
}

// ---- Measurement -------------------------------------------------------------------------------------

interface Latency {
  samples: number;
  p50: number;
  p95: number;
  total: number;
}

async function post(b: Bench, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(b.url + ENDPOINT, {
    method: 'POST',
    headers: { authorization: `Bearer ${b.keyA}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function latency(b: Bench, body: unknown): Promise<Latency> {
  const first = await post(b, body); // warm-up, and the answer to check
  if (first.status !== 200) throw new Error(`query failed: ${first.status} ${JSON.stringify(first.json)}`);
  await post(b, body);
  const times: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  while (times.length < MAX_SAMPLES && (times.length < MIN_SAMPLES || performance.now() < until)) {
    const t0 = performance.now();
    await post(b, body);
    times.push(performance.now() - t0);
  }
  times.sort((x, y) => x - y);
  return { samples: times.length, p50: percentile(times, 50), p95: percentile(times, 95), total: first.json.pagination?.total_items ?? -1 };
}

interface Throughput {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  failed: number;
}

/** autocannon in its own process, so the load generator does not share the server's event loop. */
async function throughput(b: Bench, body: unknown): Promise<Throughput> {
  const script = `
    import autocannon from 'autocannon';
    const o = JSON.parse(process.env.BENCH_OPTS);
    const r = await autocannon(o);
    console.log(JSON.stringify({ ok: r['2xx'], non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts,
      duration: r.duration, p50: r.latency.p50, p99: r.latency.p99 }));`;
  const opts = {
    url: b.url + ENDPOINT,
    method: 'POST',
    headers: { authorization: `Bearer ${b.keyA}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    connections: CONNECTIONS,
    duration: SECONDS,
    timeout: 60,
  };
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: { ...process.env, BENCH_OPTS: JSON.stringify(opts) },
    maxBuffer: 16 * 1024 * 1024,
  });
  const r = JSON.parse(stdout.trim().split('\n').at(-1)!);
  return { rps: r.ok / r.duration, p50: r.p50, p99: r.p99, ok: r.ok, failed: r.non2xx + r.errors + r.timeouts };
}

/**
 * Wait until the server has worked off what autocannon left queued (PGlite runs one statement at a time,
 * so up to CONNECTIONS slow requests can still be waiting): one request goes through only after them.
 */
async function drain(b: Bench): Promise<number> {
  const t0 = performance.now();
  await post(b, { limit: 1 });
  return performance.now() - t0;
}

/** The column list of src/db/repositories/items.ts (not exported there), so the plans show the real work. */
const VIEW_COLUMNS = `id, title, visibility, source_type, source_table_name, source_url, tags, indexing_status,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at`;

/** The plans of the two statements queryItems runs, for the record. */
async function plans(b: Bench, search: string | undefined, page: number): Promise<string[]> {
  const params: unknown[] = [b.orgA];
  let where = 'organization_id = $1';
  if (search) {
    params.push(`%${search}%`);
    where += ' AND (title ILIKE $2 OR content ILIKE $2)';
  }
  const explain = async (sql: string) =>
    (await b.db.query<Record<string, string>>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params)).map((r) => Object.values(r)[0]!).join('\n');
  return [
    await explain(`SELECT count(*)::int AS n FROM items WHERE ${where}`),
    await explain(
      `SELECT ${VIEW_COLUMNS} FROM items WHERE ${where}
        ORDER BY created_at DESC, seq DESC LIMIT ${PAGE_SIZE} OFFSET ${(page - 1) * PAGE_SIZE}`,
    ),
  ];
}

// ---- Run ---------------------------------------------------------------------------------------------

const native = MODES.includes('postgres') ? await startNativePostgres() : null;
const latencyRows: Array<Record<string, string>> = [];
const rpsRows: Array<Record<string, string>> = [];
const raw: unknown[] = [];
const t00 = performance.now();

try {
  for (const mode of MODES) {
    const b = await startBench(mode, native);
    try {
      let have = 0;
      const rareA = new Set(Array.from({ length: RARE_ITEMS }, (_, k) => Math.floor(((k + 0.5) * SIZES[0]!) / RARE_ITEMS)));
      for (const size of SIZES) {
        const t0 = performance.now();
        await insertItems(b.db, b.orgA, have, size - have, rareA, 1000 + have);
        await insertItems(b.db, b.orgB, have, size - have, rareA, 2000 + have);
        have = size;
        if (mode === 'postgres') await b.db.exec('VACUUM ANALYZE items');
        process.stderr.write(`${mode} ${size}: loaded ${2 * size} items in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

        const deepPage = Math.max(1, Math.floor((0.9 * size) / PAGE_SIZE));
        const cases = [
          { name: 'first page, no search', body: { limit: PAGE_SIZE }, search: undefined, page: 1 },
          { name: `search matching ${RARE_ITEMS} items`, body: { limit: PAGE_SIZE, search: RARE_WORD }, search: RARE_WORD, page: 1 },
          { name: `page ${deepPage} (90% deep)`, body: { limit: PAGE_SIZE, page: deepPage }, search: undefined, page: deepPage },
        ];
        for (const c of cases) {
          const lat = await latency(b, c.body);
          const expected = c.search ? RARE_ITEMS : size;
          if (lat.total !== expected) throw new Error(`${c.name}: total ${lat.total}, expected ${expected}`);
          const thr = await throughput(b, c.body);
          const drainMs = await drain(b);
          const plan = size === SIZES.at(-1) ? await plans(b, c.search, c.page) : undefined;
          process.stderr.write(`  ${c.name}: p50 ${lat.p50.toFixed(1)} ms, ${thr.rps.toFixed(0)} req/s\n`);
          latencyRows.push({
            storage: mode === 'pglite' ? 'embedded (PGlite)' : 'server (Postgres)',
            items: String(size),
            case: c.name,
            'p50 ms': lat.p50.toFixed(1),
            'p95 ms': lat.p95.toFixed(1),
            samples: String(lat.samples),
          });
          rpsRows.push({
            storage: mode === 'pglite' ? 'embedded (PGlite)' : 'server (Postgres)',
            items: String(size),
            case: c.name,
            'req/s': thr.rps.toFixed(1),
            // autocannon only reports requests that completed within its run.
            'p50 ms': thr.ok > 0 ? String(thr.p50) : `none done in ${SECONDS} s`,
            'p99 ms': thr.ok > 0 ? String(thr.p99) : '',
            done: String(thr.ok),
            failed: String(thr.failed),
          });
          raw.push({ mode, size, case: c.name, body: c.body, latency: lat, throughput: thr, drainMs, plan });
        }
      }
    } finally {
      await b.close();
    }
  }
} finally {
  await native?.stop();
}

printTable('Items query latency, 1 client (POST /api/connect/knowledgebase-items/query, limit 20)', latencyRows);
printTable(`Items query throughput, ${CONNECTIONS} connections (autocannon, ${SECONDS} s per case)`, rpsRows);
console.log(`\ntotal ${((performance.now() - t00) / 1000).toFixed(0)} s`);
writeResult('items-query', { sizes: SIZES, modes: MODES, seconds: SECONDS, connections: CONNECTIONS, results: raw });
process.exit(0);
