/**
 * Crawler benchmark (`node bench/crawl.ts`): prints a table, writes bench/results/crawl.json.
 *
 * The fastapi-docs mirror (154 pages, sitemap, robots.txt) served on loopback, crawled end to end through
 * the API and the job engine:
 * - `crawl`: fetch → extract → store (items pending), embedding excluded; PGlite and native Postgres;
 * - `crawl + embed`: the same with the indexer embedding concurrently (real local model), timed until the
 *   last chunk is stored, then the model alone on the same chunk texts (as the indexer cuts and batches
 *   them): "vs model" is the pipeline's chunks/s (pages/s x chunks/page) over the model's own;
 * - `crawl, default politeness`: the production per-host settings (2 in flight, 100 ms between starts);
 * - ceiling: `wget` (one connection, sequential) and `curl --parallel` (4 connections) fetching every
 *   sitemap URL on the same machine.
 * Each scenario runs in its own process, so peak RSS is that scenario's. Event-loop delay (max, p99)
 * during the crawl shows whether the API stays responsive while pages are parsed.
 *
 * The generated store catalogue (test/support/catalogue-site.ts: 200 products, 50 categories, 1,800
 * variant pages and 150 sorted listings without canonical links), embedding excluded:
 * - `limit` = the distinct pages (251), path-style variants listed in the sitemap after their product (the
 *   hard case: only the URL patterns' collapses tell variants from products), and query-style variants
 *   found by links only;
 * - `limit` 1000 (more than the site has: every URL is fetched, the budget caps nothing);
 * and two stores of other shapes, `limit` = their distinct pages: catalogue-store.ts (120 products, variants
 * reachable by links only, at the products' depth, product pages with reviews the variants lack) and
 * catalogue-listed.ts (120 products behind one script with query variants, listed in the sitemap before
 * their product, faceted listings).
 * Rows: items stored, distinct among them, products reached (stored under their own URL), fetches and
 * fetches per stored item, near-duplicates collapsed, pages fetched per second.
 *
 * A generated documentation site (test/support/docs-site.ts: 500 pages of their own prose in a
 * generator's layout, found by links), served by a process of its own: `wget -r` (HTML only, one
 * connection, no delay) against the crawl at the default pace (2 in flight, 100 ms) and at the fastest
 * the operator allows (its host in KB_CRAWL_FAST_HOSTS: 8 in flight, no delay), PGlite, embedding
 * excluded; pages/s, the share of wget's rate, and CPU ms/page (wget's from its rusage). With
 * `docs500-scrapy` in BENCH_SCENARIOS, Scrapy on the same served site in the same run
 * (bench/scrapy_docs_spider.py: 8 in flight, no delay, links and title only; pinned venv from
 * scripts/fixtures/scrapy.sh), its CPU from its rusage, whole process and from the spider's opening.
 *
 * How long after a crawl its pages are searchable, chunks a page and bytes on disk by part:
 * bench/crawl-searchable.ts.
 *
 * Options: BENCH_SCENARIOS (comma list of scenario ids), BENCH_CRAWL_CONCURRENCY (requests in flight to the
 * site, default 4, as curl's connections), BENCH_PAGE_CONCURRENCY (pages in flight per crawl, from claim to
 * commit; default the service's, 8),
 * BENCH_PGLITE_DIR=1 (PGlite scenarios in a data directory, as `kb serve` runs, instead of in memory),
 * BENCH_CPU_PROF=DIR (each scenario's process writes a CPU profile per thread into DIR), BENCH_DOCS_PAGES
 * (pages of the generated documentation site, default 500; the scenario ids keep their name).
 * "app CPU ms/page" is the CPU time of the scenario's process (both threads; not Postgres' backends) per page:
 * steadier than pages/s on a machine whose speed drifts from run to run.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { CrawlerOverrides } from '../src/crawler/runtime.ts';
import { defaultCrawlerSettings } from '../src/crawler/settings.ts';
import type { Database } from '../src/db/database.ts';
import type { Embedder } from '../src/embedding/types.ts';
import { chunkForIndexing } from '../src/ingest/chunk.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { serveListedStore } from '../test/support/catalogue-listed.ts';
import { serveCatalogue } from '../test/support/catalogue-site.ts';
import { serveStore } from '../test/support/catalogue-store.ts';
import { testEmbedder } from '../test/support/embedding.ts';
import { type StorageMode, startTestApp } from '../test/support/harness.ts';
import { writeDocsSite } from '../test/support/docs-site.ts';
import { serveDirectory } from '../test/support/sites.ts';
import { embedInRounds, ModelIdle, printTable, serveSiteElsewhere, writeResult } from './lib.ts';

const SITE = fileURLToPath(new URL('../../shared/data/sites/fastapi-docs', import.meta.url));
const CONCURRENCY = Number(process.env['BENCH_CRAWL_CONCURRENCY'] ?? 4);
/** Pages of the generated documentation site (BENCH_DOCS_PAGES; its generator makes a few fewer). */
const DOCS_PAGES = Number(process.env['BENCH_DOCS_PAGES'] ?? 500);
const PAGE_CONCURRENCY = Number(
  process.env['BENCH_PAGE_CONCURRENCY'] ?? defaultCrawlerSettings().pageConcurrency,
);

