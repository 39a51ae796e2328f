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
import { duplicateOf, signatureSimilarity, textSignature } from '../src/crawler/fingerprint.ts';
import { serveListedStore } from '../test/support/catalogue-listed.ts';
import { serveCatalogue } from '../test/support/catalogue-site.ts';
import { serveStore } from '../test/support/catalogue-store.ts';
import { serveReferenceManual } from '../test/support/reference-manual.ts';
import { isVariantText } from '../src/crawler/word-diff.ts';
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

// Near-duplicate verdicts on every pair of pages of each shape: distinct pages must never collapse (fastapi-
// docs, a generated reference manual, the stores' distinct pages), and a store's variant pages should
// collapse into their product or a sibling. Similarity and containment distributions per kind of pair.
const quantiles = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (f: number) => (s.length ? s[Math.floor(f * (s.length - 1))]!.toFixed(2) : '-');
  return `${q(0)} / ${q(0.5)} / ${q(0.99)} / ${q(1)}`;
};
async function servedSignatures(
  origin: string,
  paths: readonly string[],
  contentOf: (u: string) => string | null,
) {
  const out: Page[] = [];
  for (const p of paths) {
    const html = await (await fetch(origin + p)).text();
    const text = extractPage(html, origin + p).markdown;
    out.push({ path: p, content: contentOf(origin + p), text, signature: textSignature(text) });
  }
  return out;
}
interface Page {
  path: string;
  content: string | null;
  text: string;
  signature: number[] | null;
}
function verdicts(name: string, pages: Page[]) {
  const same = { sim: [] as number[], caught: 0, pairs: 0 };
  const distinct = { sim: [] as number[], collapsed: 0, pairs: 0, example: '' };
  for (const a of pages)
    for (const b of pages) {
      if (a === b || !a.signature || !b.signature) continue;
      const verdict = duplicateOf(a.signature, b.signature);
      // As the crawl decides: a variant verdict stands once the words confirm it (word-diff.ts).
      const v = verdict && (verdict.kind === 'similar' || isVariantText(a.text, b.text));
      const sim = signatureSimilarity(a.signature, b.signature);
      if (a.content !== null && a.content === b.content) {
        same.pairs++;
        same.sim.push(sim);
        // A product page with reviews is no variant of its variant: only the variant's direction counts.
        if (v) same.caught++;
      } else {
        distinct.pairs++;
        distinct.sim.push(sim);
        if (v) {
          distinct.collapsed++;
          distinct.example ||= `${a.path} -> ${b.path}`;
        }
      }
    }
  return {
    shape: name,
    pages: String(pages.length),
    'distinct pairs: similarity min/p50/p99/max': quantiles(distinct.sim),
    'distinct pairs collapsed': `${distinct.collapsed} of ${distinct.pairs}${distinct.example ? ` (${distinct.example})` : ''}`,
    'same-page pairs: similarity min/p50/p99/max': quantiles(same.sim),
    'same-page pairs collapsed (directed)': same.pairs ? `${same.caught} of ${same.pairs}` : '-',
  };
}
const shapes: Array<Record<string, string>> = [];
shapes.push(
  verdicts(
    'fastapi-docs',
    texts.map((t, i) => ({ path: files[i]!, content: null, text: t, signature: textSignature(t) })),
  ),
);
{
  const m = await serveReferenceManual();
  shapes.push(verdicts('reference manual', await servedSignatures(m.origin, m.paths, () => null)));
  await m.close();
}
for (const [name, serve] of [
  ['store: variants by links, reviews', serveStore],
  ['store: query variants in sitemap, facets', serveListedStore],
] as const) {
  const s = await serve();
  shapes.push(verdicts(name, await servedSignatures(s.origin, s.allPaths, s.contentOf)));
  await s.close();
}
{
  const c = await serveCatalogue({ variantUrls: 'path', products: 40, categories: 10 });
  const paths = ['/', ...c.productPaths.flatMap((p) => [p, `${p}/red-s`, `${p}/blue-m`, `${p}/green-l`])];
  shapes.push(
    verdicts('catalogue-site (path variants)', await servedSignatures(c.origin, paths, c.contentOf)),
  );
  await c.close();
}
printTable(
  'Near-duplicate verdicts on every ordered pair of pages (fingerprint.ts duplicateOf, variants confirmed word by word)',
  shapes,
);

writeResult('fingerprint', { ...result, shapes });
