import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AdmitContext,
  admit,
  compilePathFilters,
  isHtmlContentType,
} from '../../src/crawler/filters.ts';
import { urlKey } from '../../src/crawler/url.ts';
import { AppError } from '../../src/lib/errors.ts';

const base = (over: Partial<AdmitContext> = {}): AdmitContext => ({
  startUrl: 'https://docs.example.com/',
  filters: compilePathFilters(),
  allowExternalLinks: false,
  depth: 1,
  admitted: 0,
  limit: 100,
  ...over,
});

const reason = (url: string, ctx: AdmitContext) => {
  const r = admit(url, ctx);
  return r.ok ? 'ok' : r.reason;
};

describe('compilePathFilters', () => {
  it('rejects an invalid pattern with invalid_request naming it', () => {
    assert.throws(
      () => compilePathFilters(['^/ok'], ['/blog/(']),
      (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'invalid_request');
        assert.match(err.message, /excludePaths/);
        assert.match(err.message, /"\/blog\/\("/);
        assert.equal(err.details?.['pattern'], '/blog/(');
        return true;
      },
    );
  });

  it('bounds the number and length of patterns', () => {
    assert.throws(() => compilePathFilters(Array(101).fill('a')), AppError);
    assert.throws(() => compilePathFilters(['a'.repeat(1001)]), AppError);
  });
});

describe('admit', () => {
  it('admits a same-site HTML page', () => {
    assert.deepEqual(admit('https://docs.example.com/guide/intro', base()), { ok: true });
  });

  it('applies includes and excludes to the path; excludes win', () => {
    const filters = compilePathFilters(['^/guide/'], ['/guide/old/', '\\.php$']);
    const ctx = base({ filters });
    assert.equal(reason('https://docs.example.com/guide/intro', ctx), 'ok');
    assert.equal(reason('https://docs.example.com/blog/post', ctx), 'not_included');
    assert.equal(reason('https://docs.example.com/guide/old/page', ctx), 'excluded');
    assert.equal(reason('https://docs.example.com/guide/x.php', ctx), 'excluded');
    // Patterns see the path, not the host or query.
    assert.equal(reason('https://docs.example.com/other?to=/guide/', ctx), 'not_included');
  });

  it('refuses other hosts unless external links are allowed', () => {
    assert.equal(reason('https://evil.example.org/', base()), 'external');
    assert.equal(reason('https://evil.example.org/', base({ allowExternalLinks: true })), 'ok');
    assert.equal(reason('http://www.docs.example.com/x', base()), 'ok');
    assert.equal(reason('ftp://docs.example.com/x', base()), 'external');
  });

  it('refuses non-HTML by extension, or by content type when known', () => {
    assert.equal(reason('https://docs.example.com/manual.zip', base()), 'not_html');
    assert.equal(reason('https://docs.example.com/manual.pdf', base()), 'ok', 'PDFs are extracted');
    assert.equal(reason('https://docs.example.com/logo.PNG', base()), 'not_html');
    assert.equal(
      reason('https://docs.example.com/page', base({ contentType: 'application/json' })),
      'not_html',
    );
    assert.equal(
      reason('https://docs.example.com/page', base({ contentType: 'text/html; charset=utf-8' })),
      'ok',
    );
    assert.equal(isHtmlContentType('application/xhtml+xml'), true);
  });

  it('refuses beyond maxDepth, robots-disallowed paths, duplicates and the exhausted budget', () => {
    assert.equal(reason('https://docs.example.com/a', base({ depth: 3, maxDepth: 2 })), 'depth');
    assert.equal(reason('https://docs.example.com/a', base({ depth: 2, maxDepth: 2 })), 'ok');
    const robotsAllows = (u: string) => !new URL(u).pathname.startsWith('/private');
    assert.equal(reason('https://docs.example.com/private/x', base({ robotsAllows })), 'robots');
    const seen = new Set([urlKey('https://docs.example.com/a/')]);
    const isDuplicate = (k: string) => seen.has(k);
    assert.equal(reason('http://docs.example.com/a/index.html#x', base({ isDuplicate })), 'duplicate');
    assert.equal(reason('https://docs.example.com/b', base({ admitted: 100, limit: 100 })), 'budget');
    assert.equal(reason('https://docs.example.com/b', base({ admitted: 99, limit: 100 })), 'ok');
  });

  it('reports the most specific reason first and spends budget only on crawlable URLs', () => {
    const filters = compilePathFilters([], ['^/skip']);
    const full = base({ filters, admitted: 5, limit: 5 });
    assert.equal(reason('https://docs.example.com/skip/me', full), 'excluded');
    assert.equal(reason('https://other.example.com/', full), 'external');
    assert.equal(reason('https://docs.example.com/ok', full), 'budget');
  });
});
