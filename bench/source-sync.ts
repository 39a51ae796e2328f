/**
 * Source-sync benchmark (`node bench/source-sync.ts`): prints a table, writes bench/results/source-sync.json.
 *
 * For each content source, a fake workspace of BENCH_SOURCE_DOCS documents (default 5,000) served on
 * loopback by the source's own fake server (test/fakes/<vendor>.ts; bodies generated on request, so the
 * fake adds little memory), synced through the HTTP API and the job engine:
 *
 * 1. first sync, embedding excluded: wall time, requests per document, bytes;
 * 2. incremental sync after 1% of the documents changed: wall time, requests per changed document;
 * 3. a sync after no change: requests;
 * 4. first sync with embedding included (the background indexer running beside the sync, the test model
 *    on this machine's CPU), over BENCH_EMBED_DOCS documents (default 500: embedding 5,000 pages on two
 *    cores takes the better part of an hour; the per-document rate is what the table reports);
 * 5. peak RSS of the process (max resident set size), which holds the service and the fake: through steps
 *    1-3, and again after step 4 with the model loaded.
 *
 * Each source runs in its own child process so its peak RSS is its own. Request pacing is off (the fake
 * does not limit): the times are what the service itself costs, not the vendor's rate limits.
 *
 * Request pacing aside, the storefront fake keeps Shopify's cost bucket (2,000 points restoring 100 a
 * second), so its times include waiting on it; the table says how much.
 *
 * For notes, one more run: a database of BENCH_NOTES_CAP_ROWS rows (default 25,000) against Notion's
 * per-query cap (BENCH_NOTES_CAP, default 10,000), read in `created_time` windows: requests per row of the
 * first sync, and the query requests (and windows) of the first and an unchanged sync.
 *
 * Token lifetimes: for each source whose tokens expire, a first sync that outlives three of them against
 * the source's fakes with short token lives, through the job engine (its own child process): API requests,
 * token renewals (calls of the token endpoint during the sync), requests refused with 401, the token time
 * the sync spanned, and wall time. Rows:
 * - support_desk over OAuth: BENCH_TOKEN_DOCS articles (default 2,000, export pages of 100), Zendesk's
 *   30-minute access tokens and single-use rotating refresh tokens (test/fakes/zendesk-oauth.ts);
 * - storefront over OAuth (authorization code grant): BENCH_TOKEN_PRODUCTS products (default 1,000), expiring
 *   offline tokens of an hour with rotating refresh tokens;
 * in both, the clock the fake and the service count token lives on moves BENCH_TOKEN_MINUTES_PER_REQUEST
 * (default 4) with every API request;
 * - storefront with client credentials: the same store, tokens of BENCH_TOKEN_CC_SECONDS (default 0.2) on the
 *   wall clock (the connector counts their life itself, on the wall clock), no refresh token.
 * notes announces no token lifetime (Notion documents none: a 401 is its only signal) and wiki takes API
 * tokens only, so neither has a row. The stores' cost budget is lifted here: the figures are the token
 * handling's, not Shopify's rate limit.
 *
 * Options: BENCH_SOURCES (comma list of `notes,wiki,docs_space,support_desk,storefront`), BENCH_SOURCE_DOCS, BENCH_EMBED_DOCS
 * (0 skips step 4), BENCH_STORAGE (`pglite` default, or `postgres`), BENCH_NOTES_CAP_ROWS (0 skips the
 * capped database), BENCH_NOTES_CAP, BENCH_TOKEN_LIFE (0 skips the token rows), BENCH_TOKEN_DOCS,
 * BENCH_TOKEN_PRODUCTS, BENCH_TOKEN_MINUTES_PER_REQUEST, BENCH_TOKEN_CC_SECONDS.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { confluenceBenchWorkspace } from '../test/fakes/confluence.ts';
import { gitbookBenchWorkspace } from '../test/fakes/gitbook.ts';
import { notionBenchWorkspace, notionRowCapWorkspace } from '../test/fakes/notion.ts';
import { bearerToken } from '../test/fakes/fake-server.ts';
import {
  FakeShopifyStore,
  SHOPIFY_SHOP,
  shopifyBenchWorkspace,
  startFakeShopify,
} from '../test/fakes/shopify.ts';
import { FakeZendeskAccount, startFakeZendesk, zendeskBenchWorkspace } from '../test/fakes/zendesk.ts';
import { startZendeskAuth, zendeskOAuthSettings } from '../test/fakes/zendesk-oauth.ts';
import type { BenchWorkspace, BenchWorkspaceFactory } from '../test/fakes/workspace.ts';
import { FAST_WORKERS, waitForJob } from '../test/jobs/helpers.ts';
import { withSearch } from '../test/support/embedding.ts';
import { type StorageMode, startTestApp, type TestApp } from '../test/support/harness.ts';
import { printTable, writeResult } from './lib.ts';

const FACTORIES: BenchWorkspaceFactory[] = [
  notionBenchWorkspace,
  confluenceBenchWorkspace,
  gitbookBenchWorkspace,
  zendeskBenchWorkspace,
  shopifyBenchWorkspace,
];
const DOCS = Number(process.env['BENCH_SOURCE_DOCS'] ?? 5_000);
const EMBED_DOCS = Number(process.env['BENCH_EMBED_DOCS'] ?? 500);
const STORAGE = (process.env['BENCH_STORAGE'] ?? 'pglite') as StorageMode;
const SOURCES = (process.env['BENCH_SOURCES'] ?? FACTORIES.map((f) => f.type).join(','))
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const CHILD_FLAG = '--one-source';
const NOTES_CAP_ROWS = Number(process.env['BENCH_NOTES_CAP_ROWS'] ?? 25_000);
const NOTES_CAP = Number(process.env['BENCH_NOTES_CAP'] ?? 10_000);
const NOTES_CAP_FLAG = '--notes-row-cap';
const TOKEN_LIFE = process.env['BENCH_TOKEN_LIFE'] !== '0';
const TOKEN_DOCS = Number(process.env['BENCH_TOKEN_DOCS'] ?? 2_000);
const TOKEN_PRODUCTS = Number(process.env['BENCH_TOKEN_PRODUCTS'] ?? 1_000);
const TOKEN_MINUTES_PER_REQUEST = Number(process.env['BENCH_TOKEN_MINUTES_PER_REQUEST'] ?? 4);
const TOKEN_CC_SECONDS = Number(process.env['BENCH_TOKEN_CC_SECONDS'] ?? 0.2);
const TOKEN_LIFE_FLAG = '--token-life';

interface SourceResult {
  source: string;
  documents: number;
  firstSyncS: number;
  firstRequests: number;
  firstBytes: number;
  changed: number;
  incrementalS: number;
  incrementalRequests: number;
  incrementalRows: number;
  unchangedRequests: number;
  unchangedS: number;
  embedDocs: number;
  embedSyncS: number | null;
  embedChunks: number | null;
  /** Max RSS through steps 1-3 (no model loaded). */
  peakRssMiB: number;
  /** Max RSS after step 4 (the model and its indexer included). */
  peakRssWithModelMiB: number;
  /** Shopify: seconds of the first / incremental sync spent waiting on the cost budget (null elsewhere). */
  firstCostWaitS: number | null;
  incrementalCostWaitS: number | null;
}

