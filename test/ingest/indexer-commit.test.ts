/**
 * The indexer commits a large item in short transactions. A 1,737-chunk page held the embedded
 * database for 8.8 s in one transaction; now an item is written in parts of at most `commitChunks`
 * chunks under a staged generation that search does not serve until the last part flips it.
 *
 * What must hold at every moment another connection can observe (between two of the indexer's
 * transactions: PGlite runs nothing during one, and Postgres readers see only committed states):
 * search serves all of the item's old chunks or all of its new ones, never a mix, never content that is
 * no longer the item's; a crash between two parts leaves the old chunks served and the item pending, and
 * a restart finishes it with no chunk left over.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '../../src/db/database.ts';
import { itemStats } from '../../src/db/repositories/item-stats.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { Indexer, type IndexerOptions } from '../../src/ingest/indexer.ts';
import { storeDocument } from '../../src/ingest/hash-skip.ts';
import { search } from '../../src/search/search.ts';
import { indexerDatabase, STORAGE_MODES } from '../support/harness.ts';
import { hashEmbedder } from '../support/hash-embedder.ts';

/** Words only one version of the document has: every chunk of a version carries its word. */
type Version = 'alder' | 'birch' | 'cedar';
const VERSIONS: Version[] = ['alder', 'birch', 'cedar'];

/** About one chunk per section at the test embedder's 64-token window. */
function documentOf(version: Version, sections: number): string {
  return Array.from(
    { length: sections },
    (_, i) =>
      `## Part ${i}\n\nThe ${version} section ${i} says what the ${version} release changed in part ${i} of the guide.`,
  ).join('\n\n');
}

// About eleven parts per version: enough transactions to observe between, at a quarter of the chunks
// a real large page makes (the parts, not the item's size, are what is under test).
const COMMIT_CHUNKS = 25;
const SECTIONS = { alder: 262, birch: 287, cedar: 275 } as const;

