/**
 * Search quality on real documentation (`node bench/docs-quality.ts`): the FastAPI docs mirror (154 pages,
 * beside the checkout) crawled as a user would, then every question of bench/data/fastapi-questions.jsonl
 * asked in semantic and hybrid mode.
 *
 *   node bench/docs-quality.ts [--split tune|heldout|both] [--save-index DIR] [--limit N]
 *   node bench/docs-quality.ts --grid semantic|hybrid [--save-index DIR]
 *
 * --grid asks the tuning half only, once for each pair of page-signal weights (title, headings) of that
 * mode (src/search/page-signal.ts), and prints a table of them: how the weights are chosen.
 *
 * The question set was written by reading the pages, before any measurement, and is split half/half into
 * `tune` and `heldout` (a shuffle seeded with 31): choose parameters on `tune` only, judge on `heldout`.
 * Each question lists the page(s) that answer it (paths relative to the site root) and the passage that
 * does.
 *
 * Indexing: the site is served on loopback and crawled through the API and the job engine, with the indexer
 * embedding concurrently on the real local model (the fixture model, as bench/scifact.ts loads it). With
 * --save-index DIR the indexed PGlite data directory is kept under DIR, in a folder named by a hash of the
 * code that decides what is stored and indexed (src/crawler, src/ingest, src/embedding, src/db, src/lib, the
 * model's files): a changed pipeline indexes again, a change to ranking alone (src/search) reuses it.
 *
 * Scores, per mode and per half: a hit is a result whose item URL is one of the answer pages; results are
 * ranked as the search endpoint returns them (passages, limit 10), so three passages of one wrong page push
 * the right page down as they do for a user. hits@1, hits@3 (any hit among the first 1 or 3 results) and
 * MRR@10 (1 / rank of the first hit, 0 when none of the 10 is one). bench/results/docs-quality.json keeps,
 * per question and mode, the first hit's rank, the top results' pages and the top passage's first 200
 * characters, so a person can judge whether the top passage answers the question.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { Indexer } from '../src/ingest/indexer.ts';
import { PAGE_WEIGHTS } from '../src/search/page-signal.ts';
import { testEmbedder } from '../test/support/embedding.ts';
import { type TestApp, startTestApp } from '../test/support/harness.ts';
import { testModelDir } from '../test/support/model.ts';
import { serveDirectory } from '../test/support/sites.ts';
import { loadAverage, percentile, printTable, writeResult } from './lib.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SITE = fileURLToPath(new URL('../../shared/data/sites/fastapi-docs', import.meta.url));
const QUESTIONS = new URL('data/fastapi-questions.jsonl', import.meta.url);
/** The code whose change alters what is stored, chunked or embedded: a saved index is reused only if it is unchanged. */
const INGEST_CODE = ['src/crawler', 'src/ingest', 'src/embedding', 'src/db', 'src/lib', 'src/compose.ts'];
const MODES = ['semantic', 'hybrid'] as const;
const RESULTS = 10;
/** Crawl settings (part of the saved index's key): no politeness delay, four requests in flight, as bench/crawl.ts. */
const CRAWL = { minDelayMs: 0, perHostConcurrency: 4, limit: 1000 };

const { values } = parseArgs({
  options: {
    split: { type: 'string', default: 'both' },
    /** Keep the indexed data directory under DIR and reuse it while the ingest code is unchanged. */
    'save-index': { type: 'string' },
    /** Only the first N questions (a quick look; the figures to report use all). */
    limit: { type: 'string' },
    /** A mode whose page-signal weights are swept on the tuning half. */
    grid: { type: 'string' },
  },
});
const gridMode = values.grid === undefined ? undefined : z.enum(MODES).parse(values.grid);
const splitArg = gridMode ? 'tune' : z.enum(['tune', 'heldout', 'both']).parse(values.split);

const Question = z.object({
  id: z.string(),
  question: z.string().min(1),
  answers: z.array(z.string().min(1)).min(1),
  split: z.enum(['tune', 'heldout']),
  passage: z.string().optional(),
});
type Question = z.infer<typeof Question>;

const allQuestions = readFileSync(QUESTIONS, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => Question.parse(JSON.parse(l)));
for (const q of allQuestions)
  for (const a of q.answers)
    if (!existsSync(path.join(SITE, a))) throw new Error(`${q.id}: answer page ${a} is not in the site`);
let questions = allQuestions.filter((q) => splitArg === 'both' || q.split === splitArg);
if (values.limit) questions = questions.slice(0, Number(values.limit));

/** A page's path relative to the site root, from an item URL on whatever port the site was served. */
function pagePath(url: string): string {
  const p = decodeURIComponent(new URL(url).pathname).replace(/^\/+/, '');
  return p === '' || p.endsWith('/') ? `${p}index.html` : p;
}

function filesUnder(rel: string): string[] {
  const abs = path.join(ROOT, rel);
  if (!statSync(abs).isDirectory()) return [rel];
  return readdirSync(abs, { withFileTypes: true })
    .flatMap((e) => filesUnder(path.join(rel, e.name)))
    .sort();
}