/**
 * What a sync logged about waiting on a source's cost budget (the storefront sync logs `costWaitMs` when it
 * ends); the other sources log none.
 */
const costWaits: number[] = [];
const benchLog = {
  info(obj: Record<string, unknown>) {
    if (typeof obj['costWaitMs'] === 'number') costWaits.push(obj['costWaitMs']);
  },
  warn() {},
  error() {},
};
function costWaitSince(mark: number): number | null {
  const waits = costWaits.slice(mark);
  return waits.length === 0 ? null : waits.reduce((a, b) => a + b, 0) / 1000;
}

// Retries stay as in production; pacing is off against a local fake.
const SOURCE_HTTP = {
  maxAttempts: 5,
  baseDelayMs: 50,
  maxDelayMs: 1_000,
  maxWaitMs: 30_000,
  attemptTimeoutMs: 30_000,
  requestsPerSecond: 1_000_000,
};

async function startApp(
  factory: BenchWorkspaceFactory,
  fake: BenchWorkspace,
  indexer: boolean,
): Promise<TestApp> {
  const t = await startTestApp(STORAGE, {
    config: { KB_CRAWL_ALLOW_PRIVATE: 'true', [factory.baseUrlSetting]: fake.url },
    parts: { sourceHttp: SOURCE_HTTP, runIndexer: indexer, log: benchLog },
  });
  t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
  return t;
}

