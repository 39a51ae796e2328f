/**
 * Retrieval quality on BEIR SciFact (its files beside the checkout: SCIFACT_DATA in bench/lib.ts), through
 * the real pipeline and the real search endpoint, plus ingest throughput against the raw model on the same
 * texts.
 *
 *   node bench/scifact.ts [--docs N] [--queries N] [--storage pglite|postgres] [--data-dir DIR]
 *                         [--quality-only] [--tune]
 *
 * Splits, so no figure is tuned on the queries it is reported on: every parameter of the keyword and hybrid
 * sides (BM25 k1, b, candidate depth; fusion weight) is chosen on test queries 1-150 only (--tune prints
 * those grids); figures are reported on queries 151-300 (held out) and on all 300. The reference BM25 (bm25s,
 * pinned below, in a throw-away venv under .cache/bm25s-venv, bench/bm25s_reference.py) runs in the same run
 * on the same files and is scored by the same nDCG code.
 *
 * Ingest: every abstract is stored as an item (title + text) and embedded by the indexer. Then every test
 * query goes through POST /api/consume/search (limit 100) in semantic, keyword and hybrid mode; hits are
 * mapped to documents (best chunk per document) and scored with nDCG@10 and recall@100.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chunkMarkdown } from '../src/ingest/markdown-chunker.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { crawlSourceKey, storeDocument } from '../src/ingest/hash-skip.ts';
import { type Bm25Params, BM25_DEFAULTS } from '../src/search/bm25.ts';
import { fuseRanks, fuseScores } from '../src/search/fusion.ts';
import { keyword } from '../src/search/keyword.ts';
import { search } from '../src/search/search.ts';
import { testEmbedder, withSearch } from '../test/support/embedding.ts';
import { startTestApp } from '../test/support/harness.ts';
import {
  ndcgAt,
  printTable,
  readScifactJsonl,
  recallAt,
  SCIFACT_DATA,
  writeResult,
  loadAverage,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    docs: { type: 'string' },
    queries: { type: 'string' },
    storage: { type: 'string', default: 'pglite' },
    /** Keep the embedded database here and reuse it on the next run (skips re-embedding; PGlite only). */
    'data-dir': { type: 'string' },
    /** Skip the re-ingest and raw-model measurements (retrieval quality only). */
    'quality-only': { type: 'boolean', default: false },
    /** Print the parameter grids on queries 1-150 (keyword: k1, b, depth; hybrid: fusion weight). */
    tune: { type: 'boolean', default: false },
  },
});
const readJsonl = (name: string) => readScifactJsonl(name);
const DATA = SCIFACT_DATA;

const qrels = new Map<string, Map<string, number>>();
for (const line of readFileSync(new URL('qrels/test.tsv', DATA), 'utf8').split('\n').slice(1)) {
  const [q, d, s] = line.split('\t');
  if (!q || !d) continue;
  if (!qrels.has(q)) qrels.set(q, new Map());
  qrels.get(q)!.set(d, Number(s));
}
let queries: Array<{ _id: string; text: string }> = readJsonl('queries.jsonl').filter((q: { _id: string }) =>
  qrels.has(q._id),
);
if (values.queries) queries = queries.slice(0, Number(values.queries));
let corpus: Array<{ _id: string; title: string; text: string }> = readJsonl('corpus.jsonl');
if (values.docs) {
  // A subset: every document relevant to the chosen queries, then distractors up to N.
  const relevant = new Set(queries.flatMap((q) => [...qrels.get(q._id)!.keys()]));
  const n = Number(values.docs);
  const distractors = corpus.filter((d) => !relevant.has(d._id)).slice(0, Math.max(0, n - relevant.size));
  corpus = [...corpus.filter((d) => relevant.has(d._id)), ...distractors];
}

const storage = values.storage === 'postgres' ? 'postgres' : 'pglite';
const dataDir = values['data-dir'];
const t = await startTestApp(storage, dataDir ? { pgliteDir: dataDir } : {});
const { embedder, drain } = await withSearch(t);
console.log(
  `model ${embedder.modelId} (${embedder.dimensions} d, window ${embedder.maxTokens}); ${corpus.length} docs, ${queries.length} queries, ${storage}`,
);

