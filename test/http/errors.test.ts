import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, startTestApp, type TestApp } from '../support/harness.ts';

// Error handling lives in the HTTP layer and is the same on both storage modes; PGlite keeps this fast.
describe('errors and limits', () => {
  let t: TestApp;
  const countItems = async () =>
    (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM items'))[0]!.n;

  before(async () => {
    t = await startTestApp('pglite', {
      config: { KB_BODY_LIMIT_BYTES: '4096', KB_BULK_BODY_LIMIT_BYTES: '8192' },
    });
  });
  after(async () => t?.close());

  test('missing, malformed, unknown and revoked keys are 401', async () => {
    expectError(
      await t.call('POST', '/api/connect/knowledgebase-items/query', { key: null, body: {} }),
      401,
      'unauthorized',
    );
    expectError(
      await t.call('POST', '/api/connect/knowledgebase-items/query', { key: 'not-a-key', body: {} }),
      401,
      'unauthorized',
    );
    const forged = `${t.orgA.key.slice(0, 20)}${'A'.repeat(t.orgA.key.length - 20)}`;
    expectError(
      await t.call('POST', '/api/connect/knowledgebase-items/query', { key: forged, body: {} }),
      401,
      'unauthorized',
    );
    const basic = await t.call('POST', '/api/connect/knowledgebase-items/query', {
      key: null,
      headers: { authorization: `Basic ${t.orgA.key}` },
      body: {},
    });
    expectError(basic, 401, 'unauthorized');
    // A revoked key stops working at once.
    const keyId = t.orgB.key.split('_')[1]!;
    await t.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [keyId]);
    expectError(
      await t.call('POST', '/api/connect/knowledgebase-items/query', { key: t.orgB.key, body: {} }),
      401,
      'unauthorized',
    );
    await t.db.query('UPDATE api_keys SET revoked_at = NULL WHERE id = $1', [keyId]);
  });

  test('a NUL character anywhere in a request is a 400 naming the field, and changes nothing', async () => {
    const before = await countItems();
    const cases: Array<
      [method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body: unknown, field: RegExp]
    > = [
      ['POST', '/api/consume/search', { query: 'a\u0000b' }, /body\.query/],
      ['GET', '/api/connect/crawling/a%00b', undefined, /path\.id/],
      ['GET', '/api/connect/secret-id-exists?secretId=%00', undefined, /query\.secretId/],
      ['POST', '/api/connect/knowledgebase-items', { title: 'T\u0000', content: 'c' }, /body\.title/],
      ['POST', '/api/connect/knowledgebase-items', { title: 'T', content: 'c\u0000' }, /body\.content/],
      [
        'POST',
        '/api/connect/knowledgebase-items',
        { title: 'T', content: 'c', tags: ['ok', 'x\u0000'] },
        /body\.tags\[1\]/,
      ],
      ['PUT', '/api/connect/knowledgebase-items', [{ id: 'x\u0000', title: 'y' }], /body\[0\]\.id/],
      ['DELETE', '/api/connect/knowledgebase-items', { ids: ['\u0000'] }, /body\.ids\[0\]/],
      ['DELETE', '/api/connect/connection', { connectionId: 'c\u0000' }, /body\.connectionId/],
      [
        'PATCH',
        '/api/connect/set-connection-status',
        { connectionId: '\u0000', status: 'inactive' },
        /body\.connectionId/,
      ],
      ['POST', '/api/connect/run-sync', { connectionId: '\u0000' }, /body\.connectionId/],
      ['POST', '/api/connect/knowledgebase-items/query', { search: 'a\u0000' }, /body\.search/],
    ];
    for (const [method, url, body, field] of cases) {
      const res = await t.call(method, url, { body });
      expectError(res, 400, 'invalid_request');
      assert.match(res.body.message, field, `${method} ${url}: ${res.body.message}`);
      assert.match(res.body.message, /NUL/);
    }
    assert.equal(await countItems(), before);
  });

  test('a body that is not UTF-8 JSON is refused, not stored with replacement characters', async () => {
    const before = await countItems();
    const invalidUtf8 = Buffer.concat([
      Buffer.from('{"title":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('","content":"x"}'),
    ]);
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/connect/knowledgebase-items',
      headers: { authorization: `Bearer ${t.orgA.key}`, 'content-type': 'application/json' },
      payload: invalidUtf8,
    });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), {
      error: 'invalid_request',
      message: 'body.title contains bytes that are not UTF-8; send the body as UTF-8 JSON.',
    });
    const utf16 = await t.app.inject({
      method: 'POST',
      url: '/api/connect/knowledgebase-items',
      headers: { authorization: `Bearer ${t.orgA.key}`, 'content-type': 'application/json; charset=utf-16' },
      payload: Buffer.from('{"title":"t","content":"x"}', 'utf16le'),
    });
    assert.equal(utf16.statusCode, 415);
    assert.equal(utf16.json().error, 'unsupported_media_type');
    const ok = await t.app.inject({
      method: 'POST',
      url: '/api/connect/knowledgebase-items',
      headers: { authorization: `Bearer ${t.orgA.key}`, 'content-type': 'application/json; charset=UTF-8' },
      payload: Buffer.from('{"title":"café","content":"x"}'),
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(await countItems(), before + 1, 'only the valid UTF-8 body was stored');
  });

  test('numbers: absurd values name the real bounds, empty query values and unknown parameters are refused', async () => {
    const huge = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { limit: 1e308 } });
    expectError(huge, 400, 'invalid_request');
    assert.match(huge.body.message, /limit.*100/);
    assert.ok(!huge.body.message.includes('9007199254740991'), huge.body.message);
    const emptyOffset = await t.call('GET', '/api/connect/crawling/?offset=');
    expectError(emptyOffset, 400, 'invalid_request');
    assert.match(emptyOffset.body.message, /offset/);
    const fraction = await t.call('GET', '/api/connect/crawling/?limit=1.5');
    expectError(fraction, 400, 'invalid_request');
    assert.equal((await t.call('GET', '/api/connect/crawling/?limit=5&offset=0')).status, 200);
    const unknown = await t.call('GET', '/api/connect/connections?colour=red');
    expectError(unknown, 400, 'invalid_request');
    assert.match(unknown.body.message, /colour/);
    assert.equal((await t.call('GET', '/api/connect/connections')).status, 200);
  });

  test('what the router and the HTTP parser refuse is answered in the API shape too', async () => {
    const bad = await t.call('GET', '/api/connect/crawling/%');
    expectError(bad, 400, 'invalid_request');
    assert.match(bad.body.message, /percent-encoding/);
    const longId = 'a'.repeat(250);
    const long = await t.call('GET', `/api/connect/crawling/${longId}`);
    expectError(long, 400, 'invalid_request');
    assert.ok(!JSON.stringify(long.body).includes(longId), 'the path is not echoed');

    // Header overflow happens in Node's parser, before Fastify: only a real socket shows it.
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${address}/api/connect/connections?x=${'a'.repeat(70_000)}`, {
      headers: { authorization: `Bearer ${t.orgA.key}` },
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: string; message: string };
    assert.equal(body.error, 'invalid_request');
    assert.match(body.message, /larger than this server accepts/);
  });

  test('malformed JSON, wrong types, unknown fields and bad pagination are 400 and change nothing', async () => {
    const before = await countItems();
    const bad = await t.call('POST', '/api/connect/knowledgebase-items', { body: '{"title": "x", ' });
    expectError(bad, 400, 'invalid_request');
    expectError(
      await t.call('POST', '/api/connect/knowledgebase-items', { body: { title: 5, content: 'x' } }),
      400,
      'invalid_request',
    );
    const unknown = await t.call('POST', '/api/connect/knowledgebase-items', {
      body: { title: 'x', content: 'y', colour: 'red' },
    });
    expectError(unknown, 400, 'invalid_request');
    assert.match(unknown.body.message, /colour/);
    const missing = await t.call('POST', '/api/connect/knowledgebase-items', { body: { title: 'x' } });
    expectError(missing, 400, 'invalid_request');
    assert.match(missing.body.message, /content/);
    for (const body of [
      { limit: 0 },
      { limit: 101 },
      { page: 0 },
      { page: 1.5 },
      { limit: '10' },
      { page: -1 },
    ]) {
      const res = await t.call('POST', '/api/connect/knowledgebase-items/query', { body });
      expectError(res, 400, 'invalid_request');
      assert.match(res.body.message, /limit|page/);
    }
    expectError(
      await t.call('PUT', '/api/connect/knowledgebase-items', { body: [] }),
      400,
      'invalid_request',
    );
    expectError(
      await t.call('PUT', '/api/connect/knowledgebase-items', { body: { id: 'x', title: 'y' } }),
      400,
      'invalid_request',
    );
    expectError(
      await t.call('DELETE', '/api/connect/knowledgebase-items', { body: { ids: 'x' } }),
      400,
      'invalid_request',
    );
    expectError(
      await t.call('POST', '/api/connect/knowledgebase-items/query', { body: '' }),
      400,
      'invalid_request',
    );
    assert.equal(await countItems(), before);
  });

  test('oversized bodies are 413, wrong content types 415, and neither changes anything', async () => {
    const before = await countItems();
    const big = await t.call('POST', '/api/connect/knowledgebase-items/query', {
      body: { search: 'x'.repeat(5000) },
    });
    expectError(big, 413, 'payload_too_large');
    // The upload endpoint allows more than the default limit, but not more than its own.
    const bigUpload = await t.call('POST', '/api/connect/knowledgebase-items', {
      body: { title: 't', content: 'y'.repeat(6000) },
    });
    assert.equal(bigUpload.status, 200);
    const tooBig = await t.call('POST', '/api/connect/knowledgebase-items', {
      body: { title: 't', content: 'y'.repeat(9000) },
    });
    expectError(tooBig, 413, 'payload_too_large');
    const form = await t.call('POST', '/api/connect/knowledgebase-items', {
      body: 'title=x&content=y',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(form, 415, 'unsupported_media_type');
    const text = await t.call('POST', '/api/connect/knowledgebase-items', {
      body: '{"title":"x","content":"y"}',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(text, 415, 'unsupported_media_type');
    assert.equal(await countItems(), before + 1);
  });

  test('unknown paths are 404; a known path with another method is 405 with Allow, OPTIONS 204 with Allow', async () => {
    expectError(await t.call('GET', '/api/nope'), 404, 'not_found');
    expectError(await t.call('GET', '/nope', { key: null }), 404, 'not_found');
    const before = await countItems();
    const cases: Array<[method: string, url: string, allow: string]> = [
      ['PUT', '/api/connect/crawling/', 'GET, HEAD, OPTIONS, POST'],
      ['PATCH', '/api/connect/crawling/some-id', 'DELETE, GET, HEAD, OPTIONS'],
      ['POST', '/api/connect/knowledgebase-items/stats', 'GET, HEAD, OPTIONS'],
      // A static path beside a parametric one: GET .../query is not the item "query".
      ['GET', '/api/connect/knowledgebase-items/query', 'OPTIONS, POST'],
      ['HEAD', '/api/consume/search', 'OPTIONS, POST'],
      ['TRACE', '/api/connect/connections', 'GET, HEAD, OPTIONS'],
      // QUERY has a body: answered before Fastify would ask for its Content-Type.
      ['QUERY', '/api/connect/connections', 'GET, HEAD, OPTIONS'],
      ['DELETE', '/healthz', 'GET, HEAD, OPTIONS'],
    ];
    for (const [method, url, allow] of cases) {
      const res = await t.app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${t.orgA.key}` },
        ...(method === 'HEAD' ? {} : { payload: '{"title":"t","content":"c"}' }),
      });
      assert.equal(res.statusCode, 405, `${method} ${url}: ${res.body}`);
      assert.equal(res.headers['allow'], allow, `${method} ${url}`);
      if (method !== 'HEAD') {
        assert.equal(res.json().error, 'method_not_allowed');
        assert.match(res.json().message, new RegExp(`^${method} is not allowed on `));
      }
    }
    const options = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/connect/knowledgebase-items',
      headers: { authorization: `Bearer ${t.orgA.key}` },
    });
    assert.equal(options.statusCode, 204);
    assert.equal(options.headers['allow'], 'DELETE, OPTIONS, POST, PUT');
    assert.equal(options.body, '');
    // The key is checked first, as on every /api path.
    expectError(await t.call('PUT', '/api/connect/crawling/', { key: null }), 401, 'unauthorized');
    assert.equal(await countItems(), before, 'no refused method wrote anything');
  });

  test('the admin API is absent without KB_ADMIN_TOKEN', async () => {
    expectError(
      await t.call('POST', '/api/admin/organizations', { body: { name: 'x' }, key: null }),
      404,
      'not_found',
    );
  });

  test('every response carries a request id', async () => {
    const res = await t.call('GET', '/healthz', { key: null, headers: { 'x-request-id': 'abc-123' } });
    assert.equal(res.headers['x-request-id'], 'abc-123');
  });
});