async function sync(t: TestApp, type: string, queued?: number) {
  const started = performance.now();
  let jobId = queued;
  if (jobId === undefined) {
    const run = await t.call('POST', '/api/connect/run-sync', { body: { type } });
    if (run.status !== 200) throw new Error(`run-sync: ${JSON.stringify(run.body)}`);
    jobId = run.body.jobId as number;
  }
  const job = await waitForJob(t, jobId, undefined, 3_600_000);
  if (job.status !== 'succeeded') throw new Error(`sync ${job.status}: ${JSON.stringify(job)}`);
  return { job, seconds: (performance.now() - started) / 1000 };
}

/**
 * Creates the connection and runs its first sync: the one the create queues (timed from the create, its
 * credential check included), or one asked for.
 */
async function connectAndSync(t: TestApp, fake: BenchWorkspace, type: string) {
  const started = performance.now();
  const res = await t.call('POST', '/api/connect/connection', { body: { source: fake.source } });
  if (res.status !== 200) throw new Error(`create connection: ${JSON.stringify(res.body)}`);
  const queued = typeof res.body.jobId === 'number' ? res.body.jobId : undefined;
  const first = await sync(t, type, queued);
  return { ...first, seconds: (performance.now() - started) / 1000 };
}

async function benchOne(factory: BenchWorkspaceFactory): Promise<SourceResult> {
  const fake = await factory.start(DOCS);
  const t = await startApp(factory, fake, false);
  try {
    let mark = fake.requests.length;
    let waitMark = costWaits.length;
    const first = await connectAndSync(t, fake, factory.type);
    const firstCostWaitS = costWaitSince(waitMark);
    const firstRequests = fake.requests.length - mark;
    const items = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM items');
    // A workspace may hold a few fixed documents beside the generated ones (the shop's refund policy).
    if (items[0]!.n < DOCS || items[0]!.n > DOCS + 10)
      throw new Error(`${factory.type}: ${items[0]!.n} items after the first sync, not ${DOCS}`);

    const changed = fake.edit(Math.max(1, Math.round(DOCS / 100))).length;
    mark = fake.requests.length;
    waitMark = costWaits.length;
    const incremental = await sync(t, factory.type);
    const incrementalCostWaitS = costWaitSince(waitMark);
    const incrementalRequests = fake.requests.length - mark;

    mark = fake.requests.length;
    const unchanged = await sync(t, factory.type);
    const unchangedRequests = fake.requests.length - mark;

    // Before the model is loaded: the sync's own footprint (PGlite, the service, the fake).
    const peakRssMiB = process.resourceUsage().maxRSS / 1024;
    const embed = EMBED_DOCS > 0 ? await benchEmbedding(factory) : null;
    return {
      source: `${factory.type} (${factory.label})`,
      documents: DOCS,
      firstSyncS: first.seconds,
      firstRequests,
      firstBytes: first.job.bytesSynced,
      changed,
      incrementalS: incremental.seconds,
      incrementalRequests,
      incrementalRows: incremental.job.rowsSynced,
      unchangedRequests,
      unchangedS: unchanged.seconds,
      embedDocs: EMBED_DOCS,
      embedSyncS: embed?.seconds ?? null,
      embedChunks: embed?.chunks ?? null,
      peakRssMiB,
      peakRssWithModelMiB: process.resourceUsage().maxRSS / 1024,
      firstCostWaitS,
      incrementalCostWaitS,
    };
  } finally {
    await t.close();
    await fake.close();
  }
}

/** A first sync with the model loaded and the background indexer embedding beside it, until all is indexed. */
async function benchEmbedding(factory: BenchWorkspaceFactory): Promise<{ seconds: number; chunks: number }> {
  const fake = await factory.start(EMBED_DOCS);
  const t = await startApp(factory, fake, true);
  try {
    await withSearch(t); // loads the model before the clock starts
    const started = performance.now();
    await connectAndSync(t, fake, factory.type);
    for (;;) {
      const left = await t.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM items WHERE indexing_status = 'pending'",
      );
      if (left[0]!.n === 0) break;
      await sleep(200);
    }
    const seconds = (performance.now() - started) / 1000;
    const chunks = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM chunks');
    return { seconds, chunks: chunks[0]!.n };
  } finally {
    await t.close();
    await fake.close();
  }
}

