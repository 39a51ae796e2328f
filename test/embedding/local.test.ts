import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createEmbedder, dot, type LocalEmbedder, modelProfile } from '../../src/embedding/index.ts';
import { AppError } from '../../src/lib/errors.ts';
import { createTestEmbedder, testModelDir } from '../support/model.ts';

function norm(v: Float32Array): number {
  return Math.sqrt(dot(v, v));
}

describe('LocalEmbedder (real inference on the fixture model)', () => {
  let embedder: LocalEmbedder;
  let fp32: LocalEmbedder;
  before(async () => {
    embedder = await createTestEmbedder();
    fp32 = await createTestEmbedder({ quantized: false });
  });
  after(async () => {
    await embedder.close();
    await fp32.close();
  });

  test('describes the model', () => {
    assert.equal(embedder.modelId, 'local/all-MiniLM-L6-v2/q8');
    assert.equal(embedder.dimensions, 384);
    assert.equal(embedder.maxTokens, 256);
    assert.equal(embedder.profile.pooling, 'mean');
    assert.equal(embedder.profile.queryPrefix, '');
  });

  test('similar sentences are closer than unrelated ones', async () => {
    const [cat, feline, stocks] = await embedder.embed([
      'The cat sat on the mat.',
      'A kitten is resting on the rug.',
      'Stock markets fell sharply after the interest rate decision.',
    ]);
    assert.ok(
      dot(cat!, feline!) > dot(cat!, stocks!) + 0.2,
      `${dot(cat!, feline!)} vs ${dot(cat!, stocks!)}`,
    );
    const query = await embedder.embedQuery('where is the cat sleeping?');
    assert.ok(dot(query, cat!) > dot(query, stocks!));
  });

  test('vectors are L2-normalized, of the announced width', async () => {
    const vectors = await embedder.embed(['short', 'a somewhat longer sentence about knowledge bases', '']);
    for (const v of vectors) {
      assert.equal(v.length, embedder.dimensions);
      assert.ok(Math.abs(norm(v) - 1) < 1e-5);
    }
  });

  test('int8: a text gets the same vector whatever it is embedded with', async () => {
    const texts = [
      'Vaccines train the immune system to recognise pathogens.',
      'ok',
      'Postgres stores vectors with the pgvector extension and indexes them with HNSW graphs for search.',
    ];
    const batched = await embedder.embed(texts);
    for (const [i, text] of texts.entries()) {
      const [single] = await embedder.embed([text]);
      assert.deepEqual(single, batched[i]);
    }
  });

  test('fp32: batching (with padding and reordering) gives the same vectors as one at a time', async () => {
    const texts = [
      'Vaccines train the immune system to recognise pathogens.',
      'ok',
      'Postgres stores vectors with the pgvector extension and indexes them with HNSW graphs for search.',
      'Tables, lists and code blocks stay whole when they fit.',
    ];
    const batched = await fp32.embed(texts);
    for (const [i, text] of texts.entries()) {
      const [single] = await fp32.embed([text]);
      assert.ok(dot(single!, batched[i]!) > 0.99999, `text ${i}: cosine ${dot(single!, batched[i]!)}`);
    }
  });

  test('many texts across several internal batches keep their order', async () => {
    const texts = Array.from({ length: 70 }, (_, i) => `document number ${i} ${'word '.repeat(i % 13)}`);
    for (const model of [embedder, fp32]) {
      const all = await model.embed(texts);
      assert.equal(all.length, 70);
      for (const i of [0, 31, 45, 69]) {
        const [x] = await model.embed([texts[i]!]);
        assert.ok(dot(x!, all[i]!) > 0.99999, `${model.modelId} text ${i}`);
      }
    }
    assert.deepEqual(await embedder.embed([]), []);
  });

  test('inputs beyond the window are truncated, not rejected', async () => {
    const long = 'retrieval augmented generation '.repeat(400);
    assert.ok(embedder.countTokens(long) > embedder.maxTokens);
    const [v] = await embedder.embed([long]);
    assert.ok(Math.abs(norm(v!) - 1) < 1e-5);
  });

  test('countTokens counts the model tokens, special tokens included', () => {
    assert.equal(embedder.countTokens(''), 2);
    assert.equal(embedder.specialTokenCount, 2);
    assert.equal(embedder.countTokens('hello world'), 4);
    // WordPiece splits rare words into several pieces.
    assert.ok(embedder.countTokens('antidisestablishmentarianism') > 3);
    const words = 'lorem ipsum dolor sit amet '.repeat(50);
    const n = embedder.countTokens(words);
    assert.ok(n > 250 && n < 1000, String(n));
  });

  test('an aborted signal stops embedding', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(embedder.embed(['x'], controller.signal), { name: 'AbortError' });
  });

  test('fp32 and int8 weights agree closely', async () => {
    assert.equal(fp32.modelId, 'local/all-MiniLM-L6-v2/fp32');
    const text = 'Search answers come from the nearest chunks by cosine distance.';
    const [a] = await fp32.embed([text]);
    const [b] = await embedder.embed([text]);
    assert.ok(dot(a!, b!) > 0.97, String(dot(a!, b!)));
  });
});

describe('createEmbedder (local)', () => {
  test('loads through the config union', async () => {
    const embedder = await createEmbedder({ provider: 'local', modelDir: await testModelDir() });
    try {
      assert.equal(embedder.dimensions, 384);
      await embedder.close();
      await assert.rejects(
        embedder.embed(['x']),
        (err) => err instanceof AppError && err.code === 'unavailable',
      );
    } finally {
      await embedder.close();
    }
  });

  test('a directory without a model fails as unavailable, naming the fix', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kb-nomodel-'));
    try {
      await assert.rejects(
        createEmbedder({ provider: 'local', modelDir: dir }),
        (err) => err instanceof AppError && err.code === 'unavailable' && /model\.sh/.test(err.message),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('invalid configs are rejected', async () => {
    await assert.rejects(createEmbedder({ provider: 'local' }), { code: 'invalid_request' });
    await assert.rejects(createEmbedder({ provider: 'nope', modelDir: '/x' }), { code: 'invalid_request' });
  });
});

describe('modelProfile', () => {
  test('knows bge and e5 conventions by name', () => {
    const bge = modelProfile('Xenova/bge-small-en-v1.5', undefined);
    assert.equal(bge.pooling, 'cls');
    assert.equal(bge.queryPrefix, 'Represent this sentence for searching relevant passages: ');
    const e5 = modelProfile('intfloat/e5-small-v2', undefined);
    assert.deepEqual([e5.pooling, e5.queryPrefix, e5.passagePrefix], ['mean', 'query: ', 'passage: ']);
    assert.equal(modelProfile('all-MiniLM-L6-v2', undefined).queryPrefix, '');
  });
});