describe('bytes that are not UTF-8', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp('pglite');
  });
  after(async () => t?.close());
  const count = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM items'))[0]!.n;

  test('in the query, a path segment or the body: 400 naming the field, and nothing changed', async () => {
    const upload = await t.call('POST', '/api/connect/knowledgebase-items', {
      body: { title: 'kept', content: 'x' },
    });
    assert.equal(upload.status, 200, JSON.stringify(upload.body));
    const id = upload.body.item.id as string;
    const before = await count();
    const send = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: Buffer) =>
      t.app.inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${t.orgA.key}`,
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
        ...(payload ? { payload } : {}),
      });
    const json = (before: string, bytes: number[], after: string) =>
      Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
    const cases: Array<[string, Promise<{ statusCode: number; json(): any }>, RegExp]> = [
      [
        'query value',
        send('GET', '/api/connect/secret-id-exists?secretId=%ff%fe'),
        /^query\.secretId contains bytes that are not UTF-8/,
      ],
      [
        'encoded surrogate in the query',
        send('GET', '/api/connect/secret-id-exists?secretId=a%ed%a0%80'),
        /^query\.secretId .*not UTF-8/,
      ],
      [
        'malformed escape in the query',
        send('GET', '/api/connect/secret-id-exists?secretId=%'),
        /^query\.secretId contains malformed percent-encoding/,
      ],
      [
        'query of a paged list',
        send('GET', '/api/connect/crawling/?limit=5&offset=%c3'),
        /^query\.offset .*not UTF-8/,
      ],
      [
        'path segment',
        send('GET', '/api/connect/crawling/%ff%fe'),
        /^path\.id contains bytes that are not UTF-8/,
      ],
      ['path segment of a write', send('PUT', `/api/admin/keys/%c3%28`), /^path\.id .*not UTF-8/],
      [
        'body string',
        send('PUT', '/api/connect/knowledgebase-items', json(`[{"id":"${id}","title":"caf`, [0xe9], '"}]')),
        /^body\[0\]\.title contains bytes that are not UTF-8/,
      ],
      [
        'body key',
        send(
          'POST',
          '/api/connect/knowledgebase-items',
          json('{"title":"t","content":"c","x', [0xff], '":1}'),
        ),
        /^body\.x\uFFFD contains bytes that are not UTF-8/,
      ],
      [
        'body, truncated sequence',
        send('POST', '/api/consume/search', json('{"query":"a', [0xe2, 0x82], '"}')),
        /^body\.query contains bytes/,
      ],
      [
        'body, outside any string',
        send('POST', '/api/connect/knowledgebase-items/query', json('{"limit":1', [0xff], '}')),
        /^The body is not valid UTF-8/,
      ],
    ];
    for (const [what, pending, message] of cases) {
      const res = await pending;
      assert.equal(res.statusCode, 400, what);
      assert.equal(res.json().error, 'invalid_request', what);
      assert.match(res.json().message, message, `${what}: ${res.json().message}`);
    }
    assert.equal(await count(), before);
    const titles = await t.db.query<{ title: string }>('SELECT title FROM items');
    assert.deepEqual(
      titles.map((r) => r.title),
      ['kept'],
      'nothing renamed, nothing stored with U+FFFD',
    );
    // Well-formed UTF-8, percent-encoded or raw in the body, is text like any other.
    const ok = await send('GET', '/api/connect/secret-id-exists?secretId=caf%C3%A9');
    assert.equal(ok.statusCode, 200);
    const renamed = await send(
      'PUT',
      '/api/connect/knowledgebase-items',
      Buffer.from(JSON.stringify([{ id, title: 'café ✓' }])),
    );
    assert.equal(renamed.statusCode, 200);
  });

  test('headers the API reads: a key with bytes that are not ASCII is simply not a key (401)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/connect/knowledgebase-items/query',
      // Node reads header bytes as Latin-1: this is what 0xff 0xfe on the wire arrives as.
      headers: { authorization: `Bearer ${t.orgA.key}\u00ff\u00fe`, 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'unauthorized');
  });
});

