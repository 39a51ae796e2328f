import fs from 'node:fs';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';
const html = fs.readFileSync('/work/shared/data/sites/fastapi-docs/' + (process.argv[2] ?? 'release-notes.html'), 'utf8');
for (let i = 0; i < 3; i++) {
let t = performance.now();
const { document } = parseHTML(html) as any;
const t1 = performance.now();
const links = document.querySelectorAll('a[href]').length;
const t2 = performance.now();
const all = document.querySelectorAll('[class],[id]').length;
const t3 = performance.now();
const main = document.querySelector('main');
const s = main.outerHTML;
const t4 = performance.now();
const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' }); td.use(gfm);
const md = td.turndown(s);
const t5 = performance.now();
const td2 = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
const md2 = td2.turndown(s);
const t6 = performance.now();
console.log({ parse: t1 - t, links: t2 - t1, classes: t3 - t2, outer: t4 - t3, turndownGfm: t5 - t4, turndownPlain: t6-t5, links_n: links, all });
}
