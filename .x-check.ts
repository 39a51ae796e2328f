import fs from 'node:fs';
import path from 'node:path';
import { extractPage } from './src/crawler/extract.ts';
const root = '/work/shared/data/sites/fastapi-docs';
const files = (fs.readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.html'));
let n = 0;
for (const f of files) {
  const html = fs.readFileSync(path.join(root, f), 'utf8');
  const r = extractPage(html, 'http://127.0.0.1:8000/' + f);
  const t = html.match(/<title>(.*?)<\/title>/)?.[1];
  const h1 = html.match(/<h1>(.*?)<\/h1>/)?.[1];
  if (r.title !== h1) console.log('TITLE', f, JSON.stringify(r.title), '|', t, '|', h1);
  if (r.markdown.includes("Header Parameter Models")) { n++; console.log("NAV", f); }
  if (r.markdown.length < 300) console.log('SHORT', f, r.markdown.length);
}
console.log('pages with nav phrase', n);
