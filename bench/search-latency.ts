
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { createApiKey, createOrganization } from '../src/db/repositories/organizations.ts';
import type { Embedder } from '../src/embedding/index.ts';
import { buildApp } from '../src/http/app.ts';
import type { App } from '../src/http/context.ts';
import { chunkMarkdown } from '../src/ingest/chunker.ts';
import { toVectorLiteral } from '../src/embedding/vector.ts';
import { newId } from '../src/lib/ids.ts';
import { search } from '../src/search/search.ts';
import { ensureVectorIndex, vectorExpr } from '../src/search/vector-index.ts';
import { testEmbedder } from '../test/support/embedding.ts';
import { composeTestService } from '../test/support/harness.ts';
import { type NativePostgres, startNativePostgres } from '../test/support/native-postgres.ts';
import { openBenchDatabase, percentile, printTable, readScifactJsonl, rng, writeResult } from './lib.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    storage: { type: 'string', default: 'pglite,postgres' },
    real: { type: 'string', default: '2000' },
  },
});
const SIZES = values.sizes.split(',').map(Number).sort((a, b) => a - b);
const MODES = values.storage.split(',').filter((m): m is 'pglite' | 'postgres' => m === 'pglite' || m === 'postgres');
const N_REAL = Number(values.real);
const NOISE_SIGMA = 0.025;
const OTHER_ORG_SHARE = 0.1;
const CHUNKS_PER_ITEM = 4;
const CONCURRENCY = 16;
const K = 10;
const EF_SWEEP = [40, 100, 200];
/** Time budget per measurement loop, and the fewest requests (or recall queries) it makes regardless. */
const BUDGET_S = 60;
const MIN_REQUESTS = 64;
const ENDPOINT = '/api/consume/search';
const REPO = path.resolve(import.meta.dirname, '..');
const readJsonl = (name: string) => readScifactJsonl(name);

