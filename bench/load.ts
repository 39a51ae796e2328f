/**
 * Load benchmark: `node bench/load.ts` prints its tables, writes bench/results/load-<storage>.json
 * (load-soak-<storage>.json with --soak) and exits non-zero when any request failed, a background job
 * failed or an item failed to index.
 *
 * The service runs in this process as `kb serve` composes it (buildApp + listen on 127.0.0.1, two job
 * workers with production timings, the background indexer on the real embedding model, rate limit off),
 * over PGlite on a data dir (default) or a new database on the native Postgres fixture.
 *
 * 1. Seed: BENCH_LOAD_SEED_DOCS SciFact documents (default 300, those the test queries judge relevant
 *    first) uploaded through the API and indexed before the clock starts (the time is printed).
 * 2. Background work started at the same moment as the load: a first sync of a GitBook fake space of
 *    BENCH_LOAD_SYNC_DOCS pages (default 2,000; test/fakes/gitbook.ts, KB_DOCS_SPACE_BASE_URL pointing at
 *    it, private addresses allowed) through POST /api/connect/connection + run-sync, and a crawl of the
 *    fastapi-docs mirror served on loopback, with the crawler's production politeness.
 * 3. Load: BENCH_LOAD_CLIENTS closed-loop clients (default 64, keep-alive node:http agent) for
 *    BENCH_LOAD_SECONDS (default 60). The clients, the fake and the site run in a second process, so the
 *    service's process holds the service alone (its event loop, its RSS). Each request draws its kind by BENCH_LOAD_MIX (default `60,30,10`: search is the read path the
 *    service exists for, called once per question by assistants and search boxes; listing items is the
 *    admin screens' path; uploads are the rarer write, yet 10% keeps new work reaching the indexer):
 *    - search, POST /api/consume/search with a SciFact query: 70% semantic, 20% hybrid, 10% filtered to
 *      the seeded documents' tag (the HNSW scan under a selective filter);
 *    - items query, POST /api/connect/knowledgebase-items/query: first page, a random page of the
 *      listing, or a `search` word from the SciFact titles with paging;
 *    - upload, POST /api/connect/knowledgebase-items: one SciFact abstract not in the seed (the endpoint
 *      takes one document per request), tagged `load`, so the indexer has new work all along.
 *    An error is any transport error, timeout (BENCH_LOAD_TIMEOUT_SECONDS, default 60), non-2xx answer
 *    (429 is counted apart; the rate limit is off so there should be none) or 2xx answer whose body lacks
 *    what the endpoint promises (a search with no hits, an items page without pagination, an upload
 *    without its item).
 * 4. Report: per request kind count, errors, req/s, p50/p90/p99/max ms; every BENCH_LOAD_SAMPLE_SECONDS
 *    (10 s, or 60 s in the soak) req/s, latencies, the service process's RSS and heap used, items pending
 *    indexing; whether the sync and the crawl finished and when; how many uploads the indexer embedded
 *    during the load. RSS is the service's process (service, PGlite when embedded, model); the native
 *    Postgres server's own memory is not in it. Where the time goes: the main thread's busy share
 *    and event-loop delay, how long database transactions were held (and by whom, from 1 s), query
 *    embeddings timed from the call (the model's one queue included), and in server mode the pool's
 *    connections by state.
 *
 * Soak: `node bench/load.ts --soak` runs the same load for BENCH_LOAD_SOAK_SECONDS (default 600), samples
 * every minute, and repeats the background work once it finished, at most once a minute (an incremental
 * sync after 1% of the pages changed, a re-crawl), as schedules would. Heap used is also read after a full GC
 * before and after the load (outside the measured time).
 *
 * Options (environment): BENCH_STORAGE (`pglite` default, or `postgres`), BENCH_LOAD_SECONDS,
 * BENCH_LOAD_SOAK_SECONDS, BENCH_LOAD_CLIENTS, BENCH_LOAD_MIX (search,query,upload weights),
 * BENCH_LOAD_SEED_DOCS, BENCH_LOAD_SYNC_DOCS, BENCH_LOAD_SAMPLE_SECONDS, BENCH_LOAD_TIMEOUT_SECONDS,
 * BENCH_LOAD_INDEXER (`0`: no background indexer, to see what indexing costs the API; uploads stay pending).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { monitorEventLoopDelay, performance as nodePerformance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Database } from '../src/db/database.ts';
import type { Embedder } from '../src/embedding/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { createApiKey, createOrganization } from '../src/db/repositories/organizations.ts';
import { buildApp } from '../src/http/app.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { createProcessLogger } from '../src/lib/logger.ts';
import { gitbookBenchWorkspace } from '../test/fakes/gitbook.ts';
import { testEmbedder } from '../test/support/embedding.ts';
import { composeTestService, type StorageMode, testConfig } from '../test/support/harness.ts';
import { startNativePostgres } from '../test/support/native-postgres.ts';
import { serveDirectory } from '../test/support/sites.ts';
import {
  openBenchDatabase,
  percentile,
  printTable,
  readScifactJsonl,
  rng,
  SCIFACT_DATA,
  writeResult,
} from './lib.ts';

const CHILD_FLAG = '--load-clients';
const SOAK = process.argv.includes('--soak');
const STORAGE = (process.env['BENCH_STORAGE'] ?? 'pglite') as StorageMode;
const LOAD_SECONDS = Number(
  SOAK ? (process.env['BENCH_LOAD_SOAK_SECONDS'] ?? 600) : (process.env['BENCH_LOAD_SECONDS'] ?? 60),
);
const CLIENTS = Number(process.env['BENCH_LOAD_CLIENTS'] ?? 64);
const MIX = (process.env['BENCH_LOAD_MIX'] ?? '60,30,10').split(',').map(Number);
const SEED_DOCS = Number(process.env['BENCH_LOAD_SEED_DOCS'] ?? 300);
const SYNC_DOCS = Number(process.env['BENCH_LOAD_SYNC_DOCS'] ?? 2_000);
const SAMPLE_SECONDS = Number(process.env['BENCH_LOAD_SAMPLE_SECONDS'] ?? (SOAK ? 60 : 10));
const TIMEOUT_SECONDS = Number(process.env['BENCH_LOAD_TIMEOUT_SECONDS'] ?? 60);
const REPEAT_JOBS = SOAK;
/** In the soak, a job runs again at most this often (a sync schedule, a recurring crawl). */
const REPEAT_EVERY_SECONDS = 60;
/** 0 runs without the background indexer: what indexing costs the API (uploads then stay pending). */
const INDEXER = process.env['BENCH_LOAD_INDEXER'] !== '0';
const SITE = fileURLToPath(new URL('../../shared/data/sites/fastapi-docs', import.meta.url));
const SEED_TAG = 'scifact';
const UPLOAD_TAG = 'load';
const KINDS = ['search', 'items query', 'upload'] as const;
type Kind = (typeof KINDS)[number];