interface Scenario {
  id: string;
  label: string;
  storage: StorageMode | '-';
  embed: boolean;
  crawler: CrawlerOverrides;
}

const FAST: CrawlerOverrides = {
  minDelayMs: 0,
  perHostConcurrency: CONCURRENCY,
  pageConcurrency: PAGE_CONCURRENCY,
};
const SCENARIOS: Scenario[] = [
  { id: 'crawl-pglite', label: 'crawl (embedding excluded)', storage: 'pglite', embed: false, crawler: FAST },
  {
    id: 'crawl-postgres',
    label: 'crawl (embedding excluded)',
    storage: 'postgres',
    embed: false,
    crawler: FAST,
  },
  { id: 'crawl-embed-pglite', label: 'crawl + embed', storage: 'pglite', embed: true, crawler: FAST },
  { id: 'crawl-embed-postgres', label: 'crawl + embed', storage: 'postgres', embed: true, crawler: FAST },
  {
    id: 'crawl-polite-pglite',
    label: 'crawl, default politeness',
    storage: 'pglite',
    embed: false,
    crawler: {},
  },
];

interface Measured {
  id: string;
  /** The model alone on the same chunk texts afterwards (embedding scenarios; 0 otherwise). */
  rawChunks: number;
  rawSeconds: number;
  pages: number;
  seconds: number;
  crawlSeconds: number;
  /** From the crawl's request to its first stored page. */
  firstPageSeconds: number;
  chunks: number;
  peakRssMiB: number;
  /** Peak RSS once the app was up (PGlite's start alone peaks near 1 GiB). */
  startRssMiB: number;
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
  /** CPU time of this process (every thread) from the crawl's request until it completed. */
  crawlCpuSeconds: number;
  /** Time the model had no call of the indexer to work on, while the crawl ran and after it (embed scenarios). */
  modelIdleCrawlSeconds: number;
  modelIdleAfterSeconds: number;
}

