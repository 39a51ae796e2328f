/**
 * Cost of the crawler's near-duplicate fingerprint per page (`node bench/fingerprint.ts`): every page of
 * the fastapi-docs mirror extracted once, then the MinHash signature (src/crawler/fingerprint.ts) and the
 * extraction timed over several rounds on the same texts, both on this thread (in the service both run in
 * the extraction worker). Writes bench/results/fingerprint.json.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractPage } from '../src/crawler/extract.ts';
import { textSignature } from '../src/crawler/fingerprint.ts';
import { printTable, writeResult } from './lib.ts';

const SITE = fileURLToPath(new URL('../../shared/data/sites/fastapi-docs', import.meta.url));
const ROUNDS = 5;

const files = (readdirSync(SITE, { recursive: true }) as string[]).filter((f) => f.endsWith('.html'));
const pages = files.map((f) => ({
  url: `http://127.0.0.1:8000/${f}`,
  html: readFileSync(path.join(SITE, f), 'utf8'),
}));
const texts = pages.map((p) => extractPage(p.html, p.url).markdown);
const words = texts.reduce((n, t) => n + (t.match(/[\p{L}\p{N}]+/gu)?.length ?? 0), 0);

const time = (fn: () => void): number => {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    fn();
    best = Math.min(best, performance.now() - start);
  }
  return best / pages.length;
};
const signatureMs = time(() => {
  for (const t of texts) textSignature(t);
});
const extractMs = time(() => {
  for (const p of pages) extractPage(p.html, p.url);
});
const result = { pages: pages.length, wordsPerPage: words / pages.length, signatureMs, extractMs };
printTable(`Near-duplicate fingerprint, fastapi-docs (${pages.length} pages), best of ${ROUNDS} rounds`, [
  {
    'words / page': (words / pages.length).toFixed(0),
    'signature ms / page': signatureMs.toFixed(3),
    'extraction ms / page (signature included)': extractMs.toFixed(2),
    share: `${((100 * signatureMs) / extractMs).toFixed(1)}%`,
  },
]);
writeResult('fingerprint', result);
