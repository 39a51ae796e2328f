/**
 * From crawl to searchable (`node bench/crawl-searchable.ts`): how long after a crawl ends its pages can be
 * found, how many chunks a page makes, and where the bytes on disk go.
 *
 *   node bench/crawl-searchable.ts [--site fastapi,docs500] [--model real,hash] [--storage pglite,postgres]
 *                                  [--pages 500] [--indexing during|after] [--without all,hnsw,bm25,gin]
 *
 * `--indexing after` starts the indexer when the crawl has ended (the indexing alone); `--without` adds a
 * run per variant with a part of the write left out (`hnsw`, `bm25`, `gin`, or `+`-joined; `all` is the
 * service as it is): what each part costs the time to searchable.
 *
 * Sites: the FastAPI docs mirror beside the checkout (154 pages, sitemap) and a generated documentation site
 * (test/support/docs-site.ts, `--pages`, found by links), each served by a process of its own. Each run is
 * a process of its own: the service with a crawl at the fast pace (the site's host in KB_CRAWL_FAST_HOSTS)
 * and the indexer embedding as pages arrive, with the real local model (`real`) or the hash embedder
 * (`hash`: the pipeline's cost without the model's). PGlite runs in a data directory, as `kb serve` runs it.
 *
 * Measured:
 * - crawl seconds: from the crawl's request to its job's end (`completed_at`);
 * - searchable after: from the crawl's end to the last item's `indexed_at` (every page searchable); 0 when
 *   the indexer had finished first;
 * - chunks a page (mean, median, p90, max); the model's idle time after the crawl (near 0: the model is
 *   what the wait is); the model alone on a sample of the same chunk texts right after, on the same load;
 * - bytes on disk per page and per byte of the pages' HTML, split into: vectors (the chunks' embedding
 *   column), the HNSW graph (its index), text (chunks' text, items' markdown), keyword index (tsvector
 *   columns, their GIN indexes, the BM25 postings and terms tables with their indexes), crawl state
 *   (frontier, pages, texts, patterns), WAL (written during the run, pg_current_wal_lsn; on PGlite also its
 *   pg_wal folder, and the data directory after a CHECKPOINT), and other (the
 *   rest of the database's growth: heap and TOAST overhead, the other columns and indexes). Column shares
 *   are pg_column_size (as stored: compressed or not, in line or in TOAST), relations pg_relation_size /
 *   pg_total_relation_size;
 * - what was cut: crawled pages not chunked as lists of links (src/ingest/link-lists.ts), and the share of
 *   the chunked pages' markdown left out of the embedded and keyword text (link targets, image URLs,
 *   markup: rankingText of markdown-chunker.ts).
 *
 * Prints the machine's load average beside the figures; writes bench/results/crawl-searchable.json.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Database } from '../src/db/database.ts';
import type { Embedder } from '../src/embedding/types.ts';
import { chunkForIndexing } from '../src/ingest/chunk.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { isLinkListPage } from '../src/ingest/link-lists.ts';
import { rankingText } from '../src/ingest/markdown-chunker.ts';
import { writeDocsSite } from '../test/support/docs-site.ts';
import { testEmbedder } from '../test/support/embedding.ts';
import { type StorageMode, type TestApp, startTestApp } from '../test/support/harness.ts';
import { hashEmbedder } from '../test/support/hash-embedder.ts';
import {
  embedInRounds,
  loadAverage,
  ModelIdle,
  percentile,
  printTable,
  serveSiteElsewhere,
  writeResult,
} from './lib.ts';

const FASTAPI = fileURLToPath(new URL('../../shared/data/sites/fastapi-docs', import.meta.url));

type SiteName = 'fastapi' | 'docs500';
type ModelName = 'real' | 'hash';

interface Run {
  site: SiteName;
  model: ModelName;
  storage: StorageMode;
  /**
   * `during`: the indexer runs while the crawl does (as the service runs); `after`: it starts when the crawl
   * has ended, so its time is the indexing alone.
   */
  indexing: 'during' | 'after';
  /** Parts of the write left out, to see what each costs: the HNSW index, the BM25 trigger, the GIN index. */
  without: Array<'hnsw' | 'bm25' | 'gin'>;
  /** The served site's directory and origin (the parent serves it). */
  dir: string;
  origin: string;
}

