/**
 * The admin console in a real browser: bytes over the wire on first load, time
 * until the items table shows its first page with 100k items in the organization, and the p95 of the
 * table's paging and search queries, measured in the browser.
 *
 *   node bench/console.ts [--items 100000] [--storage pglite|postgres] [--loads 10] [--pages 30] [--searches 20]
 *
 * Data: items bulk-inserted with SQL (as bench/items-query.ts does; 100k uploads would measure the upload
 * path instead): SciFact titles and sentences, 250-700 characters each, creation dates over a year, and a
 * second organization with a tenth as many; then ANALYZE, as the running service would have by then. The service is the real app (`buildApp` + `listen` on
 * 127.0.0.1), its console bundled on a first request before anything is measured (that build is reported
 * on its own). Chromium is Debian's (`/usr/bin/chromium`), headless, driven by playwright-core.
 *
 * - First load: a new browser context (empty cache) per load, the API key already in sessionStorage (as
 *   after signing in), opening /console/items. Bytes are the encoded (as served: compressed) response
 *   bodies plus headers, from the browser's own accounting; time is from navigation start to the first
 *   row of the table in the DOM (a MutationObserver in the page notes it). A second load in the same
 *   context shows the cached visit (immutable assets come from the cache, the shell revalidates).
 * - Paging: "Next" clicked `--pages` times; time from the click to the table showing the next page, and
 *   the query's own duration from the browser's resource timing.
 * - Search: a word typed and submitted `--searches` times (words of different frequency); the same two
 *   times.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { Page } from 'playwright-core';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { createApiKey, createOrganization } from '../src/db/repositories/organizations.ts';
import { buildApp } from '../src/http/app.ts';
import { newId } from '../src/lib/ids.ts';
import { itemSearchWords } from '../src/lib/search-words.ts';
import { launchChromium } from '../test/support/browser.ts';
import { composeTestService } from '../test/support/harness.ts';
import { type NativePostgres, startNativePostgres } from '../test/support/native-postgres.ts';
import { openBenchDatabase, percentile, printTable, readScifactJsonl, rng, writeResult } from './lib.ts';

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '100000' },
    storage: { type: 'string', default: 'pglite' },
    loads: { type: 'string', default: '10' },
    pages: { type: 'string', default: '30' },
    searches: { type: 'string', default: '20' },
  },
});
const ITEMS = Number(values.items);
const MODE = values.storage === 'postgres' ? 'postgres' : 'pglite';
const LOADS = Number(values.loads);
const PAGES = Number(values.pages);
const SEARCHES = Number(values.searches);
/** Words of the corpus, from common to rare, for the search case. */
const SEARCH_WORDS = [
  'protein',
  'mortality',
  'insulin',
  'macrophage',
  'telomerase',
  'zebrafish',
  'quokkaline',
];
const RARE_EVERY = 10_000;

// ---- Data ---------------------------------------------------------------------------------------------

const corpus = readScifactJsonl<{ title: string; text: string }>('corpus.jsonl');
const titles = corpus.map((d) => d.title).filter((t) => t.length > 0);
const sentences = corpus
  .flatMap((d) => d.text.split(/(?<=[.!?])\s+/))
  .filter((s) => s.length > 20 && s.length < 400);

async function insertItems(db: Database, orgId: string, count: number, seed: number): Promise<void> {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const BATCH = 2000;
  for (let start = 0; start < count; start += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, count - start) }, (_, k) => {
      const target = 250 + Math.floor(r() * 450);
      let content = '';
      while (content.length < target) content += (content ? ' ' : '') + pick(sentences);
      if ((start + k) % RARE_EVERY === 0) content += ' quokkaline';
      return { id: newId(), title: pick(titles), content, age: Math.floor(r() * 365 * 86400) };
    });
    await db.transaction((tx) =>
      tx.query(
        `INSERT INTO items (id, organization_id, title, content, content_hash, visibility, source_type, source_table_name,
                            source_url, source_key, tags, indexing_status, created_at, updated_at, search_words)
         SELECT u.id, $1, u.title, u.content, md5(u.content), 'public', 'upload', 'uploaded_documents',
                'https://docs.example.com/' || u.id, 'upload:' || u.id, '{}', 'indexed',
                now() - make_interval(secs => u.age), now() - make_interval(secs => u.age),
                array_to_tsvector(string_to_array(u.words, ' '))
           FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[]) AS u(id, title, content, age, words)`,
        [
          orgId,
          rows.map((x) => x.id),
          rows.map((x) => x.title),
          rows.map((x) => x.content),
          rows.map((x) => x.age),
          rows.map((x) => itemSearchWords(x.title, x.content)),
        ],
      ),
    );
  }
}

// ---- In-page helpers ------------------------------------------------------------------------------------

