/**
 * The indexer keeps the model busy. The next round is leased, chunked and handed to
 * the model before the current one is written, so the model never waits for a commit, a lease or
 * chunking; a round is handed over in several calls and written call by call, so its last commit is all
 * that is left after the model's last call; rounds leased ahead and not written are given back when the
 * indexer stops.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import type { Embedder } from '../../src/embedding/index.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import { storeDocument } from '../../src/ingest/hash-skip.ts';
import { indexerDatabase, STORAGE_MODES } from '../support/harness.ts';
import { hashEmbedder } from '../support/hash-embedder.ts';

const BATCH = 4;

/**
 * An embedder whose calls wait until the test lets them go, so the test sees which calls the indexer has
 * made while the model is still busy with an earlier one.
 */
function gatedEmbedder(inner: Embedder) {
  const calls: Array<{ texts: string[]; go: () => void }> = [];
  const waiters: Array<() => void> = [];
  const gated: Embedder = Object.create(inner);
  gated.embed = (texts, signal) =>
    new Promise((resolve, reject) => {
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      calls.push({ texts, go: () => void inner.embed(texts).then(resolve, reject) });
      for (const w of waiters.splice(0)) w();
    });
  /** Resolves once `n` calls have been made; fails after 10 s (an indexer that waits for the first call's vectors never makes the second). */
  const made = async (n: number) => {
    const deadline = Date.now() + 10_000;
    while (calls.length < n) {
      if (Date.now() > deadline) throw new Error(`${calls.length} calls to the model, expected ${n}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  return { embedder: gated, calls, made };
}

for (const mode of STORAGE_MODES) {
  describe(`the indexer's pipeline (${mode})`, () => {
    let db: Database;
    let drop: () => Promise<void>;
    const inner = hashEmbedder({ dimensions: 32, maxTokens: 64 });

    before(async () => {
      ({ db, drop } = await indexerDatabase(mode, inner));
    });
    after(async () => drop?.());

    const store = async (n: number, label: string) => {
      const org = (await createOrganization(db, label)).id;
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const { itemId } = await db.transaction((tx) =>
          storeDocument(
            tx,
            org,
            {
              sourceType: 'upload',
              sourceTableName: 'uploaded_documents',
              sourceKey: `${label}:${i}`,
              title: `${label} ${i}`,
              markdown: `The page ${i} of ${label}, short enough for one passage.`,
              url: '',
              visibility: 'public',
              tags: [],
            },
            { respectTombstones: false },
          ),
        );
        ids.push(itemId!);
      }
      return ids;
    };
    const states = async (ids: string[]) =>
      db.query<{ status: string; leased: boolean }>(
        `SELECT indexing_status AS status, indexing_lease_until IS NOT NULL AS leased
           FROM items WHERE id = ANY($1::text[]) ORDER BY id`,
        [ids],
      );

    test('the next round is handed to the model while the current one is still embedding', async () => {
      const ids = await store(3 * BATCH, 'ahead');
      const gate = gatedEmbedder(inner);
      const indexer = new Indexer(db, gate.embedder, { batchItems: BATCH });
      const drained = indexer.drain();
      await gate.made(2);
      // The first round's vectors are not in yet, and the second round is already queued at the model.
      assert.equal(gate.calls[0]!.texts.length, BATCH, 'one call per round (a small one)');
      assert.equal(gate.calls[1]!.texts.length, BATCH);
      const leased = await states(ids);
      assert.equal(leased.filter((s) => s.leased).length, 2 * BATCH, 'two rounds leased, no more');
      assert.equal(leased.filter((s) => s.status === 'indexed').length, 0);
      gate.calls[0]!.go();
      // Round one written, round three queued before round two's vectors are in.
      await gate.made(3);
      assert.equal((await states(ids)).filter((s) => s.status === 'indexed').length, BATCH);
      gate.calls[1]!.go();
      gate.calls[2]!.go();
      assert.equal(await drained, 3 * BATCH);
      assert.ok((await states(ids)).every((s) => s.status === 'indexed' && !s.leased));
    });

    test('a round is written call by call while the model embeds the rest of it', async () => {
      const ids = await store(2 * BATCH, 'calls');
      const gate = gatedEmbedder(inner);
      // One chunk an item, one item a transaction, two transactions a call: two calls a round.
      const indexer = new Indexer(db, gate.embedder, {
        batchItems: BATCH,
        commitChunks: 1,
        embedCallChunks: 2,
      });
      const drained = indexer.drain();
      await gate.made(4);
      assert.deepEqual(
        gate.calls.map((c) => c.texts.length),
        [2, 2, 2, 2],
        'both rounds handed over in calls of two chunks',
      );
      gate.calls[0]!.go();
      const deadline = Date.now() + 10_000;
      while ((await states(ids)).filter((s) => s.status === 'indexed').length < 2) {
        assert.ok(Date.now() < deadline, 'the first call’s items were written');
        await new Promise((r) => setTimeout(r, 10));
      }
      // Written while the round's second call is still with the model.
      assert.equal((await states(ids)).filter((s) => s.status === 'indexed').length, 2);
      for (const c of gate.calls.slice(1)) c.go();
      assert.equal(await drained, 2 * BATCH);
      assert.ok((await states(ids)).every((s) => s.status === 'indexed' && !s.leased));
    });

    test('a stop gives back the round leased ahead, not only the one being written', async () => {
      const ids = await store(2 * BATCH, 'stop');
      const gate = gatedEmbedder(inner);
      const indexer = new Indexer(db, gate.embedder, { batchItems: BATCH });
      indexer.start();
      await gate.made(2);
      assert.equal((await states(ids)).filter((s) => s.leased).length, 2 * BATCH);
      await indexer.stop();
      const after = await states(ids);
      assert.ok(
        after.every((s) => s.status === 'pending' && !s.leased),
        'every leased item given back at once, none waits out its lease',
      );
      // The next indexer takes them all without reclaiming anything.
      assert.equal(
        await new Indexer(db, inner, { batchItems: BATCH, reclaimOnStart: false }).drain(),
        2 * BATCH,
      );
    });
  });
}