interface Bytes {
  vectors: number;
  hnsw: number;
  text: number;
  keyword: number;
  /** The keyword index's parts: tsvector columns (chunks.tsv, items' search words and fields), their GIN indexes, BM25 tables. */
  keywordParts: { tsvectors: number; gin: number; bm25: number };
  crawlState: number;
  wal: number;
  other: number;
  /** The database's growth over the run (pg_database_size), WAL not included. */
  database: number;
  /** PGlite: the data directory's files at the end (WAL segments included). */
  dataDir: number | null;
  /** PGlite: its pg_wal folder at the end (segments are kept until a checkpoint; PGlite has no checkpointer). */
  walDir: number | null;
  /** PGlite: the data directory after a CHECKPOINT (what WAL a checkpoint lets go). */
  dataDirAfterCheckpoint: number | null;
}

interface Measured {
  run: Omit<Run, 'dir' | 'origin'>;
  /** Chunks over the seconds from the indexer's start (the crawl's start, or its end with `after`) to the last page indexed. */
  chunksPerSecond: number;
  pages: number;
  htmlBytes: number;
  chunks: number;
  chunksPerPage: { mean: number; median: number; p90: number; max: number };
  crawlSeconds: number;
  searchableAfterSeconds: number;
  /** Model idle while items were pending after the crawl (the pipeline, not the model, was the wait). */
  modelIdleAfterSeconds: number;
  /**
   * The model alone on the first {@link MODEL_ALONE_CHUNKS} of the same chunk texts, in the indexer's calls,
   * right after the run (same machine, same load): chunks a second. What the pipeline is held to.
   */
  modelAloneChunksPerSecond: number;
  listPagesNotChunked: number;
  /** Share of the chunked pages' markdown characters that the embedded and keyword text leaves out. */
  markdownCutShare: number;
  bytes: Bytes;
  load: string;
}

/** Chunk texts the model embeds alone after each run (a sample: the run itself embedded all of them). */
const MODEL_ALONE_CHUNKS = 480;

const num = (rows: Array<{ n: number | string | null }>) => Number(rows[0]?.n ?? 0);

/** The database's size by part (see the header); `walStart` and `sizeStart` from before the crawl. */
async function bytesByPart(
  db: Database,
  start: { wal: string; size: number },
  dataDir: string | null,
): Promise<Bytes> {
  const q = (sql: string) => db.query<{ n: number | string | null }>(sql).then(num);
  const vectors = await q('SELECT sum(pg_column_size(embedding))::float8 AS n FROM chunks');
  const hnsw = await q(
    `SELECT coalesce(sum(pg_relation_size(format('%I', indexname)::regclass)), 0)::float8 AS n
       FROM pg_indexes WHERE schemaname = 'public' AND indexname LIKE 'chunks_embedding_hnsw_%'`,
  );
  const text =
    (await q('SELECT coalesce(sum(pg_column_size(text)), 0)::float8 AS n FROM chunks')) +
    (await q('SELECT coalesce(sum(pg_column_size(content)), 0)::float8 AS n FROM items'));
  const keywordParts = {
    tsvectors:
      (await q('SELECT coalesce(sum(pg_column_size(tsv)), 0)::float8 AS n FROM chunks')) +
      (await q(
        'SELECT coalesce(sum(coalesce(pg_column_size(search_words), 0) + coalesce(pg_column_size(fields), 0)), 0)::float8 AS n FROM items',
      )),
    gin: await q(
      `SELECT (coalesce(pg_relation_size(to_regclass('chunks_tsv_idx')), 0)
               + pg_relation_size('items_search_words_idx'))::float8 AS n`,
    ),
    bm25: await q(
      `SELECT (pg_total_relation_size('bm25_postings') + pg_total_relation_size('bm25_terms')
               + pg_total_relation_size('bm25_org_stats'))::float8 AS n`,
    ),
  };
  const keyword = keywordParts.tsvectors + keywordParts.gin + keywordParts.bm25;
  const crawlState = await q(
    `SELECT (pg_total_relation_size('crawl_frontier') + pg_total_relation_size('crawl_pages')
             + pg_total_relation_size('crawl_texts') + pg_total_relation_size('crawl_patterns'))::float8 AS n`,
  );
  const database = (await q('SELECT pg_database_size(current_database())::float8 AS n')) - start.size;
  const wal = await db
    .query<{ n: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8 AS n', [
      start.wal,
    ])
    .then(num);
  return {
    vectors,
    hnsw,
    text,
    keyword,
    keywordParts,
    crawlState,
    wal,
    other: database - vectors - hnsw - text - keyword - crawlState,
    database,
    dataDir: dataDir ? dirBytes(dataDir) : null,
    walDir: dataDir ? dirBytes(path.join(dataDir, 'pg_wal')) : null,
    dataDirAfterCheckpoint: dataDir ? await db.query('CHECKPOINT').then(() => dirBytes(dataDir)) : null,
  };
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : e.isFile() ? statSync(p).size : 0;
  }
  return n;
}

