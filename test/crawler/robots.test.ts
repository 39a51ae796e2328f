import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fetchRobots, parseRobots, robotsProductToken } from '../../src/crawler/robots.ts';
import { createOutboundFetch, OutboundBlockedError } from '../../src/net/outbound.ts';
import { type ServedRoutes, type ServedSite, serveDirectory, serveRoutes } from '../support/sites.ts';

const UA = 'KbTest/1.0 (+https://example.invalid/bot)';
const FASTAPI = '/work/shared/data/sites/fastapi-docs';

describe('parseRobots', () => {
  const text = [
    'User-agent: *',
    'Disallow: /private/',
    'Allow: /private/open',
    'Crawl-delay: 1.5',
    '',
    'User-agent: kbtest',
    'Disallow: /no-kb/',
    'Crawl-delay: 4000',
    '',
    'Sitemap: https://e.com/sitemap-a.xml',
    'Sitemap: /relative.xml',
  ].join('\n');

  it('uses the group of our product token, falling back to *', () => {
    assert.equal(robotsProductToken(UA), 'kbtest');
    const ours = parseRobots('https://e.com/robots.txt', text, UA);
    assert.equal(ours.isAllowed('https://e.com/no-kb/x'), false);
    assert.equal(ours.isAllowed('https://e.com/private/x'), true);
    const other = parseRobots('https://e.com/robots.txt', text, 'OtherBot/2.0');
    assert.equal(other.isAllowed('https://e.com/private/x'), false);
    assert.equal(other.isAllowed('https://e.com/private/open'), true);
    assert.equal(other.isAllowed('https://e.com/no-kb/x'), true);
    assert.equal(other.crawlDelayMs, 1500);
  });

  it('caps Crawl-delay and lists sitemaps as absolute URLs', () => {
    const rules = parseRobots('https://e.com/robots.txt', text, UA, { maxCrawlDelayMs: 10_000 });
    assert.equal(rules.crawlDelayMs, 10_000);
    assert.deepEqual(rules.sitemaps, ['https://e.com/sitemap-a.xml', 'https://e.com/relative.xml']);
  });

  it('applies to both schemes of the host', () => {
    const rules = parseRobots('https://e.com/robots.txt', text, 'OtherBot');
    assert.equal(rules.isAllowed('http://e.com/private/x'), false);
  });
});

describe('fetchRobots', () => {
  let docs: ServedSite;
  let site: ServedRoutes;
  const fetch = createOutboundFetch({ allowPrivate: true, userAgent: UA, timeoutMs: 2000 });

  before(async () => {
    docs = await serveDirectory(FASTAPI);
    site = await serveRoutes({});
  });
  after(async () => {
    await docs.close();
    await site.close();
  });

  it('reads the fastapi-docs robots.txt with its sitemap rewritten to the served origin', async () => {
    const rules = await fetchRobots(fetch, `${docs.origin}/tutorial/`, UA);
    assert.equal(rules.source, 'parsed');
    assert.equal(rules.url, `${docs.origin}/robots.txt`);
    assert.deepEqual(rules.sitemaps, [`${docs.origin}/sitemap.xml`]);
    assert.equal(rules.isAllowed(`${docs.origin}/tutorial/first-steps.html`), true);
    assert.equal(rules.crawlDelayMs, undefined);
  });

  it('allows everything when robots.txt is missing and nothing when it errors', async () => {
    const missing = await fetchRobots(fetch, site.origin, UA);
    assert.equal(missing.source, 'missing');
    assert.equal(missing.isAllowed(`${site.origin}/x`), true);
    const failing = await serveRoutes({ '/robots.txt': { status: 503, body: 'down' } });
    try {
      const rules = await fetchRobots(fetch, failing.origin, UA);
      assert.equal(rules.source, 'unreachable');
      assert.equal(rules.isAllowed(`${failing.origin}/x`), false);
    } finally {
      await failing.close();
    }
  });

  it('rethrows a policy refusal', async () => {
    const guarded = createOutboundFetch({ allowPrivate: false, userAgent: UA });
    await assert.rejects(fetchRobots(guarded, docs.origin, UA), OutboundBlockedError);
  });
});