for (const mode of STORAGE_MODES) {
  describe(`indexer commits of a large item (${mode})`, () => {
    let db: Database;
    let drop: () => Promise<void>;
    let org: string;
    const embedder = hashEmbedder({ dimensions: 64, maxTokens: 64 });

    before(async () => {
      ({ db, drop } = await indexerDatabase(mode, embedder));
    });
    after(async () => drop?.());

    /** Each test has an organization of its own: the stats count an organization's chunks. */
    let tests = 0;
    const newOrganization = async () => {
      org = (await createOrganization(db, `commits-${++tests}`)).id;
    };

    const store = async (key: string, version: Version) =>
      (
        await db.transaction((tx) =>
          storeDocument(
            tx,
            org,
            {
              sourceType: 'upload',
              sourceTableName: 'uploaded_documents',
              sourceKey: key,
              title: `Release notes ${key}`,
              markdown: documentOf(version, SECTIONS[version]),
              url: '',
              visibility: 'public',
              tags: [],
            },
            { respectTombstones: false },
          ),
        )
      ).itemId!;

    const indexer = (opts: IndexerOptions = {}) =>
      new Indexer(db, embedder, { commitChunks: COMMIT_CHUNKS, overlapTokens: 8, pollMs: 50, ...opts });

    /** What a reader sees of the item now: the versions in search's hits, the searchable chunks, and more. */
    const observe = async (itemId: string) => {
      const text = VERSIONS.join(' ');
      const hits = await search(
        db,
        {
          organizationId: org,
          vector: await embedder.embedQuery(text),
          text,
          limit: 50,
          mode: 'hybrid',
          includeEmbedding: false,
        },
        embedder.dimensions,
      );
      assert.ok(hits.every((h) => h.item_id === itemId));
      const served = new Set(hits.map((h) => VERSIONS.find((v) => h.chunk_plain_text.includes(v))));
      const [row] = await db.query<{ status: string; rows: number }>(
        `SELECT indexing_status AS status, (SELECT count(*)::int FROM chunks WHERE item_id = $1) AS rows
           FROM items WHERE id = $1`,
        [itemId],
      );
      return {
        versions: [...served].sort() as Array<Version | undefined>,
        // The stats endpoint's count of searchable chunks (one item in this organization).
        searchable: (await itemStats(db, org)).chunks,
        /** Every chunk row of the item, staged ones included. */
        rows: row!.rows,
        status: row!.status,
      };
    };
    type Observation = Awaited<ReturnType<typeof observe>>;

    /** Leftovers: chunk rows beyond the searchable ones, generations, staged rows. */
    const leftovers = async (itemId: string) => {
      const [r] = await db.query<{ generations: number; staged: number }>(
        `SELECT (SELECT count(DISTINCT generation)::int FROM chunks WHERE item_id = $1) AS generations,
                (SELECT count(*)::int FROM chunk_staging) AS staged`,
        [itemId],
      );
      return r!;
    };

    test('a large item is replaced in short transactions; at every moment search serves all old or all new chunks', async () => {
      await newOrganization();
      const itemId = await store('swap', 'alder');
      assert.equal(await indexer().drain(), 1);
      const old = await observe(itemId);
      assert.deepEqual(old.versions, ['alder']);
      assert.ok(old.searchable >= 250, `the old version has ${old.searchable} chunks`);

      await store('swap', 'birch');
      const seen: Observation[] = [];
      let transactions = 0;
      const ix = indexer({
        // Between two of the indexer's transactions: every state another connection can observe.
        afterCommitTransaction: async () => {
          transactions++;
          seen.push(await observe(itemId));
        },
      });
      assert.equal(await ix.drain(), 1);
      const done = await observe(itemId);
      assert.deepEqual(done.versions, ['birch']);
      assert.equal(done.status, 'indexed');
      assert.ok(done.searchable >= 250);
      assert.equal(done.rows, done.searchable, 'no chunk beyond the searchable ones');

      assert.ok(
        transactions >= Math.ceil(done.searchable / COMMIT_CHUNKS),
        `${done.searchable} chunks committed in ${transactions} transactions of at most ${COMMIT_CHUNKS}`,
      );
      const midway = seen.filter((o) => o.status === 'pending');
      assert.ok(midway.length >= 2, 'readers ran while the new version was being written');
      for (const o of midway) {
        assert.deepEqual(o.versions, ['alder'], 'the old version, alone, while the new one is written');
        assert.equal(o.searchable, old.searchable);
        assert.ok(o.rows > o.searchable, 'the new version is written but not served');
      }
      for (const o of seen.filter((s) => s.status === 'indexed')) {
        assert.deepEqual(o.versions, ['birch']);
        assert.equal(o.searchable, done.searchable);
      }
      assert.deepEqual(await leftovers(itemId), { generations: 1, staged: 0 });
    });

    test('content that changes while it is written is never served; the newest content is indexed next', async () => {
      await newOrganization();
      const itemId = await store('changed', 'alder');
      await indexer().drain();
      await store('changed', 'birch');
      const seen: Observation[] = [];
      let transactions = 0;
      const ix = indexer({
        afterCommitTransaction: async () => {
          transactions++;
          // Two parts of birch are staged when the document changes again.
          if (transactions === 2) await store('changed', 'cedar');
          seen.push(await observe(itemId));
        },
      });
      await ix.drain();
      // The item came back pending with its lease ended: the next round takes it.
      assert.equal(await indexer().drain(), 1);
      assert.ok(seen.length > 2);
      for (const o of seen) assert.notDeepEqual(o.versions, ['birch'], 'birch was no longer the content');
      assert.ok(
        seen.some((o) => o.versions[0] === 'alder' && o.status === 'pending' && o.rows === o.searchable),
        'the staged birch parts were dropped, the old chunks still served',
      );
      const done = await observe(itemId);
      assert.deepEqual(done.versions, ['cedar']);
      assert.equal(done.status, 'indexed');
      assert.equal(done.rows, done.searchable);
      assert.deepEqual(await leftovers(itemId), { generations: 1, staged: 0 });
    });

    test('stopping between two parts gives the item back at once; the next indexer finishes it', async () => {
      await newOrganization();
      const itemId = await store('stopped', 'alder');
      await indexer().drain();
      const old = await observe(itemId);
      await store('stopped', 'birch');
      let transactions = 0;
      const stopping: Indexer = indexer({
        afterCommitTransaction: () => {
          // A shutdown arriving while the item is written (not awaited here: it waits for this round).
          if (++transactions === 2) void stopping.stop();
        },
      });
      await assert.rejects(stopping.drain(), { name: 'IndexerStoppedError' });
      const after = await observe(itemId);
      assert.equal(after.status, 'pending');
      assert.deepEqual(after.versions, ['alder']);
      assert.equal(after.searchable, old.searchable);
      assert.equal(after.rows, old.searchable + 2 * COMMIT_CHUNKS, 'two staged parts, not served');
      const [lease] = await db.query<{ until: string | null }>(
        'SELECT indexing_lease_until AS until FROM items WHERE id = $1',
        [itemId],
      );
      assert.equal(lease!.until, null, 'the lease ended with the stop, not when it runs out');

      // Taken by the next indexer without any reclaiming at start.
      assert.equal(await indexer({ reclaimOnStart: false }).drain(), 1);
      const done = await observe(itemId);
      assert.deepEqual(done.versions, ['birch']);
      assert.equal(done.rows, done.searchable, 'the staged parts went with the old chunks');
      assert.deepEqual(await leftovers(itemId), { generations: 1, staged: 0 });
    });

    test('a crash between two parts leaves the old chunks served and the item pending; a restart finishes it cleanly', async () => {
      await newOrganization();
      const itemId = await store('crash', 'alder');
      await indexer().drain();
      const old = await observe(itemId);
      await store('crash', 'birch');

      let transactions = 0;
      const crashing = indexer({
        // A short lease, so that on Postgres (no reclaim at start) the restarted indexer may take it soon.
        leaseSeconds: 1,
        afterCommitTransaction: () => {
          if (++transactions === 3) throw new Error('simulated crash after the third part');
        },
      });
      await assert.rejects(crashing.drain(), /simulated crash/);
      const after = await observe(itemId);
      assert.equal(after.status, 'pending');
      assert.deepEqual(after.versions, ['alder']);
      assert.equal(after.searchable, old.searchable);
      assert.equal(after.rows, old.searchable + 3 * COMMIT_CHUNKS, 'three staged parts, not served');

      // The restart: a new indexer (on PGlite it takes the leases back and removes staged parts at once).
      const restarted = indexer({ leaseSeconds: 1 });
      restarted.start();
      try {
        const deadline = Date.now() + 60_000;
        while ((await observe(itemId)).status !== 'indexed') {
          assert.ok(Date.now() < deadline, 'the item is still pending a minute after the restart');
          await sleep(50);
        }
      } finally {
        await restarted.stop();
      }
      const done = await observe(itemId);
      assert.deepEqual(done.versions, ['birch']);
      assert.equal(done.rows, done.searchable, 'no stray chunks');
      assert.deepEqual(await leftovers(itemId), { generations: 1, staged: 0 });
    });
  });
}