/** The HTML file a crawled URL was served from (directory URLs: their index.html). */
function htmlFile(dir: string, url: string): string | null {
  const rel = decodeURIComponent(new URL(url).pathname).replace(/^\/+/, '');
  const file = path.join(dir, rel === '' || rel.endsWith('/') ? `${rel}index.html` : rel);
  return existsSync(file) ? file : null;
}

async function pollCrawl(t: TestApp, accepted: any): Promise<any> {
  let job = accepted;
  while (!['completed', 'failed', 'cancelled'].includes(job.status)) {
    await sleep(250);
    job = (await t.call('GET', `/api/connect/crawling/${accepted.id}`)).body;
  }
  if (job.status !== 'completed') throw new Error(`crawl ${job.status}: ${job.error_message}`);
  return job;
}

/** The model's own rate on the first stored pages' chunk texts, cut as the indexer cuts them. */
async function modelAloneRate(
  embedder: Embedder,
  items: Array<{ title: string; content: string }>,
): Promise<number> {
  const perItem: string[][] = [];
  let n = 0;
  for (const i of items) {
    if (n >= MODEL_ALONE_CHUNKS) break;
    const texts = chunkForIndexing(embedder, { title: i.title, content: i.content, source_type: 'crawl' })
      .map((c) => c.embedText)
      .slice(0, MODEL_ALONE_CHUNKS - n);
    perItem.push(texts);
    n += texts.length;
  }
  const { chunks, seconds } = await embedInRounds(embedder, perItem);
  return chunks / Math.max(0.001, seconds);
}

/** What-if runs: the write without one of its parts (the searches that need it would fail). */
async function leaveOut(db: Database, parts: Run['without'], dimensions: number): Promise<void> {
  if (parts.includes('hnsw')) await db.query(`DROP INDEX chunks_embedding_hnsw_${dimensions}`);
  if (parts.includes('bm25')) await db.query('ALTER TABLE chunks DISABLE TRIGGER chunks_bm25_insert');
  if (parts.includes('gin')) await db.query('DROP INDEX chunks_tsv_idx');
}

