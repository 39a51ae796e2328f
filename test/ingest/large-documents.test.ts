/**
 * Large documents leave the event loop free: the indexer chunks in a worker thread (chunk-pool.ts) and
 * items' search words are split in slices. Both must give exactly what the calling thread's code gives,
 * and a document of a million characters must end up indexed whole, in both storage modes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import type { Embedder } from '../../src/embedding/index.ts';
import type { LocalEmbedder } from '../../src/embedding/local.ts';
import { OpenAIEmbedder } from '../../src/embedding/openai.ts';
import { chunkForIndexing, chunkForIndexingOffThread } from '../../src/ingest/chunk.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import { storeDocument } from '../../src/ingest/hash-skip.ts';
import {
  itemSearchWords,
  itemSearchWordsInSlices,
  MAX_WORDS_BYTES,
  SEARCH_WORDS_SLICE_CHARS,
} from '../../src/lib/search-words.ts';
import { indexerDatabase, STORAGE_MODES } from '../support/harness.ts';
import { hashEmbedder } from '../support/hash-embedder.ts';
import { createTestEmbedder } from '../support/model.ts';

/** Markdown with every kind of block the chunker treats apart, several of them too big for one chunk. */
function mixedDocument(seed: number): string {
  const sentence = (i: number) => `Sentence ${seed}.${i} explains step ${i}, e.g. with v2.0.${i} or 3.14!`;
  return [
    `# Handbook ${seed}`,
    Array.from({ length: 80 }, (_, i) => sentence(i)).join(' '),
    '## Install *quickly*',
    '```ts',
    ...Array.from({ length: 90 }, (_, i) => `const value${i} = compute(${i}, "literal ${i}");`),
    '```',
    '    indented code line one\n    indented code line two',
    '## Table',
    '| key | description |\n|---|---|',
    ...Array.from({ length: 60 }, (_, i) => `| k${i} | the description of key number ${i} is rather long |`),
    '## Lists',
    Array.from({ length: 40 }, (_, i) => `- item ${i}: ${sentence(i)} ${sentence(i + 1)}`).join('\n'),
    'Setext heading\n--------------',
    `https://example.com/${'a1b2c3d4'.repeat(400)}`,
    '## Non-English',
    '検索システムは文書を小さな断片に分割します。'.repeat(60),
    'ΟΔΟΣ ΚΑΙ ΣΟΦΟΣ. Ελληνικό κείμενο με τελικό σίγμα.',
    '[ref]: https://example.com/ref',
    '> A quote with **bold** and `code` and a [link](https://example.com).',
  ].join('\n\n');
}

/** About `chars` characters of prose under headings, as a long manual is. */
function longManual(chars: number): string {
  const parts: string[] = [];
  let n = 0;
  for (let s = 0; n < chars; s++) {
    const section = `## Section ${s}\n\n${Array.from(
      { length: 12 },
      (_, i) => `Paragraph ${s}.${i} covers topic ${(s * 7 + i) % 97} and its caveats in detail.`,
    ).join(' ')}\n\n`;
    parts.push(section);
    n += section.length;
  }
  return parts.join('');
}

describe('chunking in the chunking thread', () => {
  let local: LocalEmbedder;
  const embedders: Array<[string, () => Embedder]> = [
    ['hash embedder', () => hashEmbedder({ dimensions: 32, maxTokens: 128 })],
    ['local model tokenizer', () => local],
  ];
  before(async () => {
    local = await createTestEmbedder();
    const remote = await OpenAIEmbedder.create({
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'not-used',
      model: 'text-embedding-3-small',
    });
    embedders.push(['remote model estimate', () => remote]);
  });
  after(async () => local?.close());

  test('gives exactly the chunks of the calling thread, for every embedder', async () => {
    const docs = [
      { title: 'Handbook', content: mixedDocument(1) },
      { title: 'Handbook', content: mixedDocument(2).replaceAll('\n', '\r\n') },
      { title: 'Only headings', content: '# One\n\n## Two\n\n### Three' },
      { title: `${'Very long title '.repeat(200)}end`, content: 'Short body. Two sentences.' },
      { title: 'Empty', content: '  \n\n ' },
      { title: 'Manual', content: longManual(60_000) },
    ];
    for (const [name, embedder] of embedders) {
      assert.ok(embedder().tokenCounter, `${name} names a counter a thread can build`);
      for (const doc of docs) {
        for (const overlap of [0, 32]) {
          const inThread = chunkForIndexing(embedder(), doc, overlap);
          const offThread = await chunkForIndexingOffThread(embedder(), doc, { overlapTokens: overlap });
          assert.deepEqual(offThread, inThread, `${name}, ${doc.title.slice(0, 20)}, overlap ${overlap}`);
        }
      }
    }
  });

  test('an embedder without a thread-buildable counter is chunked on the calling thread, the same way', async () => {
    const { tokenCounter: _, ...bare } = hashEmbedder({ dimensions: 32, maxTokens: 128 });
    const doc = { title: 'Handbook', content: mixedDocument(3) };
    assert.deepEqual(await chunkForIndexingOffThread(bare, doc), chunkForIndexing(bare, doc));
  });

  test('a stop while a document is being chunked rejects at once', async () => {
    const abort = new AbortController();
    const chunking = chunkForIndexingOffThread(
      local,
      { title: 'Manual', content: longManual(2_000_000) },
      { overlapTokens: 32, signal: abort.signal },
    );
    abort.abort();
    await assert.rejects(chunking, { name: 'AbortError' });
    // The pool starts a new thread for the next document.
    const doc = { title: 'Handbook', content: mixedDocument(4) };
    assert.deepEqual(await chunkForIndexingOffThread(local, doc), chunkForIndexing(local, doc));
  });
});

