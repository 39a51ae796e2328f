/**
 * Indexing leases after a crash. A restarted embedded service resumes indexing at once: items leased by a
 * process that died mid-round (kill -9 while embedding) are taken back at start instead of sitting
 * `pending` until the lease expires. In server mode (several workers on one Postgres) a restart cannot
 * tell a dead worker's leases from a live one's, so leases are short and live workers renew them: a slow
 * round keeps its items, a dead worker's items return within the lease.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Embedder } from '../../src/embedding/index.ts';
import { DEFAULT_LEASE_SECONDS, Indexer } from '../../src/ingest/indexer.ts';
import { crawlSourceKey, storeDocument } from '../../src/ingest/hash-skip.ts';
import { testEmbedder } from '../support/embedding.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

/** The real model, each embed call held back `ms` first: a round that outlasts its lease. */
function slowEmbedder(real: Embedder, ms: number): Embedder & { calls: number } {
  const slow = Object.create(real) as Embedder & { calls: number };
  slow.calls = 0;
  slow.embed = async (texts, signal) => {
    slow.calls++;
    await sleep(ms, undefined, { signal });
    return real.embed(texts, signal);
  };
  return slow;
}

function leaseHelpers(t: () => TestApp) {
  const stored = async (n: number, label: string) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const { itemId } = await t().db.transaction((tx) =>
        storeDocument(
          tx,
          t().orgA.id,
          {
            sourceType: 'crawl',
            sourceTableName: 'crawled_pages',
            sourceKey: crawlSourceKey(`https://docs.example.com/${label}-${Date.now()}-${i}`),
            title: `${label} ${i}`,
            markdown: `Body of page ${i} (${label}) that a worker had started to embed.`,
            url: `https://docs.example.com/${label}-${i}`,
            visibility: 'public',
            tags: [],
          },
          { respectTombstones: true },
        ),
      );
      ids.push(itemId!);
    }
    return ids;
  };
  const pending = async (ids: string[]) =>
    (
      await t().db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM items WHERE id = ANY($1::text[]) AND indexing_status = 'pending'",
        [ids],
      )
    )[0]!.n;
  const leased = async (ids: string[]) =>
    (
      await t().db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM items WHERE id = ANY($1::text[]) AND indexing_lease_until > now()',
        [ids],
      )
    )[0]!.n;
  /** Runs `indexer` until none of `ids` is pending (30 s at most: "it did not hang", not a speed). */
  const indexedBy = async (indexer: Indexer, ids: string[], when: string) => {
    indexer.start();
    try {
      const deadline = Date.now() + 30_000;
      while ((await pending(ids)) > 0) {
        assert.ok(Date.now() < deadline, `items still pending 30 s ${when}`);
        await sleep(50);
      }
    } finally {
      await indexer.stop();
    }
  };
  return { stored, pending, leased, indexedBy };
}

describe('indexing leases in server mode (postgres)', () => {
  let t: TestApp;
  const { stored, pending, leased, indexedBy } = leaseHelpers(() => t);
  before(async () => {
    t = await startTestApp('postgres');
  });
  after(async () => t?.close());

  test('a live worker renews its leases: a round slower than the lease keeps its items', async () => {
    const ids = await stored(3, 'slow-round');
    const real = await testEmbedder();
    const slow = slowEmbedder(real, 3_000);
    const a = new Indexer(t.db, slow, { leaseSeconds: 1, batchItems: 10 });
    const round = a.indexOnce();
    while (slow.calls === 0) await sleep(20);
    // Past the 1 s lease, the round still embedding: another worker finds nothing to take.
    await sleep(1_800);
    assert.equal(await leased(ids), 3, 'the leases were renewed');
    const other = slowEmbedder(real, 0);
    const b = new Indexer(t.db, other, { leaseSeconds: 1 });
    assert.equal(await b.indexOnce(), 0);
    assert.equal(other.calls, 0, 'nothing embedded twice');
    assert.equal(await round, 3);
    assert.equal(await pending(ids), 0);
    assert.equal(await leased(ids), 0, 'the commit ends the leases');
  });

  test('a worker that stops mid-round stops renewing: its items return within the lease', async () => {
    assert.ok(DEFAULT_LEASE_SECONDS <= 60, 'a dead worker holds items back a minute at most');
    const ids = await stored(2, 'dead-round');
    const real = await testEmbedder();
    const slow = slowEmbedder(real, 60_000);
    const a = new Indexer(t.db, slow, { leaseSeconds: 1 });
    a.start();
    while (slow.calls === 0) await sleep(20);
    // What a worker dying mid-round leaves: leased items, and nobody renewing them.
    await a.stop();
    assert.equal(await pending(ids), 2);
    await indexedBy(
      new Indexer(t.db, real, { leaseSeconds: 1, pollMs: 50 }),
      ids,
      'after their worker stopped',
    );
  });
});

describe('indexing leases after a crash (pglite)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp('pglite');
  });
  after(async () => t?.close());

  const { stored, pending, indexedBy } = leaseHelpers(() => t);
  const leasedByDeadProcess = async (n: number) => {
    const ids = await stored(n, 'lease');
    // What a process killed between leasing and committing leaves behind.
    await t.db.query(
      `UPDATE items SET indexing_lease_until = now() + interval '300 seconds' WHERE id = ANY($1::text[])`,
      [ids],
    );
    return ids;
  };

  test('without reclaiming, leased items wait for their lease to expire', async () => {
    const ids = await leasedByDeadProcess(2);
    const indexer = new Indexer(t.db, await testEmbedder(), { reclaimOnStart: false });
    assert.equal(await indexer.drain(), 0, 'nothing can be taken while the dead lease holds');
    assert.equal(await pending(ids), 2);
    await t.db.query('DELETE FROM items WHERE id = ANY($1::text[])', [ids]);
  });

  test('a restarted embedded indexer takes the leases back and indexes within seconds', async () => {
    const ids = await leasedByDeadProcess(3);
    await indexedBy(new Indexer(t.db, await testEmbedder(), { pollMs: 50 }), ids, 'after the restart');
  });
});
