/**
 * GET /api/connect/knowledgebase-items/stats: how far the knowledge base is. Counts by indexing state,
 * source type and connection, chunks, and the indexer's rate and time to drain, for the caller's
 * organization only (another organization's items count in the queue ahead, never in the counts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Embedder } from '../../src/embedding/index.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import { withSearch } from '../support/embedding.ts';
import { expectError, STORAGE_MODES } from '../support/harness.ts';
import { connect, type SyncApp, startSyncApp, syncAndWait } from '../jobs/helpers.ts';

const ZERO = { pending: 0, indexed: 0, failed: 0 };

for (const mode of STORAGE_MODES) {
  describe(`knowledge base stats (${mode})`, () => {
    let s: SyncApp;
    before(async () => {
      s = await startSyncApp(mode);
    });
    after(async () => s?.close());

    const stats = async (key?: string) => {
      const res = await s.t.call('GET', '/api/connect/knowledgebase-items/stats', { key });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    };
    const upload = async (title: string, key?: string) => {
      const res = await s.t.call('POST', '/api/connect/knowledgebase-items', {
        body: {
          title,
          content: `# ${title}\n\nThe text of ${title}, long enough to make a passage of its own.`,
        },
        key,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };

    test('counts, chunks and the time to drain, for the caller only', async () => {
      const { t, source } = s;
      const empty = await stats();
      assert.deepEqual(empty, {
        total: 0,
        byIndexingStatus: ZERO,
        bySourceType: { integration: 0, crawl: 0, upload: 0 },
        byConnection: [],
        chunks: 0,
        indexer: { ratePerSecond: null, queuedAhead: 0, etaSeconds: 0 },
      });

      source.seed(5);
      const connectionId = await connect(t);
      assert.equal((await syncAndWait(t)).status, 'succeeded');
      await upload('First upload');
      await upload('Second upload');
      const before = await stats();
      assert.equal(before.total, 7);
      assert.deepEqual(before.byIndexingStatus, { pending: 7, indexed: 0, failed: 0 });
      assert.deepEqual(before.bySourceType, { integration: 5, crawl: 0, upload: 2 });
      assert.deepEqual(before.byConnection, [
        {
          connectionId,
          type: 'docs_space',
          total: 5,
          byIndexingStatus: { pending: 5, indexed: 0, failed: 0 },
        },
      ]);
      assert.equal(before.indexer.queuedAhead, 7);
      assert.equal(before.indexer.etaSeconds, null, 'nothing indexed yet: no rate, no estimate');

      const search = await withSearch(t);
      assert.equal(await search.drain(), 7);
      const indexed = await stats();
      assert.deepEqual(indexed.byIndexingStatus, { pending: 0, indexed: 7, failed: 0 });
      assert.deepEqual(indexed.byConnection[0].byIndexingStatus, { pending: 0, indexed: 5, failed: 0 });
      const [chunks] = await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM chunks WHERE organization_id = $1',
        [t.orgA.id],
      );
      assert.ok(chunks!.n >= 7);
      assert.equal(indexed.chunks, chunks!.n);
      assert.equal(indexed.indexer.etaSeconds, 0, 'nothing pending');

      // As if the indexer had worked 10 s on those seven, then idled for 80 s: 7 / 10 items a second of
      // work. The idle time does not dilute the rate (over the window it would be 7 / 90).
      await t.db.query(
        `UPDATE items SET indexing_started_at = now() - make_interval(secs => 90),
                          indexed_at = now() - make_interval(secs => 80)
          WHERE organization_id = $1`,
        [t.orgA.id],
      );
      // Another organization's item, changed first, is queued ahead of this one's new uploads.
      await upload('Other organization upload', t.orgB.key);
      await upload('Third upload');
      await upload('Fourth upload');
      const queued = await stats();
      assert.deepEqual(queued.byIndexingStatus, { pending: 2, indexed: 7, failed: 0 });
      assert.equal(queued.indexer.queuedAhead, 3, "B's item and A's two");
      const rate = queued.indexer.ratePerSecond as number;
      assert.ok(Math.abs(rate - 7 / 10) < 0.01, `rate ${rate}`);
      assert.equal(queued.indexer.etaSeconds, Math.ceil(3 / rate));

      const other = await stats(t.orgB.key);
      assert.equal(other.total, 1, "B sees its own item, none of A's");
      assert.deepEqual(other.byConnection, []);
      assert.equal(other.indexer.queuedAhead, 1, "B's item is first in the queue");
    });

    test("an upload is queued behind one turn of another organization's sync backlog, not all of it", async () => {
      const { t, source } = s;
      await (await withSearch(t)).drain();
      source.seed(6, 'later');
      assert.equal((await syncAndWait(t)).status, 'succeeded');
      await upload('Upload during the backlog', t.orgB.key);
      // The indexer takes queues (organization and source) in turns (src/ingest/indexer.ts): the sync's
      // first item, then B's upload.
      const b = await stats(t.orgB.key);
      assert.equal(b.indexer.queuedAhead, 2, "the sync's first item and B's own");
      // A's last item is the sync's sixth: five turns of both queues, then itself.
      const a = await stats();
      assert.equal(a.byIndexingStatus.pending, 6);
      assert.equal(a.indexer.queuedAhead, 7);
    });

    test('the time to drain, estimated after a quiet spell, is what the drain then takes (within 2x)', async () => {
      const { t } = s;
      const { embedder } = await withSearch(t);
      await new Indexer(t.db, embedder).drain();
      // The earlier tests' indexing (some of it made up) leaves the rate's window.
      await t.db.query(
        `UPDATE items SET indexing_started_at = now() - make_interval(hours => 2),
                          indexed_at = now() - make_interval(hours => 2)
          WHERE indexed_at IS NOT NULL`,
      );
      // Each text costs the same fixed time on top of the model, so both bursts do the same work per item.
      const perText: Embedder = Object.create(embedder, {
        embed: {
          value: async (texts: string[], signal?: AbortSignal) => {
            await sleep(60 * texts.length);
            return embedder.embed(texts, signal);
          },
        },
      });
      const indexer = new Indexer(t.db, perText, { batchItems: 4 });
      for (let i = 0; i < 12; i++) await upload(`Burst one, item ${i}`);
      await indexer.drain();
      // Two quiet minutes pass (the items' indexing moved back in time).
      await t.db.query(
        `UPDATE items SET indexing_started_at = indexing_started_at - make_interval(secs => 120),
                          indexed_at = indexed_at - make_interval(secs => 120)
          WHERE indexed_at IS NOT NULL`,
      );
      for (let i = 0; i < 12; i++) await upload(`Burst two, item ${i}`);
      const { indexer: estimate } = await stats();
      assert.equal(estimate.queuedAhead, 12);
      const estimated = estimate.queuedAhead / estimate.ratePerSecond;
      const started = performance.now();
      assert.equal(await indexer.drain(), 12);
      const drained = (performance.now() - started) / 1000;
      assert.ok(
        estimated <= 2 * drained && drained <= 2 * estimated,
        `estimated ${estimated.toFixed(2)} s, drained in ${drained.toFixed(2)} s`,
      );
    });

    test('takes no parameters', async () => {
      const res = await s.t.call('GET', '/api/connect/knowledgebase-items/stats?connectionId=x');
      expectError(res, 400, 'invalid_request');
    });
  });
}