interface NotesRowCapResult {
  rows: number;
  cap: number;
  firstSyncS: number;
  firstRequests: number;
  firstQueryRequests: number;
  windows: number;
  unchangedRequests: number;
  unchangedQueryRequests: number;
}

/** notes: a database past Notion's per-query cap, synced through the job engine, then synced unchanged. */
async function benchNotesRowCap(): Promise<NotesRowCapResult> {
  const fake = await notionRowCapWorkspace(NOTES_CAP_ROWS, NOTES_CAP);
  const t = await startApp(notionBenchWorkspace, fake, false);
  const queryPath = `/v1/data_sources/${fake.dataSourceId}/query`;
  const count = (from: number) => {
    const sent = fake.requests.slice(from).filter((r) => r.path === queryPath);
    return {
      requests: fake.requests.length - from,
      queries: sent.length,
      windows: sent.filter((r) => !('start_cursor' in JSON.parse(r.body ?? '{}'))).length,
    };
  };
  try {
    let mark = fake.requests.length;
    const first = await connectAndSync(t, fake, 'notes');
    const firstCount = count(mark);
    const items = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM items');
    if (items[0]!.n !== NOTES_CAP_ROWS + 1)
      throw new Error(`notes row cap: ${items[0]!.n} items, not ${NOTES_CAP_ROWS} rows and their page`);
    // Past the minute of the first pass, so nothing is re-checked for Notion's minute rounding.
    fake.workspace.advance(5 * 60_000);
    mark = fake.requests.length;
    await sync(t, 'notes');
    const unchanged = count(mark);
    return {
      rows: NOTES_CAP_ROWS,
      cap: NOTES_CAP,
      firstSyncS: first.seconds,
      firstRequests: firstCount.requests,
      firstQueryRequests: firstCount.queries,
      windows: firstCount.windows,
      unchangedRequests: unchanged.requests,
      unchangedQueryRequests: unchanged.queries,
    };
  } finally {
    await t.close();
    await fake.close();
  }
}

function runNotesRowCap(): NotesRowCapResult | null {
  if (!SOURCES.includes('notes') || NOTES_CAP_ROWS <= 0) return null;
  console.error(
    `# notes: a database of ${NOTES_CAP_ROWS} rows against a cap of ${NOTES_CAP} on ${STORAGE}...`,
  );
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), NOTES_CAP_FLAG], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.status !== 0) throw new Error(`notes row-cap benchmark exited ${child.status}`);
  const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as NotesRowCapResult;
  printTable(
    `notes: one database of ${result.rows} rows against a per-query cap of ${result.cap}, ${STORAGE}`,
    [
      {
        'first sync s': fmt(result.firstSyncS),
        'requests/row': fmt(result.firstRequests / result.rows, 3),
        'query requests': String(result.firstQueryRequests),
        'query requests/row': fmt(result.firstQueryRequests / result.rows, 4),
        windows: String(result.windows),
        'unchanged sync requests': `${result.unchangedRequests} (${fmt((100 * result.unchangedRequests) / result.firstRequests)}%)`,
        'unchanged query requests': String(result.unchangedQueryRequests),
      },
    ],
  );
  return result;
}

// ---------------------------------------------------------------------------------------------------
// Token lifetimes
// ---------------------------------------------------------------------------------------------------

interface TokenLifeResult {
  source: string;
  /** How token time ran: `+4 min a request`, or `wall clock`. */
  clock: string;
  tokenLifeS: number;
  documents: number;
  apiRequests: number;
  /** Calls of the token endpoint during the sync (refreshes or new grants). */
  renewals: number;
  refused401: number;
  /** Token time the sync spanned, in token lifetimes. */
  lifetimes: number;
  seconds: number;
}

const TOKEN_CLIENT_ID = 'kb-bench-client';
const TOKEN_CLIENT_SECRET = `bench-${randomBytes(8).toString('hex')}`;
const BENCH_PUBLIC_URL = 'https://kb.example.test';

