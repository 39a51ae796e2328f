import fs from 'node:fs';
import path from 'node:path';
import { extractPage } from './src/crawler/extract.ts';
const root = '/work/shared/data/sites/fastapi-docs';
const files = (fs.readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.html'));
const pages = files.map((f) => ({ f, html: fs.readFileSync(path.join(root, f), 'utf8') }));
for (let round = 0; round < 3; round++) {
  const t = performance.now(); let bytes = 0; let md = 0;
  const times: number[] = [];
  for (const p of pages) { const s = performance.now(); const r = extractPage(p.html, 'http://127.0.0.1:8000/' + p.f); times.push(performance.now() - s); bytes += p.html.length; md += r.markdown.length; }
  const total = performance.now() - t;
  times.sort((a, b) => a - b);
  console.log(`round ${round}: ${pages.length} pages, ${(total / pages.length).toFixed(2)} ms/page mean, p50 ${times[times.length>>1]!.toFixed(2)}, p95 ${times[Math.floor(times.length*0.95)]!.toFixed(2)}, max ${times.at(-1)!.toFixed(1)}; html ${(bytes/1e6).toFixed(1)}MB md ${(md/1e6).toFixed(1)}MB`);
}