/** Hash of the ingest code, the crawl settings below and the model's files: names the saved index. */
async function ingestKey(): Promise<string> {
  const h = createHash('sha256');
  for (const f of INGEST_CODE.flatMap(filesUnder)) h.update(f).update(readFileSync(path.join(ROOT, f)));
  const modelDir = await testModelDir();
  for (const f of readdirSync(modelDir).sort()) {
    const s = statSync(path.join(modelDir, f));
    if (s.isFile()) h.update(`${f}:${s.size}`);
  }
  h.update(JSON.stringify(CRAWL));
  return h.digest('hex').slice(0, 16);
}

interface IndexFigures {
  reused: boolean;
  crawlSeconds: number;
  indexSeconds: number;
  pages: number;
  chunks: number;
  chunksPerPage: { mean: number; median: number; p90: number; max: number };
}

/** Where the service's "items changed" goes: the indexer of a crawl in progress, else nowhere. */
let notifyIndexer: () => void = () => {};

/** Crawls the served site into `t` with the indexer embedding as pages arrive; returns when all are indexed. */
async function crawlAndIndex(t: TestApp): Promise<{ crawlSeconds: number; indexSeconds: number }> {
  const site = await serveDirectory(SITE);
  const embedder = await testEmbedder();
  await t.service.embedding.use(embedder);
  const indexer = new Indexer(t.db, embedder, { pollMs: 200 });
  notifyIndexer = () => indexer.notify();
  const pool = t.service.startWorkers({ concurrency: 1, pollMs: 20, periodicTasks: [], listenUrl: null });
  try {
    const start = performance.now();
    indexer.start();
    const res = await t.call('POST', '/api/connect/crawling/', {
      body: { url: `${site.origin}/`, limit: CRAWL.limit },
    });
    if (res.status !== 200) throw new Error(`crawl not accepted: ${JSON.stringify(res.body)}`);
    let job = res.body;
    while (!['completed', 'failed', 'cancelled'].includes(job.status)) {
      await sleep(250);
      job = (await t.call('GET', `/api/connect/crawling/${res.body.id}`)).body;
    }
    if (job.status !== 'completed') throw new Error(`crawl ${job.status}: ${job.error_message}`);
    const crawlSeconds = (performance.now() - start) / 1000;
    await indexer.stop();
    // A stopped indexer refuses work: a fresh one embeds whatever the crawl's last pages left pending.
    await new Indexer(t.db, embedder).drain();
    return { crawlSeconds, indexSeconds: (performance.now() - start) / 1000 };
  } finally {
    notifyIndexer = () => {};
    await pool.stop();
    await site.close();
  }
}
async function openIndexed(): Promise<{ t: TestApp; figures: IndexFigures; cleanup(): void }> {
  const key = await ingestKey();
  const base = values['save-index'] ?? fsTemp();
  const dir = path.join(base, `fastapi-${key}`);
  const done = path.join(dir, 'indexed.json');
  const reused = existsSync(done);
  if (!reused) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const t = await startTestApp('pglite', {
    pgliteDir: path.join(dir, 'pgdata'),
    config: { KB_CRAWL_ALLOW_PRIVATE: 'true' },
    parts: {
      crawler: { minDelayMs: CRAWL.minDelayMs, perHostConcurrency: CRAWL.perHostConcurrency },
      onItemsChanged: () => notifyIndexer(),
    },
  });
  let timing: { crawlSeconds: number; indexSeconds: number };
  if (reused) {
    timing = JSON.parse(readFileSync(done, 'utf8'));
    await t.service.embedding.use(await testEmbedder());
  } else {
    timing = await crawlAndIndex(t);
    writeFileSync(done, JSON.stringify(timing));
  }
  const perItem = await t.db.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM chunks c WHERE c.item_id = i.id)::int AS n
       FROM items i WHERE i.organization_id = $1 ORDER BY 1`,
    [t.orgA.id],
  );
  const counts = perItem.map((r) => r.n);
  const chunks = counts.reduce((s, n) => s + n, 0);
  const figures: IndexFigures = {
    reused,
    ...timing,
    pages: counts.length,
    chunks,
    chunksPerPage: {
      mean: chunks / Math.max(1, counts.length),
      median: percentile(counts, 50),
      p90: percentile(counts, 90),
      max: counts.at(-1) ?? 0,
    },
  };
  return {
    t,
    figures,
    cleanup: () => {
      if (!values['save-index']) rmSync(base, { recursive: true, force: true });
    },
  };
}

function fsTemp(): string {
  const dir = path.join(os.tmpdir(), `kb-docs-quality-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

interface Asked {
  /** 1-based rank of the first result on an answer page; null when none of the first RESULTS is. */
  rank: number | null;
  top: Array<{ page: string; title: string; chunk: number }>;
  topPassage: string;
}

