/**
 * Source webhooks benchmark (`node bench/source-webhooks.ts`): from an edit at the source to searchable
 * through Shopify's webhook path, beside the schedule-only path, and how many events a second the
 * receiver holds with none lost. Runs against the fake Shopify store of the tests (signed deliveries as
 * Shopify sends them), the service listening on loopback with its workers and background indexer.
 *
 *   node bench/source-webhooks.ts [--storage pglite,postgres] [--model hash,real]
 *   BENCH_EDITS (default 30), BENCH_EVENTS (default 2000), BENCH_PRODUCTS (default 200)
 *
 * Measured:
 * - webhook path: edit a product at the store, POST its signed `products/update`, poll search (every
 *   25 ms) until a search for the product's title and a word only the edit added answers the edited
 *   text among its first five results: p50 / p95;
 * - schedule-only path: the same edit found by a sync (run at once after the edit), plus the wait for the
 *   next scheduled sync, which is uniform over the interval (5 minutes, the shortest the API takes): the
 *   sync part is measured, the wait is added as its p50 / p95 (150 s / 285 s);
 * - receiver: BENCH_EVENTS signed events for BENCH_PRODUCTS products sent 32 at a time; events a second
 *   accepted (200), events stored (must equal those sent: 0 lost), work rows they coalesced into, and the
 *   seconds until the workers had read every product again.
 *
 * Prints a table with the machine's load average; writes bench/results/source-webhooks.json.
 */
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Embedder } from '../src/embedding/types.ts';
import {
  FakeShopifyStore,
  SHOPIFY_CLIENT_ID,
  SHOPIFY_CLIENT_SECRET,
  SHOPIFY_SHOP,
  startFakeShopify,
} from '../test/fakes/shopify.ts';
import { testEmbedder } from '../test/support/embedding.ts';
import { type StorageMode, startTestApp, type TestApp } from '../test/support/harness.ts';
import { hashEmbedder } from '../test/support/hash-embedder.ts';
import { loadAverage, percentile, printTable, storageModes, writeResult } from './lib.ts';

const EDITS = Number(process.env['BENCH_EDITS'] ?? 30);
const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 2000);
const PRODUCTS = Number(process.env['BENCH_PRODUCTS'] ?? 200);
const SCHEDULE_MINUTES = 5;
const CONCURRENCY = 32;

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1]! : fallback;
}
const MODES = storageModes(arg('--storage', 'pglite'));
const MODELS = arg('--model', 'hash').split(',') as Array<'hash' | 'real'>;