const docKey = (id: string) => crawlSourceKey(`scifact:${id}`);
const storeAll = async () => {
  const outcomes = new Map<string, number>();
  for (let i = 0; i < corpus.length; i += 200) {
    await t.db.transaction(async (tx) => {
      for (const d of corpus.slice(i, i + 200)) {
        const { outcome } = await storeDocument(
          tx,
          t.orgA.id,
          {
            sourceType: 'upload',
            sourceTableName: 'uploaded_documents',
            sourceKey: docKey(d._id),
            title: d.title,
            markdown: d.text,
            url: `scifact:${d._id}`,
            visibility: 'public',
            tags: [],
          },
          { respectTombstones: true },
        );
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    });
  }
  return outcomes;
};

// 1. First ingest through the pipeline (store → chunk → embed → upsert).
let t0 = performance.now();
const firstOutcomes = await storeAll();
let indexed = 0;
const progress = new Indexer(t.db, embedder, {
  batchItems: 32,
  onProgress: (n) => {
    indexed += n;
    if (indexed % 512 < n) process.stderr.write(`\r  indexed ${indexed}/${corpus.length}`);
  },
});
await progress.drain();
process.stderr.write('\n');
const ingestSeconds = (performance.now() - t0) / 1000;
const [{ n: chunkCount } = { n: 0 }] = await t.db.query<{ n: number }>(
  'SELECT count(*)::int AS n FROM chunks',
);

// 2. Re-ingest of the unchanged corpus: hashes match, nothing is embedded.
const QUALITY_ONLY = values['quality-only'];
t0 = performance.now();
const again = QUALITY_ONLY ? new Map<string, number>() : await storeAll();
const reembedded = QUALITY_ONLY ? 0 : await drain();
const reingestSeconds = (performance.now() - t0) / 1000;

// 3. The raw model on the same chunk texts, same batch size: the ceiling for the pipeline.
let rawChunksPerSecond = Number.NaN;
if (!QUALITY_ONLY) {
  const texts = corpus.flatMap((d) =>
    chunkMarkdown(
      { title: d.title, markdown: d.text },
      { maxTokens: embedder.maxTokens, overlapTokens: 32, countTokens: (s) => embedder.countTokens(s) },
    ).map((c) => c.embedText),
  );
  const raw = await testEmbedder();
  const sample = texts.slice(0, Math.min(texts.length, 1024));
  t0 = performance.now();
  for (let i = 0; i < sample.length; i += 32) await raw.embed(sample.slice(i, i + 32));
  rawChunksPerSecond = sample.length / ((performance.now() - t0) / 1000);
}

/** Queries 1-150 choose the parameters, 151-300 are held out; "all" is every query. */
const TUNE = 150;
const splits = {
  'tune 1-150': (i: number) => i < TUNE,
  'held-out 151-300': (i: number) => i >= TUNE,
  all: (_i: number) => true,
};
const mean = (xs: number[]) => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
const bySplit = (perQuery: number[]) =>
  Object.fromEntries(Object.entries(splits).map(([k, f]) => [k, mean(perQuery.filter((_, i) => f(i)))]));

// The reference BM25: bm25s from PyPI, pinned, in a throw-away venv (like scripts/fixtures/model.sh).
const BM25S_PINS = ['bm25s==0.3.11', 'PyStemmer==3.1.0', 'numpy==2.4.6', 'scipy==1.17.1'];
function bm25sReference(): { version: string; query_ms: number; ranked: Record<string, string[]> } {
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const venv = path.join(repo, '.cache', 'bm25s-venv');
  const stamp = path.join(venv, '.pins');
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== BM25S_PINS.join(' ')) {
    rmSync(venv, { recursive: true, force: true });
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(
      path.join(venv, 'bin', 'pip'),
      ['install', '--quiet', '--cache-dir', path.join(repo, '.cache', 'pip'), ...BM25S_PINS],
      {
        stdio: 'inherit',
      },
    );
    writeFileSync(stamp, BM25S_PINS.join(' '));
  }
  const out = path.join(repo, '.cache', 'bench', 'bm25s-scifact.json');
  mkdirSync(path.dirname(out), { recursive: true });
  execFileSync(
    path.join(venv, 'bin', 'python'),
    [path.join(repo, 'bench', 'bm25s_reference.py'), fileURLToPath(DATA), out],
    {
      stdio: 'inherit',
    },
  );
  return JSON.parse(readFileSync(out, 'utf8'));
}
const reference = bm25sReference();
const referenceNdcg = queries.map((q) => ndcgAt(reference.ranked[q._id] ?? [], qrels.get(q._id)!, 10));

