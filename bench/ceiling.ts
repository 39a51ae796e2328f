/**
 * The embedded ceiling: grow one embedded (PGlite) data directory in steps until a goal
 * is missed or something fails, and print each step's latencies and memory.
 *
 *   node bench/ceiling.ts [--steps 25000,50000,100000,200000,400000] [--seconds 20] [--real 2000] [--shared-buffers 512]
 *
 * Goals checked at each step (the service's latency and recall goals): semantic search p95 < 15 ms with 1
 * client (search() with the query vector given, the path's own cost) and < 150 ms with 16 (the endpoint,
 * query embedding included), recall@10 >= 0.98 against an exact scan, hybrid p95 < 60 ms (1 client, query
 * embedding included), and the items query's `search` p95 < 50 ms. The run stops after the first step that
 * misses one, or when a step fails (an error, PGlite aborting, the process running out of memory: the last
 * line printed then says which step was being loaded).
 *
 * Data, as bench/search-latency.ts builds it: the first `--real` SciFact chunks embedded by the real model
 * (cached in .cache/bench, shared with that benchmark), the rest DERIVED (a real vector plus small noise,
 * renormalized) with the real chunk's text, four chunks per item; items carry the concatenated text of
 * their chunks as content, so the items query searches real English. Chunks are bulk-inserted with SQL and
 * the HNSW index is rebuilt once per step (inserting into the graph row by row is far slower); ANALYZE
 * and VACUUM of the BM25 postings after each load, as the indexer would. Everything goes through a real listening server and the service's own routes.
 *
 * Memory: the process's RSS and the PGlite WASM heap (its linear memory only grows), and the data
 * directory's size on disk.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { createApiKey, createOrganization } from '../src/db/repositories/organizations.ts';
import { toVectorLiteral } from '../src/embedding/vector.ts';
import { buildApp } from '../src/http/app.ts';
import { pgliteDatabase, pgliteStartParams, SHARED_BUFFERS_MAX_MB } from '../src/db/pglite.ts';
import { newId } from '../src/lib/ids.ts';
import { search } from '../src/search/search.ts';
import { ensureVectorIndex, vectorExpr } from '../src/search/vector-index.ts';
import { testEmbedder } from '../test/support/embedding.ts';
import { composeTestService } from '../test/support/harness.ts';
import {
  deriveVector,
  insertBenchItems,
  percentile,
  printTable,
  readScifactJsonl,
  realScifactChunks,
  rng,
  type ScifactChunk,
  sizeList,
  writeResult,
  loadAverage,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '25000,50000,100000,200000,400000' },
    seconds: { type: 'string', default: '20' },
    real: { type: 'string', default: '2000' },
    // Keep going after a missed goal (to see where failure comes), stopping only on an error.
    'past-goals': { type: 'boolean', default: false },
    'shared-buffers': { type: 'string', default: String(SHARED_BUFFERS_MAX_MB) },
  },
});
const STEPS = sizeList(values.steps);
const BUDGET_MS = Number(values.seconds) * 1000;
const N_REAL = Number(values.real);
const MIN_REQUESTS = 40;
const RECALL_QUERIES = 100;
const NOISE_SIGMA = 0.025;
const CHUNKS_PER_ITEM = 4;
const K = 10;
const GOALS = { semantic1: 15, semantic16: 150, recall: 0.98, hybrid1: 60, itemsSearch: 50 };

const mib = (b: number) => (b / 2 ** 20).toFixed(0);

// ---- Embedded database with its heap visible ---------------------------------------------------------

const dataDir = mkdtempSync(path.join(tmpdir(), 'kb-bench-ceiling-'));
// The service sizes shared_buffers when it opens the data directory (src/db/pglite.ts: 512 MB from a 2 GB
// directory on); this one grows from empty in one process, so it starts with the size a restarted service
// would have at these corpus sizes (--shared-buffers to compare).
const pg = await PGlite.create(path.join(dataDir, 'pgdata'), {
  extensions: { vector },
  startParams: pgliteStartParams(Number(values['shared-buffers'])),
});
const wasmHeap = () => pg.Module.HEAPU8.length;
const db: Database = pgliteDatabase(pg);

async function insertChunks(
  orgId: string,
  modelId: string,
  from: number,
  to: number,
  real: { chunks: ScifactChunk[]; vectors: Float32Array[] },
): Promise<void> {
  const r = rng(7 + from);
  const BATCH = 1000; // a multiple of CHUNKS_PER_ITEM
  for (let start = from; start < to; start += BATCH) {
    const end = Math.min(to, start + BATCH);
    const rows: Array<{ item: string; index: number; chunk: ScifactChunk; vector: Float32Array }> = [];
    let item = '';
    for (let j = start; j < end; j++) {
      if (j % CHUNKS_PER_ITEM === 0 || item === '') item = newId();
      const k = j < real.chunks.length ? j : Math.floor(r() * real.chunks.length);
      const vec = j < real.chunks.length ? real.vectors[k]! : deriveVector(real.vectors[k]!, r, NOISE_SIGMA);
      rows.push({ item, index: j % CHUNKS_PER_ITEM, chunk: real.chunks[k]!, vector: vec });
    }
    const items = new Map<string, { title: string; content: string[] }>();
    for (const x of rows) {
      const it = items.get(x.item) ?? { title: x.chunk.title, content: [] };
      it.content.push(x.chunk.text);
      items.set(x.item, it);
    }
    await db.transaction(async (tx) => {
      await insertBenchItems(
        tx,
        orgId,
        [...items.keys()],
        [...items.values()].map((x) => x.title),
        [...items.values()].map((x) => x.content.join('\n\n')),
      );
      await tx.query(
        `INSERT INTO chunks (item_id, organization_id, chunk_index, text, embedding, model_id, tsv, visibility, source_type)
         SELECT u.item, $1, u.idx, u.txt, u.emb::vector, $2, to_tsvector('english', u.et), 'public', 'upload'
           FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::text[]) AS u(item, idx, txt, emb, et)`,
        [
          orgId,
          modelId,
          rows.map((x) => x.item),
          rows.map((x) => x.index),
          rows.map((x) => x.chunk.text),
          rows.map((x) => toVectorLiteral(x.vector)),
          rows.map((x) => x.chunk.embedText),
        ],
      );
    });
    process.stderr.write(`\r  loaded ${end}/${to} chunks`);
  }
  process.stderr.write('\n');
}

// ---- Measurement -------------------------------------------------------------------------------------

async function post(url: string, key: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** `clients` loops over the requests, per-request latency; stops after BUDGET_MS once MIN_REQUESTS are done. */
async function p95(
  clients: number,
  requests: Array<() => Promise<void>>,
): Promise<{ p50: number; p95: number; n: number }> {
  let next = 0;
  const times: number[] = [];
  const t0 = performance.now();
  const more = () => next < requests.length && (next < MIN_REQUESTS || performance.now() - t0 < BUDGET_MS);
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (more()) {
        const req = requests[next++]!;
        const s = performance.now();
        await req();
        times.push(performance.now() - s);
      }
    }),
  );
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95), n: times.length };
}