/** The clock a fake and the service count token lives on: the wall clock plus what the bench adds. */
function movingClock() {
  const clock = { offset: 0, now: () => Date.now() + clock.offset };
  return clock;
}

/** The consent flow of the API (initiate, the vendor's redirect, callback). */
async function consent(t: TestApp, initiate: Record<string, unknown>): Promise<void> {
  const init = await t.call('POST', '/api/connect/oauth/initiate', { body: initiate });
  if (init.status !== 200) throw new Error(`initiate: ${JSON.stringify(init.body)}`);
  const granted = await fetch(init.body.consentUrl, { redirect: 'manual' });
  const callback = new URL(granted.headers.get('location')!);
  const res = await t.call('GET', callback.pathname + callback.search, { key: null });
  if (res.status !== 200) throw new Error(`callback: ${JSON.stringify(res.body)}`);
}

/** Creates the connection and lets a first sync the create queued finish before anything is measured. */
async function connectSettled(t: TestApp, source: Record<string, unknown>): Promise<void> {
  const res = await t.call('POST', '/api/connect/connection', { body: { source } });
  if (res.status !== 200) throw new Error(`create connection: ${JSON.stringify(res.body)}`);
  if (typeof res.body.jobId === 'number') await waitForJob(t, res.body.jobId, undefined, 3_600_000);
}

/** A full sync (`reset`), timed; it must succeed. */
async function fullSync(t: TestApp, type: string): Promise<number> {
  const started = performance.now();
  const run = await t.call('POST', '/api/connect/run-sync', { body: { type, jobType: 'reset' } });
  if (run.status !== 200) throw new Error(`run-sync: ${JSON.stringify(run.body)}`);
  const job = await waitForJob(t, run.body.jobId as number, undefined, 3_600_000);
  if (job.status !== 'succeeded') throw new Error(`${type} sync ${job.status}: ${JSON.stringify(job)}`);
  return (performance.now() - started) / 1000;
}

async function tokenLifeSupportDesk(): Promise<TokenLifeResult> {
  const clock = movingClock();
  const account = new FakeZendeskAccount();
  const section = account.addSection(account.addCategory('Guides'), 'All');
  for (let n = 1; n <= TOKEN_DOCS; n++) {
    account.addArticle({ section, title: `Item ${n}`, body: `<p>Article ${n} ${'text '.repeat(40)}</p>` });
  }
  account.articleExportPageSize = 100;
  const zendesk = await startFakeZendesk({ account });
  const auth = await startZendeskAuth(zendesk, {
    clientId: TOKEN_CLIENT_ID,
    clientSecret: TOKEN_CLIENT_SECRET,
    now: clock.now,
  });
  const t = await startTestApp(STORAGE, {
    config: zendeskOAuthSettings({
      zendeskUrl: zendesk.url,
      authUrl: auth.url,
      clientId: TOKEN_CLIENT_ID,
      clientSecret: TOKEN_CLIENT_SECRET,
      publicUrl: BENCH_PUBLIC_URL,
    }),
    parts: { sourceHttp: SOURCE_HTTP, tokenClock: clock.now },
  });
  t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
  try {
    await consent(t, { type: 'support_desk', subdomain: 'acme' });
    await connectSettled(t, { type: 'support_desk', subdomain: 'acme' });
    let apiRequests = 0;
    let refused401 = 0;
    account.onRequest = (req) => {
      const token = bearerToken(req);
      if (token === undefined) return undefined;
      apiRequests++;
      if (!auth.accepts(token)) refused401++;
      clock.offset += TOKEN_MINUTES_PER_REQUEST * 60_000;
      return undefined;
    };
    const before = { refreshes: auth.counts.refreshes, offset: clock.offset };
    const seconds = await fullSync(t, 'support_desk');
    return {
      source: 'support_desk (Zendesk OAuth)',
      clock: `+${TOKEN_MINUTES_PER_REQUEST} min a request`,
      tokenLifeS: 1_800,
      documents: TOKEN_DOCS,
      apiRequests,
      renewals: auth.counts.refreshes - before.refreshes,
      refused401,
      lifetimes: (clock.offset - before.offset) / 1_800_000,
      seconds,
    };
  } finally {
    await t.close();
    await zendesk.close();
    await auth.close();
  }
}

