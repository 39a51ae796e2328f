/**
 * A generated reference manual served on loopback: the documentation pages that look most alike and are
 * still distinct. One page per function of a made-up library, all from one template (signature, a short
 * description of its own, a parameters table whose rows many functions share word for word, returns,
 * raises, an example and "see also"), functions coming in families that differ in a name and a type
 * (`read_int`, `read_float`...), plus a module index per module and a home page. Every page is distinct:
 * a crawl must store every one (none collapses as a near-duplicate of another).
 */
import { benchText } from '../fakes/workspace.ts';
import { type RouteHandler, type ServedRoutes, serveRoutes } from './sites.ts';

const VOCABULARY =
  'buffer stream record field schema cursor offset window frame batch column row table index key value cache queue worker thread lock timeout retry limit size count byte page segment block file path handle session token scope range filter order group merge split join parse format encode decode read write flush close open seek commit rollback snapshot'.split(
    ' ',
  );
/**
 * The words of the descriptions: a few hundred, as a manual's prose has (its entries' descriptions say
 * different things, so they use words the others do not).
 */
const PROSE = [
  'al',
  'ben',
  'cor',
  'dra',
  'es',
  'fil',
  'gor',
  'han',
  'ir',
  'jun',
  'kel',
  'lum',
  'mor',
  'nex',
  'ost',
  'pra',
  'quil',
  'ros',
  'sten',
  'tor',
].flatMap((a) =>
  [
    'ad',
    'bet',
    'cam',
    'dor',
    'ent',
    'fix',
    'gal',
    'hem',
    'ion',
    'lap',
    'mit',
    'nod',
    'pex',
    'rum',
    'sil',
    'tak',
    'ure',
    'vel',
    'wen',
    'yst',
  ].map((b) => a + b),
);
const MODULES = ['io', 'codec', 'store', 'net', 'tasks', 'query'];
const VERBS = ['read', 'write', 'parse', 'encode', 'decode', 'open', 'close', 'flush', 'seek', 'merge'];
const TYPES = ['int', 'float', 'str', 'bytes'];
/** Parameter rows shared word for word by the functions that take them. */
const PARAMETERS: Record<string, string> = {
  source: 'The stream, path or buffer to work on. Paths are opened in binary mode and closed afterwards.',
  timeout: 'Seconds to wait before giving up; None waits forever. A timeout raises TimeoutError.',
  encoding: 'Text encoding used for names and strings, utf-8 unless the header names another one.',
  strict: 'When true, malformed input raises FormatError instead of being skipped with a warning.',
  limit: 'The most records to return; None returns all of them. Records past the limit are not read.',
  offset: 'Where to start, in bytes from the start of the source. Negative offsets count from its end.',
};

export interface ReferenceManual extends ServedRoutes {
  /** Every page's path (all distinct). */
  paths: string[];
}

/** Builds the manual (`functions` function pages, default 120) and serves it. */
export async function serveReferenceManual(opts: { functions?: number; seed?: number } = {}) {
  const seed = opts.seed ?? 5;
  const count = opts.functions ?? 120;
  const paramNames = Object.keys(PARAMETERS);
  const functions = Array.from({ length: count }, (_, i) => {
    const t = benchText(PROSE, 50_000 + i, seed);
    const module = MODULES[i % MODULES.length]!;
    const verb = VERBS[Math.floor(i / MODULES.length) % VERBS.length]!;
    const type = TYPES[Math.floor(i / (MODULES.length * VERBS.length)) % TYPES.length]!;
    const name = `${verb}_${type}`;
    const params = paramNames.filter((_, k) => (i + k) % 3 !== 0);
    return {
      module,
      name,
      path: `/reference/${module}/${name}.html`,
      params,
      type,
      summary: `${t.sentence(10)} ${t.sentence(8)}`,
      note: t.sentence(12),
    };
  });
  const layout = (title: string, main: string) => `<!doctype html>
<html><head><title>${title} - libframe 3.2 documentation</title></head><body>
<div class="sidebar"><a href="/">libframe</a><ul>${MODULES.map((m) => `<li><a href="/reference/${m}/index.html">${m}</a></li>`).join('')}</ul></div>
<div class="body" role="main">${main}</div>
<div class="footer">Copyright 2026, the libframe authors. Created using a documentation generator.</div>
</body></html>`;
  const functionMain = (f: (typeof functions)[number]) => `<h1>${f.module}.${f.name}</h1>
<pre><code>${f.module}.${f.name}(${f.params.join(', ')}) -&gt; ${f.type}</code></pre>
<p>${f.summary}</p>
<h2>Parameters</h2>
<table><tr><th>Name</th><th>Description</th></tr>${f.params.map((p) => `<tr><td>${p}</td><td>${PARAMETERS[p]}</td></tr>`).join('')}</table>
<h2>Returns</h2><p>The value read, as ${f.type}.</p>
<h2>Raises</h2><p>FormatError when the input is malformed and strict is set. TimeoutError when the timeout passes.</p>
<h2>Notes</h2><p>${f.note}</p>
<h2>Example</h2><pre><code>from libframe import ${f.module}
value = ${f.module}.${f.name}(source, timeout=5)</code></pre>
<p>See also: ${functions
    .filter((g) => g.module === f.module && g !== f)
    .slice(0, 3)
    .map((g) => `<a href="${g.path}">${g.name}</a>`)
    .join(', ')}</p>`;
  const moduleMain = (m: string) => {
    const t = benchText(VOCABULARY, 60_000 + MODULES.indexOf(m), seed);
    return `<h1>libframe.${m}</h1><p>${t.paragraph(2)}</p><ul>${functions
      .filter((f) => f.module === m)
      .map((f) => `<li><a href="${f.path}">${f.name}</a>: ${f.summary.split('. ')[0]}.</li>`)
      .join('')}</ul>`;
  };
  const routes: Record<string, RouteHandler> = {
    '/': {
      body: layout(
        'Home',
        `<h1>libframe</h1><p>${benchText(VOCABULARY, 70_000, seed).paragraph(3)}</p><ul>${MODULES.map((m) => `<li><a href="/reference/${m}/index.html">${m}</a></li>`).join('')}</ul>`,
      ),
    },
  };
  for (const m of MODULES) routes[`/reference/${m}/index.html`] = { body: layout(m, moduleMain(m)) };
  for (const f of functions) routes[f.path] = { body: layout(`${f.module}.${f.name}`, functionMain(f)) };
  const served = await serveRoutes(routes);
  return {
    ...served,
    paths: ['/', ...MODULES.map((m) => `/reference/${m}/index.html`), ...functions.map((f) => f.path)],
  } satisfies ReferenceManual;
}