function dirBytes(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

// ---- Run ---------------------------------------------------------------------------------------------

const embedder = await testEmbedder();
const dims = embedder.dimensions;
const real = await realScifactChunks(embedder, N_REAL);
const queries = readScifactJsonl<{ text: string }>('queries.jsonl').map((q) => q.text);
const queryVectors: Float32Array[] = [];
for (const q of queries.slice(0, RECALL_QUERIES)) queryVectors.push(await embedder.embedQuery(q));
// Item searches: a word, a word prefix and a phrase (what the items query's `search` accepts), repeated.
const ITEM_SEARCHES = ['protein', 'immun', 'cell death', 'Vitamin', 'tumour growth', 'insulin'];

await migrate(db);
await db.exec("SET maintenance_work_mem = '1GB'");
await ensureVectorIndex(db, { id: embedder.modelId, dimensions: dims });
const org = await createOrganization(db, 'ceiling');
const key = (await createApiKey(db, org.id)).apiKey;
const service = composeTestService(db);
await service.embedding.use(embedder);
const app = await buildApp(service.appDeps, { logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

/** search() as the endpoint runs it for a semantic query, with the query vector given. */
const searchVector = (v: Float32Array) =>
  search(
    db,
    { organizationId: org.id, vector: v, text: '', limit: K, mode: 'semantic', includeEmbedding: false },
    dims,
  );

const rows: Array<Record<string, string>> = [];
const raw: unknown[] = [];
let have = 0;
let phase = 'start';
let verdict = `held every step up to ${STEPS.at(-1)} chunks`;
const t00 = performance.now();
try {
  for (const step of STEPS) {
    process.stderr.write(`step ${step} chunks (load ${loadAverage()})\n`);
    await db.exec(`DROP INDEX IF EXISTS chunks_embedding_hnsw_${dims}`);
    const tLoad = performance.now();
    phase = 'load';
    await insertChunks(org.id, embedder.modelId, have, step, real);
    have = step;
    const loadS = (performance.now() - tLoad) / 1000;
    const tIdx = performance.now();
    phase = 'index';
    await ensureVectorIndex(db, { id: embedder.modelId, dimensions: dims });
    await db.exec('ANALYZE');
    // What the service's indexer does after writing chunks (src/ingest/indexer.ts).
    await db.exec('VACUUM bm25_postings');
    const indexS = (performance.now() - tIdx) / 1000;
    process.stderr.write(`  loaded in ${loadS.toFixed(0)} s, index + ANALYZE ${indexS.toFixed(0)} s\n`);

    const searchReq = (mode: string) =>
      queries.map((q) => async () => {
        const r = await post(`${base}/api/consume/search`, key, { query: q, limit: K, mode });
        if (r.status !== 200 || r.body.result?.length !== K)
          throw new Error(`${mode} search: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      });
    const itemsReq = Array.from({ length: 600 }, (_, i) => async () => {
      const r = await post(`${base}/api/connect/knowledgebase-items/query`, key, {
        search: ITEM_SEARCHES[i % ITEM_SEARCHES.length],
        limit: 20,
      });
      if (r.status !== 200)
        throw new Error(`items query: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    });
    phase = 'warm-up (10 semantic searches)';
    for (const q of searchReq('semantic').slice(0, 10)) await q(); // warm-up
    // Semantic with 1 client is search() with the query vector given (its goal is the search path's own
    // cost, without the model); the endpoint's figure with the query embedding is printed beside it.
    phase = 'semantic search() 1 client';
    const semDirect = await p95(
      1,
      queryVectors.map((v) => async () => {
        await searchVector(v);
      }),
    );
    phase = 'semantic endpoint 1 client';
    const sem1 = await p95(1, searchReq('semantic'));
    const load1 = loadAverage();
    phase = 'semantic endpoint 16 clients';
    const sem16 = await p95(16, searchReq('semantic'));
    phase = 'hybrid 1 client';
    const hyb1 = await p95(1, searchReq('hybrid'));
    phase = 'items search 1 client';
    const items1 = await p95(1, itemsReq);
    // Recall@10 of search() (the endpoint's path, vector given) against an exact scan.
    phase = 'recall';
    let recall = 0;
    for (const v of queryVectors) {
      const ann = (await searchVector(v)).map((h) => `${h.item_id}:${h.chunk_index}`);
      const exact = await db.transaction(async (tx) => {
        await tx.exec('SET LOCAL enable_indexscan = off');
        const rs = await tx.query<{ item_id: string; chunk_index: number }>(
          `SELECT item_id, chunk_index FROM chunks WHERE organization_id = $1 ORDER BY ${vectorExpr(dims)} <=> $2::vector(${dims}) LIMIT ${K}`,
          [org.id, toVectorLiteral(v)],
        );
        return new Set(rs.map((x) => `${x.item_id}:${x.chunk_index}`));
      });
      recall += ann.filter((x) => exact.has(x)).length / K;
    }
    recall /= queryVectors.length;
    const [{ n: items } = { n: 0 }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM items');
    const m = { rss: process.memoryUsage().rss, heap: wasmHeap(), disk: dirBytes(dataDir) };
    const missed = [
      semDirect.p95 >= GOALS.semantic1 &&
        `semantic search() p95 ${semDirect.p95.toFixed(1)} >= ${GOALS.semantic1} ms`,
      sem16.p95 >= GOALS.semantic16 &&
        `semantic 16 clients p95 ${sem16.p95.toFixed(1)} >= ${GOALS.semantic16} ms`,
      recall < GOALS.recall && `recall@10 ${recall.toFixed(3)} < ${GOALS.recall}`,
      hyb1.p95 >= GOALS.hybrid1 && `hybrid p95 ${hyb1.p95.toFixed(1)} >= ${GOALS.hybrid1} ms`,
      items1.p95 >= GOALS.itemsSearch &&
        `items search p95 ${items1.p95.toFixed(1)} >= ${GOALS.itemsSearch} ms`,
    ].filter((x): x is string => Boolean(x));
    rows.push({
      chunks: String(step),
      items: String(items),
      'semantic p95 ms: search() / endpoint 1 / 16 clients': `${semDirect.p95.toFixed(1)} / ${sem1.p95.toFixed(1)} / ${sem16.p95.toFixed(1)}`,
      'recall@10': recall.toFixed(3),
      'hybrid p95 ms': hyb1.p95.toFixed(1),
      'items search p95 ms': items1.p95.toFixed(1),
      'RSS / WASM heap MiB': `${mib(m.rss)} / ${mib(m.heap)}`,
      'data dir MiB': mib(m.disk),
      'load / index s': `${loadS.toFixed(0)} / ${indexS.toFixed(0)}`,
      loadavg: load1,
      goals: missed.length ? `MISSED: ${missed.join('; ')}` : 'met',
    });
    raw.push({
      step,
      items,
      semDirect,
      sem1,
      sem16,
      hyb1,
      items1,
      recall,
      memory: m,
      loadS,
      indexS,
      loadavg: load1,
      missed,
    });
    printTable(`Embedded ceiling, step ${step}`, [rows.at(-1)!]);
    if (missed.length && !values['past-goals']) {
      verdict = `first goal missed at ${step} chunks: ${missed.join('; ')}`;
      break;
    }
  }
} catch (err) {
  // What broke, with the cause (fetch's own error only says "fetch failed"), and whether PGlite still answers.
  const cause = (err as { cause?: unknown }).cause;
  const alive = await db.query('SELECT 1').then(
    () => 'PGlite still answers',
    (e: Error) => `PGlite does not answer: ${e.message}`,
  );
  verdict =
    `FAILED while at ${have} chunks, during ${phase}: ${(err as Error).stack ?? err}` +
    `${cause ? `\ncause: ${(cause as Error).stack ?? cause}` : ''}\n${alive}; RSS ${mib(process.memoryUsage().rss)} MiB, WASM heap ${mib(wasmHeap())} MiB`;
} finally {
  await app.close().catch(() => {});
  await db.close().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
}
printTable('Embedded ceiling (PGlite, one organization, 4 chunks per item)', rows);
console.log(
  `\n${verdict}\ntotal ${((performance.now() - t00) / 1000).toFixed(0)} s; load average now ${loadAverage()}`,
);
writeResult('ceiling', { steps: STEPS, realChunks: real.chunks.length, goals: GOALS, results: raw, verdict });
await embedder.close();
process.exit(0);