describe('search words split in slices', () => {
  test('are the words of the whole text', async () => {
    const cases = [
      '',
      'Short text, one slice.',
      longManual(3 * SEARCH_WORDS_SLICE_CHARS),
      // Links whose targets' words must not count, wherever a slice ends.
      'See [the guide](https://docs.example.com/guide/body.html "Body") now, <b>bold</b> too.\n'.repeat(
        SEARCH_WORDS_SLICE_CHARS / 40,
      ),
      // Final sigma depends on what follows the letter: slices end only after whitespace.
      `${'ΟΔΟΣ. ΣΟΦΟΣ\tΚΑΙ\nΣΑΣ '.repeat(SEARCH_WORDS_SLICE_CHARS / 8)}`,
      // Astral letters (surrogate pairs) and no whitespace for longer than a slice.
      `${'𝐀𝐁𝐂word'.repeat(SEARCH_WORDS_SLICE_CHARS / 4)} tail words here`,
      // More distinct words than a tsvector holds: both stop at the same word.
      Array.from({ length: 200_000 }, (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`).join(' '),
    ];
    for (const [n, text] of cases.entries()) {
      assert.equal(
        await itemSearchWordsInSlices('Title Words', text),
        itemSearchWords('Title Words', text),
        `case ${n}`,
      );
    }
    const full = await itemSearchWordsInSlices('t', cases.at(-1)!);
    assert.ok(Buffer.byteLength(full) <= MAX_WORDS_BYTES);
  });
});

describe('embedded mode: a large statement of a transaction', () => {
  /** For each statement (a small one, then one of a million characters): did the event loop turn during it? */
  const turnsDuring = (db: Database, opts?: { yieldOnLargeStatements: boolean }) =>
    db.transaction(async (tx) => {
      const turns: boolean[] = [];
      for (const text of ['small', 'x'.repeat(1_000_000)]) {
        let turned = false;
        setImmediate(() => {
          turned = true;
        });
        await tx.query('SELECT md5($1::text)', [text]);
        turns.push(turned);
      }
      return turns;
    }, opts);

  test('lets the event loop turn while the database thread works on it, where the transaction allows it', async () => {
    const { db, drop } = await indexerDatabase('pglite', { modelId: 'm', dimensions: 4 });
    try {
      // A small statement is a synchronous call (the main thread waits, as designed); a large one is not.
      assert.deepEqual(await turnsDuring(db, { yieldOnLargeStatements: true }), [false, true]);
      // By default nothing else runs between a transaction's statements (the crawler's group commits
      // rely on it), however large they are.
      assert.deepEqual(await turnsDuring(db), [false, false]);
    } finally {
      await drop();
    }
  });
});

for (const mode of STORAGE_MODES) {
  describe(`a document of a million characters (${mode})`, () => {
    // Many chunks, written in many parts under a staged generation (the default commitChunks).
    const embedder = hashEmbedder({ dimensions: 32, maxTokens: 512 });
    let db: Database;
    let drop: () => Promise<void>;
    before(async () => {
      ({ db, drop } = await indexerDatabase(mode, embedder));
    });
    after(async () => drop?.());

    test('is stored with all its search words, then chunked off the event loop and indexed whole', async () => {
      const org = (await createOrganization(db, 'big')).id;
      const content = `${longManual(1_000_000)}\n\nThe closing zyzzyva paragraph.`;
      const { itemId } = await db.transaction((tx) =>
        storeDocument(
          tx,
          org,
          {
            sourceType: 'upload',
            sourceTableName: 'uploaded_documents',
            sourceKey: 'upload:big',
            title: 'Big manual',
            markdown: content,
            url: '',
            visibility: 'public',
            tags: [],
          },
          { respectTombstones: false },
        ),
      );
      const [words] = await db.query<{ same: boolean; last: boolean }>(
        `SELECT search_words = array_to_tsvector(string_to_array($2, ' ')) AS same,
                search_words @@ 'zyzzyva'::tsquery AS last
           FROM items WHERE id = $1`,
        [itemId, itemSearchWords('Big manual', content)],
      );
      assert.deepEqual(words, { same: true, last: true });

      const indexer = new Indexer(db, embedder);
      assert.equal(await indexer.drain(), 1);
      const expected = chunkForIndexing(embedder, { title: 'Big manual', content });
      assert.ok(expected.length > 200, `${expected.length} chunks`);
      const stored = await db.query<{ chunk_index: number; text: string }>(
        'SELECT chunk_index, text FROM chunks WHERE item_id = $1 ORDER BY chunk_index',
        [itemId],
      );
      assert.deepEqual(
        stored,
        expected.map((c) => ({ chunk_index: c.index, text: c.text })),
      );
      const [item] = await db.query<{ indexing_status: string; leased: boolean }>(
        'SELECT indexing_status, indexing_lease_until IS NOT NULL AS leased FROM items WHERE id = $1',
        [itemId],
      );
      assert.deepEqual(item, { indexing_status: 'indexed', leased: false });
      assert.deepEqual(await db.query('SELECT generation FROM chunk_staging'), [], 'no staged part left');
      await indexer.stop();
    });
  });
}