/** A store of TOKEN_PRODUCTS products whose cost budget never binds, with the app's credentials. */
function tokenLifeStore(now: () => number): FakeShopifyStore {
  const store = new FakeShopifyStore();
  store.bucket.restoreRate = 1_000_000;
  store.now = now;
  store.app.clientId = TOKEN_CLIENT_ID;
  store.app.clientSecret = TOKEN_CLIENT_SECRET;
  for (let n = 1; n <= TOKEN_PRODUCTS; n++) {
    store.addProduct({ title: `Product ${n}`, descriptionHtml: `<p>Product ${n} ${'text '.repeat(40)}</p>` });
  }
  return store;
}

/** storefront through one way in (`oauth`: consent, clock moving per request; else client credentials). */
async function tokenLifeStorefront(way: 'oauth' | 'client_credentials'): Promise<TokenLifeResult> {
  const clock = movingClock();
  const store = tokenLifeStore(way === 'oauth' ? clock.now : Date.now);
  store.clientCredentialsLifetimeSeconds = TOKEN_CC_SECONDS;
  const shopify = await startFakeShopify({ store });
  const t = await startTestApp(STORAGE, {
    config: {
      KB_CRAWL_ALLOW_PRIVATE: 'true',
      KB_STOREFRONT_BASE_URL: shopify.url,
      KB_STOREFRONT_OAUTH_BASE_URL: shopify.url,
      KB_STOREFRONT_CLIENT_ID: TOKEN_CLIENT_ID,
      KB_STOREFRONT_CLIENT_SECRET: TOKEN_CLIENT_SECRET,
      KB_PUBLIC_URL: BENCH_PUBLIC_URL,
    },
    parts: { sourceHttp: SOURCE_HTTP, tokenClock: clock.now },
  });
  t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
  try {
    if (way === 'oauth') {
      await consent(t, { type: 'storefront', shop: SHOPIFY_SHOP });
      await connectSettled(t, { type: 'storefront', shop: SHOPIFY_SHOP });
    } else {
      await connectSettled(t, {
        type: 'storefront',
        shop: SHOPIFY_SHOP,
        client_id: TOKEN_CLIENT_ID,
        client_secret: TOKEN_CLIENT_SECRET,
      });
    }
    let apiRequests = 0;
    store.onQuery = () => {
      apiRequests++;
      if (way === 'oauth') clock.offset += TOKEN_MINUTES_PER_REQUEST * 60_000;
    };
    const before = { grants: store.grants.length, expired: store.expiredAnswers, offset: clock.offset };
    const seconds = await fullSync(t, 'storefront');
    const lifeS = way === 'oauth' ? store.offlineLifetimeSeconds : TOKEN_CC_SECONDS;
    const spanS = way === 'oauth' ? (clock.offset - before.offset) / 1000 : seconds;
    const refused401 = store.expiredAnswers - before.expired;
    return {
      source: way === 'oauth' ? 'storefront (Shopify OAuth)' : 'storefront (Shopify client credentials)',
      clock: way === 'oauth' ? `+${TOKEN_MINUTES_PER_REQUEST} min a request` : 'wall clock',
      tokenLifeS: lifeS,
      documents: TOKEN_PRODUCTS,
      // Queries the store answered, and those it refused for their token.
      apiRequests: apiRequests + refused401,
      renewals: store.grants.length - before.grants,
      refused401,
      lifetimes: spanS / lifeS,
      seconds,
    };
  } finally {
    await t.close();
    await shopify.close();
  }
}

async function benchTokenLife(): Promise<TokenLifeResult[]> {
  const rows: TokenLifeResult[] = [];
  if (SOURCES.includes('support_desk')) rows.push(await tokenLifeSupportDesk());
  if (SOURCES.includes('storefront')) {
    rows.push(await tokenLifeStorefront('oauth'));
    rows.push(await tokenLifeStorefront('client_credentials'));
  }
  return rows;
}