// ---- SciFact: what is seeded, what is asked, what is uploaded under load ----------------------------

interface Doc {
  _id: string;
  title: string;
  text: string;
}

interface Plan {
  seed: Doc[];
  /** Queries with at least one relevant document in the seed, and those documents' titles. */
  queries: Array<{ text: string; relevant: string[] }>;
  /** Documents never seeded, uploaded one per request during the load. */
  uploads: Doc[];
  /** Words of the seeded titles, for the items query's `search`. */
  words: string[];
}

/** Deterministic, so the parent and the clients' process derive the same plan from the same files. */
function scifactPlan(seedDocs: number): Plan {
  const corpus = readScifactJsonl<Doc>('corpus.jsonl').filter((d) => d.title.trim() && d.text.trim());
  const byId = new Map(corpus.map((d) => [d._id, d]));
  const qrels = readScifactFile('qrels/test.tsv')
    .split('\n')
    .slice(1)
    .filter(Boolean)
    .map((l) => l.split('\t') as [string, string, string]);
  const seedIds: string[] = [];
  for (const [, docId] of qrels) if (byId.has(docId) && !seedIds.includes(docId)) seedIds.push(docId);
  for (const d of corpus) if (seedIds.length < seedDocs && !seedIds.includes(d._id)) seedIds.push(d._id);
  seedIds.length = Math.min(seedIds.length, seedDocs);
  const seeded = new Set(seedIds);
  const queryText = new Map(
    readScifactJsonl<{ _id: string; text: string }>('queries.jsonl').map((q) => [q._id, q.text]),
  );
  const relevant = new Map<string, string[]>();
  for (const [qid, docId] of qrels) {
    if (!seeded.has(docId) || !queryText.has(qid)) continue;
    relevant.set(qid, [...(relevant.get(qid) ?? []), byId.get(docId)!.title]);
  }
  const seed = seedIds.map((id) => byId.get(id)!);
  const words = [...new Set(seed.flatMap((d) => d.title.toLowerCase().match(/[a-z]{7,}/g) ?? []))].sort();
  return {
    seed,
    queries: [...relevant.entries()].map(([qid, titles]) => ({
      text: queryText.get(qid)!,
      relevant: titles,
    })),
    uploads: corpus.filter((d) => !seeded.has(d._id)),
    words,
  };
}

function readScifactFile(name: string): string {
  return readFileSync(new URL(name, SCIFACT_DATA), 'utf8');
}

// ---- Statistics ----------------------------------------------------------------------------------------

