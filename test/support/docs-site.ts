/**
 * A generated documentation site written to a directory, to serve with `serveDirectory` (sites.ts): a home
 * page linking to its sections, a section index linking to its pages, and pages of their own prose with
 * the site's navigation (every section), a table of contents, previous/next links, a code block and a
 * footer, as a documentation generator lays them out; a robots.txt that allows everything and no sitemap
 * (a crawler finds the pages by their links, as `wget -r` does). Every page is distinct. For crawl benchmarks against `wget -r` on the same files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const WORDS =
  'request response handler route parameter query body header cookie session token scope client server schema model field value default optional required validate serialize deploy config environment database migration index cache worker queue timeout retry stream upload download middleware dependency injection security password hash user account permission role test fixture mock endpoint path method status error exception log metric trace'.split(
    ' ',
  );

/** Deterministic words for page `n`, paragraph `p`. */
function prose(n: number, p: number, words: number): string {
  let x = (n * 7919 + p * 104_729) >>> 0;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    x = (x * 1_103_515_245 + 12_345) >>> 0;
    out.push(WORDS[x % WORDS.length]!);
  }
  return `${out.join(' ')}.`;
}

export interface DocsSite {
  /** Pages written (home and section indexes included). */
  pages: number;
  /** Site paths of every page. */
  paths: string[];
}

/**
 * Writes about `pages` pages (a home page, `sections` section indexes, the rest content pages) under `dir`.
 * Links are root-relative, so any origin serves it.
 */
export function writeDocsSite(dir: string, opts: { pages?: number; sections?: number } = {}): DocsSite {
  const sections = opts.sections ?? 20;
  const perSection = Math.max(1, Math.floor(((opts.pages ?? 500) - 1 - sections) / sections));
  const sectionPath = (s: number) => `/section-${s}/`;
  const pagePath = (s: number, p: number) => `/section-${s}/page-${p}.html`;
  const nav = Array.from(
    { length: sections },
    (_, s) => `<li><a href="${sectionPath(s)}">Section ${s}</a></li>`,
  );
  const layout = (title: string, main: string) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title} - Made-up Docs</title>
<link rel="stylesheet" href="/style.css"></head><body>
<header><a href="/">Made-up Docs</a> <input type="search" placeholder="Search"></header>
<nav class="sidebar"><ul>${nav.join('')}</ul></nav>
<main><article>${main}</article></main>
<footer><p>Made-up Docs is a generated site for benchmarks. Copyright the authors; released under the MIT licence.</p></footer>
</body></html>`;
  const paths: string[] = ['/'];
  const write = (sitePath: string, html: string) => {
    const file = path.join(dir, sitePath.endsWith('/') ? `${sitePath}index.html` : sitePath);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, html);
  };
  write('/', layout('Home', `<h1>Made-up Docs</h1><p>${prose(0, 0, 60)}</p><ul>${nav.join('')}</ul>`));
  for (let s = 0; s < sections; s++) {
    const links = Array.from(
      { length: perSection },
      (_, p) => `<li><a href="${pagePath(s, p)}">Topic ${s}.${p}</a></li>`,
    );
    write(
      sectionPath(s),
      layout(`Section ${s}`, `<h1>Section ${s}</h1><p>${prose(s, 1, 50)}</p><ul>${links.join('')}</ul>`),
    );
    paths.push(sectionPath(s));
    for (let p = 0; p < perSection; p++) {
      const n = 1000 + s * perSection + p;
      const parts = Array.from(
        { length: 5 },
        (_, k) => `<h2 id="part-${k}">Part ${k}</h2><p>${prose(n, k, 70)}</p><p>${prose(n, k + 10, 50)}</p>`,
      );
      const toc = Array.from({ length: 5 }, (_, k) => `<a href="#part-${k}">Part ${k}</a>`).join(' ');
      const prev = p > 0 ? `<a href="${pagePath(s, p - 1)}">Previous</a>` : '';
      const next = p + 1 < perSection ? `<a href="${pagePath(s, p + 1)}">Next</a>` : '';
      const main = `<h1>Topic ${s}.${p}</h1><div class="toc">${toc}</div>${parts.join('')}
<pre><code>def topic_${s}_${p}(value: int) -> int:\n    return value * ${n}</code></pre><div class="pager">${prev} ${next}</div>`;
      write(pagePath(s, p), layout(`Topic ${s}.${p}`, main));
      paths.push(pagePath(s, p));
    }
  }
  writeFileSync(path.join(dir, 'robots.txt'), 'User-agent: *\nAllow: /\n');
  writeFileSync(path.join(dir, 'style.css'), 'body { font-family: sans-serif; }\n');
  return { pages: paths.length, paths };
}