// Chunk ids to documents, for the direct (not through the endpoint) runs of the tuning grids.
const chunkRows = await t.db.query<{ id: string; item_id: string; chunk_index: number; source_url: string }>(
  `SELECT c.id, c.item_id, c.chunk_index, i.source_url FROM chunks AS c JOIN items AS i ON i.id = c.item_id
    WHERE c.organization_id = $1`,
  [t.orgA.id],
);
const docOfChunk = new Map(chunkRows.map((r) => [Number(r.id), r.source_url.slice('scifact:'.length)]));
const chunkOfHit = new Map(chunkRows.map((r) => [`${r.item_id}:${r.chunk_index}`, Number(r.id)]));
const docsOf = (ids: number[]) => [...new Set(ids.map((id) => docOfChunk.get(id)!))];
const sq = (text: string, vector: Float32Array, mode: 'keyword' | 'semantic', limit: number) => ({
  organizationId: t.orgA.id,
  vector,
  text,
  limit,
  mode,
  includeEmbedding: false,
});

if (values.tune) {
  const tq = queries.slice(0, TUNE);
  const ndcgKw = async (params: Bm25Params) => {
    const xs: number[] = [];
    for (const q of tq) {
      const ids = (await keyword(t.db, sq(q.text, new Float32Array(0), 'keyword', 100), 100, params)).map(
        (r) => r.id,
      );
      xs.push(ndcgAt(docsOf(ids), qrels.get(q._id)!, 10));
    }
    return mean(xs);
  };
  const grid: Array<Record<string, string>> = [];
  for (const k1 of [0.6, 0.9, 1.2, 1.5, 2.0])
    for (const b of [0.5, 0.75, 0.9]) {
      const p = { ...BM25_DEFAULTS, k1, b };
      grid.push({
        k1: String(k1),
        b: String(b),
        depth: String(p.depth),
        'nDCG@10 (1-150)': (await ndcgKw(p)).toFixed(4),
      });
    }
  for (const depth of [100, 300, 3000, 1e9]) {
    const p = { ...BM25_DEFAULTS, depth };
    grid.push({
      k1: String(p.k1),
      b: String(p.b),
      depth: depth >= 1e9 ? 'all' : String(depth),
      'nDCG@10 (1-150)': (await ndcgKw(p)).toFixed(4),
    });
  }
  printTable(`Tuning keyword (queries 1-150 only; load ${loadAverage()})`, grid);

  // Hybrid: both sides once per query at depth 100 (the endpoint's depth at limit 100), fused here.
  const lists: Array<{
    rel: Map<string, number>;
    sem: Array<{ id: number; distance: number }>;
    kw: Array<{ id: number; score: number }>;
  }> = [];
  for (const q of tq) {
    const vector = await embedder.embedQuery(q.text);
    const hits = await search(t.db, sq(q.text, vector, 'semantic', 100), embedder.dimensions);
    const sem = hits.map((h) => ({
      id: chunkOfHit.get(`${h.item_id}:${h.chunk_index}`)!,
      distance: h.distance,
    }));
    const kw = await keyword(t.db, sq(q.text, vector, 'keyword', 100), 100);
    lists.push({ rel: qrels.get(q._id)!, sem, kw });
  }
  const fgrid: Array<Record<string, string>> = [];
  const score = (fuse: (l: (typeof lists)[number]) => number[]) =>
    mean(lists.map((l) => ndcgAt(docsOf(fuse(l)), l.rel, 10)));
  for (const depth of [60, 100])
    for (const w of [1, 1.5, 2, 3])
      fgrid.push({
        fusion: 'rank (RRF)',
        depth: String(depth),
        'semantic weight': `${w} : 1`,
        'nDCG@10 (1-150)': score((l) =>
          fuseRanks([l.sem.slice(0, depth).map((r) => r.id), l.kw.slice(0, depth).map((r) => r.id)], 100, [
            w,
            1,
          ]),
        ).toFixed(4),
      });
  for (const depth of [60, 100])
    for (const alpha of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
      fgrid.push({
        fusion: 'score (min-max)',
        depth: String(depth),
        'semantic weight': `alpha ${alpha}`,
        'nDCG@10 (1-150)': score((l) =>
          fuseScores(l.sem.slice(0, depth), l.kw.slice(0, depth), 100, alpha),
        ).toFixed(4),
      });
  printTable(`Tuning hybrid (queries 1-150 only; load ${loadAverage()})`, fgrid);
}

// 4. Every query through the search endpoint, per mode.
const modes = ['semantic', 'keyword', 'hybrid'] as const;
const scores: Record<string, { ndcg10: Record<string, number>; recall100: number; msPerQuery: number }> = {};
for (const mode of modes) {
  const ndcg: number[] = [];
  let recall = 0;
  const started = performance.now();
  for (const q of queries) {
    const res = await t.call('POST', '/api/consume/search', {
      body: { query: q.text, limit: 100, mode, includeEmbedding: false },
    });
    if (res.status !== 200) throw new Error(`search failed: ${JSON.stringify(res.body)}`);
    const ranked: string[] = [];
    for (const hit of res.body.result as Array<{ source_url: string }>) {
      const id = hit.source_url.slice('scifact:'.length);
      if (!ranked.includes(id)) ranked.push(id);
    }
    const rel = qrels.get(q._id)!;
    ndcg.push(ndcgAt(ranked, rel, 10));
    recall += recallAt(ranked, rel, 100);
  }
  scores[mode] = {
    ndcg10: bySplit(ndcg),
    recall100: recall / queries.length,
    msPerQuery: (performance.now() - started) / queries.length,
  };
}
const refScores = bySplit(referenceNdcg);
const splitCols = (x: Record<string, number>) =>
  Object.fromEntries(Object.keys(splits).map((k) => [`nDCG@10 ${k}`, x[k]!.toFixed(3)]));

const rows: Array<Record<string, string>> = [
  ...modes.map((m) => ({
    run: `ours: ${m} (${embedder.modelId.split('/').pop()})`,
    ...splitCols(scores[m]!.ndcg10),
    'recall@100': scores[m]!.recall100.toFixed(3),
    'ms/query': scores[m]!.msPerQuery.toFixed(1),
  })),
  {
    run: `reference: bm25s ${reference.version} (same run)`,
    ...splitCols(refScores),
    'recall@100': '',
    'ms/query': reference.query_ms.toFixed(1),
  },
  {
    run: 'ours keyword / bm25s',
    ...Object.fromEntries(
      Object.keys(splits).map((k) => [
        `nDCG@10 ${k}`,
        (scores.keyword!.ndcg10[k]! / refScores[k]!).toFixed(3),
      ]),
    ),
    'recall@100': '',
    'ms/query': '',
  },
  { run: 'reference: BM25 (BEIR paper)', 'nDCG@10 all': '0.665', 'recall@100': '0.908' },
  { run: 'reference: all-MiniLM-L6-v2', 'nDCG@10 all': '0.645' },
  { run: 'reference: bge-base hybrid', 'nDCG@10 all': '0.742' },
];
printTable(`SciFact retrieval quality (load ${loadAverage()})`, rows);
const pipelineRate = chunkCount / ingestSeconds;
// A stored database's first pass finds every document unchanged: no ingest figures to print.
if (!QUALITY_ONLY)
  printTable('Ingest', [
    { measure: 'documents', value: String(corpus.length) },
    { measure: 'outcomes of first pass', value: JSON.stringify(Object.fromEntries(firstOutcomes)) },
    { measure: 'chunks', value: String(chunkCount) },
    { measure: 'first ingest (s)', value: ingestSeconds.toFixed(1) },
    { measure: 'pipeline chunks/s', value: pipelineRate.toFixed(1) },
    { measure: 'raw model chunks/s (same texts, batch 32)', value: rawChunksPerSecond.toFixed(1) },
    { measure: 'pipeline / raw model', value: (pipelineRate / rawChunksPerSecond).toFixed(2) },
    { measure: 're-ingest unchanged (s)', value: reingestSeconds.toFixed(1) },
    { measure: 're-ingest / first ingest', value: (reingestSeconds / ingestSeconds).toFixed(3) },
    { measure: 'items re-embedded on re-ingest', value: String(reembedded) },
    { measure: 'outcomes of re-ingest', value: JSON.stringify(Object.fromEntries(again)) },
  ]);
writeResult('scifact', {
  storage,
  model: embedder.modelId,
  docs: corpus.length,
  queries: queries.length,
  scores,
  bm25s: { version: reference.version, ndcg10: refScores },
  bm25: BM25_DEFAULTS,
  load: loadAverage(),
  ingestSeconds,
  chunkCount,
  rawChunksPerSecond,
  reingestSeconds,
});
await t.close();
process.exit(0);