/** One scenario, in this process (the parent spawns one process per scenario). */
async function runScenario(s: Scenario): Promise<Measured> {
  const site = await serveDirectory(SITE);
  let indexer: Indexer | null = null;
  // PGlite in memory (as the tests run it), or with BENCH_PGLITE_DIR=1 in a data directory (as `kb serve`).
  const dataDir =
    s.storage === 'pglite' && process.env['BENCH_PGLITE_DIR']
      ? mkdtempSync(path.join(os.tmpdir(), 'kb-crawl-pglite-'))
      : null;
  const t = await startTestApp(s.storage as StorageMode, {
    ...(dataDir ? { pgliteDir: dataDir } : {}),
    config: { KB_CRAWL_ALLOW_PRIVATE: 'true' },
    parts: {
      crawler: s.crawler,
      // The benchmark drives its own indexer (below) so it can time it.
      onItemsChanged: () => indexer?.notify(),
    },
  });
  const startRssMiB = process.resourceUsage().maxRSS / 1024;
  const idle = new ModelIdle();
  if (s.embed) {
    const embedder = await testEmbedder();
    await t.service.embedding.use(embedder);
    indexer = new Indexer(t.db, idle.watch(embedder), { pollMs: 200 });
  }
  const pool = t.service.startWorkers({ concurrency: 1, pollMs: 20, periodicTasks: [], listenUrl: null });
  const loop = monitorEventLoopDelay({ resolution: 10 });
  try {
    const start = performance.now();
    const startedAt = Date.now();
    const cpuAtStart = process.cpuUsage();
    const idleAtStart = idle.ms();
    loop.enable();
    indexer?.start();
    const res = await t.call('POST', '/api/connect/crawling/', {
      body: { url: `${site.origin}/`, limit: 1000 },
    });
    if (res.status !== 200) throw new Error(`crawl not accepted: ${JSON.stringify(res.body)}`);
    const job = await awaitCrawl(t, res.body);
    // The job's own end (completed_at, ms) rather than when a poll saw it: polls are a user's, every
    // 250 ms, and each costs the service statements and an HTTP request (at 20 ms they were ~8% of a
    // PGlite crawl's main thread).
    const crawlSeconds = (Date.parse(job.completed_at) - startedAt) / 1000;
    const idleInCrawl = idle.ms() - idleAtStart;
    const cpu = process.cpuUsage(cpuAtStart);
    loop.disable();
    if (indexer) {
      for (;;) {
        const [p] = await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM items WHERE indexing_status = 'pending'`,
        );
        if (p!.n === 0) break;
        await sleep(50);
      }
    }
    const seconds = indexer ? (performance.now() - start) / 1000 : crawlSeconds;
    const idleTotal = idle.ms() - idleAtStart;
    const [c] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM chunks');
    // When the first page was stored: what a crawl spends before its pages flow (the job's pick-up,
    // robots.txt, the start page, the extraction thread's start).
    const [first] = await t.db.query<{ at: Date }>(
      `SELECT min(created_at) AS at FROM items WHERE source_type = 'crawl'`,
    );
    const pages = (job.outcomes.created ?? 0) as number;
    // The reference for the pipeline's rate: the model's own rate on the same texts, measured after the
    // pipeline in this process with nothing else running: the stored pages cut as the indexer cuts them, one
    // call per 16 items.
    const raw = indexer ? await rawModelRate(t.db, await testEmbedder()) : null;
    return {
      rawChunks: raw?.chunks ?? 0,
      rawSeconds: raw?.seconds ?? 0,
      id: s.id,
      pages,
      seconds,
      crawlSeconds,
      firstPageSeconds: (new Date(first!.at).getTime() - startedAt) / 1000,
      chunks: c!.n,
      peakRssMiB: process.resourceUsage().maxRSS / 1024,
      startRssMiB,
      crawlCpuSeconds: (cpu.user + cpu.system) / 1e6,
      modelIdleCrawlSeconds: idleInCrawl / 1000,
      modelIdleAfterSeconds: (idleTotal - idleInCrawl) / 1000,
      loopDelayMaxMs: loop.max / 1e6,
      loopDelayP99Ms: loop.percentile(99) / 1e6,
    };
  } finally {
    await indexer?.stop();
    await pool.stop();
    await t.close();
    await site.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Polls a crawl as a user's client would (every 250 ms) until it ends; its `completed_at` says when. */
async function awaitCrawl(t: Awaited<ReturnType<typeof startTestApp>>, accepted: any): Promise<any> {
  let job = accepted;
  while (!['completed', 'failed', 'cancelled'].includes(job.status)) {
    await sleep(250);
    job = (await t.call('GET', `/api/connect/crawling/${accepted.id}`)).body;
  }
  if (job.status !== 'completed') throw new Error(`crawl ${job.status}: ${job.error_message}`);
  return job;
}

/** The raw model on the crawled items' chunk texts, in the indexer's calls (one per round of its items). */
async function rawModelRate(db: Database, embedder: Embedder): Promise<{ chunks: number; seconds: number }> {
  const items = await db.query<{ title: string; content: string }>(
    `SELECT title, content FROM items WHERE source_type = 'crawl' ORDER BY created_at, seq`,
  );
  const perItem = items.map((i) => chunkForIndexing(embedder, i).map((c) => c.embedText));
  return embedInRounds(embedder, perItem);
}

/** The ceiling: a plain client fetching every sitemap URL (no parsing, no storage). */
async function plainFetch(tool: 'wget' | 'curl'): Promise<{ pages: number; seconds: number }> {
  const site = await serveDirectory(SITE);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kb-crawl-bench-'));
  try {
    const sitemap = readFileSync(path.join(SITE, 'sitemap.xml'), 'utf8');
    const urls = [...sitemap.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) =>
      m[1]!.replace('http://127.0.0.1:8000', site.origin),
    );
    const list = path.join(dir, 'urls.txt');
    writeFileSync(list, `${urls.join('\n')}\n`);
    const start = performance.now();
    if (tool === 'wget') {
      await promisify(execFile)('wget', ['-q', '-O', '/dev/null', '-i', list]);
    } else {
      const config = path.join(dir, 'curl.cfg');
      writeFileSync(config, urls.map((u) => `url = "${u}"\noutput = "/dev/null"\n`).join(''));
      await promisify(execFile)('curl', [
        '-s',
        '--parallel',
        '--parallel-max',
        String(CONCURRENCY),
        '-K',
        config,
      ]);
    }
    return { pages: urls.length, seconds: (performance.now() - start) / 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await site.close();
  }
}

interface CatalogueScenario {
  id: string;
  /** Which generated site: catalogue-site.ts (default), catalogue-store.ts or catalogue-listed.ts. */
  shape?: 'store' | 'listed';
  storage: StorageMode;
  variantUrls: 'query' | 'path';
  sitemap: 'none' | 'all';
  /** null: the catalogue's distinct pages. */
  limit: number | null;
}

const CATALOGUE_SCENARIOS: CatalogueScenario[] = [
  { id: 'catalogue-path-pglite', storage: 'pglite', variantUrls: 'path', sitemap: 'all', limit: null },
  { id: 'catalogue-path-postgres', storage: 'postgres', variantUrls: 'path', sitemap: 'all', limit: null },
  { id: 'catalogue-query-postgres', storage: 'postgres', variantUrls: 'query', sitemap: 'none', limit: null },
  { id: 'catalogue-1000-postgres', storage: 'postgres', variantUrls: 'query', sitemap: 'all', limit: 1000 },
  // The variant fields below only label these rows: each store's shape is its own.
  {
    id: 'store-links-postgres',
    shape: 'store',
    storage: 'postgres',
    variantUrls: 'path',
    sitemap: 'none',
    limit: null,
  },
  {
    id: 'store-listed-postgres',
    shape: 'listed',
    storage: 'postgres',
    variantUrls: 'query',
    sitemap: 'all',
    limit: null,
  },
];

/** The label of a catalogue scenario's row. */
function catalogueLabel(c: CatalogueScenario): string {
  if (c.shape === 'store') return 'store: variants by links only, reviews (catalogue-store.ts)';
  if (c.shape === 'listed') return 'store: query variants in the sitemap first, facets (catalogue-listed.ts)';
  return `catalogue: ${c.variantUrls} variants, sitemap ${c.sitemap}`;
}

interface CatalogueMeasured {
  id: string;
  limit: number;
  sitePages: number;
  /** Products the site has. */
  productsTotal: number;
  items: number;
  distinct: number;
  products: number;
  productsOwnUrl: number;
  fetches: number;
  nearDuplicates: number;
  seconds: number;
}

/** One catalogue crawl, in this process. */
async function runCatalogue(c: CatalogueScenario): Promise<CatalogueMeasured> {
  const site =
    c.shape === 'store'
      ? await serveStore()
      : c.shape === 'listed'
        ? await serveListedStore()
        : await serveCatalogue({ variantUrls: c.variantUrls, sitemap: c.sitemap });
  const t = await startTestApp(c.storage, {
    config: { KB_CRAWL_ALLOW_PRIVATE: 'true' },
    parts: { crawler: FAST },
  });
  const pool = t.service.startWorkers({ concurrency: 1, pollMs: 20, periodicTasks: [], listenUrl: null });
  try {
    const limit = c.limit ?? site.distinctPages;
    const startedAt = Date.now();
    const res = await t.call('POST', '/api/connect/crawling/', { body: { url: `${site.origin}/`, limit } });
    if (res.status !== 200) throw new Error(`crawl not accepted: ${JSON.stringify(res.body)}`);
    const job = await awaitCrawl(t, res.body);
    const seconds = (Date.parse(job.completed_at) - startedAt) / 1000;
    const items = await t.db.query<{ url: string }>(
      `SELECT source_url AS url FROM items WHERE source_type = 'crawl'`,
    );
    const contents = items.map((i) => site.contentOf(i.url));
    const paths = new Set(items.map((i) => new URL(i.url).pathname + new URL(i.url).search));
    return {
      id: c.id,
      limit,
      sitePages: site.totalPages,
      productsTotal: site.productPaths.length,
      items: items.length,
      distinct: new Set(contents.filter((x) => x !== null)).size,
      products: new Set(contents.filter((x) => x?.startsWith('product:'))).size,
      productsOwnUrl: site.productPaths.filter((p) => paths.has(p)).length,
      fetches: job.fetched_pages,
      nearDuplicates: job.outcomes.near_duplicate ?? 0,
      seconds,
    };
  } finally {
    await pool.stop();
    await t.close();
    await site.close();
  }
}

interface DocsScenario {
  id: string;
  label: string;
  /** The operator's settings of the scenario (its pace). */
  config: Record<string, string>;
}

const DOCS_SCENARIOS: DocsScenario[] = [
  { id: 'docs500-default', label: 'crawl, default pace (2 in flight, 100 ms)', config: {} },
  {
    id: 'docs500-fast',
    label: 'crawl, fast host (KB_CRAWL_FAST_HOSTS: 8 in flight, 0 ms)',
    config: { KB_CRAWL_FAST_HOSTS: '127.0.0.1' },
  },
];

interface DocsMeasured {
  id: string;
  pages: number;
  seconds: number;
  cpuSeconds: number;
}

/** One crawl of the generated docs site (served by another process at BENCH_DOCS_ORIGIN), in this process. */
async function runDocs(d: DocsScenario): Promise<DocsMeasured> {
  const origin = process.env['BENCH_DOCS_ORIGIN']!;
  const t = await startTestApp('pglite', { config: { KB_CRAWL_ALLOW_PRIVATE: 'true', ...d.config } });
  const pool = t.service.startWorkers({ concurrency: 1, pollMs: 20, periodicTasks: [], listenUrl: null });
  try {
    const startedAt = Date.now();
    const cpuAtStart = process.cpuUsage();
    const res = await t.call('POST', '/api/connect/crawling/', {
      body: { url: `${origin}/`, limit: 10_000 },
    });
    if (res.status !== 200) throw new Error(`crawl not accepted: ${JSON.stringify(res.body)}`);
    const job = await awaitCrawl(t, res.body);
    const cpu = process.cpuUsage(cpuAtStart);
    return {
      id: d.id,
      pages: (job.outcomes.created ?? 0) as number,
      seconds: (Date.parse(job.completed_at) - startedAt) / 1000,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
    };
  } finally {
    await pool.stop();
    await t.close();
  }
}

/** The CPU seconds of a `bash -c '...; times'` run's children: `times` prints the shell's, then theirs. */
function childrenCpuSeconds(stdout: string): number {
  const children = stdout.trim().split('\n').at(-1) ?? '';
  return [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce(
    (sum, m) => sum + Number(m[1]) * 60 + Number(m[2]),
    0,
  );
}

/** `wget -r` of the site, HTML only: its pages, seconds and CPU seconds (its own rusage, via `times`). */
async function wgetRecursive(
  origin: string,
): Promise<{ pages: number; seconds: number; cpuSeconds: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kb-wget-'));
  try {
    const start = performance.now();
    const { stdout } = await promisify(execFile)('bash', [
      '-c',
      'wget -r -l inf -q -nH -P "$1" -R "*.css,*.js,*.png,*.svg,*.ico,*.xml" "$2/"; times',
      'wget-r',
      dir,
      origin,
    ]);
    const seconds = (performance.now() - start) / 1000;
    const cpuSeconds = childrenCpuSeconds(stdout);
    const listed = await promisify(execFile)('find', [dir, '-name', '*.html']);
    return { pages: listed.stdout.trim().split('\n').filter(Boolean).length, seconds, cpuSeconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ScrapyMeasured {
  pages: number;
  /** The whole process: the interpreter's start-up and Scrapy's imports included. */
  seconds: number;
  cpuSeconds: number;
  /** From the spider's opening to its closing, as the spider measures its own process. */
  crawlSeconds: number;
  crawlCpuSeconds: number;
}

/**
 * Scrapy on the site (bench/scrapy_docs_spider.py in the venv of scripts/fixtures/scrapy.sh): its pages,
 * seconds and CPU seconds (its rusage, via `times`); the reason instead when the venv cannot be built.
 */
async function scrapyRecursive(origin: string): Promise<ScrapyMeasured | string> {
  let python: string;
  try {
    const fixture = await promisify(execFile)(
      path.join(import.meta.dirname, '../scripts/fixtures/scrapy.sh'),
    );
    python = fixture.stdout.trim().split('\n').at(-1) ?? '';
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? err).trim();
    return `not measured: scripts/fixtures/scrapy.sh failed (${stderr.split('\n').at(-1)?.slice(0, 160)})`;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kb-scrapy-'));
  try {
    const items = path.join(dir, 'items.jsonl');
    const start = performance.now();
    const { stdout, stderr } = await promisify(execFile)('bash', [
      '-c',
      '"$1" "$2" "$3" "$4"; times',
      'scrapy',
      python,
      path.join(import.meta.dirname, 'scrapy_docs_spider.py'),
      origin,
      items,
    ]);
    const seconds = (performance.now() - start) / 1000;
    // The spider prints its own figures when it closes; a spider that failed prints none.
    const printed = stdout.split('\n').find((l) => l.startsWith('{'));
    if (!printed)
      return `not measured: the spider failed (${stderr.trim().split('\n').at(-1)?.slice(0, 160)})`;
    const spider = JSON.parse(printed) as { crawlSeconds: number; crawlCpuSeconds: number };
    return {
      pages: readFileSync(items, 'utf8').split('\n').filter(Boolean).length,
      seconds,
      cpuSeconds: childrenCpuSeconds(stdout),
      crawlSeconds: spider.crawlSeconds,
      crawlCpuSeconds: spider.crawlCpuSeconds,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The row of Scrapy on the docs site, beside wget's and the crawl's. */
function scrapyRow(m: ScrapyMeasured | string, wgetRate: number): Record<string, string> {
  const scenario = 'Scrapy (defaults; 8 in flight, 0 ms; links and title only)';
  if (typeof m === 'string')
    return {
      scenario: `${scenario}: ${m}`,
      pages: '-',
      'pages/s': '-',
      'of wget': '-',
      seconds: '-',
      'CPU ms/page': '-',
    };
  return {
    scenario,
    pages: String(m.pages),
    'pages/s': (m.pages / m.seconds).toFixed(1),
    'of wget': (m.pages / m.seconds / wgetRate).toFixed(2),
    // In brackets: from the spider's opening to its closing (no interpreter start-up, no imports).
    seconds: `${m.seconds.toFixed(2)} (crawl ${m.crawlSeconds.toFixed(2)})`,
    'CPU ms/page': `${((1000 * m.cpuSeconds) / m.pages).toFixed(1)} (crawl ${((1000 * m.crawlCpuSeconds) / m.pages).toFixed(1)})`,
  };
}

/** The docs-site rows: wget -r, then each pace, then Scrapy when asked for, against one server process. */
async function docsRows(wanted: string[] | undefined, raw: Record<string, unknown>): Promise<void> {
  const scenarios = DOCS_SCENARIOS.filter((d) => !wanted || wanted.includes(d.id));
  // Scrapy only when the scenario list names it: it needs a venv built from PyPI.
  const withScrapy = wanted?.includes('docs500-scrapy') ?? false;
  if (scenarios.length === 0 && !withScrapy) return;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kb-docs-site-'));
  const written = writeDocsSite(dir, { pages: DOCS_PAGES });
  const site = await serveSiteElsewhere(dir);
  try {
    const wget = await wgetRecursive(site.origin);
    raw['docs500-wget'] = wget;
    const wgetRate = wget.pages / wget.seconds;
    const rows: Array<Record<string, string>> = [
      {
        scenario: 'wget -r (HTML only, 1 connection)',
        pages: String(wget.pages),
        'pages/s': wgetRate.toFixed(1),
        'of wget': '1.00',
        seconds: wget.seconds.toFixed(2),
        'CPU ms/page': ((1000 * wget.cpuSeconds) / wget.pages).toFixed(1),
      },
    ];
    process.env['BENCH_DOCS_ORIGIN'] = site.origin;
    for (const d of scenarios) {
      const m = await spawnScenario<DocsMeasured>(d.id);
      raw[d.id] = m;
      rows.push({
        scenario: d.label,
        pages: String(m.pages),
        'pages/s': (m.pages / m.seconds).toFixed(1),
        'of wget': (m.pages / m.seconds / wgetRate).toFixed(2),
        seconds: m.seconds.toFixed(2),
        'CPU ms/page': ((1000 * m.cpuSeconds) / m.pages).toFixed(1),
      });
    }
    if (withScrapy) {
      const scrapy = await scrapyRecursive(site.origin);
      raw['docs500-scrapy'] = scrapy;
      rows.push(scrapyRow(scrapy, wgetRate));
    }
    printTable(
      `Crawling a generated documentation site (${written.pages} pages, links only), PGlite, embedding excluded; the site served by another process`,
      rows,
    );
  } finally {
    await site.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function spawnScenario<T = Measured>(id: string): Promise<T> {
  return new Promise((resolve, reject) => {
    // BENCH_CPU_PROF=DIR: each scenario's process writes a V8 CPU profile per thread (main, PGlite's,
    // extraction's) into DIR, for `node --cpu-prof`'s usual tools.
    const prof = process.env['BENCH_CPU_PROF'];
    const flags = prof ? ['--cpu-prof', '--cpu-prof-dir', path.join(prof, id)] : [];
    const child = spawn(process.execPath, [...flags, fileURLToPath(import.meta.url), '--scenario', id], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as T);
      else reject(new Error(`scenario ${id} exited with ${code}: ${out.slice(-2000)}`));
    });
  });
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--scenario');
  if (i >= 0) {
    const d = DOCS_SCENARIOS.find((x) => x.id === process.argv[i + 1]);
    if (d) {
      process.stdout.write(`${JSON.stringify(await runDocs(d))}\n`);
      process.exit(0);
    }
    const c = CATALOGUE_SCENARIOS.find((x) => x.id === process.argv[i + 1]);
    if (c) {
      process.stdout.write(`${JSON.stringify(await runCatalogue(c))}\n`);
      process.exit(0);
    }
    const s = SCENARIOS.find((x) => x.id === process.argv[i + 1]);
    if (!s) throw new Error(`unknown scenario ${process.argv[i + 1]}`);
    process.stdout.write(`${JSON.stringify(await runScenario(s))}\n`);
    process.exit(0);
  }
  const wanted = process.env['BENCH_SCENARIOS']?.split(',');
  const rows: Array<Record<string, string>> = [];
  const raw: Record<string, unknown> = {};
  // The ceilings go with the fastapi-docs rows only.
  const ceilings = SCENARIOS.some((x) => !wanted || wanted.includes(x.id)) ? (['wget', 'curl'] as const) : [];
  for (const tool of ceilings) {
    const r = await plainFetch(tool);
    raw[tool] = r;
    rows.push({
      scenario:
        tool === 'wget' ? 'ceiling: wget -i (1 connection)' : `ceiling: curl --parallel (${CONCURRENCY})`,
      storage: '-',
      pages: String(r.pages),
      'pages/s': (r.pages / r.seconds).toFixed(1),
      seconds: r.seconds.toFixed(2),
      'first page s': '-',
      'app CPU ms/page': '-',
      chunks: '-',
      'chunks/s (model alone)': '-',
      'vs model': '-',
      'model idle s (crawl / after)': '-',
      'peak RSS MiB (app start)': '-',
      'loop delay max/p99 ms': '-',
    });
  }
  for (const s of SCENARIOS) {
    if (wanted && !wanted.includes(s.id)) continue;
    const m = await spawnScenario(s.id);
    raw[s.id] = m;
    rows.push({
      scenario: s.label,
      storage: s.storage,
      pages: String(m.pages),
      'pages/s': (m.pages / m.seconds).toFixed(1),
      seconds: s.embed
        ? `${m.seconds.toFixed(1)} (crawl ${m.crawlSeconds.toFixed(1)})`
        : m.seconds.toFixed(2),
      'first page s': m.firstPageSeconds.toFixed(2),
      // Both threads of the service's process (not Postgres' backends): steadier than pages/s on a VM
      // whose speed drifts. Up to a poll's 250 ms of idle polling at the end is included.
      'app CPU ms/page': s.embed ? '-' : ((1000 * m.crawlCpuSeconds) / m.pages).toFixed(1),
      chunks: s.embed ? String(m.chunks) : '-',
      // pages/s x chunks/page = chunks/s of the whole pipeline, against the model alone on the same texts.
      'chunks/s (model alone)': s.embed
        ? `${(m.chunks / m.seconds).toFixed(1)} (${(m.rawChunks / m.rawSeconds).toFixed(1)})`
        : '-',
      'vs model': s.embed ? (m.chunks / m.seconds / (m.rawChunks / m.rawSeconds)).toFixed(2) : '-',
      'model idle s (crawl / after)': s.embed
        ? `${m.modelIdleCrawlSeconds.toFixed(1)} / ${m.modelIdleAfterSeconds.toFixed(1)}`
        : '-',
      'peak RSS MiB (app start)': `${m.peakRssMiB.toFixed(0)} (${m.startRssMiB.toFixed(0)})`,
      'loop delay max/p99 ms': `${m.loopDelayMaxMs.toFixed(0)} / ${m.loopDelayP99Ms.toFixed(0)}`,
    });
  }
  if (rows.length > 2)
    printTable(
      `Crawling fastapi-docs (154 pages) end to end; requests in flight to the site ${CONCURRENCY}, pages in flight ${PAGE_CONCURRENCY}`,
      rows,
    );
  const catalogueRows: Array<Record<string, string>> = [];
  for (const c of CATALOGUE_SCENARIOS) {
    if (wanted && !wanted.includes(c.id)) continue;
    const m = await spawnScenario<CatalogueMeasured>(c.id);
    raw[c.id] = m;
    catalogueRows.push({
      scenario: catalogueLabel(c),
      storage: c.storage,
      'site pages': String(m.sitePages),
      limit: String(m.limit),
      items: String(m.items),
      'distinct / items': `${m.distinct} / ${m.items} (${((100 * m.distinct) / Math.max(1, m.items)).toFixed(1)}%)`,
      'products reached (own URL)': `${m.products} (${m.productsOwnUrl}) of ${m.productsTotal}`,
      fetches: String(m.fetches),
      'fetches / item': (m.fetches / Math.max(1, m.items)).toFixed(2),
      'near-dups': String(m.nearDuplicates),
      'fetches/s': (m.fetches / m.seconds).toFixed(1),
      seconds: m.seconds.toFixed(1),
    });
  }
  if (catalogueRows.length > 0)
    printTable(
      `Crawling generated stores (limit: their distinct pages unless given), embedding excluded; requests in flight ${CONCURRENCY}, pages in flight ${PAGE_CONCURRENCY}`,
      catalogueRows,
    );
  await docsRows(wanted, raw);
  writeResult('crawl', raw);
}

await main();
