/**
 * `kb crawl <url> ... --wait` against the fastapi-docs mirror served on loopback, with
 * the crawl endpoint's options (limit, include, exclude, tags); the summary and the JSON result say
 * what the API says.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type CrawlTestApp, FASTAPI_DOCS, startCrawlApp } from '../http/crawl-helpers.ts';
import { type ServedSite, serveDirectory } from '../support/sites.ts';
import { allOutput, jsonLines, kb, keySecret, listen } from './helpers.ts';

describe('kb crawl', () => {
  let c: CrawlTestApp;
  let site: ServedSite;
  let url: string;
  let key: string;

  before(async () => {
    site = await serveDirectory(FASTAPI_DOCS);
    c = await startCrawlApp('pglite');
    url = await listen(c.t);
    key = c.t.orgA.key;
  });
  after(async () => {
    await c?.close();
    await site?.close();
  });

  test('--wait --json: the crawl ends completed with the options applied, as the API reports it', async () => {
    const res = await kb(
      [
        'crawl',
        `${site.origin}/`,
        '--limit',
        '4',
        '--include',
        '^/tutorial/',
        '--include',
        '^/$',
        '--tag',
        'docs',
        '--wait',
        '--job-only',
        '--json',
        '--interval',
        '0.1',
      ],
      { url, key },
    );
    assert.equal(res.code, 0, res.stderr);
    const lines = jsonLines(res.stdout);
    const { job } = lines.at(-1)! as { job: Record<string, any> };
    assert.equal(lines.at(-1)!['type'], 'result');
    assert.equal(job['status'], 'completed');
    assert.deepEqual([job['limit'], job['includePaths'], job['tags']], [4, ['^/tutorial/', '^/$'], ['docs']]);
    const api = await c.get(job['id']);
    assert.deepEqual(
      [job['completed_pages'], job['total_pages'], job['outcomes']],
      [api.completed_pages, api.total_pages, api.outcomes],
    );
    assert.equal(job['completed_pages'], 4);
    const items = await c.crawledItems();
    assert.equal(items.length, 4);
    for (const item of items) {
      const p = new URL(item.source_url).pathname;
      assert.ok(p === '/' || p.startsWith('/tutorial/'), item.source_url);
      assert.ok(item.tags.includes('docs'));
    }
  });

  test('--wait for people: progress lines while it runs, then the pages, outcomes and what was not kept', async () => {
    const res = await kb(
      [
        'crawl',
        `${site.origin}/`,
        '--limit',
        '3',
        '--exclude',
        '^/tutorial/',
        '--wait',
        '--job-only',
        '--interval',
        '0.1',
      ],
      {
        url,
        key,
      },
    );
    assert.equal(res.code, 0, res.stderr);
    assert.match(
      res.stderr,
      /^\d+:\d\d crawl http:\/\/127\.0\.0\.1:\d+\/ (idle|scraping|completed): \d+\/\d+ pages \(limit 3\)/m,
    );
    assert.match(res.stdout, /^crawl http:\/\/127\.0\.0\.1:\d+\/ \(job [^)]+\) completed in /m);
    assert.match(res.stdout, /^ {2}pages {6}3 of limit 3$/m);
    assert.match(
      res.stdout,
      /^ {2}not kept {3}\w+: \d+[\s\S]*\n +excluded: \d+ \(e\.g\. http:\/\/127\.0\.0\.1:\d+\/tutorial\//m,
    );
  });

  test('a pattern the API refuses: exit 1 with its message naming the pattern', async () => {
    const res = await kb(['crawl', `${site.origin}/`, '--include', '^/(?=a)', '--wait', '--job-only'], {
      url,
      key,
    });
    assert.equal(res.code, 1);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^kb: .*\^\/\(\?=a\).* \(400 invalid_request\)\n$/);
  });

  test('--render --max-concurrency --delay-ms reach the API as the job shows them', async () => {
    const res = await kb(
      [
        'crawl',
        `${site.origin}/`,
        '--limit',
        '1',
        '--render',
        '--max-concurrency',
        '3',
        '--delay-ms',
        '250',
        '--json',
      ],
      { url, key },
    );
    assert.equal(res.code, 0, res.stderr);
    const created = jsonLines(res.stdout).at(-1)! as { id: string };
    // Rendering is slow and this test needs only the job's options: stop it at once.
    const cancel = await c.t.call('DELETE', `/api/connect/crawling/${created.id}`);
    // 409: it ended first (one page), which is as good.
    assert.ok([200, 409].includes(cancel.status), JSON.stringify(cancel.body));
    const job = await c.get(created.id);
    assert.deepEqual(
      [job.renderJavaScript, job.maxConcurrency, job.delayMs],
      [true, 3, 250],
      JSON.stringify(job),
    );
  });

  test('a pace the CLI cannot send: exit 2 in one line; one beyond the operator: the API’s 400; no job', async () => {
    const jobs = async () => (await c.t.call('GET', '/api/connect/crawling/')).body.total as number;
    const before = await jobs();
    for (const flags of [
      ['--max-concurrency', '0'],
      ['--max-concurrency', 'two'],
      ['--delay-ms', '-5'],
      ['--delay-ms', '1.5'],
    ]) {
      const res = await kb(['crawl', `${site.origin}/`, ...flags], { url, key });
      assert.equal(res.code, 2, `${flags.join(' ')}: ${res.stderr}`);
      assert.equal(res.stdout, '');
      assert.match(
        res.stderr,
        new RegExp(`^kb: ${flags[0]} must be a whole number from \\d+ to [\\d_,]+, not "${flags[1]}"\n$`),
      );
    }
    // The service's ceiling is the operator's KB_CRAWL_MAX_CONCURRENCY (4 by default).
    const beyond = await kb(['crawl', `${site.origin}/`, '--max-concurrency', '9'], { url, key });
    assert.equal(beyond.code, 1);
    assert.equal(beyond.stdout, '');
    assert.match(beyond.stderr, /^kb: body\.maxConcurrency: at most 4 .*\(400 invalid_request\)\n$/);
    assert.equal(await jobs(), before, 'no job was created');
  });

  test('the key appears in no output', () => {
    const secret = keySecret(key);
    assert.ok(allOutput.length >= 6);
    for (const out of allOutput) assert.ok(!out.includes(secret));
  });
});