async function ask(t: TestApp, q: Question, mode: (typeof MODES)[number]): Promise<Asked> {
  const res = await t.call('POST', '/api/consume/search', {
    body: { query: q.question, limit: RESULTS, mode, includeEmbedding: false },
  });
  if (res.status !== 200) throw new Error(`search failed: ${JSON.stringify(res.body)}`);
  const hits = res.body.result as Array<{
    source_url: string;
    title: string;
    chunk_index: number;
    chunk_plain_text: string;
  }>;
  const pages = hits.map((h) => pagePath(h.source_url));
  const at = pages.findIndex((p) => q.answers.includes(p));
  return {
    rank: at < 0 ? null : at + 1,
    top: hits.slice(0, 3).map((h, i) => ({ page: pages[i]!, title: h.title, chunk: h.chunk_index })),
    topPassage: (hits[0]?.chunk_plain_text ?? '').replace(/\s+/g, ' ').slice(0, 200),
  };
}

interface Scores {
  n: number;
  hits1: number;
  hits3: number;
  mrr10: number;
}

function score(ranks: Array<number | null>): Scores {
  const n = ranks.length;
  const share = (k: number) => ranks.filter((r) => r !== null && r <= k).length / Math.max(1, n);
  const mrr = ranks.reduce<number>((s, r) => s + (r === null ? 0 : 1 / r), 0) / Math.max(1, n);
  return { n, hits1: share(1), hits3: share(3), mrr10: mrr };
}

/** Tuning-half scores of `mode` for each pair of page weights; the weights in the code are restored after. */
async function sweepPageWeights(t: TestApp, mode: (typeof MODES)[number]): Promise<void> {
  const kept = { ...PAGE_WEIGHTS[mode] };
  const rows: Array<Record<string, string>> = [];
  const grid = {
    title: [0, 0.1, 0.2, 0.3, 0.4, 0.5],
    headings: [0, 0.04, 0.08, 0.12, 0.2, 0.3],
  };
  try {
    for (const title of grid.title) {
      for (const headings of grid.headings) {
        PAGE_WEIGHTS[mode] = { title, headings };
        const ranks: Array<number | null> = [];
        for (const q of questions) ranks.push((await ask(t, q, mode)).rank);
        const s = score(ranks);
        rows.push({
          title: String(title),
          headings: String(headings),
          'hits@1': s.hits1.toFixed(3),
          'hits@3': s.hits3.toFixed(3),
          'MRR@10': s.mrr10.toFixed(3),
        });
      }
    }
  } finally {
    PAGE_WEIGHTS[mode] = kept;
  }
  printTable(`${mode}: page weights on the tuning half (${questions.length} questions)`, rows);
}

const started = performance.now();
const { t, figures, cleanup } = await openIndexed();
try {
  console.log(
    `${figures.reused ? 'reused index' : 'crawled and indexed'}: ${figures.pages} pages, ${figures.chunks} chunks ` +
      `(per page: mean ${figures.chunksPerPage.mean.toFixed(1)}, median ${figures.chunksPerPage.median}, ` +
      `p90 ${figures.chunksPerPage.p90}, max ${figures.chunksPerPage.max}); crawl ${figures.crawlSeconds.toFixed(0)} s, ` +
      `searchable ${figures.indexSeconds.toFixed(0)} s after the crawl's start; ${questions.length} questions`,
  );
  if (gridMode) await sweepPageWeights(t, gridMode);
  else await measure(t, figures);
} finally {
  await t.close();
  cleanup();
}

/** Every question in both modes; the table, and per question the results, in bench/results. */
async function measure(t: TestApp, figures: IndexFigures): Promise<void> {
  const perQuestion: Array<Question & { modes: Record<string, Asked> }> = [];
  const msPerQuery: Record<string, number> = {};
  for (const mode of MODES) {
    const t0 = performance.now();
    for (const [i, q] of questions.entries()) {
      const asked = await ask(t, q, mode);
      perQuestion[i] ??= { ...q, modes: {} };
      perQuestion[i]!.modes[mode] = asked;
    }
    msPerQuery[mode] = (performance.now() - t0) / Math.max(1, questions.length);
  }
  const halves = splitArg === 'both' ? (['tune', 'heldout', 'all'] as const) : ([splitArg] as const);
  const summary: Record<string, Record<string, Scores>> = {};
  const rows: Array<Record<string, string>> = [];
  for (const mode of MODES) {
    summary[mode] = {};
    for (const half of halves) {
      const qs = perQuestion.filter((q) => half === 'all' || q.split === half);
      const s = score(qs.map((q) => q.modes[mode]!.rank));
      summary[mode]![half] = s;
      rows.push({
        mode,
        half,
        questions: String(s.n),
        'hits@1': s.hits1.toFixed(3),
        'hits@3': s.hits3.toFixed(3),
        'MRR@10': s.mrr10.toFixed(3),
        'ms/query': msPerQuery[mode]!.toFixed(0),
      });
    }
  }
  printTable(`FastAPI docs: ${questions.length} questions (load ${loadAverage()})`, rows);
  const seconds = (performance.now() - started) / 1000;
  console.log(`\ntotal ${seconds.toFixed(0)} s; per question: bench/results/docs-quality.json`);
  writeResult('docs-quality', { split: splitArg, index: figures, summary, msPerQuery, seconds, perQuestion });
}
