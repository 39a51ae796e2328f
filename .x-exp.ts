import fs from 'node:fs';
import { extractPage } from './src/crawler/extract.ts';
const f = process.argv[2]!;
const r = extractPage(fs.readFileSync(f, 'utf8'), 'http://127.0.0.1:8000/' + f.split('fastapi-docs/')[1]);
console.log(r.title, r.links.length, r.canonical, r.noindex);
console.log(r.markdown.slice(0, Number(process.argv[3] ?? 2500)));
