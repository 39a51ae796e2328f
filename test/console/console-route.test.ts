/**
 * How the service serves the console (src/http/routes/console.ts) and what the console builds its forms
 * and highlights from: the shell and its hashed files without an API key, compressed as the client
 * accepts, cached for good (files) or revalidated (shell), deep links, the CSP; GET
 * /api/connect/connection-types; the search playground's term marking.
 */
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { highlight, queryTerms } from '../../src/console/highlight.ts';
import { preferredEncoding } from '../../src/http/routes/console.ts';
import { expectError, startTestApp, type TestApp } from '../support/harness.ts';

describe('the console as the service serves it', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp('pglite', {
      config: { KB_NOTES_CLIENT_ID: 'client-id', KB_NOTES_CLIENT_SECRET: 'client-secret-0123456789' },
    });
  });
  after(async () => t?.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers });

  test('the shell needs no key, names its files by content hash and allows only its own origin', async () => {
    const res = await get('/console');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-cache');
    const csp = String(res.headers['content-security-policy']);
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
    ]) {
      assert.ok(csp.includes(directive), `CSP has ${directive}: ${csp}`);
    }
    assert.doesNotMatch(csp, /unsafe|\*|https?:/, 'no inline code, no wildcard, no other origin');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    const files = [...res.body.matchAll(/"\/console\/assets\/(console\.[0-9a-f]{12}\.(?:js|css))"/g)].map(
      (m) => m[1],
    );
    assert.deepEqual(files.map((f) => f!.split('.').at(-1)).sort(), ['css', 'js']);
    assert.doesNotMatch(
      res.body,
      /<script>|style=|https?:\/\//,
      'no inline script or style, nothing fetched elsewhere',
    );

    const again = await get('/console', { 'if-none-match': String(res.headers['etag']) });
    assert.equal(again.statusCode, 304);
  });

  test('the root address leads to the console', async () => {
    const res = await get('/');
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, '/console');
  });

  test('every path under /console answers the shell (client-side routes); unknown files are 404', async () => {
    const shell = (await get('/console')).body;
    for (const url of [
      '/console/',
      '/console/items',
      '/console/sync-jobs?connection=abc',
      '/console/no/such/page',
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, shell, url);
    }
    for (const url of ['/console/assets/console.000000000000.js', '/console/assets/..%2f..%2fpackage.json']) {
      const res = await get(url);
      expectError({ status: res.statusCode, body: res.json() }, 404, 'not_found');
    }
  });

  test('files are sent brotli, gzip or plain as the client accepts, and cached for good', async () => {
    const shell = (await get('/console')).body;
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(shell)![1]!;
    const plain = await get(script, { 'accept-encoding': 'identity' });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(plain.headers['vary'], 'accept-encoding');
    const br = await get(script, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.deepEqual(brotliDecompressSync(br.rawPayload), plain.rawPayload);
    assert.ok(br.rawPayload.length < plain.rawPayload.length / 2, 'compressed to less than half');
    const gz = await get(script, { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gz.rawPayload), plain.rawPayload);
  });

  test('Accept-Encoding: brotli first, gzip next, q=0 refuses, * stands for the rest', () => {
    assert.equal(preferredEncoding(undefined), null);
    assert.equal(preferredEncoding(''), null);
    assert.equal(preferredEncoding('gzip, deflate, br, zstd'), 'br');
    assert.equal(preferredEncoding('gzip'), 'gzip');
    assert.equal(preferredEncoding('br;q=0, gzip;q=0.5'), 'gzip');
    assert.equal(preferredEncoding('*'), 'br');
    assert.equal(preferredEncoding('*;q=0, gzip'), 'gzip');
    assert.equal(preferredEncoding('identity'), null);
    assert.equal(preferredEncoding('GZIP;Q=1'), 'gzip');
  });

  test('connection types list each source with the fields its create takes, secrets marked, OAuth said', async () => {
    expectError(await t.call('GET', '/api/connect/connection-types', { key: null }), 401, 'unauthorized');
    const res = await t.call('GET', '/api/connect/connection-types');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const byType = new Map(res.body.data.map((c: { type: string }) => [c.type, c]));
    assert.deepEqual([...byType.keys()].sort(), [
      'docs_space',
      'notes',
      'storefront',
      'support_desk',
      'wiki',
    ]);
    const fields = (type: string) =>
      (
        byType.get(type) as {
          fields: Array<{ name: string; kind: string; required: boolean; secret: boolean }>;
        }
      ).fields.map(
        (f) => `${f.name}:${f.kind}:${f.required ? 'required' : 'optional'}${f.secret ? ':secret' : ''}`,
      );
    assert.deepEqual(fields('wiki'), [
      'domain_name:string:required',
      'email:string:required',
      'api_token:string:required:secret',
      'webhook_secret:string:optional:secret',
    ]);
    assert.deepEqual(fields('support_desk'), [
      'subdomain:string:required',
      'email:string:optional',
      'api_token:string:optional:secret',
      'access_token:string:optional:secret',
      'include_tickets:boolean:optional',
      'brands:string:optional',
    ]);
    assert.deepEqual(fields('notes'), [
      'access_token:string:optional:secret',
      'webhook_verification_token:string:optional:secret',
    ]);
    assert.deepEqual((byType.get('notes') as { oauth: unknown }).oauth, {
      tenantField: null,
      configured: true,
    });
    assert.deepEqual((byType.get('support_desk') as { oauth: unknown }).oauth, {
      tenantField: 'subdomain',
      configured: false,
    });
    // Shopify's consent is per shop; this test service configures no Shopify OAuth app.
    assert.deepEqual((byType.get('storefront') as { oauth: unknown }).oauth, {
      tenantField: 'shop',
      configured: false,
    });
    assert.equal((byType.get('docs_space') as { oauth: unknown }).oauth, null);
    assert.equal((byType.get('wiki') as { label: string; alias: string }).label, 'Confluence');
    // Each listed field is accepted by the create route: an unknown one would be refused by name.
    const create = await t.call('POST', '/api/connect/connection', {
      body: {
        source: { type: 'wiki', domain_name: 'acme', email: 'a@acme.test', api_token: 'x', colour: 'red' },
      },
    });
    expectError(create, 400, 'invalid_request');
    assert.match(create.body.message, /colour/);
  });
});

describe('search playground term marking', () => {
  test('terms are the query’s words, common words left out, longest first', () => {
    assert.deepEqual(queryTerms('How do I install the CLI?'), ['install', 'cli']);
    assert.deepEqual(queryTerms('  '), []);
    assert.deepEqual(queryTerms('Café au lait, café'), ['café', 'lait', 'au']);
  });

  test('marks terms at word starts, case-insensitively, and keeps every character of the text', () => {
    const text = 'Installation: reinstall, then INSTALL the cli (CLI-tools).';
    const parts = highlight(text, 'install cli');
    assert.equal(parts.map((p) => p.text).join(''), text);
    assert.deepEqual(
      parts.filter((p) => p.match).map((p) => p.text),
      ['Install', 'INSTALL', 'cli', 'CLI'],
      '`reinstall` is not marked: the term is not at a word start',
    );
    assert.deepEqual(highlight('nothing here', 'the'), [{ text: 'nothing here', match: false }]);
    assert.deepEqual(highlight('a (bb) [cc]', '(bb) [cc'), [
      { text: 'a (', match: false },
      { text: 'bb', match: true },
      { text: ') [', match: false },
      { text: 'cc', match: true },
      { text: ']', match: false },
    ]);
  });
});
