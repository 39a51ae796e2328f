/**
 * Rendering benchmark (`node bench/crawl-render.ts`): pages a second crawling one generated site plainly
 * and with `renderJavaScript` (headless Chromium, src/crawler/render.ts); prints a table, writes
 * bench/results/crawl-render.json.
 *
 * The site (BENCH_RENDER_PAGES pages, default 60) is served on loopback: each page has its links and a
 * paragraph in its HTML, and a script that fetches a second paragraph as JSON and writes it in. Both
 * crawls fetch every page; only the rendering one stores the script's paragraph ("script text" counts
 * the items that have it). PGlite in memory, embedding excluded, the tests' fast pace (4 requests in
 * flight, no delay), 4 pages rendered at once (BENCH_RENDER_AT_ONCE). "app CPU" is this process's CPU
 * (the browser's own processes excluded); "browser CPU" is Chromium's, read from /proc for its processes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CrawlerOverrides } from '../src/crawler/runtime.ts';
import { startTestApp } from '../test/support/harness.ts';
import { type RouteHandler, serveRoutes } from '../test/support/sites.ts';
import { loadAverage, printTable, writeResult } from './lib.ts';

const PAGES = Number(process.env['BENCH_RENDER_PAGES'] ?? 60);
const AT_ONCE = Number(process.env['BENCH_RENDER_AT_ONCE'] ?? 4);
const SCRIPT_MARK = 'Written by the page script';

const CRAWLER: CrawlerOverrides = {
  minDelayMs: 0,
  perHostConcurrency: 4,
  pageConcurrency: 8,
  renderPages: AT_ONCE,
};

function pageHtml(i: number): string {
  const links = [0, 1, 2, 3]
    .map((k) => (i * 7 + k * 13 + 1) % PAGES)
    .map((n) => `<a href="/page/${n}">Page ${n}</a>`)
    .join(' ');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Page ${i}</title>
<script src="/app.js" defer></script></head><body><nav>${links}</nav>
<main id="main"><h1>Page ${i}</h1><p>Page ${i} describes topic ${i * 31} in its own words: the static paragraph
every crawler sees, long enough to be the page's main content, with a detail ${i * 17} of its own.</p></main>
</body></html>`;
}

const APP_JS = `fetch('/api/extra?path=' + encodeURIComponent(location.pathname)).then((r) => r.json()).then((d) => {
  const p = document.createElement('p'); p.textContent = d.text; document.getElementById('main').appendChild(p);
});`;

async function serveSite() {
  const routes: Record<string, RouteHandler> = {
    '/': { body: pageHtml(0) },
    '/app.js': { headers: { 'content-type': 'text/javascript' }, body: APP_JS },
    '/api/extra': (_req, res, ctx) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const path = ctx.url.searchParams.get('path') ?? '/';
      res.end(JSON.stringify({ text: `${SCRIPT_MARK} for ${path}: a paragraph only a browser sees.` }));
    },
  };
  for (let i = 0; i < PAGES; i++) routes[`/page/${i}`] = { body: pageHtml(i) };
  return serveRoutes(routes);
}

/** CPU seconds of this process's Chromium processes (children whose command line names chromium). */
function browserCpuSeconds(): number {
  const tick = 100;
  let total = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      if (!cmd.includes('chromium') || !cmd.includes('no-proxy.invalid')) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / tick;
    } catch {
      // Gone between the listing and the read.
    }
  }
  return total;
}

interface Measured {
  mode: string;
  pages: number;
  scriptText: number;
  seconds: number;
  appCpuSeconds: number;
  browserCpuSeconds: number;
  warnings: Record<string, string>;
}

async function crawlOnce(render: boolean): Promise<Measured> {
  const site = await serveSite();
  const t = await startTestApp('pglite', {
    config: { KB_CRAWL_ALLOW_PRIVATE: 'true' },
    parts: { crawler: CRAWLER },
  });
  const pool = t.service.startWorkers({ concurrency: 1, pollMs: 20, periodicTasks: [], listenUrl: null });
  let browserCpu = 0;
  try {
    const startedAt = Date.now();
    const cpuAtStart = process.cpuUsage();
    const res = await t.call('POST', '/api/connect/crawling/', {
      body: { url: `${site.origin}/`, limit: 1000, ...(render ? { renderJavaScript: true } : {}) },
    });
    if (res.status !== 200) throw new Error(`crawl not accepted: ${JSON.stringify(res.body)}`);
    let job = res.body;
    while (!['completed', 'failed', 'cancelled'].includes(job.status)) {
      await sleep(100);
      // The browser closes with the crawl: its CPU is read while it still runs.
      if (render) browserCpu = Math.max(browserCpu, browserCpuSeconds());
      job = (await t.call('GET', `/api/connect/crawling/${res.body.id}`)).body;
    }
    if (job.status !== 'completed') throw new Error(`crawl ${job.status}: ${job.error_message}`);
    const cpu = process.cpuUsage(cpuAtStart);
    const [n] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM items WHERE source_type = 'crawl' AND content LIKE $1`,
      [`%${SCRIPT_MARK}%`],
    );
    return {
      mode: render ? 'renderJavaScript' : 'plain',
      pages: (job.outcomes.created ?? 0) as number,
      scriptText: n!.n,
      seconds: (Date.parse(job.completed_at) - startedAt) / 1000,
      appCpuSeconds: (cpu.user + cpu.system) / 1e6,
      browserCpuSeconds: browserCpu,
      warnings: Object.fromEntries(
        (job.warnings as Array<{ code: string; count: number; message: string }>).map((w) => [
          w.code,
          w.message,
        ]),
      ),
    };
  } finally {
    await pool.stop();
    await t.close();
    await site.close();
  }
}

async function main(): Promise<void> {
  const load = loadAverage();
  const results = [await crawlOnce(false), await crawlOnce(true)];
  printTable(
    `Crawl with and without rendering (${PAGES}-page generated site, ${AT_ONCE} rendered at once; load ${load})`,
    results.map((r) => ({
      mode: r.mode,
      pages: String(r.pages),
      'script text': `${r.scriptText}/${r.pages}`,
      seconds: r.seconds.toFixed(1),
      'pages/s': (r.pages / r.seconds).toFixed(1),
      'app CPU ms/page': ((1000 * r.appCpuSeconds) / r.pages).toFixed(0),
      'browser CPU ms/page': r.mode === 'plain' ? '-' : ((1000 * r.browserCpuSeconds) / r.pages).toFixed(0),
    })),
  );
  for (const r of results) if (Object.keys(r.warnings).length > 0) console.log(r.mode, r.warnings);
  writeResult('crawl-render', { pages: PAGES, renderAtOnce: AT_ONCE, load, results });
}

await main();
