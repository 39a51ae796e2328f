import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Queryable } from '../../src/db/database.ts';
import { deleteConnection, upsertConnection } from '../../src/db/repositories/connections.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import {
  crawlSourceKey,
  type IngestDocument,
  integrationSourceKey,
  storeDocument,
} from '../../src/ingest/hash-skip.ts';
import { bm25Sql } from '../../src/db/repositories/search.ts';
import { BM25_DEFAULTS } from '../../src/search/bm25.ts';
import { keyword } from '../../src/search/keyword.ts';
import { hashEmbedder } from '../support/hash-embedder.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

/** The statistics migration 012's triggers keep, recounted from scratch from the chunks table. */
async function statsMatchRecount(db: Queryable): Promise<void> {
  const pairs = async (sql: string) =>
    (await db.query<Record<string, unknown>>(sql)).map((r) => JSON.stringify(Object.values(r).map(String)));
  const postings = await pairs(
    'SELECT chunk_id, term, organization_id, tf, len FROM bm25_postings ORDER BY 1, 2',
  );
  const recountPostings = await pairs(
    'SELECT c.id, t.term, c.organization_id, t.tf, t.len FROM chunks AS c, bm25_terms_of(c.tsv) AS t ORDER BY 1, 2',
  );
  assert.deepEqual(postings, recountPostings);
  const terms = await pairs('SELECT organization_id, term, df FROM bm25_terms ORDER BY 1, 2');
  const recountTerms = await pairs(
    'SELECT c.organization_id, t.term, count(*) FROM chunks AS c, bm25_terms_of(c.tsv) AS t GROUP BY 1, 2 ORDER BY 1, 2',
  );
  assert.deepEqual(terms, recountTerms);
  const stats = await pairs(
    'SELECT organization_id, chunk_count, total_len FROM bm25_org_stats WHERE chunk_count > 0 ORDER BY 1',
  );
  const recountStats = await pairs(
    `SELECT c.organization_id, count(*), coalesce(sum((SELECT max(t.len) FROM bm25_terms_of(c.tsv) AS t)), 0)
       FROM chunks AS c GROUP BY 1 ORDER BY 1`,
  );
  assert.deepEqual(stats, recountStats);
}

const doc = (
  key: string,
  title: string,
  markdown: string,
  extra: Partial<IngestDocument> = {},
): IngestDocument => ({
  sourceType: 'crawl',
  sourceTableName: 'crawled_pages',
  sourceKey: crawlSourceKey(key),
  title,
  markdown,
  url: key,
  visibility: 'public',
  tags: [],
  ...extra,
});

const TEXTS = [
  [
    'https://a.test/1',
    'Vitamin D',
    'Vitamin D deficiency is common in winter. Vitamin D supplements help bones.',
  ],
  ['https://a.test/2', 'Bones', 'Calcium and exercise keep bones strong; running and walking both count.'],
  ['https://a.test/3', 'Sleep', 'Adults need seven hours of sleep. Sleep loss impairs memory and mood.'],
  ['https://a.test/4', 'Long', `${'Memory consolidation happens during deep sleep. '.repeat(60)}The end.`],
] as const;

