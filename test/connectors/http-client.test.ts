import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import {
  createSourceHttpClient,
  SourceHttpError,
  type SourceHttpClientOptions,
} from '../../src/connectors/http.ts';
import { closedPortUrl, type FakeServer, startFakeServer } from '../fakes/fake-server.ts';
import { plainFetch } from '../support/plain-fetch.ts';

const SECRET = 'super-secret-token-value';
const PAYLOAD = { items: [{ id: 'a', title: 'Ünïcode title' }], next: null };
const PAYLOAD_BYTES = Buffer.byteLength(JSON.stringify(PAYLOAD));

function client(delays: number[], extra: Partial<SourceHttpClientOptions> = {}) {
  return createSourceHttpClient({
    fetch: plainFetch,
    maxAttempts: 4,
    baseDelayMs: 1,
    maxDelayMs: 5,
    sleep: async (ms) => {
      delays.push(ms);
    },
    ...extra,
  });
}

async function rejects(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

describe('source HTTP client', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await startFakeServer((req) => {
      if (req.path === '/items') return { status: 200, body: PAYLOAD };
      if (req.path === '/echo')
        return {
          status: 200,
          body: {
            method: req.method,
            body: req.body,
            type: req.headers['content-type'] ?? null,
            q: req.query.getAll('tag'),
          },
        };
      if (req.path === '/html')
        return { status: 200, headers: { 'content-type': 'text/html' }, body: '<html></html>' };
      if (req.path === '/big') return { status: 200, body: 'x'.repeat(5000) };
      return { status: 404, body: { error: { code: 404, message: 'Space not found' } } };
    });
  });
  after(() => fake.close());

  it('retries a 429 after its Retry-After, then returns the answer; bytes of every attempt are counted', async () => {
    const rateLimitBody = 'Too Many Requests';
    fake.failNext(1, { status: 429, headers: { 'retry-after': '3' }, body: rateLimitBody });
    const delays: number[] = [];
    const http = client(delays);
    const before = fake.requests.length;
    const data = await http.getJson(
      `${fake.url}/items`,
      z.object({ items: z.array(z.object({ id: z.string() })) }),
    );
    assert.deepEqual(data.items, [{ id: 'a' }]);
    assert.deepEqual(delays, [3000]);
    assert.equal(fake.requests.length - before, 2);
    assert.equal(http.requestCount, 2);
    assert.equal(http.bytesReceived, rateLimitBody.length + PAYLOAD_BYTES);
  });

  it('counts received bytes exactly across requests', async () => {
    const http = client([]);
    await http.request('GET', `${fake.url}/items`);
    await http.request('GET', `${fake.url}/items`);
    assert.equal(http.bytesReceived, 2 * PAYLOAD_BYTES);
  });

  it('gives up after maxAttempts 5xx with a SourceHttpError carrying the status and no secrets', async () => {
    fake.failNext(4, { status: 503, body: { error: { code: 503, message: 'Service unavailable' } } });
    const delays: number[] = [];
    const err = await rejects(
      client(delays).request('GET', `${fake.url}/items?api_key=${SECRET}`, {
        headers: { authorization: `Bearer ${SECRET}` },
      }),
    );
    assert.ok(err instanceof SourceHttpError);
    assert.equal(err.kind, 'status');
    assert.equal(err.status, 503);
    assert.equal(err.attempts, 4);
    assert.equal(delays.length, 3);
    assert.match(
      err.message,
      /GET http:\/\/127\.0\.0\.1:\d+\/items answered HTTP 503 after 4 attempts: Service unavailable/,
    );
    assert.doesNotMatch(err.message, new RegExp(SECRET));
    assert.doesNotMatch(err.url, /api_key/);
  });

  it('gives up at once when the source asks for a longer wait than allowed', async () => {
    fake.failNext(1, { status: 429, headers: { 'retry-after': '600' }, body: 'slow down' });
    const err = await rejects(client([], { maxWaitMs: 60_000 }).request('GET', `${fake.url}/items`));
    assert.ok(err instanceof SourceHttpError);
    assert.equal(err.status, 429);
    assert.equal(err.retryAfterMs, 600_000);
    assert.match(err.message, /asked to wait 600 s/);
  });

  it('answers 4xx without retrying; getJson turns them into a SourceHttpError with the vendor text', async () => {
    const http = client([]);
    const res = await http.request('GET', `${fake.url}/nope`);
    assert.equal(res.status, 404);
    assert.equal(http.requestCount, 1);
    const err = await rejects(http.getJson(`${fake.url}/nope`, z.object({})));
    assert.ok(err instanceof SourceHttpError);
    assert.equal(err.status, 404);
    assert.equal(err.vendorMessage, 'Space not found');
  });

  it('reports a schema mismatch clearly', async () => {
    const err = await rejects(
      client([]).getJson(`${fake.url}/items`, z.object({ results: z.array(z.string()) })),
    );
    assert.ok(err instanceof SourceHttpError);
    assert.equal(err.kind, 'invalid_response');
    assert.match(err.message, /GET .*\/items answered with an unexpected shape: .*results/);
  });

  it('reports a body that is not JSON', async () => {
    const err = await rejects(client([]).getJson(`${fake.url}/html`, z.object({})));
    assert.ok(err instanceof SourceHttpError);
    assert.equal(err.kind, 'invalid_response');
  });

  it('refuses a body larger than maxBytes', async () => {
    const err = await rejects(client([]).request('GET', `${fake.url}/big`, { maxBytes: 1000 }));
    assert.ok(err instanceof SourceHttpError);
    assert.equal(err.kind, 'too_large');
  });

  it('sends JSON bodies and query parameters', async () => {
    const http = client([]);
    const echoed = await http.postJson(
      `${fake.url}/echo`,
      { query: '{ shop { name } }' },
      z.object({ method: z.string(), body: z.string(), type: z.string().nullable(), q: z.array(z.string()) }),
      { query: { tag: ['a', 'b'], skip: undefined } },
    );
    assert.equal(echoed.method, 'POST');
    assert.equal(echoed.type, 'application/json');
    assert.deepEqual(JSON.parse(echoed.body), { query: '{ shop { name } }' });
    assert.deepEqual(echoed.q, ['a', 'b']);
  });

  it('retries network errors, then fails with kind network and the system error code', async () => {
    const delays: number[] = [];
    const err = await rejects(client(delays).request('GET', `${await closedPortUrl()}/x`));
    assert.ok(err instanceof SourceHttpError);
    assert.equal(err.kind, 'network');
    assert.equal(err.detail, 'ECONNREFUSED');
    assert.equal(err.attempts, 4);
    assert.equal(delays.length, 3);
  });

  it('stops waiting between retries as soon as the signal fires, with the abort reason', async () => {
    // An hour's wait: only the signal can end the request within the test's time.
    fake.failNext(1, { status: 429, headers: { 'retry-after': '3600' }, body: '' });
    const controller = new AbortController();
    const http = createSourceHttpClient({
      fetch: plainFetch,
      signal: controller.signal,
      maxAttempts: 3,
      maxWaitMs: 7_200_000,
    });
    const before = fake.requests.length;
    setTimeout(() => controller.abort(new Error('cancelled by disconnect')), 100);
    const err = await rejects(http.request('GET', `${fake.url}/items`));
    assert.ok(err instanceof Error);
    assert.equal(err.message, 'cancelled by disconnect');
    assert.equal(fake.requests.length - before, 1, 'no request after the abort');
  });

  it('rejects at once when the signal has already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    const http = createSourceHttpClient({ fetch: plainFetch, signal: controller.signal });
    const err = await rejects(http.request('GET', `${fake.url}/items`));
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'AbortError');
    assert.equal(http.requestCount, 0);
  });

  it('counts an attempt that exceeds attemptTimeoutMs as a network error', async () => {
    const hanging = createServer(() => {
      // never answers
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = hanging.address() as AddressInfo;
      const err = await rejects(
        client([], { maxAttempts: 2, attemptTimeoutMs: 100 }).request('GET', `http://127.0.0.1:${port}/`),
      );
      assert.ok(err instanceof SourceHttpError);
      assert.equal(err.kind, 'network');
      assert.equal(err.detail, 'timed out');
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });
});

