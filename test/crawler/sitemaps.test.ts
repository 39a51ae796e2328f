import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { fetchRobots } from '../../src/crawler/robots.ts';
import { discoverSitemaps, parseSitemap } from '../../src/crawler/sitemaps.ts';
import { createOutboundFetch } from '../../src/net/outbound.ts';
import { type ServedSite, serveDirectory, serveRoutes } from '../support/sites.ts';

const UA = 'KbTest/1.0';
const fetch = createOutboundFetch({ allowPrivate: true, userAgent: UA, timeoutMs: 2000 });

const urlset = (urls: string[]) =>
  `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls
    .map((u) => `<url><loc>${u}</loc></url>`)
    .join('')}</urlset>`;
const index = (urls: string[]) =>
  `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls
    .map((u) => `<sitemap><loc>${u}</loc></sitemap>`)
    .join('')}</sitemapindex>`;
const XML = { 'content-type': 'application/xml' };

describe('parseSitemap', () => {
  it('reads urlsets with entities, CDATA and lastmod, ignoring image locs', () => {
    const xml = `<urlset xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
      <url><loc> https://e.com/a?x=1&amp;y=2#f </loc><lastmod>2024-01-02</lastmod>
        <image:image><image:loc>https://e.com/pic.png</image:loc></image:image></url>
      <url><loc><![CDATA[https://e.com/b]]></loc></url>
      <url><loc>javascript:alert(1)</loc></url>
    </urlset>`;
    assert.deepEqual(parseSitemap(xml), {
      kind: 'urlset',
      entries: [{ url: 'https://e.com/a?x=1&y=2', lastmod: '2024-01-02' }, { url: 'https://e.com/b' }],
    });
  });

  it('reads indexes and plain-text sitemaps, and recognises non-sitemaps', () => {
    assert.equal(parseSitemap(index(['https://e.com/s1.xml'])).kind, 'index');
    assert.deepEqual(parseSitemap('https://e.com/a\n\nhttps://e.com/b\r\n# no\n').entries, [
      { url: 'https://e.com/a' },
      { url: 'https://e.com/b' },
    ]);
    assert.equal(parseSitemap('<!doctype html><html></html>').kind, 'unknown');
  });
});

describe('discoverSitemaps', () => {
  let docs: ServedSite;
  before(async () => {
    docs = await serveDirectory('/work/shared/data/sites/fastapi-docs');
  });
  after(() => docs.close());

  it('finds all 154 fastapi-docs pages through robots.txt', async () => {
    const robots = await fetchRobots(fetch, docs.origin, UA);
    const found = await discoverSitemaps(fetch, { siteUrl: docs.origin, listed: robots.sitemaps });
    assert.equal(found.entries.length, 154);
    assert.ok(found.entries.every((e) => e.url.startsWith(`${docs.origin}/`)));
    assert.ok(found.entries.some((e) => e.url === `${docs.origin}/tutorial/first-steps.html`));
    assert.deepEqual(found.sitemaps, [`${docs.origin}/sitemap.xml`]);
    assert.deepEqual(found.errors, []);
    assert.equal(found.truncated, false);
  });

  it('follows indexes (gzip included), dedupes pages and survives index loops', async () => {
    const site = await serveRoutes({
      '/sitemap_index.xml': (_req, res, { origin }) => {
        res.writeHead(200, XML);
        res.end(index([`${origin}/a.xml.gz`, `${origin}/nested.xml`, `${origin}/sitemap_index.xml`]));
      },
      '/a.xml.gz': (_req, res, { origin }) => {
        res.writeHead(200, { 'content-type': 'application/gzip' });
        res.end(gzipSync(urlset([`${origin}/p1`, `${origin}/p2/`])));
      },
      '/nested.xml': (_req, res, { origin }) => {
        res.writeHead(200, XML);
        res.end(index([`${origin}/b.txt`, `${origin}/missing.xml`]));
      },
      '/b.txt': (_req, res, { origin }) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`${origin}/p2/index.html\n${origin}/p3\n`);
      },
    });
    try {
      const found = await discoverSitemaps(fetch, { siteUrl: `${site.origin}/start` });
      assert.deepEqual(
        found.entries.map((e) => e.url),
        [`${site.origin}/p1`, `${site.origin}/p2/`, `${site.origin}/p3`],
      );
      assert.deepEqual(found.errors, [{ url: `${site.origin}/missing.xml`, message: 'HTTP 404' }]);
      // /sitemap.xml (404) is a usual location: not an error. The self-listing index is read once.
      assert.equal(site.hits.get('/sitemap_index.xml'), 1);
    } finally {
      await site.close();
    }
  });

  it('stops at maxUrls and maxSitemaps', async () => {
    const many = Array.from({ length: 50 }, (_, i) => `http://x.invalid/p${i}`);
    const site = await serveRoutes({
      '/sitemap.xml': (_req, res, { origin }) => {
        res.writeHead(200, XML);
        res.end(index(Array.from({ length: 20 }, (_, i) => `${origin}/s${i}.xml`)));
      },
      '*': (_req, res) => {
        res.writeHead(200, XML);
        res.end(urlset(many));
      },
    });
    try {
      const byUrls = await discoverSitemaps(fetch, { siteUrl: site.origin, maxUrls: 30 });
      assert.equal(byUrls.entries.length, 30);
      assert.equal(byUrls.truncated, true);
      const before = site.requests.length;
      const bySitemaps = await discoverSitemaps(fetch, { siteUrl: site.origin, maxSitemaps: 3 });
      assert.equal(bySitemaps.sitemaps.length, 3);
      assert.equal(bySitemaps.truncated, true);
      assert.ok(site.requests.length - before <= 4);
    } finally {
      await site.close();
    }
  });

  it('never fetches a sitemap listed at a private address', async () => {
    const inner = http.createServer((_req, res) => res.end(urlset(['http://secret.invalid/'])));
    await new Promise<void>((r) => inner.listen(0, '127.0.0.2', r));
    let innerHits = 0;
    inner.on('request', () => innerHits++);
    const site = await serveRoutes({
      '/sitemap.xml': (_req, res, { origin }) => {
        res.writeHead(200, XML);
        res.end(urlset([`${origin}/ok`]));
      },
    });
    try {
      const guarded = createOutboundFetch({
        allowPrivate: false,
        userAgent: UA,
        isAllowedAddress: (a) => a === '127.0.0.1',
      });
      const privateSitemap = `http://127.0.0.2:${(inner.address() as AddressInfo).port}/sitemap.xml`;
      const found = await discoverSitemaps(guarded, { siteUrl: site.origin, listed: [privateSitemap] });
      assert.deepEqual(
        found.entries.map((e) => e.url),
        [`${site.origin}/ok`],
      );
      assert.equal(found.errors.length, 1);
      assert.match(found.errors[0]!.message, /^blocked:/);
      assert.equal(innerHits, 0);
    } finally {
      await site.close();
      inner.closeAllConnections();
      await new Promise((r) => inner.close(r));
    }
  });
});