for (const mode of STORAGE_MODES) {
  describe(`BM25 statistics and ranking (${mode})`, () => {
    let t: TestApp;
    let indexer: Indexer;
    before(async () => {
      t = await startTestApp(mode);
      const embedder = hashEmbedder();
      await t.service.embedding.use(embedder);
      indexer = new Indexer(t.db, embedder);
    });
    after(async () => t?.close());
    const store = (orgId: string, d: IngestDocument) =>
      t.db.transaction((tx) => storeDocument(tx, orgId, d, { respectTombstones: true }));

    test('exact after inserts, re-index, item deletion and connection deletion', async () => {
      for (const [url, title, text] of TEXTS) await store(t.orgA.id, doc(url, title, text));
      await store(t.orgB.id, doc('https://b.test/1', 'Other org', 'Vitamin D for org B only.'));
      await indexer.drain();
      const [{ n }] = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM bm25_postings')) as [
        { n: number },
      ];
      assert.ok(n > 20);
      await statsMatchRecount(t.db);

      // Re-index: new text for an item (old chunks deleted, new ones inserted).
      await store(t.orgA.id, doc('https://a.test/2', 'Bones', 'Bones need calcium, vitamin K and sunlight.'));
      await indexer.drain();
      await statsMatchRecount(t.db);

      // Item deletion through the API (ON DELETE CASCADE to chunks).
      const items = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: {} });
      const sleep = items.body.items.find((i: { title: string }) => i.title === 'Sleep');
      const del = await t.call('DELETE', '/api/connect/knowledgebase-items', { body: { ids: [sleep.id] } });
      assert.equal(del.body.deleted, 1);
      await statsMatchRecount(t.db);

      // A connection's items, then its deletion.
      const conn = await upsertConnection(t.db, {
        organizationId: t.orgA.id,
        type: 'notion',
        encrypt: () => 'x',
      });
      for (const i of [1, 2])
        await store(
          t.orgA.id,
          doc('', `Synced ${i}`, `Synced page ${i} about vitamin absorption and sleep.`, {
            sourceType: 'integration',
            sourceTableName: 'pages',
            sourceKey: integrationSourceKey(conn.id, 'pages', String(i)),
            url: `https://notion.test/${i}`,
            connectionId: conn.id,
          }),
        );
      await indexer.drain();
      await statsMatchRecount(t.db);
      await t.db.transaction((tx) => deleteConnection(tx, t.orgA.id, conn.id));
      await statsMatchRecount(t.db);
      // Tags and visibility updates leave the statistics alone.
      await t.db.query("UPDATE chunks SET tags = '{x}'");
      await statsMatchRecount(t.db);
    });

    test('after the indexer drains, the postings are read from the index alone (no heap fetch)', async () => {
      await store(t.orgA.id, doc('https://a.test/5', 'Fresh', 'Fresh vitamin research on bones and sleep.'));
      await indexer.drain();
      // Server Postgres leaves vacuuming to autovacuum, whose timing a test cannot know; run it here.
      if (mode === 'postgres') await t.db.exec('VACUUM bm25_postings');
      const plan = await t.db.transaction(async (tx) => {
        // The plan the keyword search gets (rankChunksByBm25 sets the same switch).
        await tx.exec('SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off');
        const rows = await tx.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
           ${bm25Sql({ org: '$1', text: '$2', where: 'c.organization_id = $1', limit: 10, params: BM25_DEFAULTS })}`,
          [t.orgA.id, 'vitamin bones sleep'],
        );
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
      assert.match(plan, /Index Only Scan using bm25_postings_impact_idx on bm25_postings/);
      const fetches = [...plan.matchAll(/Heap Fetches: (\d+)/g)].map((m) => Number(m[1]));
      assert.ok(fetches.length > 0, plan);
      assert.deepEqual(
        fetches.filter((n) => n > 0),
        [],
        `every posting read without visiting the table:\n${plan}`,
      );
    });

    test('keyword ranks by BM25 computed from the recount, and stays in the organization', async () => {
      const q = {
        organizationId: t.orgA.id,
        vector: new Float32Array(0),
        text: 'vitamin D bones',
        limit: 10,
        mode: 'keyword' as const,
        includeEmbedding: false,
      };
      const got = await keyword(t.db, q, 10);
      // Reference: BM25 in JavaScript over the chunks' lexemes.
      const chunks = await t.db.query<{ id: string; term: string; tf: number; len: number }>(
        'SELECT c.id, t.term, t.tf, t.len FROM chunks AS c, bm25_terms_of(c.tsv) AS t WHERE c.organization_id = $1',
        [t.orgA.id],
      );
      const docs = new Map<number, { len: number; tf: Map<string, number> }>();
      for (const r of chunks) {
        const d = docs.get(Number(r.id)) ?? { len: r.len, tf: new Map() };
        d.tf.set(r.term, r.tf);
        docs.set(Number(r.id), d);
      }
      const all = await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM chunks WHERE organization_id = $1',
        [t.orgA.id],
      );
      const N = all[0]!.n;
      const avg = [...docs.values()].reduce((s, d) => s + d.len, 0) / N;
      const { k1, b } = BM25_DEFAULTS;
      const [{ terms }] = (await t.db.query<{ terms: string[] }>(
        "SELECT tsvector_to_array(to_tsvector('english', $1)) AS terms",
        [q.text],
      )) as [{ terms: string[] }];
      const expected = [...docs.entries()]
        .map(([id, d]) => {
          let s = 0;
          for (const term of terms) {
            const tf = d.tf.get(term);
            if (!tf) continue;
            const df = [...docs.values()].filter((x) => x.tf.has(term)).length;
            s += Math.log(1 + (N - df + 0.5) / (df + 0.5)) * (tf / (tf + k1 * (1 - b + (b * d.len) / avg)));
          }
          return { id, s };
        })
        .filter((x) => x.s > 0)
        .sort((x, y) => y.s - x.s || x.id - y.id);
      assert.ok(expected.length >= 2);
      assert.deepEqual(
        got.map((r) => r.id),
        expected.map((x) => x.id),
      );
      for (const [i, r] of got.entries()) assert.ok(Math.abs(r.score - expected[i]!.s) < 1e-6);
    });
  });
}
