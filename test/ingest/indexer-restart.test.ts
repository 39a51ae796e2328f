/**
 * A restarted embedded service resumes indexing at once: items leased by a process that died mid-round
 * (kill -9 while embedding) are taken back at start instead of sitting `pending` until the lease expires.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Indexer } from '../../src/ingest/indexer.ts';
import { crawlSourceKey, storeDocument } from '../../src/ingest/store.ts';
import { testEmbedder } from '../support/embedding.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

describe('indexing leases after a crash (pglite)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp('pglite');
  });
  after(async () => t?.close());

  const leasedByDeadProcess = async (n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const { itemId } = await t.db.transaction((tx) =>
        storeDocument(
          tx,
          t.orgA.id,
          {
            sourceType: 'crawl',
            sourceTableName: 'crawled_pages',
            sourceKey: crawlSourceKey(`https://docs.example.com/lease-${Date.now()}-${i}`),
            title: `Leased ${i}`,
            markdown: `Body of page ${i} that a dead process had started to embed.`,
            url: `https://docs.example.com/lease-${i}`,
            visibility: 'public',
            tags: [],
          },
          { respectTombstones: true },
        ),
      );
      ids.push(itemId!);
    }
    // What a process killed between leasing and committing leaves behind.
    await t.db.query(
      `UPDATE items SET indexing_lease_until = now() + interval '300 seconds' WHERE id = ANY($1::text[])`,
      [ids],
    );
    return ids;
  };
  const pending = async (ids: string[]) =>
    (
      await t.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM items WHERE id = ANY($1::text[]) AND indexing_status = 'pending'",
        [ids],
      )
    )[0]!.n;

  test('without reclaiming, leased items wait for their lease to expire', async () => {
    const ids = await leasedByDeadProcess(2);
    const indexer = new Indexer(t.db, await testEmbedder(), { reclaimOnStart: false });
    assert.equal(await indexer.drain(), 0, 'nothing can be taken while the dead lease holds');
    assert.equal(await pending(ids), 2);
    await t.db.query('DELETE FROM items WHERE id = ANY($1::text[])', [ids]);
  });

  test('a restarted embedded indexer takes the leases back and indexes within seconds', async () => {
    const ids = await leasedByDeadProcess(3);
    const indexer = new Indexer(t.db, await testEmbedder(), { pollMs: 50 });
    indexer.start();
    try {
      const deadline = Date.now() + 30_000;
      while ((await pending(ids)) > 0) {
        assert.ok(Date.now() < deadline, 'items still pending 30 s after the restart');
        await sleep(50);
      }
    } finally {
      await indexer.stop();
    }
  });
});