function gaussian(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

// ---- Real chunks and their vectors -------------------------------------------------------------------

interface RealChunk {
  title: string;
  text: string;
  embedText: string;
}

async function realChunks(embedder: Embedder): Promise<{ chunks: RealChunk[]; vectors: Float32Array[] }> {
  const chunks: RealChunk[] = [];
  for (const d of readJsonl('corpus.jsonl') as Array<{ title: string; text: string }>) {
    for (const c of chunkMarkdown(
      { title: d.title, markdown: d.text },
      { maxTokens: embedder.maxTokens, overlapTokens: 32, countTokens: (s) => embedder.countTokens(s) },
    )) {
      chunks.push({ title: d.title, text: c.text, embedText: c.embedText });
    }
    if (chunks.length >= N_REAL) break;
  }
  chunks.length = Math.min(chunks.length, N_REAL);
  const dims = embedder.dimensions;
  const cache = path.join(REPO, '.cache', 'bench', `search-latency-${embedder.modelId.replace(/\W+/g, '_')}-${chunks.length}.f32`);
  if (existsSync(cache)) {
    const buf = readFileSync(cache);
    const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
    if (all.length === chunks.length * dims) {
      process.stderr.write(`real vectors: ${chunks.length} from cache ${path.relative(REPO, cache)}\n`);
      return { chunks, vectors: chunks.map((_, i) => all.slice(i * dims, (i + 1) * dims)) };
    }
  }
  const vectors: Float32Array[] = [];
  const t0 = performance.now();
  for (let i = 0; i < chunks.length; i += 32) {
    vectors.push(...(await embedder.embed(chunks.slice(i, i + 32).map((c) => c.embedText))));
    process.stderr.write(`\rembedding real chunks ${vectors.length}/${chunks.length}`);
  }
  const seconds = (performance.now() - t0) / 1000;
  process.stderr.write(` (${seconds.toFixed(0)} s, ${(chunks.length / seconds).toFixed(1)} chunks/s)\n`);
  mkdirSync(path.dirname(cache), { recursive: true });
  const all = new Float32Array(chunks.length * dims);
  for (const [i, v] of vectors.entries()) all.set(v, i * dims);
  writeFileSync(cache, Buffer.from(all.buffer));
  return { chunks, vectors };
}

/** A real vector plus small Gaussian noise, renormalized. */
function derive(base: Float32Array, r: () => number): Float32Array {
  const out = new Float32Array(base.length);
  let norm = 0;
  for (let i = 0; i < base.length; i++) {
    out[i] = base[i]! + NOISE_SIGMA * gaussian(r);
    norm += out[i]! * out[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
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

async function startBench(mode: 'pglite' | 'postgres', native: NativePostgres | null, embedder: Embedder): Promise<Bench> {
  const { db, cleanup } = await openBenchDatabase(mode, native, 'kb-bench-search-');
  await migrate(db);
  await ensureVectorIndex(db, { id: embedder.modelId, dimensions: embedder.dimensions });
  const orgA = await createOrganization(db, 'bench-a');
  const orgB = await createOrganization(db, 'bench-b');
  const keyA = (await createApiKey(db, orgA.id)).apiKey;
  const service = composeTestService(db);
  await service.embedding.use(embedder);
  const app = await buildApp(service.appDeps, { logger: false });
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

/**
 * Add chunks [from, to) of an organization: chunk j is real chunk j while j < N_REAL (organization A
 * only), else derived from a random real one. Four chunks per item.
 */
async function insertChunks(
  b: Bench,
  embedder: Embedder,
  orgId: string,
  from: number,
  to: number,
  real: { chunks: RealChunk[]; vectors: Float32Array[] },
  useReal: boolean,
  seed: number,
): Promise<void> {
  const r = rng(seed);
  const BATCH = 1000; // a multiple of CHUNKS_PER_ITEM
  for (let start = from; start < to; start += BATCH) {
    const end = Math.min(to, start + BATCH);
    const rows: Array<{ item: string; index: number; chunk: RealChunk; vector: Float32Array }> = [];
    let item = '';
    for (let j = start; j < end; j++) {
      if (j % CHUNKS_PER_ITEM === 0 || item === '') item = newId();
      const k = useReal && j < real.chunks.length ? j : Math.floor(r() * real.chunks.length);
      const vector = useReal && j < real.chunks.length ? real.vectors[k]! : derive(real.vectors[k]!, r);
      rows.push({ item, index: j % CHUNKS_PER_ITEM, chunk: real.chunks[k]!, vector });
    }
    const items = [...new Map(rows.map((x) => [x.item, x])).values()];
    await b.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO items (id, organization_id, title, content, content_hash, source_type, source_table_name,
                            source_url, source_key, indexing_status)
         SELECT u.id, $1, u.title, u.content, md5(u.content), 'upload', 'uploaded_documents',
                'https://docs.example.com/' || u.id, 'upload:' || u.id, 'indexed'
           FROM unnest($2::text[], $3::text[], $4::text[]) AS u(id, title, content)`,
        [orgId, items.map((x) => x.item), items.map((x) => x.chunk.title), items.map((x) => x.chunk.text)],
      );
      await tx.query(
        `INSERT INTO chunks (item_id, organization_id, chunk_index, text, embedding, model_id, tsv, visibility, source_type)
         SELECT u.item, $1, u.idx, u.txt, u.emb::vector, $2, to_tsvector('english', u.et), 'public', 'upload'
           FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::text[]) AS u(item, idx, txt, emb, et)`,
        [
          orgId,
          embedder.modelId,
          rows.map((x) => x.item),
          rows.map((x) => x.index),
          rows.map((x) => x.chunk.text),
          rows.map((x) => toVectorLiteral(x.vector)),
          rows.map((x) => x.chunk.embedText),
        ],
      );
    });
  }
}

// ---- Measurement -------------------------------------------------------------------------------------

interface Stats {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  /** Requests per second over the whole run. */
  rate: number;
}

function stats(times: number[], wallMs: number): Stats {
  const s = [...times].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99), rate: s.length / (wallMs / 1000) };
}

async function callSearch(b: Bench, query: string, extra: Record<string, unknown> = {}): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(b.url + ENDPOINT, {
    method: 'POST',
    headers: { authorization: `Bearer ${b.keyA}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, limit: K, ...extra }),
  });
  const body = (await res.json()) as { result?: unknown[] };
  const ms = performance.now() - t0;
  if (res.status !== 200 || body.result?.length !== K) throw new Error(`search failed: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return ms;
}

/**
 * `clients` loops over the queries, each query at most once, per-request latency; no new request starts
 * after BUDGET_S once MIN_REQUESTS are done (slow configurations would take very long otherwise).
 */
async function endpointLatency(b: Bench, queries: string[], clients: number, extra: Record<string, unknown> = {}): Promise<Stats> {
  let next = 0;
  const times: number[] = [];
  const t0 = performance.now();
  const more = () => next < queries.length && (next < MIN_REQUESTS || performance.now() - t0 < BUDGET_S * 1000);
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (more()) times.push(await callSearch(b, queries[next++]!, extra));
    }),
  );
  return stats(times, performance.now() - t0);
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const out = await fn();
  return [out, performance.now() - t0];
}

/** Ids (item:chunk) of the top K by `search()` (the endpoint's own path) and by an exact scan. */
async function annTopK(b: Bench, vector: Float32Array, dims: number): Promise<string[]> {
  const hits = await search(
    b.db,
    { organizationId: b.orgA, vector, text: '', limit: K, mode: 'semantic', includeEmbedding: false },
    dims,
  );
  return hits.map((h) => `${h.item_id}:${h.chunk_index}`);
}

function nearestSql(dims: number): string {
  return `SELECT c.item_id, c.chunk_index FROM chunks AS c WHERE c.organization_id = $1
           ORDER BY ${vectorExpr(dims, 'c.embedding')} <=> $2::vector(${dims}) LIMIT ${K}`;
}

async function exactTopK(b: Bench, vector: Float32Array, dims: number): Promise<string[]> {
  return b.db.transaction(async (tx) => {
    await tx.exec('SET LOCAL enable_indexscan = off');
    const rows = await tx.query<{ item_id: string; chunk_index: number }>(nearestSql(dims), [b.orgA, toVectorLiteral(vector)]);
    return rows.map((x) => `${x.item_id}:${x.chunk_index}`);
  });
}

/**
 * The HNSW scan alone at a given ef_search (same settings as search() otherwise), with the planner's
 * other paths disabled so that the index is used whatever the planner would choose.
 */
const FORCE_HNSW = 'SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off';
async function annTopKAt(b: Bench, vector: Float32Array, dims: number, ef: number): Promise<string[]> {
  return b.db.transaction(async (tx) => {
    await tx.exec(`SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = ${ef}; ${FORCE_HNSW}`);
    const rows = await tx.query<{ item_id: string; chunk_index: number }>(nearestSql(dims), [b.orgA, toVectorLiteral(vector)]);
    return rows.map((x) => `${x.item_id}:${x.chunk_index}`);
  });
}

/** EXPLAIN ANALYZE of the nearest-chunks statement: as search() runs it, exact, or with HNSW forced. */
async function explain(b: Bench, vector: Float32Array, dims: number, how: 'search' | 'exact' | 'forced'): Promise<string> {
  return b.db.transaction(async (tx) => {
    await tx.exec('SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = 100');
    if (how === 'exact') await tx.exec('SET LOCAL enable_indexscan = off');
    if (how === 'forced') await tx.exec(FORCE_HNSW);
    const rows = await tx.query<Record<string, string>>(`EXPLAIN (ANALYZE, BUFFERS) ${nearestSql(dims)}`, [b.orgA, toVectorLiteral(vector)]);
    // The query vector's 384 numbers say nothing; keep the plan readable.
    return rows.map((x) => Object.values(x)[0]!.replace(/'\[[^\]]*\]'/g, "'[query vector]'")).join('\n');
  });
}

const overlap = (a: string[], b: string[]) => {
  const s = new Set(b);
  return a.filter((x) => s.has(x)).length / K;
};

// ---- Run ---------------------------------------------------------------------------------------------

const embedder = await testEmbedder();
const dims = embedder.dimensions;
const real = await realChunks(embedder);
const queries = (readJsonl('queries.jsonl') as Array<{ text: string }>).map((q) => q.text);
const queryVectors: Float32Array[] = [];
for (const q of queries) queryVectors.push(await embedder.embedQuery(q));
console.log(
  `model ${embedder.modelId} (${dims} d); ${real.chunks.length} real SciFact chunks embedded, the rest DERIVED ` +
    `(real vector + N(0, ${NOISE_SIGMA}^2) noise per dimension, renormalized); ${queries.length} SciFact queries`,
);

// A big maintenance_work_mem keeps the HNSW graph in memory while it is built (only the build is faster).
const native = MODES.includes('postgres') ? await startNativePostgres({ settings: { maintenance_work_mem: '1GB' } }) : null;
const latencyRows: Array<Record<string, string>> = [];
const recallRows: Array<Record<string, string>> = [];
const raw: unknown[] = [];
const t00 = performance.now();

try {
  for (const mode of MODES) {
    const storage = mode === 'pglite' ? 'embedded (PGlite)' : 'server (Postgres)';
    const b = await startBench(mode, native, embedder);
    try {
      if (mode === 'pglite') await b.db.exec("SET maintenance_work_mem = '1GB'");
      let have = 0;
      for (const size of SIZES) {
        // Load without the index, then build it once: far faster than inserting into the graph.
        await b.db.exec(`DROP INDEX IF EXISTS chunks_embedding_hnsw_${dims}`);
        const [, loadMs] = await timed(async () => {
          await insertChunks(b, embedder, b.orgA, have, size, real, true, 11 + size);
          await insertChunks(b, embedder, b.orgB, Math.round(have * OTHER_ORG_SHARE), Math.round(size * OTHER_ORG_SHARE), real, false, 22 + size);
        });
        have = size;
        const [, indexMs] = await timed(() => ensureVectorIndex(b.db, { id: embedder.modelId, dimensions: dims }));
        if (mode === 'postgres') await b.db.exec('VACUUM ANALYZE chunks'); // what autovacuum does after a load
        process.stderr.write(`${mode} ${size}: loaded in ${(loadMs / 1000).toFixed(0)} s, HNSW index built in ${(indexMs / 1000).toFixed(0)} s\n`);

        // Warm-up: caches, JIT, the model's first runs.
        for (const q of queries.slice(0, 20)) await callSearch(b, q);
        const one = await endpointLatency(b, queries, 1);
        const many = await endpointLatency(b, queries, CONCURRENCY);
        const lean = await endpointLatency(b, queries.slice(0, 100), 1, { includeEmbedding: false });
        // Where one request's time goes: the query embedding, and search() with the vector given.
        const embedMs: number[] = [];
        for (const q of queries) embedMs.push((await timed(() => embedder.embedQuery(q)))[1]);
        const sqlMs: number[] = [];
        const exactMs: number[] = [];
        const exactTop: string[][] = [];
        let recall = 0;
        const recallStart = performance.now();
        for (const v of queryVectors) {
          if (exactTop.length >= MIN_REQUESTS && performance.now() - recallStart > 2 * BUDGET_S * 1000) break;
          const [ann, ms] = await timed(() => annTopK(b, v, dims));
          const [exact, ems] = await timed(() => exactTopK(b, v, dims));
          sqlMs.push(ms);
          exactMs.push(ems);
          exactTop.push(exact);
          recall += overlap(ann, exact);
        }
        recall /= exactTop.length;
        const sweep: Array<{ ef: number; recall: number; p50: number; p95: number }> = [];
        for (const ef of EF_SWEEP) {
          const times: number[] = [];
          let rec = 0;
          for (const [i, v] of queryVectors.slice(0, exactTop.length).entries()) {
            const [ann, ms] = await timed(() => annTopKAt(b, v, dims, ef));
            times.push(ms);
            rec += overlap(ann, exactTop[i]!);
          }
          times.sort((x, y) => x - y);
          sweep.push({ ef, recall: rec / exactTop.length, p50: percentile(times, 50), p95: percentile(times, 95) });
        }
        const plan = await explain(b, queryVectors[0]!, dims, 'search');
        const exactPlan = await explain(b, queryVectors[0]!, dims, 'exact');
        const forcedPlan = await explain(b, queryVectors[0]!, dims, 'forced');
        const usesHnsw = plan.includes(`chunks_embedding_hnsw_${dims}`);
        if (!forcedPlan.includes(`chunks_embedding_hnsw_${dims}`)) throw new Error(`HNSW not used even when forced:\n${forcedPlan}`);
        const med = (xs: number[]) => percentile([...xs].sort((x, y) => x - y), 50);

        for (const [clients, s] of [
          ['1', one],
          [String(CONCURRENCY), many],
          ['1, includeEmbedding false', lean],
        ] as const) {
          latencyRows.push({
            storage,
            chunks: String(size),
            clients,
            'p50 ms': s.p50.toFixed(1),
            'p95 ms': s.p95.toFixed(1),
            'p99 ms': s.p99.toFixed(1),
            'req/s': s.rate.toFixed(1),
            requests: String(s.n),
          });
        }
        recallRows.push({
          storage,
          chunks: String(size),
          'recall@10 search()': recall.toFixed(3),
          'recall queries': String(exactTop.length),
          'HNSW chosen by planner': usesHnsw ? 'yes' : 'NO',
          'embed query p50 ms': med(embedMs).toFixed(1),
          'search() p50 ms': med(sqlMs).toFixed(1),
          'exact p50 ms': med(exactMs).toFixed(1),
          ...Object.fromEntries(sweep.map((s) => [`HNSW forced, ef ${s.ef}: recall, p50/p95 ms`, `${s.recall.toFixed(3)}, ${s.p50.toFixed(1)}/${s.p95.toFixed(1)}`])),
        });
        raw.push({
          mode,
          size,
          loadMs,
          indexMs,
          one,
          many,
          lean,
          embedMs: med(embedMs),
          sqlMs: med(sqlMs),
          exactMs: med(exactMs),
          recall,
          recallQueries: exactTop.length,
          usesHnsw,
          sweep,
          plan,
          exactPlan,
          forcedPlan,
        });
        process.stderr.write(`  1 client p95 ${one.p95.toFixed(1)} ms; recall@10 ${recall.toFixed(3)}; HNSW ${usesHnsw}\n`);
      }
    } finally {
      await b.close();
    }
  }
} finally {
  await native?.stop();
}

printTable(`Search endpoint latency (query embedding included; ${queries.length} SciFact queries, limit ${K})`, latencyRows);
printTable(`Recall@${K} of the HNSW index vs exact scan, and where the time goes (1 client)`, recallRows);
const goal = raw.find((x: any) => x.mode === 'pglite' && x.size === 100_000) as any;
if (goal) {
  console.log(
    `\ngoal, embedded at 100k chunks: p95 ${goal.one.p95.toFixed(1)} ms (< 30: ${goal.one.p95 < 30 ? 'met' : 'NOT met'}), ` +
      `recall@10 ${goal.recall.toFixed(3)} (>= 0.95: ${goal.recall >= 0.95 ? 'met' : 'NOT met'})`,
  );
}
console.log(`total ${((performance.now() - t00) / 1000).toFixed(0)} s`);
writeResult('search-latency', {
  sizes: SIZES,
  modes: MODES,
  realChunks: real.chunks.length,
  derived: { noiseSigma: NOISE_SIGMA, otherOrgShare: OTHER_ORG_SHARE, chunksPerItem: CHUNKS_PER_ITEM },
  queries: queries.length,
  results: raw,
});
process.exit(0);