/** Notes when the items table's first row appears (installed before the app runs). */
function watchFirstRow(): void {
  const w = window as unknown as { __firstRowAt?: number };
  const seen = () => {
    if (w.__firstRowAt === undefined && document.querySelector('table.items tbody tr')) {
      w.__firstRowAt = performance.now();
    }
  };
  new MutationObserver(seen).observe(document, { childList: true, subtree: true });
}

/** Resolves when the items table shows `selector` settled (not busy); rejects after 60 s. */
async function settled(page: Page, selector: string): Promise<void> {
  await page.waitForSelector(`${selector}[aria-busy="false"]`, { timeout: 60_000 });
}

/** Milliseconds from a click (or submit) to `selector` showing, measured inside the page. */
async function timeInPage(page: Page, act: string, selector: string): Promise<number> {
  return page.evaluate(
    ({ act, selector }) =>
      new Promise<number>((resolve, reject) => {
        const start = performance.now();
        const check = () => {
          if (document.querySelector(`${selector}[aria-busy="false"]`)) {
            observer.disconnect();
            resolve(performance.now() - start);
          }
        };
        const observer = new MutationObserver(check);
        observer.observe(document, { childList: true, subtree: true, attributes: true });
        setTimeout(() => reject(new Error(`timed out waiting for ${selector}`)), 60_000);
        if (act === 'next') {
          const next = [...document.querySelectorAll('button')].find((b) => b.textContent === 'Next');
          next!.click();
        } else {
          document.querySelector<HTMLFormElement>('form.toolbar')!.requestSubmit();
        }
      }),
    { act, selector },
  );
}

/** The durations of the items queries the page sent since the last call (resource timing). */
async function queryDurations(page: Page): Promise<number[]> {
  return page.evaluate(() => {
    const entries = performance
      .getEntriesByType('resource')
      .filter((e) => e.name.endsWith('/api/connect/knowledgebase-items/query'))
      .map((e) => e.duration);
    performance.clearResourceTimings();
    return entries;
  });
}

// ---- Run ------------------------------------------------------------------------------------------------

const ms = (x: number) => x.toFixed(0);
const kb = (n: number) => (n / 1024).toFixed(1);

