/**
 * Tags of crawled items add up: an item reached by several crawls carries the union of their tags, a
 * crawl that revisits a page adds its tags and removes none (a user's included), and a re-crawl that
 * changed nothing but tags says so (`retagged`), whether the page answered 200 with the same text or 304.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { type CrawlTestApp, startCrawlApp } from '../http/crawl-helpers.ts';
import { type ServedRoutes, serveRoutes } from '../support/sites.ts';
import { STORAGE_MODES } from '../support/harness.ts';

/** Text no other page shares a phrase of (pages alike would be refused as near-duplicates). */
const words = (topic: string) =>
  `<p>${Array.from({ length: 80 }, (_, i) => `${topic}${i} ${topic}${i * 7}x ${topic}${i * 13}y`).join(' ')}</p>`;

function page(title: string, body: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
}

/** `/` and `/plain` answer 200 every time; `/cached` carries an ETag and answers 304 when it matches. */
function site(): Promise<ServedRoutes> {
  const cached = page('Cached guide', words('caching'));
  return serveRoutes({
    '/': { body: page('Home', `${words('home')}<a href="/plain">plain</a> <a href="/cached">cached</a>`) },
    '/plain': { body: page('Plain guide', words('plain')) },
    '/cached': (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (req.headers['if-none-match'] === '"v1"') {
        res.writeHead(304, { etag: '"v1"' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag: '"v1"' });
      res.end(cached);
    },
  });
}

for (const mode of STORAGE_MODES) {
  describe(`crawl tags add up (${mode})`, () => {
    let h: CrawlTestApp;
    let served: ServedRoutes;
    before(async () => {
      served = await site();
      h = await startCrawlApp(mode);
    });
    after(async () => {
      await h?.close();
      await served?.close();
    });

    const crawl = async (tags: string[]) => {
      const job = await h.crawl({ url: `${served.origin}/`, limit: 10, tags });
      const done = await h.waitDone(job.id, { timeoutMs: 60_000 });
      assert.equal(done.status, 'completed', JSON.stringify(done));
      return done;
    };
    const tagsByPath = async () => {
      const items = await h.crawledItems();
      return Object.fromEntries(items.map((i) => [new URL(i.source_url).pathname, i.tags]));
    };

    test("a second crawl adds its tags, keeps the first crawl's and a user's, and reports the pages retagged", async () => {
      const first = await crawl(['docs']);
      assert.equal(first.outcomes['created'], 3, JSON.stringify(first.outcomes));
      assert.deepEqual(await tagsByPath(), { '/': ['docs'], '/plain': ['docs'], '/cached': ['docs'] });

      // A user pins one page.
      const plain = (await h.crawledItems()).find((i) => i.source_url.endsWith('/plain'))!;
      const put = await h.t.call('PUT', '/api/connect/knowledgebase-items', {
        body: [{ id: plain.id, title: plain.title, tags: ['docs', 'pinned'] }],
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));

      const second = await crawl(['v2']);
      assert.deepEqual(await tagsByPath(), {
        '/': ['docs', 'v2'],
        '/plain': ['docs', 'pinned', 'v2'],
        '/cached': ['docs', 'v2'],
      });
      // Two pages answered 200 with the same text, one 304: all three only gained tags.
      assert.equal(second.outcomes['retagged'], 3, JSON.stringify(second.outcomes));
      assert.equal(second.outcomes['unchanged'] ?? 0, 0);
      assert.equal(second.completed_pages, 3, 'retagged pages are stored pages');

      const third = await crawl(['docs']);
      assert.equal(third.outcomes['unchanged'], 3, JSON.stringify(third.outcomes));
      assert.equal(third.outcomes['retagged'] ?? 0, 0);
      assert.deepEqual((await tagsByPath())['/plain'], ['docs', 'pinned', 'v2']);
    });
  });
}
