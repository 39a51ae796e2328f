/**
 * Short pages keep their own text: a documentation site (fixtures/short-pages-site, Sphinx's layout) whose
 * index, package overview and search page hold a sentence or two under a long footer and sidebar shared by
 * every page. Crawled in both storage modes, every page is stored with its own words, none with the footer,
 * and none is refused as a near-duplicate of another.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type CrawlTestApp, startCrawlApp } from '../http/crawl-helpers.ts';
import { STORAGE_MODES } from '../support/harness.ts';
import { type ServedSite, serveDirectory } from '../support/sites.ts';

const SITE = path.join(import.meta.dirname, 'fixtures/short-pages-site');

/** Each page's path and the text that is its own (under its heading). */
const PAGES: Record<string, string> = {
  '/': 'Lanternfish schedules batch jobs across a fleet of small machines.',
  '/genindex.html': '[run()](',
  '/guide.html': 'A job is a command with the resources it needs',
  '/pkg/overview.html': 'The `lanternfish` package holds the scheduler and its client.',
  '/search.html': 'Searching for multiple words only shows matches that contain all words.',
};

for (const mode of STORAGE_MODES) {
  describe(`short pages under a long shared footer (${mode})`, () => {
    let h: CrawlTestApp;
    let site: ServedSite;
    before(async () => {
      site = await serveDirectory(SITE, { rewriteOrigin: false });
      h = await startCrawlApp(mode, { crawler: { pageConcurrency: 2 } });
    });
    after(async () => {
      await h?.close();
      await site?.close();
    });

    test('every page is stored with its own text, none with the footer, none refused as a near-duplicate', async () => {
      const job = await h.waitDone((await h.crawl({ url: `${site.origin}/`, limit: 20 })).id);
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(job.refused['near_duplicate'], undefined, JSON.stringify(job.refused));
      assert.equal(job.outcomes['near_duplicate'], undefined, JSON.stringify(job.outcomes));

      const rows = await h.t.db.query<{ source_url: string; title: string; content: string }>(
        `SELECT source_url, title, content FROM items WHERE source_type = 'crawl' AND source_url LIKE $1`,
        [`${site.origin}/%`],
      );
      const stored = new Map(rows.map((r) => [new URL(r.source_url).pathname, r]));
      assert.deepEqual([...stored.keys()].sort(), Object.keys(PAGES).sort());
      for (const [pathname, own] of Object.entries(PAGES)) {
        const item = stored.get(pathname)!;
        assert.ok(item.content.includes(own), `${pathname}: ${item.content}`);
        for (const boilerplate of ['Copyright', 'Apache License', 'Quick search'])
          assert.ok(
            !item.content.includes(boilerplate),
            `${pathname} holds "${boilerplate}": ${item.content}`,
          );
      }
      assert.equal(stored.get('/search.html')!.title, 'Search');
      assert.equal(stored.get('/genindex.html')!.title, 'Index');
    });
  });
}
