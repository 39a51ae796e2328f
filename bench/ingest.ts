/**
 * Ingest at the model's speed. SciFact abstracts are uploaded through the real API
 * (POST /api/connect/knowledgebase-items on a loopback HTTP server, the background indexer running as
 * `kb serve` runs it), and the time from the first upload to the last item indexed gives the pipeline's
 * chunks per second. The raw model's rate is measured on the same chunk texts, with the same embedder
 * and the same calls (one call per round of 16 items, as the indexer makes them), with nothing else running.
 *
 *   node bench/ingest.ts [--docs 1000] [--blocks 4] [--storage pglite,postgres] [--search-pause-ms 0]
 *                        [--threads N] [--bm25-triggers on|off]
 *
 * The machine is shared, so raw and pipeline alternate: the documents are cut into `--blocks` blocks and
 * each block is first embedded raw, then uploaded and indexed; the ratio is summed over blocks. Odd
 * blocks are ingested while one search client runs POST /api/consume/search back to back (SciFact
 * queries, pausing `--search-pause-ms` between calls): their rate against the quiet blocks' says how much
 * searches slow ingest, and the searches' p50/p95 against a search-only window (after the ingest, same
 * client) says how much ingest slows search. PGlite runs on disk, Postgres is the test fixture's native
 * server with the service's pool. `--threads` sets the model's threads (default: the service's, cores - 1);
 * `--bm25-triggers off` drops migration 012's statement triggers on `chunks` after migrating, to measure
 * what the BM25 statistics cost the writes.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { migrate } from '../src/db/migrate.ts';
import { createApiKey, createOrganization } from '../src/db/repositories/organizations.ts';
import { buildApp } from '../src/http/app.ts';
import { chunkForIndexing } from '../src/ingest/chunk.ts';
import { LocalEmbedder } from '../src/embedding/local.ts';
import { composeTestService, testConfig } from '../test/support/harness.ts';
import { testModelDir } from '../test/support/model.ts';
import { type NativePostgres, startNativePostgres } from '../test/support/native-postgres.ts';
import {
  embedInRounds,
  ModelIdle,
  openBenchDatabase,
  percentile,
  printTable,
  readScifactJsonl,
  writeResult,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    docs: { type: 'string', default: '1000' },
    blocks: { type: 'string', default: '4' },
    storage: { type: 'string', default: 'pglite,postgres' },
    'search-pause-ms': { type: 'string', default: '0' },
    /** Seconds of the search-only window. */
    'search-seconds': { type: 'string', default: '10' },
    threads: { type: 'string' },
    'bm25-triggers': { type: 'string', default: 'on' },
    /** Internal: this process is the clients' process (see {@link runClients}). */
    client: { type: 'string' },
  },
});
const MODES = values.storage
  .split(',')
  .filter((m): m is 'pglite' | 'postgres' => m === 'pglite' || m === 'postgres');
const DOCS = Number(values.docs);
const BLOCKS = Math.max(1, Number(values.blocks));
const SEARCH_PAUSE_MS = Number(values['search-pause-ms']);
const SEARCH_SECONDS = Number(values['search-seconds']);

const load = () => os.loadavg()[0]!.toFixed(1);
const f1 = (n: number) => n.toFixed(1);

const corpus = readScifactJsonl<{ _id: string; title: string; text: string }>('corpus.jsonl')
  .filter((d) => d.title.trim() && d.text.trim())
  .slice(0, DOCS);
const queries = readScifactJsonl<{ _id: string; text: string }>('queries.jsonl').map((q) => q.text);
const blocks = Array.from({ length: BLOCKS }, (_, b) =>
  corpus.slice(Math.floor((b * corpus.length) / BLOCKS), Math.floor(((b + 1) * corpus.length) / BLOCKS)),
);

/** What the clients' process is told to do: upload `docs[from, to)`, and search meanwhile if asked. */
interface ClientJob {
  url: string;
  key: string;
  from: number;
  to: number;
  search: boolean;
  queryOffset: number;
}

/**
 * The clients run in a process of their own, as real clients would: in the service's process their
 * requests and JSON would take the event loop the indexer's leases and commits need. Protocol on stdio,
 * a JSON line each: the child says `ready`, the parent says `go`, the child says `uploaded` (seconds), the
 * parent says `stop` once everything is indexed, the child answers `searches` (latencies) and exits.
 */