interface KindStats {
  count: number;
  errors: number;
  rateLimited: number;
  reqPerS: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function kindStats(times: number[], errors: number, rateLimited: number, seconds: number): KindStats {
  const s = [...times].sort((a, b) => a - b);
  return {
    count: s.length,
    errors,
    rateLimited,
    reqPerS: s.length / seconds,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    max: s.at(-1) ?? Number.NaN,
  };
}

// ---- The clients (a separate process) -----------------------------------------------------------------

interface ChildConfig {
  seconds: number;
  clients: number;
  mix: number[];
  seedDocs: number;
  sampleSeconds: number;
  timeoutSeconds: number;
  syncDocs: number;
}

/** One line of the parent's commands on the clients' stdin (JSON). */
type ParentMessage =
  | { type: 'go'; url: string; key: string }
  | { type: 'edit'; count: number }
  | { type: 'close' };

/** One line of the clients' stdout (JSON). */
type ChildMessage =
  | { type: 'world'; fakeUrl: string; siteOrigin: string; source: Record<string, unknown> }
  | { type: 'started' }
  | { type: 'window'; at: number; seconds: number; kinds: Record<Kind, KindStats> }
  | {
      type: 'done';
      seconds: number;
      kinds: Record<Kind, KindStats>;
      searchWithRelevantHit: number;
      searchesJudged: number;
      uploadsAccepted: number;
      errorSamples: string[];
    };

const emit = (m: ChildMessage) => process.stdout.write(`${JSON.stringify(m)}\n`);

/**
 * The world outside the service, in its own process so that the service's process holds the service
 * alone (the fake keeps a snapshot of the whole space per revision, which would read as a leak): the
 * GitBook fake, the docs site, and the clients once the parent says go.
 */
async function runWorld(cfg: ChildConfig): Promise<void> {
  const fake = await gitbookBenchWorkspace.start(cfg.syncDocs);
  const site = await serveDirectory(SITE);
  // Both record every request they answer; only tests read that.
  const forget = setInterval(() => {
    fake.requests.length = 0;
    site.requests.length = 0;
  }, 10_000);
  emit({ type: 'world', fakeUrl: fake.url, siteOrigin: site.origin, source: fake.source });
  let go!: (m: { url: string; key: string }) => void;
  const goMessage = new Promise<{ url: string; key: string }>((resolve) => {
    go = resolve;
  });
  let close!: () => void;
  const closeMessage = new Promise<void>((resolve) => {
    close = resolve;
  });
  void (async () => {
    for await (const line of createInterface({ input: process.stdin })) {
      const m = JSON.parse(line) as ParentMessage;
      if (m.type === 'go') go(m);
      else if (m.type === 'edit') fake.edit(m.count);
      else close();
    }
    close(); // the parent is gone
  })();
  const { url, key } = await goMessage;
  await runClients(cfg, url, key);
  await closeMessage;
  clearInterval(forget);
  await fake.close();
  await site.close();
}

async function runClients(cfg: ChildConfig, url: string, key: string): Promise<void> {
  const plan = scifactPlan(cfg.seedDocs);
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: cfg.clients });
  const totalWeight = cfg.mix.reduce((a, b) => a + b, 0);

  const all = Object.fromEntries(
    KINDS.map((k) => [k, { times: [] as number[], errors: 0, limited: 0 }]),
  ) as Record<Kind, { times: number[]; errors: number; limited: number }>;
  let win = Object.fromEntries(
    KINDS.map((k) => [k, { times: [] as number[], errors: 0, limited: 0 }]),
  ) as typeof all;
  const errorSamples: string[] = [];
  let judged = 0;
  let relevantHits = 0;
  let uploadsAccepted = 0;
  let nextUpload = 0;
  let listingPages = 1;

  function post(path: string, body: unknown): Promise<{ status: number; text: string }> {
    const payload = Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          method: 'POST',
          path,
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'content-length': payload.length,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', reject);
        },
      );
      req.setTimeout(cfg.timeoutSeconds * 1000, () =>
        req.destroy(new Error(`no answer in ${cfg.timeoutSeconds} s`)),
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** A request of `kind`: its path, body, and the check of a 2xx body (a message when it falls short). */
  function request(
    kind: Kind,
    r: () => number,
  ): { path: string; body: unknown; check(json: any): string | null } {
    if (kind === 'search') {
      const q = plan.queries[Math.floor(r() * plan.queries.length)]!;
      const v = r();
      const body =
        v < 0.7
          ? { query: q.text }
          : v < 0.9
            ? { query: q.text, mode: 'hybrid' }
            : { query: q.text, tags: [SEED_TAG] };
      return {
        path: '/api/consume/search',
        body,
        check(json) {
          if (!Array.isArray(json?.result) || json.result.length === 0) return 'search answered no hits';
          judged++;
          if (json.result.some((h: { title: string }) => q.relevant.includes(h.title))) relevantHits++;
          return null;
        },
      };
    }
    if (kind === 'items query') {
      const v = r();
      const body =
        v < 0.4
          ? { limit: 20 }
          : v < 0.7
            ? { limit: 20, page: 1 + Math.floor(r() * listingPages) }
            : {
                limit: 10,
                page: 1 + Math.floor(r() * 2),
                search: plan.words[Math.floor(r() * plan.words.length)],
              };
      return {
        path: '/api/connect/knowledgebase-items/query',
        body,
        check(json) {
          if (!Array.isArray(json?.items) || typeof json?.pagination?.total_pages !== 'number')
            return 'items query answered without items or pagination';
          if (!('search' in body)) listingPages = Math.max(1, json.pagination.total_pages);
          return null;
        },
      };
    }
    const doc = plan.uploads[nextUpload++ % plan.uploads.length]!;
    return {
      path: '/api/connect/knowledgebase-items',
      body: { title: doc.title, content: doc.text, tags: [UPLOAD_TAG] },
      check(json) {
        if (json?.success !== true || typeof json?.item?.id !== 'string')
          return 'upload answered without its item';
        uploadsAccepted++;
        return null;
      },
    };
  }

  const started = performance.now();
  const deadline = started + cfg.seconds * 1000;
  let windowStart = started;
  const flushWindow = () => {
    const now = performance.now();
    const seconds = (now - windowStart) / 1000;
    emit({
      type: 'window',
      at: (now - started) / 1000,
      seconds,
      kinds: Object.fromEntries(
        KINDS.map((k) => [k, kindStats(win[k].times, win[k].errors, win[k].limited, seconds)]),
      ) as Record<Kind, KindStats>,
    });
    win = Object.fromEntries(
      KINDS.map((k) => [k, { times: [] as number[], errors: 0, limited: 0 }]),
    ) as typeof all;
    windowStart = now;
  };
  const ticker = setInterval(flushWindow, cfg.sampleSeconds * 1000);
  emit({ type: 'started' });

  await Promise.all(
    Array.from({ length: cfg.clients }, async (_, client) => {
      const r = rng(1000 + client);
      while (performance.now() < deadline) {
        const x = r() * totalWeight;
        const kind: Kind =
          x < cfg.mix[0]! ? 'search' : x < cfg.mix[0]! + cfg.mix[1]! ? 'items query' : 'upload';
        const req = request(kind, r);
        const t0 = performance.now();
        let problem: string | null = null;
        let limited = false;
        try {
          const res = await post(req.path, req.body);
          if (res.status === 429) limited = true;
          else if (res.status < 200 || res.status >= 300) problem = `${res.status} ${res.text.slice(0, 300)}`;
          else problem = req.check(JSON.parse(res.text));
        } catch (err) {
          problem = `transport: ${(err as Error).message}`;
        }
        const ms = performance.now() - t0;
        for (const bucket of [all[kind], win[kind]]) {
          bucket.times.push(ms);
          if (problem) bucket.errors++;
          if (limited) bucket.limited++;
        }
        if (problem && errorSamples.length < 20)
          errorSamples.push(`${kind} ${JSON.stringify(req.body).slice(0, 200)} -> ${problem}`);
      }
    }),
  );
  clearInterval(ticker);
  if (KINDS.some((k) => win[k].times.length > 0)) flushWindow();
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  emit({
    type: 'done',
    seconds,
    kinds: Object.fromEntries(
      KINDS.map((k) => [k, kindStats(all[k].times, all[k].errors, all[k].limited, seconds)]),
    ) as Record<Kind, KindStats>,
    searchWithRelevantHit: relevantHits,
    searchesJudged: judged,
    uploadsAccepted,
    errorSamples,
  });
}