const WORDS = [
  'amber',
  'basalt',
  'cobalt',
  'dune',
  'ember',
  'fjord',
  'garnet',
  'harbor',
  'indigo',
  'juniper',
];
/** A word no other product has: `zq` plus letters for `n` (search tokenizers keep letters). */
const uniqueWord = (n: number) =>
  `zq${n
    .toString(26)
    .split('')
    .map((c) => String.fromCharCode(97 + Number.parseInt(c, 26)))
    .join('')}x`;

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function searchFinds(base: string, key: string, word: string, title: string): Promise<boolean> {
  const res = await fetch(`${base}/api/consume/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: `${title} ${word}`, limit: 5, includeEmbedding: false }),
  });
  if (res.status !== 200) return false;
  const body = (await res.json()) as { result: Array<{ title: string; chunk_plain_text: string }> };
  // The new text, not the product's earlier version: the answer's chunk has the word the edit added.
  return body.result.some((r) => r.title === title && r.chunk_plain_text.includes(word));
}

function post(base: string, delivery: { headers: Record<string, string>; body: string }): Promise<number> {
  return fetch(`${base}/api/connect/webhooks/storefront`, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
  }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
}

interface Setup {
  t: TestApp;
  store: FakeShopifyStore;
  base: string;
  close(): Promise<void>;
}

async function setUp(mode: StorageMode, embedder: Embedder): Promise<Setup> {
  const store = new FakeShopifyStore();
  // A bucket that never throttles: the bench times the service, not Shopify's cost budget.
  store.bucket.maximumAvailable = 1_000_000;
  store.bucket.currentlyAvailable = 1_000_000;
  store.bucket.restoreRate = 1_000_000;
  for (let i = 0; i < PRODUCTS; i++) {
    store.addProduct({
      title: `Product ${i}`,
      descriptionHtml: `<p>A ${WORDS[i % WORDS.length]} item for the trail, number ${i}.</p>`,
    });
  }
  const fake = await startFakeShopify({ store });
  const t = await startTestApp(mode, {
    config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_STOREFRONT_BASE_URL: fake.url },
    parts: { runIndexer: true },
  });
  await t.service.embedding.use(embedder);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const pool = t.service.startWorkers({ concurrency: 2, listenUrl: null });
  const created = await t.call('POST', '/api/connect/connection', {
    body: {
      source: {
        type: 'shopify',
        shop: SHOPIFY_SHOP,
        client_id: SHOPIFY_CLIENT_ID,
        client_secret: SHOPIFY_CLIENT_SECRET,
      },
    },
  });
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  await until(
    async () => {
      const rows = await t.db.query<{ n: string }>(
        `SELECT count(*) AS n FROM items WHERE indexing_status = 'indexed'`,
      );
      return Number(rows[0]?.n) === PRODUCTS;
    },
    600_000,
    'the first sync to be searchable',
  );
  return {
    t,
    store,
    base,
    async close() {
      await pool.stop();
      await t.close();
      await fake.close();
    },
  };
}

/** Edit product `n` with a word only it has; resolves to that word and the product's title. */
function edit(s: Setup, n: number, round: number): { word: string; title: string; gid: string } {
  const product = [...s.store.products.values()][n % PRODUCTS]!;
  const word = uniqueWord(round * 10_000 + n);
  s.store.editProduct(product.id, { descriptionHtml: `<p>Now with ${word} laces.</p>` });
  return { word, title: product.title, gid: product.id };
}

async function webhookPath(s: Setup): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < EDITS; i++) {
    const { word, title, gid } = edit(s, i, 1);
    const started = performance.now();
    const status = await post(s.base, s.store.webhookDelivery('products/update', gid));
    if (status !== 200) throw new Error(`webhook answered ${status}`);
    await until(() => searchFinds(s.base, s.t.orgA.key, word, title), 60_000, `edit ${i}`).catch(
      async (err) => {
        const state = await s.t.db.query(
          `SELECT i.title, i.indexing_status, position($1 in i.content) > 0 AS has_word,
            (SELECT count(*) FROM source_document_work) AS work,
            (SELECT json_agg(json_build_object('id', id, 'status', status, 'error', error)) FROM jobs WHERE kind = 'source-changes') AS jobs
           FROM items i WHERE i.title = $2`,
          [word, title],
        );
        console.error(JSON.stringify(state));
        throw err;
      },
    );
    times.push(performance.now() - started);
  }
  return times;
}

async function syncPath(s: Setup): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < Math.min(EDITS, 10); i++) {
    const { word, title } = edit(s, i + EDITS, 2);
    const started = performance.now();
    const run = await s.t.call('POST', '/api/connect/run-sync', { body: { type: 'storefront' } });
    if (run.status !== 200) throw new Error(JSON.stringify(run.body));
    await until(() => searchFinds(s.base, s.t.orgA.key, word, title), 120_000, `sync edit ${i}`);
    times.push(performance.now() - started);
  }
  return times;
}

async function receiver(s: Setup) {
  const before = await s.t.db.query<{ n: string }>('SELECT count(*) AS n FROM source_events');
  const deliveries = Array.from({ length: EVENTS }, (_, i) => {
    const product = [...s.store.products.values()][i % PRODUCTS]!;
    return s.store.webhookDelivery('products/update', product.id);
  });
  let next = 0;
  let accepted = 0;
  let peakWork = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < deliveries.length) {
        const delivery = deliveries[next++]!;
        if ((await post(s.base, delivery)) === 200) accepted++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const after = await s.t.db.query<{ n: string }>('SELECT count(*) AS n FROM source_events');
  const stored = Number(after[0]?.n) - Number(before[0]?.n);
  const drainStarted = performance.now();
  await until(
    async () => {
      const rows = await s.t.db.query<{ n: string }>('SELECT count(*) AS n FROM source_document_work');
      peakWork = Math.max(peakWork, Number(rows[0]?.n));
      return Number(rows[0]?.n) === 0;
    },
    600_000,
    'the work to drain',
  );
  return {
    sent: EVENTS,
    accepted,
    stored,
    lost: EVENTS - stored,
    eventsPerSecond: accepted / seconds,
    drainSeconds: seconds + (performance.now() - drainStarted) / 1000,
    peakWorkRows: peakWork,
  };
}

const stats = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted.at(-1) ?? 0 };
};

const rows: Array<Record<string, string>> = [];
const results: unknown[] = [];
for (const mode of MODES) {
  for (const model of MODELS) {
    const embedder = model === 'real' ? await testEmbedder() : hashEmbedder();
    const s = await setUp(mode, embedder);
    try {
      const hook = stats(await webhookPath(s));
      const sync = stats(await syncPath(s));
      const waitMs = SCHEDULE_MINUTES * 60_000;
      const recv = await receiver(s);
      results.push({
        mode,
        model,
        webhook: hook,
        syncOnly: sync,
        scheduleMinutes: SCHEDULE_MINUTES,
        receiver: recv,
      });
      const s1 = (ms: number) => (ms / 1000).toFixed(2);
      console.log(`# ${mode} ${model}: ${JSON.stringify({ hook, sync, recv })}`);
      rows.push({
        storage: mode,
        model,
        'webhook p50 s': s1(hook.p50),
        'webhook p95 s': s1(hook.p95),
        'schedule p50 s': s1(waitMs * 0.5 + sync.p50),
        'schedule p95 s': s1(waitMs * 0.95 + sync.p95),
        'sync part p50 s': s1(sync.p50),
        'events/s': recv.eventsPerSecond.toFixed(0),
        lost: String(recv.lost),
        'peak work rows': String(recv.peakWorkRows),
        'drain s': recv.drainSeconds.toFixed(1),
      });
    } finally {
      await s.close();
    }
  }
}
printTable(
  `Source webhooks: edit to searchable (${EDITS} edits), receiver (${EVENTS} events, ${PRODUCTS} products); load ${loadAverage()}`,
  rows,
);
writeResult('source-webhooks', results);
