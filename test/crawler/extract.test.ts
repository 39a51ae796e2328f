import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { extractPage } from '../../src/crawler/extract.ts';

const SITE = '/work/shared/data/sites/fastapi-docs';
const ORIGIN = 'http://127.0.0.1:8000';
const page = (rel: string) => extractPage(readFileSync(path.join(SITE, rel), 'utf8'), `${ORIGIN}/${rel}`);

describe('extractPage on fastapi-docs', () => {
  it('tutorial/first-steps.html: title, headings, code with language, no navigation', () => {
    const r = page('tutorial/first-steps.html');
    assert.equal(r.title, 'First Steps');
    assert.ok(r.markdown.startsWith('# First Steps\n'));
    assert.match(r.markdown, /^## Recap$/m);
    assert.ok(
      r.markdown.includes('```py\nfrom fastapi import FastAPI\n\napp = FastAPI()\n\n\n@app.get("/")'),
    );
    assert.ok(r.markdown.includes('```console\n'));
    assert.match(r.markdown, /^- Import `FastAPI`\.$/m);
    // The sidebar lists every page of the site; none of it may leak into the content.
    for (const navText of ['Header Parameter Models', 'Python Types Intro', 'Tutorial - User Guide']) {
      assert.ok(!r.markdown.includes(navText), navText);
    }
    assert.equal(r.noindex, false);
    assert.equal(r.canonical, undefined);
  });

  it('takes links from the whole page, navigation included, resolved and without fragments', () => {
    const r = page('tutorial/first-steps.html');
    assert.ok(r.links.includes(`${ORIGIN}/tutorial/path-params.html`));
    assert.ok(r.links.includes(`${ORIGIN}/python-types.html`));
    assert.ok(r.links.includes(`${ORIGIN}/async.html`));
    assert.ok(r.links.includes('https://fastapicloud.com/'));
    assert.ok(r.links.every((l) => !l.includes('#')));
    assert.equal(new Set(r.links).size, r.links.length);
  });

  it('keeps tables as GFM and flattens nested tables into their cell', () => {
    const r = page('tutorial/metadata.html');
    assert.equal(r.title, 'Metadata and Docs URLs');
    assert.ok(r.markdown.includes('| Parameter | Type | Description |\n| --- | --- | --- |'));
    assert.match(r.markdown, /^\| `title` \| `str` \| The title of the API\. \|$/m);
    assert.ok(!r.markdown.includes('<table'));
    for (const line of r.markdown.split('\n').filter((l) => l.startsWith('| `contact`')))
      assert.ok(line.endsWith('|'));
  });

  it('names pages whose heading holds code by the heading text', () => {
    assert.equal(page('reference/apirouter.html').title, 'APIRouter class');
    assert.equal(page('about/index.html').title, 'About');
  });

  it('extracts every page of the site; reports the speed', (t) => {
    const files = (readdirSync(SITE, { recursive: true }) as string[]).filter((f) => f.endsWith('.html'));
    assert.equal(files.length, 154);
    const pages = files.map((f) => ({ f, html: readFileSync(path.join(SITE, f), 'utf8') }));
    const started = performance.now();
    for (const p of pages) {
      const r = extractPage(p.html, `${ORIGIN}/${p.f}`);
      assert.ok(r.title.length > 0, p.f);
      assert.ok(!r.title.includes('<'), p.f);
      assert.ok(r.links.length > 100, p.f); // the sidebar
      if (p.f !== 'translation-banner.html' && p.f !== 'newsletter.html') {
        assert.ok(r.markdown.length > 0 && !r.markdown.includes('[Concurrency and async / await]('), p.f);
      }
    }
    const ms = performance.now() - started;
    t.diagnostic(
      `extraction: ${pages.length} pages in ${ms.toFixed(0)} ms, ${(ms / pages.length).toFixed(1)} ms/page`,
    );
  });
});

describe('extractPage on a page without semantic markup', () => {
  const html = readFileSync(path.join(import.meta.dirname, 'fixtures/blog-post.html'), 'utf8');
  const r = extractPage(html, 'https://blog.example.com/posts/tuning-autovacuum?utm=x');

  it('finds the article and drops header, footer, sidebars, cookie banner and scripts', () => {
    assert.equal(r.title, 'Tuning Postgres autovacuum');
    assert.ok(r.markdown.startsWith('# Tuning Postgres autovacuum\n'));
    assert.match(r.markdown, /Autovacuum keeps table bloat under control/);
    for (const junk of [
      'cookies',
      'Example Engineering',
      'older post',
      'Related posts',
      'Copyright',
      'analytics',
      'color: red',
    ]) {
      assert.ok(!r.markdown.includes(junk), junk);
    }
  });

  it('keeps headings, a header-less table, nested lists and code with its language', () => {
    assert.match(r.markdown, /^## The settings that matter$/m);
    assert.match(r.markdown, /^### Per-table settings$/m);
    assert.ok(r.markdown.includes('| Setting | Default | Suggested |\n| --- | --- | --- |'));
    assert.ok(
      r.markdown.includes('```sql\nALTER TABLE events SET (autovacuum_vacuum_scale_factor = 0.01);\n```'),
    );
    assert.match(r.markdown, /1\.\s+Measure dead tuples with `pg_stat_user_tables`\./);
    assert.match(r.markdown, /\n\s+-\s+Start with the ten largest\./);
  });

  it('writes absolute links and images, honouring <base href>', () => {
    assert.ok(r.markdown.includes('[vacuum guide](https://blog.example.com/docs/vacuum.html#tuning)'));
    assert.ok(r.markdown.includes('![dead tuples over time](https://blog.example.com/posts/chart.png)'));
  });

  it('reports links, canonical URL and robots noindex', () => {
    assert.equal(r.canonical, 'https://blog.example.com/posts/tuning-autovacuum');
    assert.equal(r.noindex, true);
    assert.ok(r.links.includes('https://blog.example.com/posts/older-post'));
    assert.ok(r.links.includes('https://blog.example.com/docs/vacuum.html'));
    assert.ok(r.links.includes('https://twitter.com/example'));
  });

  it('copes with fragments and empty documents', () => {
    assert.deepEqual(extractPage('', 'https://e.com/a/b-page'), {
      title: 'b-page',
      markdown: '',
      links: [],
      noindex: false,
      signature: null,
      searchWords: 'b page',
    });
    const tiny = extractPage('<p>Hello <a href="/x">there</a></p>', 'https://e.com/');
    assert.equal(tiny.markdown, 'Hello [there](https://e.com/x)');
    assert.deepEqual(tiny.links, ['https://e.com/x']);
  });

  it('keeps backticks inside code blocks intact with a longer fence', () => {
    const md = extractPage(
      '<main><h1>T</h1><pre><code>a ``` b</code></pre></main>',
      'https://e.com/',
    ).markdown;
    assert.ok(md.includes('````\na ``` b\n````'));
  });
});
