/**
 * Which pending items the indexer takes first. Oldest change first made an upload wait for a
 * whole sync's backlog (15 minutes in the load benchmark). Pending items now form queues per
 * organization and source (a connection; an organization's crawls, its uploads) taken in turns, oldest
 * change first within a queue.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import type { ItemSourceType } from '../../src/db/repositories/items.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import { storeDocument } from '../../src/ingest/hash-skip.ts';
import { indexerDatabase, STORAGE_MODES } from '../support/harness.ts';
import { hashEmbedder } from '../support/hash-embedder.ts';

const BATCH = 16;

for (const mode of STORAGE_MODES) {
  describe(`the order the indexer takes items in (${mode})`, () => {
    let db: Database;
    let drop: () => Promise<void>;
    const embedder = hashEmbedder({ dimensions: 32, maxTokens: 64 });

    before(async () => {
      ({ db, drop } = await indexerDatabase(mode, embedder));
    });
    after(async () => drop?.());

    /** Stores `n` documents one after another (each a later change than the one before). */
    const store = async (
      org: string,
      n: number,
      label: string,
      source: { type: ItemSourceType; connectionId?: string },
    ) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const { itemId } = await db.transaction((tx) =>
          storeDocument(
            tx,
            org,
            {
              sourceType: source.type,
              sourceTableName: source.type === 'upload' ? 'uploaded_documents' : 'docs_space_pages',
              sourceKey: `${label}:${i}`,
              title: `${label} ${i}`,
              markdown: `The page ${i} of ${label}, short enough for one passage.`,
              url: '',
              visibility: 'public',
              tags: [],
              connectionId: source.connectionId ?? null,
            },
            { respectTombstones: false },
          ),
        );
        ids.push(itemId!);
      }
      return ids;
    };
    const pendingOf = async (ids: string[]) =>
      new Set(
        (
          await db.query<{ id: string }>(
            "SELECT id FROM items WHERE id = ANY($1::text[]) AND indexing_status = 'pending'",
            [ids],
          )
        ).map((r) => r.id),
      );

    test("uploads and a small sync made after a large sync's backlog are indexed in the first round", async () => {
      const a = (await createOrganization(db, 'big-sync')).id;
      const b = (await createOrganization(db, 'small-org')).id;
      const backlog = await store(a, 120, 'a-sync', { type: 'integration', connectionId: 'conn-a' });
      const smallSync = await store(b, 5, 'b-sync', { type: 'integration', connectionId: 'conn-b' });
      const uploadsB = await store(b, 3, 'b-upload', { type: 'upload' });
      const uploadsA = await store(a, 2, 'a-upload', { type: 'upload' });

      const indexer = new Indexer(db, embedder, { batchItems: BATCH });
      assert.equal(await indexer.indexOnce(), BATCH);
      // Turns over four queues: 4 + 4 + 3 (A's uploads done) + 2 + 2 (B's sync and uploads done) + 1.
      assert.equal(
        (await pendingOf([...smallSync, ...uploadsB, ...uploadsA])).size,
        0,
        'all of them indexed',
      );
      const stillPending = await pendingOf(backlog);
      assert.equal(stillPending.size, 120 - 6, "the backlog's turns: 6 of its items");
      assert.deepEqual(
        backlog.filter((id) => !stillPending.has(id)),
        backlog.slice(0, 6),
        'within a queue, oldest change first',
      );

      // Alone now, the backlog gets whole rounds.
      assert.equal(await indexer.indexOnce(), BATCH);
      assert.equal((await pendingOf(backlog)).size, 120 - 6 - BATCH);
      assert.equal(await indexer.drain(), 120 - 6 - BATCH);
    });

    test('an upload made while a backlog is being indexed is taken in the next round', async () => {
      const org = (await createOrganization(db, 'busy')).id;
      const backlog = await store(org, 80, 'busy-sync', { type: 'integration', connectionId: 'conn-busy' });
      const indexer = new Indexer(db, embedder, { batchItems: BATCH });
      assert.equal(await indexer.indexOnce(), BATCH);
      const [upload] = await store(org, 1, 'busy-upload', { type: 'upload' });
      assert.equal(await indexer.indexOnce(), BATCH);
      assert.equal((await pendingOf([upload!])).size, 0, 'the upload went in with the second round');
      assert.equal((await pendingOf(backlog)).size, 80 - 2 * BATCH + 1);
      await indexer.drain();
    });
  });
}
