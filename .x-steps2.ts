import fs from 'node:fs';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
const html = fs.readFileSync('/work/shared/data/sites/fastapi-docs/' + (process.argv[2] ?? 'release-notes.html'), 'utf8');
for (let i = 0; i < 3; i++) {
const { document } = parseHTML(html) as any;
const main = document.querySelector('main');
const td2 = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
const t5 = performance.now();
const md2 = td2.turndown(main);
const t6 = performance.now();
const md3 = td2.turndown(main.outerHTML);
const t7 = performance.now();
console.log({ node: t6-t5, str: t7-t6, same: md2 === md3, l: md2.length, l3: md3.length });
}
