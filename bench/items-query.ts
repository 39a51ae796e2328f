/**
 * Latency and throughput of the items query endpoint (POST /api/connect/knowledgebase-items/query) on a
 * real listening server, at growing item counts, in both storage modes.
 *
 *   node bench/items-query.ts [--sizes 10000,100000] [--storage pglite,postgres] [--seconds 8]
 *                             [--only-search] [--no-throughput] [--extra trgm]
 *
 * Data: items are bulk-inserted with SQL (not through the API: 100k uploads would take long and measure the
 * upload path instead), for the measured organization and as many again for a second organization, so the
 * tables hold other tenants' rows too. Titles and contents are real English: SciFact titles and sentences
 * (SCIFACT_DATA, beside the checkout), 250-700 characters of content per item, creation dates spread over a
 * year. Ten items of the organization (and ten of the other one) carry a rare word followed by a fixed word,
 * for the search cases.
 *
 * Cases: the first page (no search); a `search` for the rare word (upper case), a prefix of it, the
 * phrase of it and the next word, each matching those ten items, and a common word (thousands); a page
 * 90% deep into the list. Each search case is also run on the database directly, alternating with the
 * old ILIKE scan, for a ratio measured in the same run. Latency: one client, sequential requests, p50/p95. Throughput: autocannon with 32 connections
 * in a separate process. Embedded mode runs PGlite on a data dir on disk (as the service does); server
 * mode a native Postgres (startNativePostgres, default settings) after VACUUM ANALYZE, which autovacuum
 * would do shortly after such a bulk load. PGlite has no autovacuum, so it is measured as loaded.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import type { Database } from '../src/db/database.ts';
import { pgliteDatabase } from '../src/db/pglite.ts';
import { migrate } from '../src/db/migrate.ts';
import { queryItems, searchWords } from '../src/db/repositories/items.ts';
import { createApiKey, createOrganization } from '../src/db/repositories/organizations.ts';
import { buildApp } from '../src/http/app.ts';
import type { App } from '../src/http/context.ts';
import { newId } from '../src/lib/ids.ts';
import { itemSearchWords } from '../src/lib/search-words.ts';
import { composeTestService } from '../test/support/harness.ts';
import { type NativePostgres, startNativePostgres } from '../test/support/native-postgres.ts';
import {
  openBenchDatabase,
  percentile,
  printTable,
  rng,
  sizeList,
  storageModes,
  writeResult,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    storage: { type: 'string', default: 'pglite,postgres' },
    seconds: { type: 'string', default: '8' },
    // `trgm` adds the trigram GIN indexes of the old migration 005 (embedded: PGlite with pg_trgm) to
    // reproduce the embedded failure at 200k items; `none` is the schema as migrated.
    extra: { type: 'string', default: 'none' },
    // Shorter runs: only the search cases, and/or no autocannon phase.
    'only-search': { type: 'boolean', default: false },
    'no-throughput': { type: 'boolean', default: false },
  },
});
const EXTRA = values.extra as 'none' | 'trgm';
const ONLY_SEARCH = values['only-search'];
const THROUGHPUT = !values['no-throughput'];
const SIZES = sizeList(values.sizes);
const MODES = storageModes(values.storage);
/** Time budget per case, for the latency loop and for autocannon each. */
const SECONDS = Number(values.seconds);
const MAX_SAMPLES = 200;
const MIN_SAMPLES = 10;
const CONNECTIONS = 32;
const PAGE_SIZE = 20;
const RARE_WORD = 'quokkaline';
const RARE_NEXT = 'habitat';
/** A word of many SciFact sentences: the search case whose matches are many (its count is printed). */
const COMMON_WORD = 'cells';
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
const sentences = corpus
  .flatMap((d) => d.text.split(/(?<=[.!?])\s+/))
  .filter((s) => s.length > 20 && s.length < 400);

const pick = <T>(r: () => number, xs: T[]): T => xs[Math.floor(r() * xs.length)]!;

function makeItem(r: () => number, rare: boolean): { title: string; content: string; ageSeconds: number } {
  const target = 250 + Math.floor(r() * 450);
  let content = '';
  while (content.length < target) content += (content ? ' ' : '') + pick(r, sentences);
  // The rare word, followed by a fixed word for the phrase case.
  if (rare) content = content.replace(/ (\S+)$/, ` ${RARE_WORD} ${RARE_NEXT} $1`);
  return { title: pick(r, titles), content, ageSeconds: Math.floor(r() * 365 * 86400) };
}

