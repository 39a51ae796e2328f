import fs from 'node:fs';
import path from 'node:path';
import { extractPage } from './src/crawler/extract.ts';
const root = '/work/shared/data/sites/fastapi-docs';
const files = (fs.readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.html'));
const res = [];
for (const f of files) { const html = fs.readFileSync(path.join(root, f), 'utf8'); const s = performance.now(); extractPage(html, 'http://127.0.0.1:8000/' + f); res.push([performance.now() - s, f, html.length]); }
res.sort((a:any, b:any) => b[0] - a[0]); console.log(res.slice(0, 6));