async function runClients(job: ClientJob): Promise<void> {
  const say = (m: unknown) => process.stdout.write(`${JSON.stringify(m)}\n`);
  const call = async (path: string, body: unknown) => {
    const res = await fetch(job.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${job.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  say({ type: 'ready' });
  await lines.next();
  const stop = { done: false };
  const times: number[] = [];
  let q = job.queryOffset;
  const searching = (async () => {
    while (job.search && !stop.done) {
      const t0 = performance.now();
      await call('/api/consume/search', {
        query: queries[q++ % queries.length],
        limit: 10,
        includeEmbedding: false,
      });
      times.push(performance.now() - t0);
      if (SEARCH_PAUSE_MS > 0) await sleep(SEARCH_PAUSE_MS);
    }
  })();
  const t0 = performance.now();
  const docs = corpus.slice(job.from, job.to);
  let next = 0;
  // 4 uploaders, as bench/load.ts seeds.
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < docs.length) {
        const d = docs[next++]!;
        await call('/api/connect/knowledgebase-items', { title: d.title, content: d.text });
      }
    }),
  );
  say({ type: 'uploaded', seconds: (performance.now() - t0) / 1000 });
  await lines.next();
  stop.done = true;
  await searching;
  say({ type: 'searches', times });
  process.exit(0);
}
if (values.client) await runClients(JSON.parse(values.client) as ClientJob);

/** Starts the clients' process on `job`; `go()` starts it, `stop()` ends it and returns its search latencies. */
async function startClients(job: ClientJob) {
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), ...process.argv.slice(2), '--client', JSON.stringify(job)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const messages = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await messages.next();
    if (done) throw new Error("the clients' process ended early");
    return JSON.parse(value as string) as { type: string; seconds?: number; times?: number[] };
  };
  await next(); // ready
  return {
    go: async () => {
      child.stdin!.write('go\n');
      return (await next()).seconds!;
    },
    stop: async () => {
      child.stdin!.write('stop\n');
      return (await next()).times!;
    },
  };
}

const embedder = await LocalEmbedder.load({
  provider: 'local',
  modelDir: await testModelDir(),
  ...(values.threads ? { threads: Number(values.threads) } : {}),
});
const BM25_TRIGGERS = values['bm25-triggers'] !== 'off';
/**
 * How long the model had no document call of the indexer to work on while a block is indexed: the
 * pipeline's own loss, whatever the machine's load (the chunks/s ratio, by contrast, also moves with the CPU
 * share the other processes leave this one).
 */
const modelIdle = new ModelIdle();
modelIdle.watch(embedder);
const chunkTexts = (docs: typeof corpus) =>
  docs.map((d) => chunkForIndexing(embedder, { title: d.title, content: d.text }).map((c) => c.embedText));

/** The raw model on a block's chunk texts, in the indexer's calls: one per round of its items. */
const rawBlock = (perDoc: string[][]) => embedInRounds(embedder, perDoc);

const native: NativePostgres | null = MODES.includes('postgres') ? await startNativePostgres() : null;
const rows: Array<Record<string, string>> = [];
const searchRows: Array<Record<string, string>> = [];
const results: unknown[] = [];
console.log(
  `model ${embedder.modelId}, ${values.threads ?? 'default'} threads; bm25 triggers ${BM25_TRIGGERS ? 'on' : 'off'}; ${corpus.length} SciFact docs in ${BLOCKS} blocks; ${os.availableParallelism()} cores; load ${os.loadavg().map(f1).join(' ')}`,
);

