/**
 * Retrieval quality on BEIR SciFact (../shared/data/scifact), through the real pipeline and the real
 * search endpoint, plus ingest throughput against the raw model on the same texts.
 *
 *   node bench/scifact.ts [--docs N] [--queries N] [--storage pglite|postgres]
 *
 * Ingest: every abstract is stored as an item (title + text) and embedded by the indexer. Then every test
 * query goes through POST /api/consume/search (limit 100) in semantic, keyword and hybrid mode; hits are
 * mapped to documents (best chunk per document) and scored with nDCG@10 and recall@100.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { chunkMarkdown } from '../src/ingest/chunker.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { crawlSourceKey, storeDocument } from '../src/ingest/store.ts';
import { testEmbedder, withSearch } from '../test/support/embedding.ts';
import { startTestApp } from '../test/support/harness.ts';
import { ndcgAt, printTable, readScifactJsonl, recallAt, SCIFACT_DATA, writeResult } from './lib.ts';

const { values } = parseArgs({
  options: {
    docs: { type: 'string' },
    queries: { type: 'string' },
    storage: { type: 'string', default: 'pglite' },
    /** Keep the embedded database here and reuse it on the next run (skips re-embedding; PGlite only). */
    'data-dir': { type: 'string' },
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
let queries: Array<{ _id: string; text: string }> = readJsonl('queries.jsonl').filter((q: { _id: string }) => qrels.has(q._id));
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
console.log(`model ${embedder.modelId} (${embedder.dimensions} d, window ${embedder.maxTokens}); ${corpus.length} docs, ${queries.length} queries, ${storage}`);

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
const [{ n: chunkCount } = { n: 0 }] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM chunks');

// 2. Re-ingest of the unchanged corpus: hashes match, nothing is embedded.
t0 = performance.now();
const again = await storeAll();
const reembedded = await drain();
const reingestSeconds = (performance.now() - t0) / 1000;

// 3. The raw model on the same chunk texts, same batch size: the ceiling for the pipeline.
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
const rawChunksPerSecond = sample.length / ((performance.now() - t0) / 1000);

// 4. Every query through the search endpoint, per mode.
const modes = ['semantic', 'keyword', 'hybrid'] as const;
const scores: Record<string, { ndcg10: number; recall100: number; msPerQuery: number }> = {};
for (const mode of modes) {
  let ndcg = 0;
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
    ndcg += ndcgAt(ranked, rel, 10);
    recall += recallAt(ranked, rel, 100);
  }
  scores[mode] = {
    ndcg10: ndcg / queries.length,
    recall100: recall / queries.length,
    msPerQuery: (performance.now() - started) / queries.length,
  };
}

const rows = [
  ...modes.map((m) => ({
    run: `ours: ${m} (${embedder.modelId.split('/').pop()})`,
    'nDCG@10': scores[m]!.ndcg10.toFixed(3),
    'recall@100': scores[m]!.recall100.toFixed(3),
    'ms/query': scores[m]!.msPerQuery.toFixed(1),
  })),
  { run: 'reference: BM25 (BEIR paper)', 'nDCG@10': '0.665', 'recall@100': '0.908', 'ms/query': '' },
  { run: 'reference: all-MiniLM-L6-v2', 'nDCG@10': '0.645', 'recall@100': '', 'ms/query': '' },
  { run: 'reference: bge-base hybrid', 'nDCG@10': '0.742', 'recall@100': '', 'ms/query': '' },
];
printTable('SciFact retrieval quality', rows);
const pipelineRate = chunkCount / ingestSeconds;
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
writeResult('scifact', { storage, model: embedder.modelId, docs: corpus.length, queries: queries.length, scores, ingestSeconds, chunkCount, rawChunksPerSecond, reingestSeconds });
await t.close();
process.exit(0);