/** Insert `count` items for an organization, in batches; `rareAt` are indexes that get the rare word. */
async function insertItems(
  db: Database,
  orgId: string,
  from: number,
  count: number,
  rareAt: Set<number>,
  seed: number,
): Promise<void> {
  const r = rng(seed);
  const BATCH = 2000;
  // The longest batch: one INSERT is one synchronous call into PGlite's WASM, so it blocks the event loop.
  let longest = 0;
  for (let start = from; start < from + count; start += BATCH) {
    if ((start - from) % 20000 === 0) {
      process.stderr.write(
        `  ${start - from}/${count} items: ${memoryLine()}, longest batch ${(longest / 1000).toFixed(1)} s, ` +
          `event loop delay max ${(loopDelay.max / 1e9).toFixed(1)} s, load ${loadavg()}\n`,
      );
      longest = 0;
      loopDelay.reset();
    }
    const tb = performance.now();
    const n = Math.min(BATCH, from + count - start);
    const rows = Array.from({ length: n }, (_, k) => ({
      id: newId(),
      ...makeItem(r, rareAt.has(start + k)),
    }));
    await db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO items (id, organization_id, title, content, content_hash, visibility, source_type, source_table_name,
                            source_url, source_key, tags, indexing_status, created_at, updated_at, search_words)
         SELECT u.id, $1, u.title, u.content, md5(u.content), 'public', 'upload', 'uploaded_documents',
                'https://docs.example.com/' || u.id, 'upload:' || u.id, '{}', 'indexed',
                now() - make_interval(secs => u.age), now() - make_interval(secs => u.age),
                array_to_tsvector(string_to_array(u.words, ' '))
           FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[]) AS u(id, title, content, age, words)`,
        [
          orgId,
          rows.map((x) => x.id),
          rows.map((x) => x.title),
          rows.map((x) => x.content),
          rows.map((x) => x.ageSeconds),
          rows.map((x) => itemSearchWords(x.title, x.content)),
        ],
      );
    });
    longest = Math.max(longest, performance.now() - tb);
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

/** PGlite as openPglite opens it, plus pg_trgm, and its Postgres stderr kept for the report. */
let pgliteHeap: (() => number) | null = null;
const pgliteStderr: string[] = [];
async function openTrgmPglite(): Promise<{ db: Database; cleanup(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'kb-bench-items-trgm-'));
  const pg = await PGlite.create(path.join(dir, 'pgdata'), {
    extensions: { vector, pg_trgm },
    onStderr: (t) => {
      pgliteStderr.push(t);
      return true;
    },
  });
  pgliteHeap = () => pg.Module.HEAPU8.length;
  const db = pgliteDatabase(pg);
  return { db, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** How long timers (keep-alive timeouts among them) waited behind PGlite's synchronous calls. */
const loopDelay = monitorEventLoopDelay({ resolution: 100 });
loopDelay.enable();

/** The 1-minute load average beside every number (the machine is shared). */
function loadavg(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!;
}

function memoryLine(): string {
  const heap = pgliteHeap ? `, WASM heap ${(pgliteHeap() / 2 ** 20).toFixed(0)} MiB` : '';
  return `RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB${heap}`;
}

async function startBench(mode: 'pglite' | 'postgres', native: NativePostgres | null): Promise<Bench> {
  const { db, cleanup } =
    mode === 'pglite' && EXTRA === 'trgm'
      ? await openTrgmPglite()
      : await openBenchDatabase(mode, native, 'kb-bench-items-');
  await migrate(db);
  if (EXTRA === 'trgm') {
    await db.exec(`CREATE EXTENSION IF NOT EXISTS pg_trgm;
      CREATE INDEX items_title_trgm_idx ON items USING gin (title gin_trgm_ops);
      CREATE INDEX items_content_trgm_idx ON items USING gin (content gin_trgm_ops);`);
  }
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

/** Requests sent again after a reset keep-alive connection (see post). */
let resets = 0;

/**
 * One request. A reset is retried once: this process is client and server, and after it spends more than
 * the server's keep-alive timeout (72 s) inside PGlite statements between two requests (a long load, the
 * scan reference), the pooled connection's first reuse reads ECONNRESET. That was the embedded failure
 * at 200k items with trigram indexes (bench/keepalive-reset.ts isolates it): the load took 17 minutes.
 */
async function post(b: Bench, body: unknown): Promise<{ status: number; json: any }> {
  const send = () =>
    fetch(b.url + ENDPOINT, {
      method: 'POST',
      headers: { authorization: `Bearer ${b.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  let res: Response;
  try {
    res = await send();
  } catch (err) {
    if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw err;
    resets += 1;
    process.stderr.write(`  connection reset (${resets}), ${memoryLine()}: sent again\n`);
    res = await send();
  }
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
  return {
    samples: times.length,
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    total: first.json.pagination?.total_items ?? -1,
  };
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
  return {
    rps: r.ok / r.duration,
    p50: r.p50,
    p99: r.p99,
    ok: r.ok,
    failed: r.non2xx + r.errors + r.timeouts,
  };
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

/** The plans of the statements queryItems runs (its SQL repeated here, for the record). */
async function plans(b: Bench, search: string | undefined, page: number): Promise<string[]> {
  const params: unknown[] = [b.orgA];
  let where = 'organization_id = $1';
  const offset = (page - 1) * PAGE_SIZE;
  const explain = async (sql: string) =>
    (await b.db.query<Record<string, string>>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params))
      .map((r) => Object.values(r)[0]!)
      .join('\n');
  if (!search) {
    return [
      await explain(`SELECT count(*)::int AS n FROM items WHERE ${where}`),
      await explain(
        `SELECT ${VIEW_COLUMNS} FROM items WHERE ${where}
          ORDER BY created_at DESC, seq DESC LIMIT ${PAGE_SIZE} OFFSET ${offset}`,
      ),
    ];
  }
  const w = searchWords(search);
  if (w?.tsquery) {
    params.push(w.tsquery);
    where += ' AND search_words @@ $2::tsquery';
  }
  if (!w?.exact) {
    params.push(search);
    const n = params.length;
    where += ` AND (strpos(lower(title), lower($${n})) > 0 OR strpos(lower(content), lower($${n})) > 0)`;
  }
  return [
    await explain(
      `WITH matches AS MATERIALIZED (SELECT id, created_at, seq FROM items WHERE ${where}),
            page AS (SELECT id AS page_id FROM matches ORDER BY created_at DESC, seq DESC LIMIT ${PAGE_SIZE} OFFSET ${offset})
       SELECT (SELECT count(*)::int FROM matches) AS total, ${VIEW_COLUMNS}
         FROM items JOIN page ON page.page_id = items.id ORDER BY items.created_at DESC, items.seq DESC`,
    ),
  ];
}

/**
 * The search as it was before migration 013 (ILIKE substring scan of title and content), the reference
 * for a ratio measured in the same run: the machine is shared, so absolute times drift with its load.
 */
async function scanSearch(b: Bench, search: string): Promise<number> {
  const params = [b.orgA, `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`];
  const where = 'organization_id = $1 AND (title ILIKE $2 OR content ILIKE $2)';
  const [row] = await b.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM items WHERE ${where}`,
    params,
  );
  await b.db.query(
    `SELECT ${VIEW_COLUMNS} FROM items
       JOIN (SELECT id AS page_id FROM items WHERE ${where}
              ORDER BY items.created_at DESC, items.seq DESC LIMIT ${PAGE_SIZE}) AS page ON page.page_id = items.id
      ORDER BY items.created_at DESC, items.seq DESC`,
    params,
  );
  return row!.n;
}

/** queryItems (index) and the scan, alternating, on the database directly (no HTTP): p50 of each. */
async function compareWithScan(b: Bench, search: string): Promise<{ index: Latency; scan: Latency }> {
  const index: number[] = [];
  const scan: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  // At least 5 pairs: the scan takes seconds at 100k items in embedded mode.
  while (index.length < 5 || (performance.now() < until && index.length < MAX_SAMPLES)) {
    let t0 = performance.now();
    const r = await queryItems(b.db, b.orgA, { limit: PAGE_SIZE, page: 1, search });
    index.push(performance.now() - t0);
    t0 = performance.now();
    const n = await scanSearch(b, search);
    scan.push(performance.now() - t0);
    if (index.length === 1 && n < r.total)
      throw new Error(`"${search}": the scan finds ${n}, the index ${r.total}`);
  }
  const stats = (xs: number[], total: number): Latency => {
    xs.sort((x, y) => x - y);
    return { samples: xs.length, p50: percentile(xs, 50), p95: percentile(xs, 95), total };
  };
  return { index: stats(index, -1), scan: stats(scan, -1) };
}

// ---- Run ---------------------------------------------------------------------------------------------

const native = MODES.includes('postgres') ? await startNativePostgres() : null;
const latencyRows: Array<Record<string, string>> = [];
const rpsRows: Array<Record<string, string>> = [];
const scanRows: Array<Record<string, string>> = [];
const raw: unknown[] = [];
const t00 = performance.now();

try {
  for (const mode of MODES) {
    const b = await startBench(mode, native);
    try {
      let have = 0;
      const rareA = new Set(
        Array.from({ length: RARE_ITEMS }, (_, k) => Math.floor(((k + 0.5) * SIZES[0]!) / RARE_ITEMS)),
      );
      for (const size of SIZES) {
        const t0 = performance.now();
        await insertItems(b.db, b.orgA, have, size - have, rareA, 1000 + have);
        await insertItems(b.db, b.orgB, have, size - have, rareA, 2000 + have);
        have = size;
        if (mode === 'postgres') await b.db.exec('VACUUM ANALYZE items');
        process.stderr.write(
          `${mode} ${size}: loaded ${2 * size} items in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${memoryLine()}\n`,
        );

        const deepPage = Math.max(1, Math.floor((0.9 * size) / PAGE_SIZE));
        const search = (name: string, text: string, expected: number | null) => ({
          name,
          body: { limit: PAGE_SIZE, search: text },
          search: text,
          page: 1,
          expected,
        });
        const allCases = [
          {
            name: 'first page, no search',
            body: { limit: PAGE_SIZE },
            search: undefined,
            page: 1,
            expected: size,
          },
          search(`search a word (${RARE_ITEMS} items)`, RARE_WORD.toUpperCase(), RARE_ITEMS),
          search(`search a word prefix (${RARE_ITEMS} items)`, RARE_WORD.slice(0, 6), RARE_ITEMS),
          search(`search a phrase (${RARE_ITEMS} items)`, `${RARE_WORD} ${RARE_NEXT}`, RARE_ITEMS),
          search(`search a common word ("${COMMON_WORD}")`, COMMON_WORD, null),
          {
            name: `page ${deepPage} (90% deep)`,
            body: { limit: PAGE_SIZE, page: deepPage },
            search: undefined,
            page: deepPage,
            expected: size,
          },
        ];
        const cases = ONLY_SEARCH ? allCases.filter((c) => c.search) : allCases;
        for (const c of cases) {
          const lat = await latency(b, c.body);
          if (c.expected !== null && lat.total !== c.expected) {
            throw new Error(`${c.name}: total ${lat.total}, expected ${c.expected}`);
          }
          const thr = THROUGHPUT ? await throughput(b, c.body) : null;
          const drainMs = thr ? await drain(b) : 0;
          const plan = size === SIZES.at(-1) ? await plans(b, c.search, c.page) : undefined;
          process.stderr.write(
            `  ${c.name}: p50 ${lat.p50.toFixed(1)} ms, p95 ${lat.p95.toFixed(1)} ms${thr ? `, ${thr.rps.toFixed(0)} req/s` : ''}, load ${loadavg()}\n`,
          );
          latencyRows.push({
            storage: mode === 'pglite' ? 'embedded (PGlite)' : 'server (Postgres)',
            items: String(size),
            case: c.name,
            'p50 ms': lat.p50.toFixed(1),
            'p95 ms': lat.p95.toFixed(1),
            samples: String(lat.samples),
            matches: String(lat.total),
            load: loadavg(),
          });
          if (c.search && EXTRA === 'none') {
            const cmp = await compareWithScan(b, c.search);
            scanRows.push({
              storage: mode === 'pglite' ? 'embedded (PGlite)' : 'server (Postgres)',
              items: String(size),
              case: c.name,
              'index p50 ms': cmp.index.p50.toFixed(1),
              'scan p50 ms': cmp.scan.p50.toFixed(1),
              'scan / index': (cmp.scan.p50 / cmp.index.p50).toFixed(1),
              pairs: String(cmp.index.samples),
              load: loadavg(),
            });
            process.stderr.write(`    vs scan: ${JSON.stringify(scanRows.at(-1))}\n`);
          }
          if (thr)
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
    } catch (err) {
      process.stderr.write(`FAILED (${mode}, extra ${EXTRA}): ${(err as Error).stack}\n${memoryLine()}\n`);
      if (pgliteStderr.length > 0)
        process.stderr.write(`PGlite stderr (last 20):\n${pgliteStderr.slice(-20).join('\n')}\n`);
      throw err;
    } finally {
      await b.close();
    }
  }
} finally {
  await native?.stop();
}

printTable(
  'Items query latency, 1 client (POST /api/connect/knowledgebase-items/query, limit 20)',
  latencyRows,
);
if (scanRows.length > 0) {
  printTable(
    'Search in the database (no HTTP), index (queryItems) and the old ILIKE scan alternating, same run',
    scanRows,
  );
}
if (rpsRows.length > 0)
  printTable(
    `Items query throughput, ${CONNECTIONS} connections (autocannon, ${SECONDS} s per case)`,
    rpsRows,
  );
console.log(`\nconnections reset and sent again: ${resets}`);
console.log(`\ntotal ${((performance.now() - t00) / 1000).toFixed(0)} s`);
writeResult('items-query', {
  sizes: SIZES,
  modes: MODES,
  seconds: SECONDS,
  connections: CONNECTIONS,
  results: raw,
});
process.exit(0);
