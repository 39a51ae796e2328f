/**
 * The keyword side's own latency: BM25 (src/search/keyword.ts) at 10k and 100k chunks
 * of one organization, in embedded PGlite, with the candidate depth capped (the default) and uncapped
 * (every posting of every query term: what the cost would be without the cap).
 *
 *   node bench/keyword-latency.ts [--sizes 10000,100000] [--queries 100] [--data-dir DIR]
 *
 * --data-dir keeps the PGlite data directory there and reuses the chunks it already holds (building a
 * 100k-chunk corpus through the statistics triggers takes minutes), so a change to the query can be
 * measured again at once.
 *
 * Data: SciFact abstracts chunked as the indexer chunks them (the model's tokenizer; no embedding: the
 * vectors are a constant, keyword search never reads them). The first chunks are the real ones in order;
 * past the corpus (~10k chunks), chunks are copies of random real ones, as bench/search-latency.ts derives
 * its large sizes, so term statistics grow like a larger corpus of the same kind. Queries: SciFact's test
 * queries, one client, search() inside a transaction as the endpoint runs it.
 */
import { parseArgs } from 'node:util';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPgliteThread } from '../src/db/pglite-thread.ts';
import { createOrganization } from '../src/db/repositories/organizations.ts';
import { chunkMarkdown } from '../src/ingest/markdown-chunker.ts';
import { newId } from '../src/lib/ids.ts';
import { BM25_DEFAULTS } from '../src/search/bm25.ts';
import { keyword } from '../src/search/keyword.ts';
import type { SearchQuery } from '../src/search/query.ts';
import { testEmbedder } from '../test/support/embedding.ts';
import {
  insertBenchItems,
  openBenchDatabase,
  percentile,
  printTable,
  readScifactJsonl,
  rng,
  writeResult,
  loadAverage,
  sizeList,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    queries: { type: 'string', default: '100' },
    'data-dir': { type: 'string' },
  },
});
const SIZES = sizeList(values.sizes);

const embedder = await testEmbedder();
const real: Array<{ title: string; text: string; embedText: string }> = [];
for (const d of readScifactJsonl('corpus.jsonl') as Array<{ title: string; text: string }>) {
  for (const c of chunkMarkdown(
    { title: d.title, markdown: d.text },
    { maxTokens: embedder.maxTokens, overlapTokens: 32, countTokens: (s) => embedder.countTokens(s) },
  ))
    real.push({ title: d.title, text: c.text, embedText: c.embedText });
}
const queries = (readScifactJsonl('queries.jsonl') as Array<{ text: string }>).slice(
  0,
  Number(values.queries),
);
const zero = `[${new Array(embedder.dimensions).fill(0.1).join(',')}]`;

const kept = values['data-dir'];
const { db, cleanup } = kept
  ? { db: await openPgliteThread(kept), cleanup: async () => {} }
  : await openBenchDatabase('pglite', null, 'kb-keyword-latency-');
await migrate(db);
const existing = await db.query<{ id: string; n: string }>(
  `SELECT o.id, (SELECT count(*) FROM chunks AS c WHERE c.organization_id = o.id) AS n
     FROM organizations AS o WHERE o.name = 'bench'`,
);
const org = existing[0] ? { id: existing[0].id } : await createOrganization(db, 'bench');

async function grow(d: Database, from: number, to: number): Promise<number> {
  const r = rng(from + 1);
  const t0 = performance.now();
  for (let start = from; start < to; start += 1000) {
    const end = Math.min(to, start + 1000);
    const rows: Array<{ item: string; c: (typeof real)[number] }> = [];
    for (let j = start; j < end; j++)
      rows.push({ item: newId(), c: real[j < real.length ? j : Math.floor(r() * real.length)]! });
    await d.transaction(async (tx) => {
      await insertBenchItems(
        tx,
        org.id,
        rows.map((x) => x.item),
        rows.map((x) => x.c.title),
        rows.map((x) => x.c.text),
      );
      // One statement per part, as the indexer writes: the statistics triggers run once per statement.
      await tx.query(
        `INSERT INTO chunks (item_id, organization_id, chunk_index, text, embedding, model_id, tsv, visibility, source_type)
         SELECT u.item, $1, 0, u.txt, $2::vector, 'bench', to_tsvector('english', u.et), 'public', 'upload'
           FROM unnest($3::text[], $4::text[], $5::text[]) AS u(item, txt, et)`,
        [org.id, zero, rows.map((x) => x.item), rows.map((x) => x.c.text), rows.map((x) => x.c.embedText)],
      );
    });
    process.stderr.write(`\r  chunks ${end}`);
  }
  process.stderr.write('\n');
  return (to - from) / ((performance.now() - t0) / 1000);
}

const rows: Array<Record<string, string>> = [];
const results: unknown[] = [];
let have = Number(existing[0]?.n ?? 0);
for (const size of SIZES) {
  if (size < have) throw new Error(`--data-dir holds ${have} chunks, more than the size ${size}`);
  const insertRate = size > have ? await grow(db, have, size) : Number.NaN;
  have = size;
  await db.exec('ANALYZE');
  for (const [label, depth] of [
    ['capped', BM25_DEFAULTS.depth],
    ['uncapped', 1e9],
  ] as const) {
    const params = { ...BM25_DEFAULTS, depth };
    const times: number[] = [];
    for (const [i, q] of queries.entries()) {
      const sq: SearchQuery = {
        organizationId: org.id,
        vector: new Float32Array(0),
        text: q.text,
        limit: 100,
        mode: 'keyword',
        includeEmbedding: false,
      };
      const t0 = performance.now();
      await keyword(db, sq, 100, params);
      if (i >= 5) times.push(performance.now() - t0); // the first few warm the caches
    }
    times.sort((a, b) => a - b);
    const row = {
      chunks: String(size),
      candidates: label === 'capped' ? `${depth} per term` : 'all postings',
      p50: percentile(times, 50).toFixed(1),
      p95: percentile(times, 95).toFixed(1),
      'insert chunks/s': Number.isNaN(insertRate) ? 'kept' : insertRate.toFixed(0),
      load: loadAverage(),
    };
    rows.push(row);
    results.push(row);
  }
}
printTable('Keyword (BM25) latency, PGlite, 1 client, ms', rows);
writeResult('keyword-latency', results);
await db.close();
await cleanup();
await embedder.close();
process.exit(0);