// ---- The service, the background work, the report (this process) --------------------------------------

const mib = (bytes: number) => bytes / 2 ** 20;
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** A full collection, so heap used before and after the load compare live objects only. */
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

/** Transactions held at least this long are listed: on PGlite one open transaction holds the only connection. */
const LONG_TRANSACTION_MS = 1_000;

interface HeldTransaction {
  ms: number;
  /** The first two frames of the service's code that opened it (innermost first). */
  by: string;
  at: number;
}

/**
 * The database as the service gets it, timing how long each transaction is held (from its first
 * statement to the end of its body, not the wait for the connection), with who opened it.
 */
function timedTransactions(
  db: Database,
  since: () => number,
): { db: Database; long: HeldTransaction[]; held: number[] } {
  const long: HeldTransaction[] = [];
  const held: number[] = [];
  const opener = (stack: string | undefined) =>
    (stack ?? '')
      .split('\n')
      .slice(2)
      .map((l) => l.match(/\/(src\/[^:]+:\d+)/)?.[1])
      .filter((f): f is string => f !== undefined && !f.startsWith('src/db/'))
      .slice(0, 2)
      .join(' < ') || 'unknown';
  /** Runs `run` (a transaction's body, or a statement that is a transaction of its own) and times it as held. */
  const timedHeld = async <T>(stack: string | undefined, run: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await run();
    } finally {
      const ms = performance.now() - t0;
      held.push(ms);
      if (ms >= LONG_TRANSACTION_MS) long.push({ ms, by: opener(stack), at: since() });
    }
  };
  return {
    long,
    held,
    db: {
      kind: db.kind,
      query: (sql, params) => db.query(sql, params),
      exec: (sql) => db.exec(sql),
      close: () => db.close(),
      // A search's index pass: its own transaction (its time includes the wait for the connection).
      queryWithSettings: (settings, sql, params) =>
        timedHeld(new Error().stack, () => db.queryWithSettings(settings, sql, params)),
      transaction(fn) {
        const stack = new Error().stack;
        return db.transaction((tx) => timedHeld(stack, () => fn(tx)));
      },
    },
  };
}

/**
 * The model as the service gets it, timing each query embedding from the call (so the wait in the
 * model's one queue, behind other queries and the indexer's batches, is included) and each batch.
 */
function timedEmbedder(e: Embedder): { embedder: Embedder; queryMs: number[]; batchMs: number[] } {
  const queryMs: number[] = [];
  const batchMs: number[] = [];
  const timedCall = async <T>(into: number[], run: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await run();
    } finally {
      into.push(performance.now() - t0);
    }
  };
  return {
    queryMs,
    batchMs,
    embedder: {
      modelId: e.modelId,
      dimensions: e.dimensions,
      maxTokens: e.maxTokens,
      embed: (texts, signal) => timedCall(batchMs, () => e.embed(texts, signal)),
      embedQuery: (text, signal) => timedCall(queryMs, () => e.embedQuery(text, signal)),
      countTokens: (text) => e.countTokens(text),
      close: () => e.close(),
    },
  };
}

interface Sample {
  at: number;
  rssMiB: number;
  heapUsedMiB: number;
  pending: number;
  chunks: number;
  loadUploadsIndexed: number;
  /** The service's event loop (PGlite runs on it in embedded mode). */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** Share of the window the service's main thread was busy (event-loop utilization). */
  loopBusy: number;
  loadAverage: number;
  /** Server mode: the service's connections by state (active, idle in transaction, waiting on a lock). */
  connections: string;
  kinds: Record<Kind, KindStats>;
}

