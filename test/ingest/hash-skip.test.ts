import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { crawlSourceKey, type IngestDocument, storeDocument } from '../../src/ingest/hash-skip.ts';
import { withSearch } from '../support/embedding.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

const page = (markdown: string, extra: Partial<IngestDocument> = {}): IngestDocument => ({
  sourceType: 'crawl',
  sourceTableName: 'crawled_pages',
  sourceKey: crawlSourceKey('https://docs.example.com/a'),
  title: 'Page A',
  markdown,
  url: 'https://docs.example.com/a',
  visibility: 'public',
  tags: ['docs'],
  ...extra,
});

for (const mode of STORAGE_MODES) {
  describe(`pipeline store + index (${mode})`, () => {
    let t: TestApp;
    let drain: () => Promise<number>;
    before(async () => {
      t = await startTestApp(mode);
      ({ drain } = await withSearch(t));
    });
    after(async () => t?.close());

    const store = (doc: IngestDocument, respectTombstones = true) =>
      t.db.transaction((tx) => storeDocument(tx, t.orgA.id, doc, { respectTombstones }));
    const chunkTexts = async () =>
      (
        await t.db.query<{ text: string }>(
          'SELECT text FROM chunks WHERE organization_id = $1 ORDER BY chunk_index',
          [t.orgA.id],
        )
      ).map((r) => r.text);

    test('new content is embedded once; unchanged content embeds nothing; changed content replaces its chunks', async () => {
      assert.equal((await store(page('# Intro\n\nThe first version of the text.'))).outcome, 'created');
      assert.equal(await drain(), 1);
      const firstChunks = await chunkTexts();
      assert.ok(firstChunks.some((c) => c.includes('first version')));

      const again = await store(
        page('# Intro\n\nThe first version of the text.', { tags: ['docs', 'extra'] }),
      );
      assert.equal(again.outcome, 'retagged', 'the same content with a tag more');
      assert.equal(await drain(), 0, 'unchanged content must not be embedded again');
      const tags = await t.db.query<{ tags: string[] }>(
        'SELECT DISTINCT tags FROM chunks WHERE organization_id = $1',
        [t.orgA.id],
      );
      assert.deepEqual(
        tags.map((r) => r.tags),
        [['docs', 'extra']],
        'metadata still follows',
      );

      assert.equal((await store(page('# Intro\n\nA second, rewritten text.'))).outcome, 'updated');
      assert.equal(await drain(), 1);
      const now = await chunkTexts();
      assert.ok(now.some((c) => c.includes('second, rewritten')));
      assert.ok(!now.some((c) => c.includes('first version')), 'no stale chunks');
      const items = await t.db.query('SELECT 1 FROM items WHERE organization_id = $1', [t.orgA.id]);
      assert.equal(items.length, 1, 'the same source key updates one item');
    });

    test('storing a document exactly as it is writes no row; a new source version alone is stored', async () => {
      const key = crawlSourceKey('https://docs.example.com/versioned');
      const doc = page('A body that will not change.', {
        sourceKey: key,
        title: 'Versioned',
        sourceVersion: '7',
      });
      const { itemId } = await store(doc);
      const rowVersion = async () =>
        (
          await t.db.query<{ v: string; sv: string | null }>(
            'SELECT xmin::text AS v, source_version AS sv FROM items WHERE id = $1',
            [itemId],
          )
        )[0]!;
      const before = await rowVersion();
      assert.equal(before.sv, '7');
      assert.equal((await store(doc)).outcome, 'unchanged');
      assert.equal((await rowVersion()).v, before.v, 'the row was not rewritten');
      assert.equal(
        (await store({ ...doc, sourceVersion: '8' })).outcome,
        'unchanged',
        'same content: nothing to embed',
      );
      const after = await rowVersion();
      assert.equal(after.sv, '8');
      assert.notEqual(after.v, before.v, 'the new version was written');
    });

    test('a NUL character in fetched content is dropped, not a failed document', async () => {
      const doc = page('Before\u0000after.', {
        sourceKey: crawlSourceKey('https://docs.example.com/nul'),
        title: 'Nul\u0000title',
        tags: ['a\u0000b'],
      });
      const { outcome, itemId } = await store(doc);
      assert.equal(outcome, 'created');
      const row = (
        await t.db.query<{ title: string; content: string; tags: string[] }>(
          'SELECT title, content, tags FROM items WHERE id = $1',
          [itemId],
        )
      )[0]!;
      assert.deepEqual(row, { title: 'Nultitle', content: 'Beforeafter.', tags: ['ab'] });
      assert.equal((await store(doc)).outcome, 'unchanged', 'the same fetched content is recognised again');
    });

    test('a user-deleted item stays deleted unless tombstones are lifted', async () => {
      const doc = page('Tombstone test body.', {
        sourceKey: crawlSourceKey('https://docs.example.com/b'),
        title: 'Page B',
      });
      const { itemId } = await store(doc);
      const del = await t.call('DELETE', '/api/connect/knowledgebase-items', { body: { ids: [itemId] } });
      assert.equal(del.body.deleted, 1);
      assert.equal((await store(doc)).outcome, 'tombstoned');
      const none = await t.db.query("SELECT 1 FROM items WHERE title = 'Page B'");
      assert.equal(none.length, 0);
      assert.equal((await store(doc, false)).outcome, 'created');
      assert.equal((await store(doc)).outcome, 'unchanged');
    });

    test('content edited while it was being embedded is not indexed stale', async () => {
      const key = crawlSourceKey('https://docs.example.com/c');
      await store(page('Old racing text.', { sourceKey: key, title: 'Page C' }));
      // Lease the item as a worker would, then change it underneath before the worker commits.
      const idx = (await withSearch(t)).indexer;
      const racing = idx.indexOnce();
      await store(page('New racing text.', { sourceKey: key, title: 'Page C' }));
      await racing;
      await t.db.query("UPDATE items SET indexing_lease_until = NULL WHERE title = 'Page C'");
      await drain();
      const texts = await t.db.query<{ text: string }>(
        "SELECT c.text FROM chunks c JOIN items i ON i.id = c.item_id WHERE i.title = 'Page C'",
      );
      assert.ok(
        texts.every((r) => r.text.includes('New racing')),
        JSON.stringify(texts),
      );
      const status = await t.db.query<{ indexing_status: string }>(
        "SELECT indexing_status FROM items WHERE title = 'Page C'",
      );
      assert.equal(status[0]!.indexing_status, 'indexed');
    });
  });
}
