/**
 * Pages that are lists of links (a generated index here) are stored, listed and followed by a crawl but
 * not chunked for search, unless the crawl asks for them with `indexListPages`; what is searched is the
 * pages' text, not their link targets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { benchText } from '../fakes/workspace.ts';
import { withSearch } from '../support/embedding.ts';
import { STORAGE_MODES } from '../support/harness.ts';
import { type ServedRoutes, serveRoutes } from '../support/sites.ts';
import { type CrawlTestApp, startCrawlApp } from './crawl-helpers.ts';

const VOCABULARY =
  'buffer stream record field schema cursor offset window frame batch column row table index key value cache queue worker thread lock timeout retry limit size count byte page segment block file path handle session token scope range'.split(
    ' ',
  );
const FUNCTIONS = Array.from({ length: 12 }, (_, i) => `frobnicate_${String.fromCharCode(97 + i)}`);

function page(title: string, main: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><main>${main}</main></body></html>`;
}

function serveSite(): Promise<ServedRoutes> {
  const routes: Record<string, { body: string }> = {
    '/': {
      body: page(
        'Libframe',
        `<h1>Libframe</h1><p>${benchText(VOCABULARY, 1, 1).paragraph(4)}</p>` +
          '<p>Every function is listed in the <a href="/zqxgenindex.html">general index</a>.</p>',
      ),
    },
    '/zqxgenindex.html': {
      body: page(
        'Index',
        `<h1>Index</h1><ul>${FUNCTIONS.map((f) => `<li><a href="/api/${f}.html">${f}() (in module libframe)</a></li>`).join('')}</ul>`,
      ),
    },
  };
  FUNCTIONS.forEach((f, i) => {
    const t = benchText(VOCABULARY, 100 + i, 1);
    routes[`/api/${f}.html`] = {
      body: page(f, `<h1>${f}</h1><p>${f} ${t.paragraph(3)}</p><h2>Example</h2><p>${t.paragraph(2)}</p>`),
    };
  });
  return serveRoutes(routes);
}

for (const mode of STORAGE_MODES) {
  describe(`crawled lists of links (${mode})`, () => {
    let h: CrawlTestApp;
    let site: ServedRoutes;
    before(async () => {
      site = await serveSite();
      h = await startCrawlApp(mode);
    });
    after(async () => {
      await h?.close();
      await site?.close();
    });

    const chunksOf = async (itemId: string) =>
      (
        await h.t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM chunks WHERE item_id = $1', [
          itemId,
        ])
      )[0]!.n;

    test('an index page is stored and listed, its links followed, but it is not searchable unless asked', async () => {
      const search = await withSearch(h.t);
      const job = await h.crawl({ url: `${site.origin}/`, limit: 50 });
      assert.equal(job.indexListPages, false);
      const done = await h.waitDone(job.id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const items = await h.crawledItems();
      assert.equal(items.length, 2 + FUNCTIONS.length, 'the pages only the index links to were crawled');
      const index = items.find((i) => i.source_url === `${site.origin}/zqxgenindex.html`)!;
      assert.ok(index, 'the index page is stored and listed');
      await search.drain();
      assert.equal(await chunksOf(index.id), 0);
      for (const i of items.filter((x) => x !== index)) assert.ok((await chunksOf(i.id)) > 0, i.source_url);

      const hits = async (query: string, mode: string, key?: string) => {
        const res = await h.t.call('POST', '/api/consume/search', {
          body: { query, mode, limit: 20 },
          ...(key ? { key } : {}),
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return res.body.result as Array<{ source_url: string; chunk_plain_text: string }>;
      };
      // The home page's link target names the index; its text does not: keyword search finds no such word.
      assert.deepEqual(await hits('zqxgenindex', 'keyword'), []);
      const home = (await hits('general index', 'keyword')).find((r) => r.source_url === `${site.origin}/`);
      assert.ok(home, 'anchor text is searchable');
      assert.match(
        home.chunk_plain_text,
        /\[general index\]\(http:\/\/[^)]+\/zqxgenindex\.html\)/,
        'shown with its link',
      );
      const listed = await hits('frobnicate_c in module libframe', 'hybrid');
      assert.ok(listed.length > 0);
      assert.ok(listed.every((r) => !r.source_url.endsWith('/zqxgenindex.html')));

      const asked = await h.crawl({ url: `${site.origin}/`, limit: 50, indexListPages: true }, h.t.orgB.key);
      assert.equal(asked.indexListPages, true);
      assert.equal((await h.waitDone(asked.id, { key: h.t.orgB.key })).status, 'completed');
      await search.drain();
      const indexB = (await h.crawledItems(h.t.orgB.key)).find((i) =>
        i.source_url.endsWith('/zqxgenindex.html'),
      )!;
      assert.ok((await chunksOf(indexB.id)) > 0, 'searchable when the crawl asks for it');
      assert.ok(
        (await hits('frobnicate_c in module libframe', 'hybrid', h.t.orgB.key)).some((r) =>
          r.source_url.endsWith('/zqxgenindex.html'),
        ),
      );
    });

    test('a crawl option that is not a boolean is refused', async () => {
      const res = await h.t.call('POST', '/api/connect/crawling/', {
        body: { url: `${site.origin}/`, indexListPages: 'yes' },
      });
      assert.equal(res.status, 400, JSON.stringify(res.body));
    });
  });
}
