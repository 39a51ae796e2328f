/**
 * The whole way through the API: crawl pages of the fastapi-docs mirror, list them, embed them with the
 * real local model, and find a crawled sentence with semantic search.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { withSearch } from '../support/embedding.ts';
import { STORAGE_MODES } from '../support/harness.ts';
import { type ServedSite, serveDirectory } from '../support/sites.ts';
import { type CrawlTestApp, FASTAPI_DOCS, startCrawlApp } from './crawl-helpers.ts';

for (const mode of STORAGE_MODES) {
  describe(`crawl then search (${mode})`, () => {
    let h: CrawlTestApp;
    let site: ServedSite;
    before(async () => {
      site = await serveDirectory(FASTAPI_DOCS);
      h = await startCrawlApp(mode);
    });
    after(async () => {
      await h?.close();
      await site?.close();
    });

    test('crawled pages become searchable items', async () => {
      const search = await withSearch(h.t);
      const job = await h.crawl({
        url: `${site.origin}/`,
        includePaths: ['^/tutorial/(cors|debugging)\\.html$'],
        limit: 10,
        tags: ['fastapi'],
      });
      const done = await h.waitDone(job.id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.total_pages, 2);
      const items = await h.crawledItems();
      assert.deepEqual(items.map((i) => i.title).sort(), [
        'CORS (Cross-Origin Resource Sharing)',
        'Debugging',
      ]);
      assert.equal(await search.drain(), 2);

      const res = await h.t.call('POST', '/api/consume/search', {
        body: {
          query: 'a frontend in a browser talks to a backend that lives in a different origin',
          limit: 3,
          tags: ['fastapi'],
        },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const top = res.body.result[0];
      assert.equal(top.source_url, `${site.origin}/tutorial/cors.html`);
      assert.equal(top.source_type, 'crawl');
      assert.equal(top.title, 'CORS (Cross-Origin Resource Sharing)');
      assert.match(top.chunk_plain_text, /origin/i);
    });
  });
}
