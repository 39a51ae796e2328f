import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createEmbedder, dot, OpenAIEmbedder } from '../../src/embedding/index.ts';
import { AppError } from '../../src/lib/errors.ts';

const KEY = 'sk-test-secret-key';
const WIDTH = 8;

/** Deterministic, unnormalized vector for a text, so tests can check order and normalization. */
function fakeVector(text: string): number[] {
  const v = new Array<number>(WIDTH).fill(0);
  for (let i = 0; i < text.length; i++) v[i % WIDTH]! += text.charCodeAt(i);
  return v;
}

interface Seen {
  auth: string | undefined;
  body: { model: string; input: string[]; dimensions?: number };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

describe('OpenAIEmbedder against a fake server on loopback', () => {
  let server: Server;
  let baseUrl: string;
  const seen: Seen[] = [];
  /** Statuses to answer before answering normally (one per request). */
  let failures: Array<{ status: number; retryAfter?: string }> = [];
  let shuffle = false;

  before(async () => {
    server = createServer(async (req, res) => {
      const body = (await readJson(req)) as Seen['body'];
      seen.push({ auth: req.headers.authorization, body });
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const failure = failures.shift();
      if (failure) {
        res.writeHead(failure.status, failure.retryAfter ? { 'retry-after': failure.retryAfter } : {});
        res.end(JSON.stringify({ error: { message: 'nope' } }));
        return;
      }
      const data = body.input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: fakeVector(text),
      }));
      if (shuffle) data.reverse();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1 } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
    failures = [];
    shuffle = false;
  });

  test('probes the width, sends model, input and bearer key, returns normalized vectors in order', async () => {
    const embedder = await createEmbedder({ provider: 'openai', baseUrl, model: 'fake-embed', apiKey: KEY });
    assert.equal(embedder.dimensions, WIDTH);
    assert.equal(embedder.modelId, `openai/fake-embed/${WIDTH}`);
    assert.equal(embedder.maxTokens, 8191);
    shuffle = true;
    const [a, b] = await embedder.embed(['alpha', 'a much longer text']);
    const expected = Float32Array.from(fakeVector('alpha'));
    const n = Math.sqrt(dot(expected, expected));
    assert.ok(Math.abs(dot(a!, a!) - 1) < 1e-6 && Math.abs(dot(b!, b!) - 1) < 1e-6);
    assert.ok(Math.abs(a![0]! - expected[0]! / n) < 1e-6, 'vectors follow the response index, not its order');
    const last = seen.at(-1)!;
    assert.equal(last.auth, `Bearer ${KEY}`);
    assert.deepEqual(last.body.input, ['alpha', 'a much longer text']);
    assert.equal(last.body.model, 'fake-embed');
    assert.equal(last.body.dimensions, undefined);
    const q = await embedder.embedQuery('alpha');
    assert.deepEqual(q, a);
  });

  test('splits large inputs into batches and sends the configured dimensions', async () => {
    const embedder = await OpenAIEmbedder.create({
      provider: 'openai',
      baseUrl: `${baseUrl}/`,
      model: 'fake-embed',
      dimensions: WIDTH,
      batchSize: 3,
    });
    assert.equal(seen.length, 0, 'a configured width needs no probe');
    const texts = Array.from({ length: 7 }, (_, i) => `text ${i}`);
    const vectors = await embedder.embed(texts);
    assert.equal(vectors.length, 7);
    assert.deepEqual(
      seen.map((s) => s.body.input.length),
      [3, 3, 1],
    );
    assert.equal(seen[0]!.body.dimensions, WIDTH);
    assert.equal(seen[0]!.auth, undefined);
  });

  test('retries 429 and 5xx, honouring Retry-After', async () => {
    const embedder = await OpenAIEmbedder.create({
      provider: 'openai',
      baseUrl,
      model: 'fake',
      dimensions: WIDTH,
    });
    failures = [{ status: 429, retryAfter: '0' }, { status: 503 }];
    const [v] = await embedder.embed(['x']);
    assert.equal(v!.length, WIDTH);
    assert.equal(seen.length, 3);
  });

  test('gives up with unavailable, without the key in the error', async () => {
    const embedder = await OpenAIEmbedder.create({
      provider: 'openai',
      baseUrl,
      model: 'fake',
      apiKey: KEY,
      dimensions: WIDTH,
      maxAttempts: 2,
    });
    failures = [{ status: 500 }, { status: 500 }];
    await assert.rejects(embedder.embed(['x']), (err) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'unavailable');
      assert.match(err.message, /HTTP 500/);
      assert.ok(!JSON.stringify({ m: err.message, d: err.details }).includes(KEY));
      return true;
    });
    failures = [{ status: 401 }];
    await assert.rejects(embedder.embed(['x']), { code: 'unavailable' });
    assert.equal(seen.length, 3, 'a 401 is not retried');
  });

  test('a width that disagrees with the configured one is refused', async () => {
    const embedder = await OpenAIEmbedder.create({
      provider: 'openai',
      baseUrl,
      model: 'fake',
      dimensions: 16,
    });
    await assert.rejects(embedder.embed(['x']), { code: 'unavailable' });
  });

  test('an unreachable server fails as unavailable; abort stops at once', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const embedder = await OpenAIEmbedder.create({
      provider: 'openai',
      baseUrl: `http://127.0.0.1:${port}/v1`,
      model: 'fake',
      dimensions: WIDTH,
      maxAttempts: 2,
    });
    await assert.rejects(embedder.embed(['x']), { code: 'unavailable' });
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(embedder.embed(['x'], controller.signal), { name: 'AbortError' });
  });

  test('countTokens over-estimates English so chunks fit', async () => {
    const embedder = await OpenAIEmbedder.create({
      provider: 'openai',
      baseUrl,
      model: 'text-embedding-3-small',
    });
    assert.equal(embedder.dimensions, 1536, 'known models need no probe');
    assert.equal(seen.length, 0);
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(10);
    assert.ok(embedder.countTokens(text) >= text.length / 4);
  });

  test('invalid configs are rejected without echoing the key', async () => {
    await assert.rejects(
      createEmbedder({ provider: 'openai', baseUrl: 'not a url', model: 'm', apiKey: KEY }),
      (err) => err instanceof AppError && err.code === 'invalid_request' && !err.message.includes(KEY),
    );
    await assert.rejects(createEmbedder({ provider: 'openai', baseUrl, model: '' }), {
      code: 'invalid_request',
    });
  });
});
