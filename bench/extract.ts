/**
 * Page extraction alone (src/crawler/extract.ts: parse, boilerplate, main content, markdown, MinHash), on
 * one thread, over the 154 pages of the fastapi-docs mirror (4 MB of HTML): what one extraction thread can
 * give a crawl, without fetching or storing. Rounds after the first show the warmed-up rate.
 *
 * Split columns: linkedom's parse alone, and parse plus markdown of the page's <article> (no boilerplate
 * removal, no Readability), so a change to the parser or the converter shows where it lands.
 *
 * Run: `node bench/extract.ts` (BENCH_ROUNDS, default 4).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseHTML } from 'linkedom';
import { extractPage } from '../src/crawler/extract.ts';
import { elementToMarkdown } from '../src/lib/html-to-markdown.ts';
import { printTable, writeResult } from './lib.ts';

const SITE = fileURLToPath(new URL('../../shared/data/sites/fastapi-docs', import.meta.url));
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 4);

function htmlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) return htmlFiles(p);
      return name.endsWith('.html') ? [p] : [];
    });
}

const pages = htmlFiles(SITE).map((file) => ({
  url: `http://docs.test/${path.relative(SITE, file)}`,
  html: readFileSync(file, 'utf8'),
}));
const megabytes = pages.reduce((n, p) => n + Buffer.byteLength(p.html), 0) / 1e6;

function timed(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

const rows: Array<Record<string, string>> = [];
const raw: unknown[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const whole = timed(() => {
    for (const p of pages) extractPage(p.html, p.url);
  });
  const parse = timed(() => {
    for (const p of pages) parseHTML(p.html);
  });
  const parseAndMarkdown = timed(() => {
    for (const p of pages) {
      const { document } = parseHTML(p.html) as unknown as { document: Document };
      const root = document.querySelector('article') ?? document.body;
      if (root) elementToMarkdown(root);
    }
  });
  raw.push({ round, whole, parse, parseAndMarkdown });
  rows.push({
    round: String(round),
    'extractPage ms': whole.toFixed(0),
    'pages/s': ((pages.length / whole) * 1000).toFixed(0),
    'MB/s': ((megabytes / whole) * 1000).toFixed(1),
    'linkedom parse ms': parse.toFixed(0),
    'parse + markdown ms': parseAndMarkdown.toFixed(0),
  });
}
printTable(
  `Extraction on one thread: ${pages.length} fastapi-docs pages, ${megabytes.toFixed(1)} MB of HTML`,
  rows,
);
writeResult('extract', { pages: pages.length, megabytes, rounds: raw });
