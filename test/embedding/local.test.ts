import assert from 'node:assert/strict';
import { once } from 'node:events';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { AutoModel, AutoTokenizer, env, mean_pooling, type Tensor } from '@huggingface/transformers';
import { createEmbedder, dot, type LocalEmbedder, modelProfile } from '../../src/embedding/index.ts';
import { AppError } from '../../src/lib/errors.ts';
import { createTestEmbedder, testModelDir } from '../support/model.ts';

function norm(v: Float32Array): number {
  return Math.sqrt(dot(v, v));
}

/**
 * The worker threads this process starts from now on, in order (in this file only embedders start
 * threads); the caller stops watching.
 */
function watchThreads(): { threads: Worker[]; stop: () => void } {
  const threads: Worker[] = [];
  const onWorker = (worker: Worker) => threads.push(worker);
  process.on('worker', onWorker);
  return { threads, stop: () => process.off('worker', onWorker) };
}

const isUnavailable = (pattern: RegExp) => (err: unknown) =>
  err instanceof AppError && err.code === 'unavailable' && pattern.test(err.message);

/** `n` passage-length texts, distinct, for calls that keep the model busy. */
function documents(n: number, tag: string): string[] {
  return Array.from(
    { length: n },
    (_, i) =>
      `${tag} ${i}: ${'connectors sync pages into the knowledge base, which the indexer embeds '.repeat(6)}`,
  );
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

describe('LocalEmbedder thread (the model runs off the main thread)', () => {
  let embedder: LocalEmbedder;
  let fp32: LocalEmbedder;
  /** One thread for queries and documents alike, as on a single core: its queue decides who goes first. */
  let shared: LocalEmbedder;
  before(async () => {
    embedder = await createTestEmbedder();
    fp32 = await createTestEmbedder({ quantized: false });
    shared = await createTestEmbedder({ queryThread: false });
  });
  after(async () => {
    await embedder.close();
    await fp32.close();
    await shared.close();
  });

  test('vectors equal those transformers.js computes on the calling thread, one text per inference', async () => {
    const dir = await testModelDir();
    env.localModelPath = path.dirname(dir);
    env.allowRemoteModels = false;
    const name = path.basename(dir);
    const tokenizer = await AutoTokenizer.from_pretrained(name, { local_files_only: true });
    const model = await AutoModel.from_pretrained(name, {
      local_files_only: true,
      dtype: 'q8',
      device: 'cpu',
    });
    try {
      const texts = [
        'The cat sat on the mat.',
        'ok',
        'Postgres stores vectors with the pgvector extension and indexes them with HNSW graphs for search.',
        'retrieval augmented generation '.repeat(300),
      ];
      const got = [...(await embedder.embed(texts)), await embedder.embedQuery(texts[0]!)];
      for (const [i, text] of [...texts, texts[0]!].entries()) {
        const inputs = tokenizer([text], { truncation: true, max_length: embedder.maxTokens });
        const { last_hidden_state } = (await model(inputs)) as { last_hidden_state: Tensor };
        const expected = mean_pooling(last_hidden_state, inputs.attention_mask).normalize(2, -1)
          .data as Float32Array;
        assert.equal(got[i]!.length, expected.length);
        // transformers.js pools in float64, ours in float32: the same vector up to float32 rounding.
        const worst = Math.max(...expected.map((x, d) => Math.abs(x - got[i]![d]!)));
        assert.ok(worst < 1e-6, `text ${i}: largest difference ${worst}`);
      }
    } finally {
      await model.dispose();
    }
  });

  test('the main thread keeps turning while a batch embeds', async () => {
    // fp32 embeds 32 texts in one inference: the longest the model holds a thread in one go.
    const texts = documents(32, 'long');
    let last = performance.now();
    let longestGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    const startUse = performance.eventLoopUtilization();
    const started = performance.now();
    try {
      await fp32.embed(texts);
    } finally {
      clearInterval(timer);
    }
    const took = performance.now() - started;
    // The stretch since the last tick counts too (a blocked loop ticks once, at the very end).
    longestGap = Math.max(longestGap, performance.now() - last);
    const use = performance.eventLoopUtilization(startUse);
    // In the main thread, one inference held the event loop for the whole batch (busy share ~1).
    assert.ok(
      longestGap < took / 2,
      `longest timer gap ${longestGap.toFixed(0)} ms of a ${took.toFixed(0)} ms batch`,
    );
    assert.ok(use.utilization < 0.5, `event loop busy ${(use.utilization * 100).toFixed(0)}% of the batch`);
  });

  test('queries queued together: fp32 embeds them in one inference, int8 one by one; vectors as one at a time', async () => {
    const queries = [
      'how often do connectors sync?',
      'ok',
      'which index does pgvector use for approximate nearest neighbour search over chunk embeddings?',
      'vaccines and the immune system',
      'chunk overlap',
      'what happens to an item deleted by a user when the next sync runs',
    ];
    for (const model of [fp32, embedder]) {
      // A document call holds the model, so the queries queue behind its running inference and meet there.
      const busy = model.embed(documents(4, 'busy'));
      const together = await Promise.all(queries.map((q) => model.embedQuery(q)));
      await busy;
      for (const [i, q] of queries.entries()) {
        const alone = await model.embedQuery(q);
        if (model === embedder)
          assert.deepEqual(together[i], alone, `int8 query ${i}: not batched, same bits`);
        else
          assert.ok(
            dot(alone, together[i]!) > 0.99999,
            `fp32 query ${i}: cosine ${dot(alone, together[i]!)}`,
          );
      }
    }
  });

  test('queries have a thread of their own, answered while documents embed; the documents’ thread yields the cores', async () => {
    assert.deepEqual(
      embedder.threads.map((t) => t.lane),
      ['documents', 'queries'],
    );
    if (process.platform === 'linux') {
      const niceness = Object.fromEntries(embedder.threads.map((t) => [t.lane, t.niceness]));
      assert.ok(niceness['documents']! > niceness['queries']!, JSON.stringify(niceness));
    }
    // A long document call holds the documents' thread; a query does not wait for any of its inferences.
    let documentsDone = false;
    const busy = embedder.embed(documents(64, 'a long document call')).then(() => {
      documentsDone = true;
    });
    await embedder.embedQuery('how often do connectors sync?');
    assert.equal(documentsDone, false, 'the query was answered while the documents were still embedding');
    await busy;
    assert.deepEqual(
      shared.threads.map((t) => t.lane),
      ['documents'],
    );
  });

  test('one thread for both: a query goes before the document inferences queued ahead of it; documents keep their order', async () => {
    const finished: string[] = [];
    const calls = Array.from({ length: 4 }, (_, c) =>
      shared.embed(documents(32, `call ${c}`)).then(() => finished.push(`documents ${c}`)),
    );
    calls.push(shared.embedQuery('how often do connectors sync?').then(() => finished.push('query')));
    await Promise.all(calls);
    // The first call is 32 inferences: the query waits for the one running when it arrives, not the call.
    assert.deepEqual(finished, ['query', ...Array.from({ length: 4 }, (_, c) => `documents ${c}`)]);
  });

  test('one thread for both: documents still get a share of the model while queries keep coming', async () => {
    let documentsDone = false;
    const document = shared.embed(documents(8, 'under search load')).then(() => {
      documentsDone = true;
    });
    // Four closed-loop searchers keep queries waiting in the thread all along; strict query priority
    // would leave the document call waiting until they stop.
    let queries = 0;
    const cap = 400;
    const searcher = async () => {
      while (!documentsDone && queries < cap) {
        queries++;
        await shared.embedQuery(`question ${queries} about connectors`);
      }
    };
    await Promise.all([searcher(), searcher(), searcher(), searcher()]);
    assert.ok(documentsDone, `the document call was still waiting after ${queries} queries`);
    await document;
  });

  test('a queued call whose signal aborts is dropped at once, and the thread carries on', async () => {
    const settled: string[] = [];
    const ahead = embedder.embed(documents(32, 'ahead')).then(() => settled.push('ahead'));
    const controller = new AbortController();
    const queued = embedder.embed(documents(32, 'queued'), controller.signal).catch((err: unknown) => {
      settled.push('aborted');
      throw err;
    });
    const behind = embedder.embed(['behind']).then(() => settled.push('behind'));
    controller.abort();
    await assert.rejects(queued, { name: 'AbortError' });
    await Promise.all([ahead, behind]);
    assert.deepEqual(settled, ['aborted', 'ahead', 'behind']);
    const [again] = await embedder.embed(['behind']);
    assert.equal(again!.length, embedder.dimensions);
  });

  test('close() waits for the calls already made, then ends the thread', async () => {
    const watch = watchThreads();
    const own = await createTestEmbedder();
    watch.stop();
    assert.equal(watch.threads.length, 2, 'the model runs in threads of its own: documents, queries');
    const exited = watch.threads.map((thread) => once(thread, 'exit'));
    const pending = own.embed(documents(8, 'before close'));
    await own.close();
    assert.equal((await pending).length, 8);
    for (const [code] of await Promise.all(exited)) assert.equal(code, 0);
    await assert.rejects(own.embed(['x']), isUnavailable(/closed/));
  });

  test('a thread that dies fails the calls waiting on it; the next call starts another', async () => {
    const watch = watchThreads();
    const own = await createTestEmbedder();
    try {
      assert.equal(watch.threads.length, 2, 'the model runs in threads of its own: documents, queries');
      const [before] = await own.embed(['embedded before and after the crash']);
      const waiting = [own.embed(documents(32, 'one')), own.embed(documents(32, 'two'))];
      // The documents' thread started first.
      await watch.threads[0]!.terminate();
      for (const call of waiting) await assert.rejects(call, isUnavailable(/thread stopped/));
      assert.equal((await own.embedQuery('the queries go on meanwhile')).length, own.dimensions);
      const [after] = await own.embed(['embedded before and after the crash']);
      assert.equal(watch.threads.length, 3, 'a new thread took over the documents');
      assert.deepEqual(after, before);
    } finally {
      watch.stop();
      await own.close();
    }
  });

  test('a model the thread cannot load fails as unavailable', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kb-badmodel-'));
    try {
      const source = await testModelDir();
      for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) {
        await cp(path.join(source, file), path.join(dir, file));
      }
      await mkdir(path.join(dir, 'onnx'));
      await writeFile(path.join(dir, 'onnx', 'model_quantized.onnx'), 'not an onnx graph');
      await assert.rejects(
        createEmbedder({ provider: 'local', modelDir: dir }),
        isUnavailable(/^Could not load embedding model kb-badmodel-/),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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