async function main(): Promise<void> {
  const t00 = performance.now();
  const native = STORAGE === 'postgres' ? await startNativePostgres() : null;
  const { db, cleanup } = await openBenchDatabase(STORAGE, native, 'kb-bench-load-');
  const childCfg: ChildConfig = {
    seconds: LOAD_SECONDS,
    clients: CLIENTS,
    mix: MIX,
    seedDocs: SEED_DOCS,
    sampleSeconds: SAMPLE_SECONDS,
    timeoutSeconds: TIMEOUT_SECONDS,
    syncDocs: SYNC_DOCS,
  };
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), CHILD_FLAG], {
    env: { ...process.env, BENCH_LOAD_CHILD: JSON.stringify(childCfg) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // Writing to a child that already died must fail the run through its exit code, not crash it.
  child.stdin!.on('error', () => {});
  const send = (m: ParentMessage) => child.stdin!.write(`${JSON.stringify(m)}\n`);
  const childExit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const world = deferred<Extract<ChildMessage, { type: 'world' }>>();
  const started = deferred<void>();
  const finished = deferred<Extract<ChildMessage, { type: 'done' }>>();
  void childExit.then((code) => {
    const err = new Error(`the clients' process exited ${code}`);
    for (const d of [world, started, finished]) d.reject(err);
  });
  /** Handles the clients' window reports once the load runs. */
  let onWindow: (m: Extract<ChildMessage, { type: 'window' }>) => Promise<void> = async () => {};
  const reading = (async () => {
    for await (const line of createInterface({ input: child.stdout! })) {
      const m = JSON.parse(line) as ChildMessage;
      if (m.type === 'world') world.resolve(m);
      else if (m.type === 'started') started.resolve();
      else if (m.type === 'done') finished.resolve(m);
      else await onWindow(m);
    }
  })();
  // Error-level lines of the service (a 5xx logs one): counted and kept short for the report.
  const serviceErrors: string[] = [];
  const log = createProcessLogger({
    level: 'warn',
    stream: {
      write(line: string) {
        const o = JSON.parse(line) as {
          level: number;
          msg?: string;
          err?: { message?: string };
          req?: { url?: string };
        };
        serviceErrors.push(
          `${o.level >= 50 ? 'error' : 'warn'}: ${o.msg ?? ''} ${o.req?.url ?? ''} ${o.err?.message ?? ''}`.slice(
            0,
            300,
          ),
        );
      },
    },
  });
  let closeAll = async () => {};
  try {
    await migrate(db);
    const org = await createOrganization(db, 'load');
    const key = (await createApiKey(db, org.id)).apiKey;
    const config = testConfig({
      KB_RATE_LIMIT_PER_MINUTE: '0',
      KB_CRAWL_ALLOW_PRIVATE: 'true',
      [gitbookBenchWorkspace.baseUrlSetting]: (await world.promise).fakeUrl,
    });
    let loadStartedAt: number | null = null;
    const timed = timedTransactions(db, () =>
      loadStartedAt === null ? Number.NaN : (performance.now() - loadStartedAt) / 1000,
    );
    const service = composeTestService(timed.db, config, { runIndexer: INDEXER, log });
    const model = timedEmbedder(await testEmbedder());
    await service.embedding.use(model.embedder);
    const app = await buildApp(service.appDeps, { logger: log });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    // As `kb serve` runs them (KB_WORKERS default 2, production poll and heartbeat), so the sync and the crawl run side by side.
    service.startWorkers({ concurrency: 2, listenUrl: null });
    closeAll = async () => {
      await app.close();
      await service.close();
    };
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(url + path, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = (await res.json()) as any;
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
      return json;
    };
    const count = async (sql: string) => (await db.query<{ n: number }>(sql))[0]!.n;
    // Where the pool's connections are: working, held by a transaction waiting on the service, or on a lock.
    const connectionStates = async () => {
      if (db.kind !== 'postgres') return '-';
      const [c] = await db.query<{ active: number; idle_tx: number; lock: number }>(
        `SELECT count(*) FILTER (WHERE state = 'active' AND wait_event_type IS DISTINCT FROM 'Lock')::int AS active,
                count(*) FILTER (WHERE state LIKE 'idle in transaction%')::int AS idle_tx,
                count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS lock
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      return `${c!.active}/${c!.idle_tx}/${c!.lock}`;
    };

    // 1. Seed through the API and let the indexer embed it.
    const plan = scifactPlan(SEED_DOCS);
    const seedStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < plan.seed.length) {
          const d = plan.seed[next++]!;
          await call('POST', '/api/connect/knowledgebase-items', {
            title: d.title,
            content: d.text,
            tags: [SEED_TAG],
          });
        }
      }),
    );
    // Without the background indexer (BENCH_LOAD_INDEXER=0) the seed is embedded here, before the clock starts.
    if (!INDEXER) await new Indexer(db, await testEmbedder()).drain();
    while ((await count("SELECT count(*)::int AS n FROM items WHERE indexing_status = 'pending'")) > 0)
      await sleep(200);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const seedChunks = await count('SELECT count(*)::int AS n FROM chunks');
    const failedSeed = await count("SELECT count(*)::int AS n FROM items WHERE indexing_status = 'failed'");
    if (failedSeed > 0) throw new Error(`${failedSeed} seeded items failed to index`);
    console.error(
      `# seeded ${plan.seed.length} SciFact documents (${seedChunks} chunks) in ${fmt(seedSeconds)} s; ` +
        `${plan.queries.length} queries with a relevant seeded document`,
    );
    const { source, siteOrigin } = await world.promise;
    await call('POST', '/api/connect/connection', { source });

    collectGarbage();
    const before = process.memoryUsage();
    const loadAverageBefore = os.loadavg()[0]!;
    const chunksBefore = seedChunks;

    // 2 + 3. The clients, the sync and the crawl, all at once.
    const samples: Sample[] = [];
    const loadUploadsIndexedSql = `SELECT count(*)::int AS n FROM items WHERE tags @> ARRAY['${UPLOAD_TAG}'] AND indexing_status = 'indexed'`;
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    let lastElu = nodePerformance.eventLoopUtilization();
    onWindow = async (m) => {
      const mem = process.memoryUsage();
      const loopDelayP99Ms = loop.percentile(99) / 1e6;
      const loopDelayMaxMs = loop.max / 1e6;
      loop.reset();
      const elu = nodePerformance.eventLoopUtilization(lastElu);
      lastElu = nodePerformance.eventLoopUtilization();
      samples.push({
        loopDelayP99Ms,
        loopDelayMaxMs,
        loopBusy: elu.utilization,
        loadAverage: os.loadavg()[0]!,
        connections: await connectionStates(),
        at: m.at,
        rssMiB: mib(mem.rss),
        heapUsedMiB: mib(mem.heapUsed),
        pending: await count("SELECT count(*)::int AS n FROM items WHERE indexing_status = 'pending'"),
        chunks: await count('SELECT count(*)::int AS n FROM chunks'),
        loadUploadsIndexed: await count(loadUploadsIndexedSql),
        kinds: m.kinds,
      });
      const s = samples.at(-1)!;
      console.error(
        `# ${fmt(m.at, 0)} s: ${KINDS.map((k) => `${k} ${fmt(m.kinds[k].reqPerS)}/s p50 ${fmt(m.kinds[k].p50, 0)} ms err ${m.kinds[k].errors}`).join('; ')}; ` +
          `RSS ${fmt(s.rssMiB, 0)} MiB; pending ${s.pending}; main thread busy ${fmt(100 * s.loopBusy, 0)}%, loop delay p99 ${fmt(s.loopDelayP99Ms, 0)} ms; load average ${fmt(s.loadAverage)}`,
      );
    };
    send({ type: 'go', url, key });
    await started.promise;
    const loadStart = performance.now();
    loadStartedAt = loadStart;
    timed.long.length = 0;
    timed.held.length = 0;
    model.queryMs.length = 0;
    model.batchMs.length = 0;

    interface JobTrack {
      name: string;
      runs: number;
      completed: number;
      failed: string[];
      firstDoneS: number | null;
      startedAt: number;
      /** `waiting`: finished, to run again (soak) once REPEAT_EVERY_SECONDS passed since it started. */
      state: 'running' | 'waiting' | 'over';
      current: () => Promise<{ terminal: boolean; ok: boolean; detail: string }>;
      start: () => Promise<() => Promise<{ terminal: boolean; ok: boolean; detail: string }>>;
      last: string;
    }
    const startSync = async (): Promise<
      () => Promise<{ terminal: boolean; ok: boolean; detail: string }>
    > => {
      const { jobId } = await call('POST', '/api/connect/run-sync', { type: gitbookBenchWorkspace.type });
      return async () => {
        const list = await call(
          'GET',
          `/api/connect/connection-sync-jobs?type=${gitbookBenchWorkspace.type}&limit=1`,
        );
        const job = list.data[0];
        if (job.jobId !== jobId) throw new Error(`newest sync job is ${job.jobId}, not ${jobId}`);
        return {
          terminal: ['succeeded', 'failed', 'cancelled', 'incomplete'].includes(job.status),
          ok: job.status === 'succeeded',
          detail: `${job.status}, ${job.rowsSynced} rows${job.error ? `: ${job.error}` : ''}`,
        };
      };
    };
    const startCrawl = async (): Promise<
      () => Promise<{ terminal: boolean; ok: boolean; detail: string }>
    > => {
      const { id } = await call('POST', '/api/connect/crawling/', { url: `${siteOrigin}/`, limit: 1000 });
      return async () => {
        const job = await call('GET', `/api/connect/crawling/${id}`);
        return {
          terminal: ['completed', 'failed', 'cancelled'].includes(job.status),
          ok: job.status === 'completed',
          detail: `${job.status}, ${job.completed_pages}/${job.total_pages} pages${job.error_message ? `: ${job.error_message}` : ''}`,
        };
      };
    };
    const sync: JobTrack = {
      name: `sync, GitBook fake, ${SYNC_DOCS} pages${REPEAT_JOBS ? ' (then incremental after 1% edits)' : ''}`,
      runs: 1,
      completed: 0,
      failed: [],
      firstDoneS: null,
      startedAt: performance.now(),
      state: 'running',
      current: await startSync(),
      start: async () => {
        send({ type: 'edit', count: Math.max(1, Math.round(SYNC_DOCS / 100)) });
        return startSync();
      },
      last: '',
    };
    const crawl: JobTrack = {
      name: `crawl, fastapi-docs on loopback${REPEAT_JOBS ? ' (then re-crawls)' : ''}`,
      runs: 1,
      completed: 0,
      failed: [],
      firstDoneS: null,
      startedAt: performance.now(),
      state: 'running',
      current: await startCrawl(),
      start: startCrawl,
      last: '',
    };
    /** Failed status polls of the jobs: API errors as much as the clients' ones. */
    const pollErrors: string[] = [];
    let loadRunning = true;
    void finished.promise.then(
      () => {
        loadRunning = false;
      },
      () => {
        loadRunning = false;
      },
    );
    const watching = (async () => {
      while (loadRunning) {
        for (const job of [sync, crawl]) {
          if (job.state === 'over') continue;
          if (job.state === 'waiting') {
            if (performance.now() - job.startedAt < REPEAT_EVERY_SECONDS * 1000) continue;
            try {
              job.current = await job.start();
              job.startedAt = performance.now();
              job.runs++;
              job.state = 'running';
            } catch (err) {
              pollErrors.push(`${job.name}, restart: ${(err as Error).message}`);
              job.state = 'over';
            }
            continue;
          }
          let state: { terminal: boolean; ok: boolean; detail: string };
          try {
            state = await job.current();
          } catch (err) {
            pollErrors.push(`${job.name}: ${(err as Error).message}`);
            continue;
          }
          job.last = state.detail;
          if (!state.terminal) continue;
          if (state.ok) job.completed++;
          else job.failed.push(state.detail);
          job.firstDoneS ??= (performance.now() - loadStart) / 1000;
          job.state = REPEAT_JOBS ? 'waiting' : 'over';
        }
        await sleep(1000);
      }
    })();

    const result = await finished.promise;
    await watching;
    loop.disable();
    const loadSeconds = (performance.now() - loadStart) / 1000;
    const loadUploadsIndexed = await count(loadUploadsIndexedSql);
    const loadUploads = await count(
      `SELECT count(*)::int AS n FROM items WHERE tags @> ARRAY['${UPLOAD_TAG}']`,
    );
    const pendingEnd = await count("SELECT count(*)::int AS n FROM items WHERE indexing_status = 'pending'");
    const failedIndexing = await count(
      "SELECT count(*)::int AS n FROM items WHERE indexing_status = 'failed'",
    );
    const chunksEnd = await count('SELECT count(*)::int AS n FROM chunks');
    const endMem = process.memoryUsage();
    collectGarbage();
    const after = process.memoryUsage();

    // ---- Report
    const connectionsColumn = (v: string): Record<string, string> =>
      STORAGE === 'postgres' ? { 'pg conns active/idle in tx/lock wait': v } : {};
    const mode = STORAGE === 'pglite' ? 'embedded (PGlite, data dir)' : 'server (native Postgres)';
    printTable(
      `Load: ${CLIENTS} clients for ${fmt(result.seconds, 0)} s, mix ${MIX.join('/')} (search/items query/upload), ${mode}, ` +
        `sync + crawl${INDEXER ? ' + indexer' : ', NO indexer'} running`,
      KINDS.map((k) => {
        const s = result.kinds[k];
        return {
          kind: k,
          count: String(s.count),
          errors: String(s.errors),
          'rate-limited (429)': String(s.rateLimited),
          'req/s': fmt(s.reqPerS),
          'p50 ms': fmt(s.p50),
          'p90 ms': fmt(s.p90),
          'p99 ms': fmt(s.p99),
          'max ms': fmt(s.max),
        };
      }),
    );
    const totalRequests = KINDS.reduce((a, k) => a + result.kinds[k].count, 0);
    const totalErrors = KINDS.reduce((a, k) => a + result.kinds[k].errors, 0);
    console.log(
      `\nall kinds: ${totalRequests} requests, ${fmt(totalRequests / result.seconds)} req/s, ${totalErrors} errors; ` +
        `searches with a relevant seeded document in the hits: ${result.searchWithRelevantHit}/${result.searchesJudged}`,
    );
    printTable('Background work during the load', [
      ...[sync, crawl].map((j) => ({
        job: j.name,
        'finished in the load': j.firstDoneS === null ? 'no' : `yes, first after ${fmt(j.firstDoneS)} s`,
        'runs (completed / failed)': `${j.runs} (${j.completed} / ${j.failed.length})`,
        'last state': j.last,
      })),
      {
        job: 'indexer',
        'finished in the load': `${chunksEnd - chunksBefore} chunks embedded, ${fmt((chunksEnd - chunksBefore) / loadSeconds)} chunks/s`,
        'runs (completed / failed)': `${failedIndexing} items failed`,
        'last state': `uploads of the load indexed: ${loadUploadsIndexed} of ${loadUploads}; items pending at the end: ${pendingEnd}`,
      },
    ]);
    printTable(
      `Over time (every ${SAMPLE_SECONDS} s; memory of the service's process: service, PGlite when embedded, model)`,
      [
        {
          at: 'start',
          'req/s': '',
          'search p50/p99 ms': '',
          'items query p50/p99 ms': '',
          'upload p50/p99 ms': '',
          errors: '',
          'RSS MiB': fmt(mib(before.rss), 0),
          'heap used MiB': `${fmt(mib(before.heapUsed), 0)} (after GC)`,
          'main thread busy': '',
          'event loop delay p99/max ms': '',
          'load avg': fmt(loadAverageBefore),
          ...connectionsColumn(''),
          'pending items': '0',
          chunks: String(chunksBefore),
          'load uploads indexed': '0',
        },
        ...samples.map((s) => ({
          at: `${fmt(s.at, 0)} s`,
          'req/s': fmt(KINDS.reduce((a, k) => a + s.kinds[k].reqPerS, 0)),
          'search p50/p99 ms': `${fmt(s.kinds.search.p50, 0)}/${fmt(s.kinds.search.p99, 0)}`,
          'items query p50/p99 ms': `${fmt(s.kinds['items query'].p50, 0)}/${fmt(s.kinds['items query'].p99, 0)}`,
          'upload p50/p99 ms': `${fmt(s.kinds.upload.p50, 0)}/${fmt(s.kinds.upload.p99, 0)}`,
          errors: String(KINDS.reduce((a, k) => a + s.kinds[k].errors, 0)),
          'RSS MiB': fmt(s.rssMiB, 0),
          'heap used MiB': fmt(s.heapUsedMiB, 0),
          'main thread busy': `${fmt(100 * s.loopBusy, 0)}%`,
          'event loop delay p99/max ms': `${fmt(s.loopDelayP99Ms, 0)}/${fmt(s.loopDelayMaxMs, 0)}`,
          'load avg': fmt(s.loadAverage),
          ...connectionsColumn(s.connections),
          'pending items': String(s.pending),
          chunks: String(s.chunks),
          'load uploads indexed': String(s.loadUploadsIndexed),
        })),
        {
          at: 'end',
          'req/s': '',
          'search p50/p99 ms': '',
          'items query p50/p99 ms': '',
          'upload p50/p99 ms': '',
          errors: '',
          'RSS MiB': `${fmt(mib(endMem.rss), 0)} (${fmt(mib(after.rss), 0)} after GC)`,
          'heap used MiB': `${fmt(mib(endMem.heapUsed), 0)} (${fmt(mib(after.heapUsed), 0)} after GC)`,
          'main thread busy': '',
          'event loop delay p99/max ms': '',
          'load avg': fmt(os.loadavg()[0]!),
          ...connectionsColumn(''),
          'pending items': String(pendingEnd),
          chunks: String(chunksEnd),
          'load uploads indexed': String(loadUploadsIndexed),
        },
      ],
    );
    const heldSorted = [...timed.held].sort((a, b) => a - b);
    console.log(
      `\ndatabase transactions during the load: ${heldSorted.length}, held p50 ${fmt(percentile(heldSorted, 50))} ms, ` +
        `p99 ${fmt(percentile(heldSorted, 99))} ms, max ${fmt(heldSorted.at(-1) ?? Number.NaN)} ms; ` +
        `${timed.long.length} held ${LONG_TRANSACTION_MS / 1000} s or longer` +
        (STORAGE === 'pglite' ? ' (PGlite has one connection: every other statement waits meanwhile)' : ''),
    );
    const queryMs = [...model.queryMs].sort((a, b) => a - b);
    const batchMs = [...model.batchMs].sort((a, b) => a - b);
    console.log(
      `query embeddings during the load (the model's queue included): ${queryMs.length}, p50 ${fmt(percentile(queryMs, 50))} ms, ` +
        `p99 ${fmt(percentile(queryMs, 99))} ms; indexer batches (queue included): ${batchMs.length}, p50 ${fmt(percentile(batchMs, 50))} ms, ` +
        `max ${fmt(batchMs.at(-1) ?? Number.NaN)} ms`,
    );
    const byOpener = new Map<string, number[]>();
    for (const t of timed.long) byOpener.set(t.by, [...(byOpener.get(t.by) ?? []), t.ms]);
    for (const [by, ms] of [...byOpener.entries()].sort((a, b) => b[1].length - a[1].length)) {
      console.log(`  ${by}: ${ms.length}, longest ${fmt(Math.max(...ms), 0)} ms`);
    }
    const warnings = serviceErrors.length;
    if (warnings > 0) {
      console.log(`\nservice log, warn and error lines: ${warnings}; the first ones:`);
      for (const l of serviceErrors.slice(0, 10)) console.log(`  ${l}`);
    }
    if (result.errorSamples.length > 0) {
      console.log('\nfailed requests (first ones):');
      for (const l of result.errorSamples) console.log(`  ${l}`);
    }
    const jobFailures = [...sync.failed, ...crawl.failed, ...pollErrors];
    console.log(
      `\nseed: ${plan.seed.length} documents, ${seedChunks} chunks, ${fmt(seedSeconds)} s; total ${fmt((performance.now() - t00) / 1000, 0)} s`,
    );
    writeResult(SOAK ? `load-soak-${STORAGE}` : `load-${STORAGE}`, {
      storage: STORAGE,
      soak: SOAK,
      clients: CLIENTS,
      mix: MIX,
      seed: { docs: plan.seed.length, chunks: seedChunks, seconds: seedSeconds },
      syncDocs: SYNC_DOCS,
      load: result,
      jobs: [sync, crawl].map((j) => ({
        name: j.name,
        runs: j.runs,
        completed: j.completed,
        failed: j.failed,
        firstDoneS: j.firstDoneS,
        last: j.last,
      })),
      indexer: { chunksBefore, chunksEnd, loadUploads, loadUploadsIndexed, pendingEnd, failedIndexing },
      memory: { before, end: endMem, afterGc: after },
      samples,
      model: {
        queries: queryMs.length,
        queryP50: percentile(queryMs, 50),
        queryP99: percentile(queryMs, 99),
        batches: batchMs.length,
        batchP50: percentile(batchMs, 50),
      },
      transactions: {
        count: heldSorted.length,
        p50: percentile(heldSorted, 50),
        p99: percentile(heldSorted, 99),
        long: timed.long,
      },
      serviceLog: serviceErrors.slice(0, 100),
    });
    if (totalErrors > 0 || jobFailures.length > 0 || failedIndexing > 0) {
      console.log(
        `\nFAILED: ${totalErrors} request errors, ${jobFailures.length} failed jobs (${jobFailures.join('; ')}), ${failedIndexing} items failed to index`,
      );
      process.exitCode = 1;
    }
  } finally {
    await closeAll();
    await db.close();
    await cleanup();
    send({ type: 'close' });
    child.stdin!.end();
    const code = await childExit;
    await reading;
    if (code !== 0) process.exitCode = 1;
    await native?.stop();
  }
}

function deferred<T>(): { promise: Promise<T>; resolve(v: T): void; reject(e: Error): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Awaited where needed; a rejection nobody waits for (the process ended after the load) is no failure.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

if (process.argv.includes(CHILD_FLAG)) {
  await runWorld(JSON.parse(process.env['BENCH_LOAD_CHILD']!) as ChildConfig);
} else {
  await main();
  // Keep-alive sockets and the model's threads would hold the process open.
  process.exit(process.exitCode ?? 0);
}