function runTokenLife(): TokenLifeResult[] | null {
  if (!TOKEN_LIFE || !SOURCES.some((s) => s === 'support_desk' || s === 'storefront')) return null;
  console.error(`# token lifetimes: syncs outliving three tokens on ${STORAGE}...`);
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), TOKEN_LIFE_FLAG], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.status !== 0) throw new Error(`token-life benchmark exited ${child.status}`);
  const rows = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as TokenLifeResult[];
  printTable(
    `Token lifetimes: a first sync outliving three access tokens, ${STORAGE}`,
    rows.map((r) => ({
      source: r.source,
      'token life': r.tokenLifeS >= 60 ? `${r.tokenLifeS / 60} min` : `${r.tokenLifeS} s`,
      clock: r.clock,
      documents: String(r.documents),
      'token lives spanned': fmt(r.lifetimes),
      'API requests': String(r.apiRequests),
      'token renewals': String(r.renewals),
      '401s': String(r.refused401),
      'wall s': fmt(r.seconds, 2),
    })),
  );
  return rows;
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

async function main(): Promise<void> {
  if (process.argv.includes(TOKEN_LIFE_FLAG)) {
    console.log(JSON.stringify(await benchTokenLife()));
    return;
  }
  if (process.argv.includes(NOTES_CAP_FLAG)) {
    console.log(JSON.stringify(await benchNotesRowCap()));
    return;
  }
  if (process.argv.includes(CHILD_FLAG)) {
    const type = process.argv[process.argv.indexOf(CHILD_FLAG) + 1];
    const factory = FACTORIES.find((f) => f.type === type);
    if (!factory) throw new Error(`unknown source ${type}`);
    console.log(JSON.stringify(await benchOne(factory)));
    return;
  }
  const results: SourceResult[] = [];
  for (const type of SOURCES) {
    console.error(`# ${type}: ${DOCS} documents (embedding: ${EMBED_DOCS}) on ${STORAGE}...`);
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), CHILD_FLAG, type], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
    });
    if (child.status !== 0) throw new Error(`${type} benchmark exited ${child.status}`);
    const lastLine = child.stdout.trim().split('\n').at(-1)!;
    results.push(JSON.parse(lastLine) as SourceResult);
  }
  printTable(
    `Source sync: ${DOCS} documents per source, ${STORAGE}, embedding excluded (steps 1-3)`,
    results.map((r) => ({
      source: r.source,
      'first sync s': fmt(r.firstSyncS),
      'docs/s': fmt(r.documents / r.firstSyncS, 0),
      'requests/doc': fmt(r.firstRequests / r.documents, 2),
      'MB received': fmt(r.firstBytes / 1e6),
      'changed docs': String(r.changed),
      'incremental s': fmt(r.incrementalS),
      'requests/changed doc': fmt(r.incrementalRequests / r.changed, 2),
      'rows written': String(r.incrementalRows),
      'unchanged sync requests (of first)': `${r.unchangedRequests} of ${r.firstRequests} (${fmt((100 * r.unchangedRequests) / r.firstRequests)}%)`,
      'peak RSS MiB': fmt(r.peakRssMiB, 0),
      'cost-budget wait (first / incr.)':
        r.firstCostWaitS === null
          ? '-'
          : `${fmt((100 * r.firstCostWaitS) / r.firstSyncS, 0)}% / ${fmt((100 * (r.incrementalCostWaitS ?? 0)) / r.incrementalS, 0)}%`,
    })),
  );
  if (EMBED_DOCS > 0) {
    printTable(
      `First sync with embedding included: ${EMBED_DOCS} documents per source, test model on this CPU`,
      results.map((r) => ({
        source: r.source,
        'sync + embed s': fmt(r.embedSyncS ?? 0),
        chunks: String(r.embedChunks),
        'docs/s': fmt(r.embedDocs / (r.embedSyncS ?? 1), 1),
        'chunks/s': fmt((r.embedChunks ?? 0) / (r.embedSyncS ?? 1), 1),
        'peak RSS MiB': fmt(r.peakRssWithModelMiB, 0),
        [`est. ${DOCS} docs min`]: fmt(((r.embedSyncS ?? 0) * (DOCS / r.embedDocs)) / 60, 0),
      })),
    );
  }
  const notesRowCap = runNotesRowCap();
  const tokenLife = runTokenLife();
  writeResult('source-sync', {
    docs: DOCS,
    embedDocs: EMBED_DOCS,
    storage: STORAGE,
    results,
    notesRowCap,
    tokenLife,
  });
}

await main();
