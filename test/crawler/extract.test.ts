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

  it('keeps headings, a header-less table (under an empty header row), nested lists and code with its language', () => {
    assert.match(r.markdown, /^## The settings that matter$/m);
    assert.match(r.markdown, /^### Per-table settings$/m);
    assert.ok(
      r.markdown.includes(
        '|  |  |  |\n| --- | --- | --- |\n| Setting | Default | Suggested |\n| autovacuum\\_vacuum\\_scale\\_factor | 0.2 | 0.01 |',
      ),
    );
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

const fixture = (name: string, url: string) =>
  extractPage(readFileSync(path.join(import.meta.dirname, 'fixtures', name), 'utf8'), url);

describe("extractPage keeps a page's structure", () => {
  it('a page laid out with a table becomes its text, the data table inside it stays a table', () => {
    const r = fixture('layout-table-home.html', 'http://rowing.example/');
    assert.equal(r.title, 'Harbour Rowing Club');
    assert.match(r.markdown, /^## Welcome to the boathouse$/m);
    assert.match(r.markdown, /^The Harbour Rowing Club has rowed on the estuary since 1894\./m);
    assert.match(r.markdown, /^## Opening hours$/m);
    assert.ok(
      r.markdown.includes(
        '| Date | Regatta | Boats |\n| --- | --- | --- |\n| 3 May | Spring Head | Eights, fours |\n| 14 June | Estuary Sprints | Sculls, pairs |',
      ),
    );
    // Every table line is a line of the regatta table: no cell holds the page.
    const tableLines = r.markdown.split('\n').filter((l) => l.startsWith('|') || l.endsWith('|'));
    assert.equal(tableLines.length, 4, r.markdown);
    assert.ok(!r.markdown.includes('\\|'), 'no table escaped into a cell');
  });

  it('a table without a header row gets an empty one, never its first row promoted; row headers stay in their rows', () => {
    const r = fixture('headerless-table.html', 'https://docs.example/limits');
    assert.ok(
      r.markdown.includes(
        '|  |  |  |\n| --- | --- | --- |\n| Concurrent jobs | 50 | per organization |\n| Job runtime | 24 hours | per attempt |\n| Output kept | 7 days | per job |',
      ),
      r.markdown,
    );
    assert.ok(
      r.markdown.includes(
        '|  | Free | Team |\n| --- | --- | --- |\n| Machines | 2 | 40 |\n| Storage | 5 GB | 1 TB |',
      ),
      r.markdown,
    );
    assert.ok(!r.markdown.includes('<table'));
  });

  it('a definition list becomes each term in bold over its definition, in one paragraph', () => {
    const r = fixture('glossary.html', 'https://docs.example/glossary');
    assert.equal(r.title, 'Glossary');
    assert.ok(
      r.markdown.includes('**Backfill**\nRunning a scheduled job for past dates it missed, oldest first.'),
    );
    assert.ok(
      r.markdown.includes(
        '**Claim**\n**Lease**\nThe hold a worker takes on a job while it runs it.\n\nA lease that is not renewed expires',
      ),
      r.markdown,
    );
    assert.ok(
      r.markdown.includes(
        '**[Queue](https://docs.example/queues.html)**\nAn ordered list of jobs waiting for a machine with room.',
      ),
    );
  });
});

describe('extractPage on short pages', () => {
  const site = path.join(import.meta.dirname, 'fixtures/short-pages-site');
  const sitePage = (rel: string) =>
    extractPage(readFileSync(path.join(site, rel), 'utf8'), `http://docs.example/${rel}`);

  it("stores a short page's own text, never the long footer or the sidebar around it", () => {
    const expected: Record<string, RegExp> = {
      'genindex.html':
        /^# Index\n[\s\S]*\[lanternfish\]\(http:\/\/docs\.example\/pkg\/overview\.html#module-lanternfish\)/,
      'pkg/overview.html':
        /^# Package overview\n\nThe `lanternfish` package holds the scheduler and its client\.$/,
      'search.html': /^# Search\n\nSearching for multiple words only shows matches that contain all words\.$/,
      'index.html': /^# Lanternfish\n\nLanternfish schedules batch jobs across a fleet of small machines\./,
    };
    for (const [rel, pattern] of Object.entries(expected)) {
      const r = sitePage(rel);
      assert.match(r.markdown, pattern, `${rel}: ${r.markdown}`);
      for (const boilerplate of ['Copyright', 'Sphinx', 'Quick search', 'Navigation'])
        assert.ok(!r.markdown.includes(boilerplate), `${rel}: ${boilerplate}`);
      assert.equal(r.signature, null, `${rel}: too short to compare`);
    }
    assert.ok(sitePage('guide.html').signature, 'a page with a few paragraphs is fingerprinted');
  });

  it('trusts a short <main> over a longer block elsewhere, even one not named as a footer', () => {
    const footer = 'Lanternfish is distributed under the Apache License. '.repeat(6);
    const r = extractPage(
      `<html><head><title>Changelog</title></head><body><main><h1>Changelog</h1><p>No releases yet.</p></main><div class="bottom-band"><p>${footer}</p></div></body></html>`,
      'https://docs.example/changelog',
    );
    assert.equal(r.markdown, '# Changelog\n\nNo releases yet.');
    // A <main> a script fills: its heading or nothing (refused as empty), never the block beside it.
    const shell = extractPage(
      `<html><head><title>Dashboard · App</title></head><body><h1>Dashboard</h1><main></main><div class="bottom-band"><p>${footer}</p></div></body></html>`,
      'https://app.example/dashboard',
    );
    assert.equal(shell.markdown, '# Dashboard');
    assert.equal(shell.signature, null);
  });
});
