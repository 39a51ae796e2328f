/**
 * A crawl's problems that a person can act on are on the job, in both storage modes: an unreadable
 * sitemap, a robots.txt answering 5xx, a redirect not followed and a page over the size cap each appear
 * in `warnings` of GET /crawling/{id} and of the list, and in `kb crawl --wait`'s summary. A sitemap
 * written for another address of the site is one warning, not its URLs counted as `external` refusals.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { kb, listen } from '../cli/helpers.ts';
import { STORAGE_MODES } from '../support/harness.ts';
import { type ServedRoutes, serveRoutes } from '../support/sites.ts';
import { type CrawlTestApp, startCrawlApp } from './crawl-helpers.ts';

const MAX_PAGE_BYTES = 32 * 1024;
const page = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
const prose = (words: number) =>
  `<p>${'The trail climbs through pine forest above the lake. '.repeat(words / 9)}</p>`;

interface Warning {
  code: string;
  message: string;
  subject: string;
  count: number;
}

for (const mode of STORAGE_MODES) {
  describe(`crawl warnings (${mode})`, () => {
    let c: CrawlTestApp;
    let site: ServedRoutes;
    let other: ServedRoutes;
    let elsewhere: ServedRoutes;
    let url: string;

    before(async () => {
      // A second host whose robots.txt fails: as RFC 9309 asks, nothing there is crawled.
      other = await serveRoutes({
        '/robots.txt': { status: 503, headers: { 'content-type': 'text/plain' }, body: 'down' },
        '/page': { body: page('Other', prose(60)) },
      });
      site = await serveRoutes({
        '/robots.txt': (_req, res, { origin }) => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(`User-agent: *\nAllow: /\nSitemap: ${origin}/broken-sitemap.xml\n`);
        },
        '/broken-sitemap.xml': { status: 500, body: 'oops' },
        '/': {
          body: page(
            'Home',
            `${prose(60)}<a href="/big">Big</a> <a href="/old">Old</a> <a href="${other.origin}/page">Other</a>`,
          ),
        },
        '/big': { body: page('Big', prose(9_000)) },
        '/old': (_req, res) => {
          res.writeHead(301, { location: '/private/page' });
          res.end();
        },
        '/private/page': { body: page('Private', prose(60)) },
      });
      // A sitemap generated for another address of the site (the mirror's own port, say).
      elsewhere = await serveRoutes({
        '/': { body: page('Elsewhere', `${prose(60)}<a href="/a">A</a>`) },
        '/a': { body: page('A', prose(80)) },
        '/sitemap.xml': (_req, res, { origin }) => {
          const locs = [`${origin}/a`, ...[1, 2, 3].map((i) => `http://127.0.0.1:8000/p${i}.html`)];
          res.writeHead(200, { 'content-type': 'application/xml' });
          res.end(
            `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<url><loc>${l}</loc></url>`).join('')}</urlset>`,
          );
        },
      });
      c = await startCrawlApp(mode, { crawler: { maxPageBytes: MAX_PAGE_BYTES } });
      url = await listen(c.t);
    });
    after(async () => {
      await c?.close();
      await site?.close();
      await other?.close();
      await elsewhere?.close();
    });

    test('each problem is a warning on the job, in the API and in the CLI summary', async () => {
      const run = await kb(
        [
          'crawl',
          `${site.origin}/`,
          '--external',
          '--exclude',
          '^/private',
          '--wait',
          '--job-only',
          '--interval',
          '0.1',
        ],
        { url, key: c.t.orgA.key },
      );
      assert.equal(run.code, 0, run.stderr);
      const id = /\(job ([^)]+)\)/.exec(run.stdout)?.[1];
      assert.ok(id, run.stdout);
      const job = (await c.get(id)) as unknown as { warnings: Warning[]; warning_count: number };
      const byCode = new Map(job.warnings.map((w) => [w.code, w]));
      const expected: Array<[string, string, RegExp]> = [
        ['sitemap_unreadable', `${site.origin}/broken-sitemap.xml`, /could not be read \(HTTP 500\)/],
        ['robots_unreadable', `${other.origin}/robots.txt`, /HTTP 503.*nothing on .* was crawled/],
        ['redirect_refused', `${site.origin}/old`, /redirects to .*\/private\/page.*excludePaths/],
        ['page_too_large', `${site.origin}/big`, /larger than the 32 KiB page size cap; only its first/],
      ];
      for (const [code, subject, message] of expected) {
        const w = byCode.get(code);
        assert.ok(w, `${code} in ${JSON.stringify(job.warnings)}`);
        assert.equal(w.subject, subject);
        assert.match(w.message, message);
        assert.equal(w.count, 1);
        assert.match(run.stdout, new RegExp(`${code}: `), `the summary names ${code}:\n${run.stdout}`);
      }
      assert.equal(job.warning_count, 4, JSON.stringify(job.warnings));
      assert.match(run.stdout, /^ {2}warnings {3}/m);

      const list = await c.t.call('GET', '/api/connect/crawling/?limit=5');
      assert.equal(list.status, 200);
      const listed = (list.body.data as Array<{ id: string; warnings: Warning[] }>).find((j) => j.id === id);
      assert.deepEqual(listed?.warnings, job.warnings, 'the list shows the same warnings');
    });

    test("a sitemap listing another host's URLs is one warning, not `external` refusals", async () => {
      const created = await c.crawl({ url: `${elsewhere.origin}/` });
      const job = (await c.waitDone(created.id)) as Awaited<ReturnType<CrawlTestApp['get']>> & {
        warnings: Warning[];
      };
      assert.equal(job.status, 'completed');
      assert.equal(job.refused['external'], undefined, JSON.stringify(job.refused));
      assert.deepEqual(
        job.warnings.map((w) => [w.code, w.subject, w.count]),
        [['sitemap_other_host', '127.0.0.1:8000', 3]],
      );
      assert.match(job.warnings[0]!.message, /list 3 URLs on 127\.0\.0\.1:8000, not on 127\.0\.0\.1:\d+/);
    });
  });
}