/** One run, in this process. */
async function measure(run: Run): Promise<Measured> {
  const dataDir = run.storage === 'pglite' ? mkdtempSync(path.join(os.tmpdir(), 'kb-searchable-')) : null;
  let indexer: Indexer | null = null;
  const t = await startTestApp(run.storage, {
    ...(dataDir ? { pgliteDir: dataDir } : {}),
    config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_CRAWL_FAST_HOSTS: '127.0.0.1' },
    parts: { onItemsChanged: () => indexer?.notify() },
  });
  const idle = new ModelIdle();
  const embedder: Embedder = run.model === 'real' ? await testEmbedder() : hashEmbedder();
  await t.service.embedding.use(embedder);
  await leaveOut(t.db, run.without, embedder.dimensions);
  indexer = new Indexer(t.db, idle.watch(embedder), { pollMs: 200 });
  const pool = t.service.startWorkers({ concurrency: 1, pollMs: 20, periodicTasks: [], listenUrl: null });
  try {
    const [start] = await t.db.query<{ wal: string; size: string }>(
      'SELECT pg_current_wal_lsn()::text AS wal, pg_database_size(current_database())::text AS size',
    );
    const startedAt = Date.now();
    if (run.indexing === 'during') indexer.start();
    const res = await t.call('POST', '/api/connect/crawling/', {
      body: { url: `${run.origin}/`, limit: 1000 },
    });
    if (res.status !== 200) throw new Error(`crawl not accepted: ${JSON.stringify(res.body)}`);
    const job = await pollCrawl(t, res.body);
    const crawlEnd = Date.parse(job.completed_at);
    const idleAtCrawlEnd = idle.ms();
    if (run.indexing === 'after') indexer.start();
    for (;;) {
      const [p] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM items WHERE indexing_status = 'pending'`,
      );
      if (p!.n === 0) break;
      await sleep(50);
    }
    const modelIdleAfterSeconds = (idle.ms() - idleAtCrawlEnd) / 1000;
    await indexer.stop();
    const items = await t.db.query<{
      title: string;
      source_url: string;
      content: string;
      chunks: number;
      indexed_at: Date | null;
    }>(
      `SELECT i.title, i.source_url, i.content, i.indexed_at,
              (SELECT count(*)::int FROM chunks AS c WHERE c.item_id = i.id) AS chunks
         FROM items AS i WHERE i.source_type = 'crawl' ORDER BY i.created_at, i.seq`,
    );
    const lastIndexed = Math.max(...items.map((i) => (i.indexed_at ? new Date(i.indexed_at).getTime() : 0)));
    const perPage = items.map((i) => i.chunks).sort((a, b) => a - b);
    const chunks = perPage.reduce((s, n) => s + n, 0);
    const chunked = items.filter((i) => i.chunks > 0);
    const markdownChars = chunked.reduce((s, i) => s + i.content.length, 0);
    const rankedChars = chunked.reduce((s, i) => s + rankingText(i.content).length, 0);
    const htmlBytes = items.reduce((s, i) => {
      const f = htmlFile(run.dir, i.source_url);
      return s + (f ? statSync(f).size : 0);
    }, 0);
    return {
      run: {
        site: run.site,
        model: run.model,
        storage: run.storage,
        indexing: run.indexing,
        without: run.without,
      },
      chunksPerSecond:
        chunks / Math.max(0.001, (lastIndexed - (run.indexing === 'after' ? crawlEnd : startedAt)) / 1000),
      pages: items.length,
      htmlBytes,
      chunks,
      chunksPerPage: {
        mean: chunks / Math.max(1, items.length),
        median: percentile(perPage, 50),
        p90: percentile(perPage, 90),
        max: perPage.at(-1) ?? 0,
      },
      crawlSeconds: (crawlEnd - startedAt) / 1000,
      searchableAfterSeconds: Math.max(0, (lastIndexed - crawlEnd) / 1000),
      modelIdleAfterSeconds,
      modelAloneChunksPerSecond: await modelAloneRate(embedder, items),
      listPagesNotChunked: items.filter((i) => i.chunks === 0 && isLinkListPage(i.content)).length,
      markdownCutShare: markdownChars === 0 ? 0 : 1 - rankedChars / markdownChars,
      bytes: await bytesByPart(t.db, { wal: start!.wal, size: Number(start!.size) }, dataDir),
      load: loadAverage(),
    };
  } finally {
    await indexer.stop();
    await pool.stop();
    await t.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

function runInChild(run: Run): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--run', JSON.stringify(run)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as Measured);
      else reject(new Error(`run ${JSON.stringify(run)} exited with ${code}: ${out.slice(-2000)}`));
    });
  });
}

const mib = (n: number) => (n / 2 ** 20).toFixed(1);
const kib = (n: number, pages: number) => (n / pages / 1024).toFixed(1);

function rows(ms: Measured[]): { time: Array<Record<string, string>>; bytes: Array<Record<string, string>> } {
  const time = ms.map((m) => ({
    site: m.run.site,
    model: m.run.model,
    storage: m.run.storage,
    indexing: m.run.indexing + (m.run.without.length ? ` without ${m.run.without.join('+')}` : ''),
    pages: String(m.pages),
    'crawl s': m.crawlSeconds.toFixed(1),
    'searchable after crawl s': m.searchableAfterSeconds.toFixed(1),
    'chunks/s (indexer start to searchable)': m.chunksPerSecond.toFixed(1),
    'model idle after s': m.run.model === 'real' ? m.modelIdleAfterSeconds.toFixed(1) : '-',
    'model alone chunks/s': m.run.model === 'real' ? m.modelAloneChunksPerSecond.toFixed(1) : '-',
    chunks: String(m.chunks),
    'chunks/page mean (median, p90, max)': `${m.chunksPerPage.mean.toFixed(1)} (${m.chunksPerPage.median}, ${m.chunksPerPage.p90}, ${m.chunksPerPage.max})`,
    'list pages not chunked': String(m.listPagesNotChunked),
    'markdown cut from ranking': `${(100 * m.markdownCutShare).toFixed(0)}%`,
    load: m.load,
  }));
  const bytes = ms.map((m) => {
    const b = m.bytes;
    const total = b.database + b.wal;
    return {
      site: m.run.site,
      model: m.run.model,
      storage: m.run.storage,
      'HTML KiB/page': kib(m.htmlBytes, m.pages),
      'vectors KiB/page': kib(b.vectors, m.pages),
      HNSW: kib(b.hnsw, m.pages),
      text: kib(b.text, m.pages),
      'keyword (tsv / GIN / BM25)': `${kib(b.keyword, m.pages)} (${kib(b.keywordParts.tsvectors, m.pages)} / ${kib(b.keywordParts.gin, m.pages)} / ${kib(b.keywordParts.bm25, m.pages)})`,
      'crawl state': kib(b.crawlState, m.pages),
      WAL: kib(b.wal, m.pages),
      other: kib(b.other, m.pages),
      'total KiB/page (x HTML)': `${kib(total, m.pages)} (${(total / Math.max(1, m.htmlBytes)).toFixed(1)})`,
      'data dir MiB (pg_wal; after CHECKPOINT)':
        b.dataDir === null
          ? '-'
          : `${mib(b.dataDir)} (${mib(b.walDir ?? 0)}; ${mib(b.dataDirAfterCheckpoint ?? 0)})`,
    };
  });
  return { time, bytes };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      run: { type: 'string' },
      site: { type: 'string', default: 'fastapi,docs500' },
      model: { type: 'string', default: 'real,hash' },
      storage: { type: 'string', default: 'pglite' },
      indexing: { type: 'string', default: 'during' },
      /** Comma list of what-if variants, each a run: `all` (nothing left out), `hnsw`, `bm25`, `gin`, or `+`-joined. */
      without: { type: 'string', default: 'all' },
      pages: { type: 'string', default: '500' },
    },
  });
  if (values.run) {
    process.stdout.write(`${JSON.stringify(await measure(JSON.parse(values.run) as Run))}\n`);
    process.exit(0);
  }
  const sites = values.site.split(',') as SiteName[];
  const models = values.model.split(',') as ModelName[];
  const storages = values.storage.split(',') as StorageMode[];
  const measured: Measured[] = [];
  for (const site of sites) {
    const generated = site === 'docs500' ? mkdtempSync(path.join(os.tmpdir(), 'kb-docs-site-')) : null;
    if (generated) writeDocsSite(generated, { pages: Number(values.pages) });
    const dir = generated ?? FASTAPI;
    const served = await serveSiteElsewhere(dir);
    try {
      for (const storage of storages)
        for (const model of models)
          for (const variant of values.without.split(',')) {
            const without = (variant === 'all' ? [] : variant.split('+')) as Run['without'];
            const indexing = values.indexing === 'after' ? 'after' : 'during';
            const m = await runInChild({
              site,
              model,
              storage,
              indexing,
              without,
              dir,
              origin: served.origin,
            });
            measured.push(m);
            process.stderr.write(`${JSON.stringify(m)}\n`);
          }
    } finally {
      await served.stop();
      if (generated) rmSync(generated, { recursive: true, force: true });
    }
  }
  const { time, bytes } = rows(measured);
  printTable('From crawl to searchable (fast pace, indexer embedding as pages arrive)', time);
  printTable('Bytes on disk per page, by part (KiB a page; WAL written during the run)', bytes);
  writeResult('crawl-searchable', measured);
}

await main();