describe('rate limit', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp('pglite', { config: { KB_RATE_LIMIT_PER_MINUTE: '3' } });
  });
  after(async () => t?.close());

  test('past the per-key limit: 429 with Retry-After; other keys are unaffected', async () => {
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (await t.call('POST', '/api/connect/knowledgebase-items/query', { body: {} })).status,
        200,
      );
    }
    const limited = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: {} });
    expectError(limited, 429, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    const other = await t.call('POST', '/api/connect/knowledgebase-items/query', {
      body: {},
      key: t.orgB.key,
    });
    assert.equal(other.status, 200);
  });
});

// Found by the schema-driven fuzzer (test/ops/fuzz.test.ts, test/support/fuzz.ts).
describe('what the API fuzzer found', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp('pglite', {
      config: {
        KB_NOTES_CLIENT_ID: 'client',
        KB_NOTES_CLIENT_SECRET: 'client-secret-0123456789',
        KB_PUBLIC_URL: 'https://kb.example.test',
      },
    });
  });
  after(async () => t?.close());
  const count = async (table: 'items' | 'crawl_jobs') =>
    (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;

  test('a lone surrogate anywhere is a 400 naming the field: not a 500, and not stored as U+FFFD', async () => {
    const upload = await t.call('POST', '/api/connect/knowledgebase-items', {
      body: { title: 'kept', content: 'x' },
    });
    assert.equal(upload.status, 200, JSON.stringify(upload.body));
    const id = upload.body.item.id as string;
    const items = await count('items');
    const crawls = await count('crawl_jobs');
    // Before: the first four were 500s (jsonb refuses the escape), the upload stored "x\uFFFDy".
    const cases: Array<[method: 'GET' | 'POST' | 'PUT', url: string, body: unknown, field: RegExp]> = [
      ['PUT', '/api/connect/knowledgebase-items', [{ id, title: 'x\udfffy' }], /body\[0\]\.title/],
      ['PUT', '/api/connect/knowledgebase-items', [{ id: '\ud800', title: 't' }], /body\[0\]\.id/],
      [
        'POST',
        '/api/connect/crawling/',
        { url: 'https://example.com/', tags: ['ok', '\udc00\ud800'] },
        /body\.tags\[1\]/,
      ],
      [
        'POST',
        '/api/connect/crawling/',
        { url: 'https://example.com/', includePaths: ['\ud800'] },
        /body\.includePaths\[0\]/,
      ],
      ['POST', '/api/connect/knowledgebase-items', { title: 'x\udfffy', content: 'c' }, /body\.title/],
      ['POST', '/api/connect/knowledgebase-items', { title: 't', content: 'c', '\ud800': 1 }, /body\.\uFFFD/],
      ['POST', '/api/consume/search', { query: '\ud83d' }, /body\.query/],
    ];
    for (const [method, url, body, field] of cases) {
      const res = await t.call(method, url, { body });
      expectError(res, 400, 'invalid_request');
      assert.match(res.body.message, field, `${method} ${url}: ${res.body.message}`);
      assert.match(res.body.message, /unpaired surrogate/);
    }
    // A well-formed pair (an emoji) is text like any other.
    const emoji = await t.call('PUT', '/api/connect/knowledgebase-items', {
      body: [{ id, title: 'ok \ud83d\ude00' }],
    });
    assert.equal(emoji.status, 200, JSON.stringify(emoji.body));
    assert.equal(await count('items'), items);
    assert.equal(await count('crawl_jobs'), crawls);
    const titles = await t.db.query<{ title: string }>('SELECT title FROM items');
    assert.ok(
      titles.every((r) => !r.title.includes('\uFFFD')),
      'no replacement character stored',
    );
  });

  test('a forged OAuth state on a fresh installation is refused without creating the signing key', async () => {
    const settings = async () =>
      (await t.db.query<{ key: string }>('SELECT key FROM service_settings ORDER BY key')).map((r) => r.key);
    const before = await settings();
    assert.ok(!before.includes('oauth_state_hmac_key'), 'no consent was started yet');
    const forged = `${'A'.repeat(24)}.${Math.floor(Date.now() / 1000) + 600}.${'B'.repeat(43)}`;
    const res = await t.call('GET', `/api/connect/oauth/callback?state=${forged}&code=x`, { key: null });
    expectError(res, 400, 'invalid_request');
    assert.deepEqual(await settings(), before, 'a refused callback wrote nothing');
  });

  test('a Range the docs UI cannot satisfy is a 400 in the API shape, not a 500', async () => {
    for (const range of ['bytes=999999-', 'bytes=5-1']) {
      const res = await t.call('GET', '/docs/static/index.css', { key: null, headers: { range } });
      expectError(res, 400, 'invalid_request');
    }
    const partial = await t.call('GET', '/docs/static/index.css', {
      key: null,
      headers: { range: 'bytes=0-0' },
    });
    assert.equal(partial.status, 206);
  });

  test("a refused OAuth consent: the source's error_description is quoted clipped", async () => {
    const initiate = await t.call('POST', '/api/connect/oauth/initiate', { body: { type: 'notes' } });
    assert.equal(initiate.status, 200, JSON.stringify(initiate.body));
    const state = new URL(initiate.body.consentUrl).searchParams.get('state')!;
    const res = await t.call(
      'GET',
      `/api/connect/oauth/callback?state=${state}&error=access_denied&error_description=${'d'.repeat(2000)}`,
      { key: null },
    );
    expectError(res, 400, 'source_auth_failed');
    assert.match(res.body.message, /access_denied: d{200}… \(2000 characters\)\)\.$/);
  });

  test('messages quote what they name clipped: a long unknown field or path is not echoed whole', async () => {
    const longKey = 'k'.repeat(400);
    const unknown = await t.call('POST', '/api/connect/knowledgebase-items/query', {
      body: { [longKey]: 1, other: 2 },
    });
    expectError(unknown, 400, 'invalid_request');
    assert.match(
      unknown.body.message,
      /^Unknown fields "k{100}… \(400 characters\)", "other" in the body\.$/,
    );
    const many = await t.call('POST', '/api/connect/knowledgebase-items/query', {
      body: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field${i}`, i])),
    });
    expectError(many, 400, 'invalid_request');
    assert.match(many.body.message, /"field4" and 35 more in the body\.$/);
    const longPath = `/api/${'p'.repeat(5000)}`;
    const missing = await t.call('GET', longPath);
    expectError(missing, 404, 'not_found');
    assert.ok(missing.body.message.length < 300, missing.body.message);
    assert.match(missing.body.message, /\(5005 characters\)/);
  });
});