describe('request pacing (Connector.requestsPerSecond)', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await startFakeServer(() => ({ status: 200, body: { ok: true } }));
  });
  after(async () => {
    await fake?.close();
  });

  it('lets a second’s burst through, then spaces requests at the declared rate', async () => {
    // A clock that only moves when the client waits: the waits are the pacing, nothing else.
    let clock = 0;
    const waits: number[] = [];
    const http = createSourceHttpClient({
      fetch: plainFetch,
      requestsPerSecond: 3,
      now: () => clock,
      sleep: async (ms) => {
        waits.push(ms);
        clock += ms;
      },
    });
    for (let i = 0; i < 9; i++) await http.getJson(`${fake.url}/x`, z.object({ ok: z.boolean() }));
    assert.equal(waits.length, 6, `the first 3 go at once, the other 6 wait: ${waits}`);
    for (const w of waits) assert.ok(w >= 333 && w <= 334, `each wait is a third of a second: ${waits}`);
    assert.ok(clock >= 1_999, `9 requests at 3 per second take 2 s after the burst: ${clock}`);
  });

  it('an abort ends a pacing wait at once, with the abort reason', async () => {
    const controller = new AbortController();
    const http = createSourceHttpClient({
      fetch: plainFetch,
      requestsPerSecond: 1,
      signal: controller.signal,
    });
    await http.getJson(`${fake.url}/x`, z.object({ ok: z.boolean() }));
    // Timed from the paced request alone: the first one's time on a loaded machine is not what is tested.
    const started = Date.now();
    const second = http.getJson(`${fake.url}/x`, z.object({ ok: z.boolean() }));
    setTimeout(() => controller.abort(new Error('cancelled by test')), 50);
    await assert.rejects(second, /cancelled by test/);
    assert.ok(Date.now() - started < 900, 'the abort did not wait for the pace');
  });
});