for (const mode of MODES) {
  const { db, cleanup } = await openBenchDatabase(mode, native, 'kb-bench-ingest-');
  await migrate(db);
  if (!BM25_TRIGGERS) {
    for (const op of ['insert', 'delete', 'update'])
      await db.exec(`DROP TRIGGER IF EXISTS chunks_bm25_${op} ON chunks`);
  }
  const org = await createOrganization(db, 'ingest');
  const key = (await createApiKey(db, org.id)).apiKey;
  const service = composeTestService(db, testConfig({ KB_RATE_LIMIT_PER_MINUTE: '0' }), { runIndexer: true });
  await service.embedding.use(embedder);
  const app = await buildApp(service.appDeps, { logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const pending = async () =>
    (
      await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM items WHERE organization_id = $1 AND indexing_status = 'pending'",
        [org.id],
      )
    )[0]!.n;
  const totals = {
    quiet: { raw: 0, rawChunks: 0, pipe: 0, pipeChunks: 0 },
    search: { raw: 0, rawChunks: 0, pipe: 0, pipeChunks: 0 },
  };
  const duringIngest: number[] = [];
  for (const [b, docs] of blocks.entries()) {
    const withSearch = b % 2 === 1;
    const perDoc = chunkTexts(docs);
    const loadBefore = load();
    const raw = await rawBlock(perDoc);
    // The clients' process uploads the block (and searches, on odd blocks); the clock runs from its first
    // upload until nothing of the organization is pending.
    const from = blocks.slice(0, b).reduce((n, d) => n + d.length, 0);
    const clients = await startClients({
      url,
      key,
      from,
      to: from + docs.length,
      search: withSearch,
      queryOffset: b * 97,
    });
    const t0 = performance.now();
    const idle0 = modelIdle.ms();
    const uploadSeconds = await clients.go();
    while ((await pending()) > 0) await sleep(100);
    const seconds = (performance.now() - t0) / 1000;
    const idleShare = (modelIdle.ms() - idle0) / 1000 / seconds;
    const searchTimes = await clients.stop();
    duringIngest.push(...searchTimes);
    const chunks = perDoc.reduce((n, c) => n + c.length, 0);
    const t = totals[withSearch ? 'search' : 'quiet'];
    t.raw += raw.seconds;
    t.rawChunks += raw.chunks;
    t.pipe += seconds;
    t.pipeChunks += chunks;
    const rawRate = raw.chunks / raw.seconds;
    const pipeRate = chunks / seconds;
    rows.push({
      storage: mode,
      block: String(b + 1),
      searches: withSearch ? `${searchTimes.length}` : '-',
      docs: String(docs.length),
      chunks: String(chunks),
      'upload s': f1(uploadSeconds),
      'model idle': `${(idleShare * 100).toFixed(0)}%`,
      'to indexed s': f1(seconds),
      'pipeline chunks/s': f1(pipeRate),
      'raw chunks/s': f1(rawRate),
      ratio: (pipeRate / rawRate).toFixed(2),
      load: `${loadBefore}/${load()}`,
    });
    console.error(JSON.stringify(rows.at(-1)));
  }
  const [{ n: indexedChunks } = { n: 0 }] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM chunks',
  );
  // Searches alone, on the whole corpus, nothing indexing.
  const aloneClients = await startClients({ url, key, from: 0, to: 0, search: true, queryOffset: 0 });
  await aloneClients.go();
  await sleep(SEARCH_SECONDS * 1000);
  const aloneTimes = await aloneClients.stop();
  for (const kind of ['quiet', 'search'] as const) {
    const t = totals[kind];
    if (t.pipeChunks === 0) continue;
    rows.push({
      storage: mode,
      block: kind === 'quiet' ? 'all quiet' : 'all w/ search',
      searches: '',
      docs: '',
      chunks: String(t.pipeChunks),
      'upload s': '',
      'model idle': '',
      'to indexed s': f1(t.pipe),
      'pipeline chunks/s': f1(t.pipeChunks / t.pipe),
      'raw chunks/s': f1(t.rawChunks / t.raw),
      ratio: (t.pipeChunks / t.pipe / (t.rawChunks / t.raw)).toFixed(2),
      load: load(),
    });
  }
  const sorted = (a: number[]) => [...a].sort((x, y) => x - y);
  for (const [label, times] of [
    ['during ingest', sorted(duringIngest)],
    ['alone', sorted(aloneTimes)],
  ] as const) {
    searchRows.push({
      storage: mode,
      searches: label,
      n: String(times.length),
      'p50 ms': f1(percentile(times, 50)),
      'p95 ms': f1(percentile(times, 95)),
      load: load(),
    });
  }
  results.push({ mode, totals, indexedChunks, duringIngest, alone: aloneTimes });
  await app.close();
  await service.close();
  await db.close();
  await cleanup();
}
printTable('Ingest through the API against the raw model on the same texts (alternating blocks)', rows);
const searchClient = SEARCH_PAUSE_MS > 0 ? `pausing ${SEARCH_PAUSE_MS} ms between calls` : 'back to back';
printTable(`Search (1 client, ${searchClient}) during ingest and alone`, searchRows);
writeResult('ingest', {
  threads: values.threads ?? null,
  bm25Triggers: BM25_TRIGGERS,
  docs: DOCS,
  blocks: BLOCKS,
  searchPauseMs: SEARCH_PAUSE_MS,
  results,
});
await embedder.close();
await native?.stop();
