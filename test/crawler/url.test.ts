import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalizeUrl, resolveLink, sameSite, urlKey } from '../../src/crawler/url.ts';

describe('canonicalizeUrl', () => {
  it('drops fragments, credentials and default ports and lower-cases scheme and host', () => {
    assert.equal(canonicalizeUrl('HTTP://User:pw@Example.COM:80/A/B?x=1#frag'), 'http://example.com/A/B?x=1');
    assert.equal(canonicalizeUrl('https://example.com:443'), 'https://example.com/');
    assert.equal(canonicalizeUrl('https://example.com:8443/x'), 'https://example.com:8443/x');
    assert.equal(canonicalizeUrl('https://example.com/x?'), 'https://example.com/x');
  });

  it('keeps the query as written (order is meaningful)', () => {
    assert.equal(canonicalizeUrl('https://e.com/p?b=2&a=1'), 'https://e.com/p?b=2&a=1');
  });

  it('resolves against a base and refuses non-http URLs', () => {
    assert.equal(canonicalizeUrl('../b', 'https://e.com/a/c/'), 'https://e.com/a/b');
    assert.equal(canonicalizeUrl('mailto:x@e.com'), null);
    assert.equal(canonicalizeUrl('not a url'), null);
    assert.equal(canonicalizeUrl('file:///etc/passwd'), null);
  });
});

describe('urlKey', () => {
  it('treats /x/, /x and /x/index.html as one page', () => {
    const keys = new Set(
      ['https://e.com/x/', 'https://e.com/x', 'https://e.com/x/index.html', 'https://e.com/x/INDEX.HTM'].map(
        urlKey,
      ),
    );
    assert.equal(keys.size, 1);
    assert.equal(urlKey('https://e.com/'), urlKey('https://e.com/index.html'));
  });

  it('treats http and https as one page, but not different hosts, ports, paths or queries', () => {
    assert.equal(urlKey('http://e.com/a'), urlKey('https://e.com/a#top'));
    assert.notEqual(urlKey('https://e.com/a'), urlKey('https://e.com:8080/a'));
    assert.notEqual(urlKey('https://e.com/a'), urlKey('https://f.com/a'));
    assert.notEqual(urlKey('https://e.com/a'), urlKey('https://e.com/a?p=2'));
    assert.notEqual(urlKey('https://e.com/A'), urlKey('https://e.com/a'));
  });
});

describe('sameSite', () => {
  it('compares host and port, ignoring scheme and a leading www', () => {
    assert.equal(sameSite('https://e.com/a', 'http://e.com/b'), true);
    assert.equal(sameSite('https://www.e.com/a', 'https://e.com/b'), true);
    assert.equal(sameSite('https://docs.e.com/', 'https://e.com/'), false);
    assert.equal(sameSite('http://127.0.0.1:8000/', 'http://127.0.0.1:8001/'), false);
    assert.equal(sameSite('nonsense', 'https://e.com/'), false);
  });
});

describe('resolveLink', () => {
  it('resolves relative links and drops fragments', () => {
    assert.equal(
      resolveLink('first-steps.html#run', 'http://h/tutorial/index.html'),
      'http://h/tutorial/first-steps.html',
    );
    assert.equal(resolveLink('  /a b ', 'http://h/x'), 'http://h/a%20b');
    assert.equal(resolveLink('//other.com/p', 'https://h/'), 'https://other.com/p');
  });

  it('ignores fragment-only and non-navigable links', () => {
    for (const href of ['#top', '', 'javascript:void(0)', 'mailto:a@b.c', 'tel:123', 'data:text/html,hi']) {
      assert.equal(resolveLink(href, 'https://h/'), null, href);
    }
  });
});