async function main(): Promise<void> {
  const native: NativePostgres | null = MODE === 'postgres' ? await startNativePostgres() : null;
  const { db, cleanup } = await openBenchDatabase(MODE, native, 'kb-bench-console-');
  await migrate(db);
  const orgA = await createOrganization(db, 'bench-a');
  const orgB = await createOrganization(db, 'bench-b');
  const key = (await createApiKey(db, orgA.id)).apiKey;
  const seeding = performance.now();
  await insertItems(db, orgA.id, ITEMS, 1);
  await insertItems(db, orgB.id, Math.ceil(ITEMS / 10), 2);
  // Planner statistics as the running service has them: autovacuum on Postgres, and on PGlite the
  // indexer's ANALYZE after large changes (src/ingest/indexer.ts); items seeded as indexed skip the indexer.
  await db.exec(MODE === 'postgres' ? 'VACUUM ANALYZE items' : 'ANALYZE items');
  console.log(
    `seeded ${ITEMS} + ${Math.ceil(ITEMS / 10)} items in ${ms(performance.now() - seeding)} ms (${MODE})`,
  );

  const service = composeTestService(db);
  const app = await buildApp(service.appDeps, { logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const buildStarted = performance.now();
  await fetch(`${base}/console`).then((r) => r.text());
  const buildMs = performance.now() - buildStarted;

  const browser = await launchChromium();
  try {
    // ---- First loads ----
    const cold: number[] = [];
    const warm: number[] = [];
    let bytes: Array<Record<string, string>> = [];
    let totals = { encoded: 0, headers: 0, decoded: 0 };
    let apiBytes = 0;
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.addInitScript((k) => sessionStorage.setItem('kb-console-key', k), key);
      await context.addInitScript(watchFirstRow);
      const page = await context.newPage();
      const responses: Array<{
        kind: string;
        url: string;
        encoded: number;
        headers: number;
        decoded: number;
        encoding: string;
      }> = [];
      page.on('requestfinished', async (request) => {
        const response = await request.response();
        if (!response) return;
        const sizes = await request.sizes();
        const body = await response.body().catch(() => Buffer.alloc(0));
        const type = response.headers()['content-type'] ?? '';
        responses.push({
          kind: type.includes('html')
            ? 'HTML'
            : type.includes('javascript')
              ? 'JS'
              : type.includes('css')
                ? 'CSS'
                : 'API',
          url: new URL(request.url()).pathname,
          encoded: sizes.responseBodySize,
          headers: sizes.responseHeadersSize,
          decoded: body.length,
          encoding: response.headers()['content-encoding'] ?? 'none',
        });
      });
      await page.goto(`${base}/console/items`);
      await settled(page, 'table.items');
      cold.push(await page.evaluate(() => (window as unknown as { __firstRowAt: number }).__firstRowAt));
      if (i === 0) {
        await page.waitForTimeout(200);
        const files = responses.filter((r) => r.kind !== 'API');
        bytes = files.map((r) => ({
          file: `${r.kind} ${r.url.length > 40 ? `…${r.url.slice(-30)}` : r.url}`,
          encoding: r.encoding,
          'body bytes (wire)': String(r.encoded),
          'header bytes': String(r.headers),
          'body bytes (decoded)': String(r.decoded),
        }));
        totals = files.reduce(
          (t, r) => ({
            encoded: t.encoded + r.encoded,
            headers: t.headers + r.headers,
            decoded: t.decoded + r.decoded,
          }),
          { encoded: 0, headers: 0, decoded: 0 },
        );
        apiBytes = responses.filter((r) => r.kind === 'API').reduce((s, r) => s + r.encoded + r.headers, 0);
      }
      // The same visit again: assets from the cache.
      await page.goto(`${base}/console/items`);
      await settled(page, 'table.items');
      warm.push(await page.evaluate(() => (window as unknown as { __firstRowAt: number }).__firstRowAt));
      await context.close();
    }

    // ---- Paging and search in one page ----
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript((k) => sessionStorage.setItem('kb-console-key', k), key);
    const page = await context.newPage();
    await page.goto(`${base}/console/items`);
    await settled(page, 'table.items[data-items-page="1"]');
    await queryDurations(page);
    const paging: number[] = [];
    for (let p = 2; p <= PAGES + 1; p++) {
      paging.push(await timeInPage(page, 'next', `table.items[data-items-page="${p}"]`));
    }
    const pagingQueries = await queryDurations(page);
    const searching: number[] = [];
    const searchQueries: number[] = [];
    const matches: Record<string, number> = {};
    for (let i = 0; i < SEARCHES; i++) {
      const word = SEARCH_WORDS[i % SEARCH_WORDS.length]!;
      await page.fill('#items-search', word);
      searching.push(await timeInPage(page, 'search', `table.items[data-search="${word}"]`));
      searchQueries.push(...(await queryDurations(page)));
      matches[word] = Number(
        ((await page.textContent('.pager-status')) ?? '')
          .replace(/.*·\s*([\d,]+).*/, '$1')
          .replaceAll(',', ''),
      );
    }
    await context.close();

    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const stat = (xs: number[]) => {
      const s = sorted(xs);
      return { p50: percentile(s, 50), p95: percentile(s, 95), n: s.length };
    };
    const rows = [
      { measure: 'first load → first row (empty cache)', ...fmt(stat(cold)) },
      { measure: 'reload → first row (cached assets)', ...fmt(stat(warm)) },
      { measure: 'Next → next page shown', ...fmt(stat(paging)) },
      { measure: '  its query (resource timing)', ...fmt(stat(pagingQueries)) },
      { measure: 'search → results shown', ...fmt(stat(searching)) },
      { measure: '  its query (resource timing)', ...fmt(stat(searchQueries)) },
    ];
    printTable('Console first load: bytes as served (brotli), from the browser’s accounting', [
      ...bytes,
      {
        file: 'total HTML+JS+CSS',
        encoding: '',
        'body bytes (wire)': String(totals.encoded),
        'header bytes': String(totals.headers),
        'body bytes (decoded)': String(totals.decoded),
      },
    ]);
    console.log(
      `\nfirst load over the wire: ${kb(totals.encoded + totals.headers)} KiB HTML+JS+CSS (bodies ${kb(totals.encoded)} KiB, ${kb(totals.decoded)} KiB decoded) + ${kb(apiBytes)} KiB of API answers`,
    );
    printTable(
      `Console with ${ITEMS.toLocaleString('en-US')} items (${MODE === 'pglite' ? 'embedded, PGlite' : 'server, Postgres'}), ms, measured in Chromium`,
      rows,
    );
    console.log(
      `\nbundle built on the first /console request: ${ms(buildMs)} ms; search matches: ${JSON.stringify(matches)}`,
    );
    writeResult(`console-${MODE}`, {
      items: ITEMS,
      machine: { cpus: os.cpus().length, load: os.loadavg() },
      buildMs,
      bytes,
      totals,
      apiBytes,
      cold,
      warm,
      paging,
      pagingQueries,
      searching,
      searchQueries,
      matches,
    });
  } finally {
    await browser.close();
    await app.close();
    await service.close();
    await db.close();
    await cleanup();
    await native?.stop();
  }
}

function fmt(s: { p50: number; p95: number; n: number }): Record<string, string> {
  return { 'p50 ms': ms(s.p50), 'p95 ms': ms(s.p95), samples: String(s.n) };
}

await main();
