/**
 * A fetched page's near-duplicate lookup (pageTwins, src/db/repositories/crawl-pages.ts), as a crawl's
 * commit runs it (after preferIndexLookups): it reads the pages that share one of its LSH bands, through
 * the bands' index, not every page the organization has stored. Neither PGlite nor a fresh Postgres has
 * statistics on these tables, and the planner had walked every item of the organization and probed
 * crawl_pages for each, so a crawl's cost a page grew with the pages stored. The lookup's plan is read
 * with EXPLAIN (buffers touched: a count of pages read, not a time) at two sizes of the same site.
 * Pages that share only a band of words (one template's pages share most of their words) are capped.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Database, Queryable } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import {
  MAX_WORD_BAND_CANDIDATES,
  pageTwins,
  preferIndexLookups,
  savePageMemory,
} from '../../src/db/repositories/crawl-pages.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { crawlSourceKey, storeDocument } from '../../src/ingest/hash-skip.ts';
import { freshDatabase, STORAGE_MODES } from '../support/harness.ts';

const BANDS = 32;
const randomInts = (n: number) => Array.from({ length: n }, () => randomInt(-(2 ** 31), 2 ** 31 - 1));

/** Stores pages `from`..`to` (exclusive) of the organization as a crawl's commits do, 50 a transaction. */
async function storePages(db: Database, org: string, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += 50) {
    await db.transaction(async (tx) => {
      await preferIndexLookups(tx);
      for (let i = start; i < Math.min(to, start + 50); i++) {
        const url = `https://docs.example.com/page/${i}`;
        const sourceKey = crawlSourceKey(`docs.example.com/page/${i}`);
        await storeDocument(
          tx,
          org,
          {
            sourceType: 'crawl',
            sourceTableName: 'crawled_pages',
            sourceKey,
            title: `Page ${i}`,
            markdown: `The text of page ${i}.`,
            url,
            visibility: 'public',
            tags: [],
          },
          { respectTombstones: false },
        );
        await savePageMemory(tx, org, sourceKey, 'crawl-1', {
          etag: null,
          lastModified: null,
          textHash: `hash-${i}`,
          links: [],
          signature: randomInts(256),
          bands: randomInts(BANDS),
        });
      }
    });
  }
}

/** Buffers the lookup's plan touched, for a page whose bands match one stored page's (and no other's). */
async function lookupBuffers(db: Database, org: string, twinOf: number): Promise<number> {
  const [twin] = await db.query<{ bands: number[] }>(
    'SELECT bands FROM crawl_pages WHERE organization_id = $1 AND source_key = $2',
    [org, crawlSourceKey(`docs.example.com/page/${twinOf}`)],
  );
  const bands = [twin!.bands[0]!, ...randomInts(BANDS - 1)];
  let buffers = -1;
  let found: Awaited<ReturnType<typeof pageTwins>> | null = null;
  await db.transaction(async (tx) => {
    await preferIndexLookups(tx);
    // The lookup's own statement, run under EXPLAIN ANALYZE and then as itself.
    const explaining: Queryable = {
      ...tx,
      query: async <T>(sql: string, params?: readonly unknown[]) => {
        const [plan] = await tx.query<{ 'QUERY PLAN': any }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
          params,
        );
        const top = (plan!['QUERY PLAN'] as any[])[0].Plan;
        buffers = top['Shared Hit Blocks'] + top['Shared Read Blocks'];
        return tx.query<T>(sql, params);
      },
    };
    found = await pageTwins(explaining, {
      crawlJobId: 'crawl-1',
      organizationId: org,
      textHash: 'no such text',
      bands,
      exceptSourceKey: crawlSourceKey('docs.example.com/new-page'),
    });
  });
  // The lookup still finds the page that shares a band.
  assert.deepEqual(
    found!.candidates.map((c) => c.url),
    [`https://docs.example.com/page/${twinOf}`],
  );
  return buffers;
}

for (const mode of STORAGE_MODES) {
  describe(`near-duplicate lookup (${mode})`, () => {
    let db: Database;
    let drop: () => Promise<void>;
    let org: string;

    before(async () => {
      ({ db, drop } = await freshDatabase(mode));
      await migrate(db);
      org = (await createOrganization(db, 'lookup')).id;
    });
    after(async () => {
      await drop?.();
    });

    test('reads the pages sharing a band, not every page stored: its cost does not grow with them', async () => {
      await storePages(db, org, 0, 100);
      const at100 = await lookupBuffers(db, org, 42);
      await storePages(db, org, 100, 500);
      const at500 = await lookupBuffers(db, org, 420);
      // Walking the organization's pages touched about 3 buffers a page stored (1,500 at 500 pages).
      assert.ok(at500 < 200, `${at500} buffers read at 500 pages (${at100} at 100)`);
      assert.ok(at500 < 2 * at100, `${at500} buffers read at 500 pages against ${at100} at 100`);
    });

    test('pages sharing only a band of words are read at most MAX_WORD_BAND_CANDIDATES, the latest first; a band of shingles finds its page among them', async () => {
      // One template's pages: the same word band on 100 pages (the 500 above have other bands).
      const wordBand = randomInts(1)[0]!;
      const template = await db.query<{ source_key: string }>(
        `UPDATE crawl_pages SET bands = bands || $2::int[], fetched_at = now() - make_interval(secs => 600 - n)
           FROM (SELECT source_key AS k, row_number() OVER (ORDER BY source_key) AS n FROM crawl_pages
                  WHERE organization_id = $1 ORDER BY source_key LIMIT 100) AS t
          WHERE organization_id = $1 AND source_key = t.k RETURNING source_key`,
        [org, [wordBand]],
      );
      assert.equal(template.length, 100);
      const [near] = await db.query<{ bands: number[]; source_key: string }>(
        'SELECT bands, source_key FROM crawl_pages WHERE organization_id = $1 AND NOT (bands && $2::int[]) LIMIT 1',
        [org, [wordBand]],
      );
      const latest = await db.query<{ source_key: string }>(
        `SELECT source_key FROM crawl_pages WHERE organization_id = $1 AND bands && $2::int[]
          ORDER BY fetched_at DESC, source_key DESC LIMIT ${MAX_WORD_BAND_CANDIDATES}`,
        [org, [wordBand]],
      );
      const found = await pageTwins(db, {
        crawlJobId: 'crawl-1',
        organizationId: org,
        textHash: 'no such text',
        bands: [near!.bands[0]!, ...randomInts(BANDS - 1), wordBand],
        wordBandsFrom: BANDS,
        exceptSourceKey: crawlSourceKey('docs.example.com/another-page'),
      });
      const keys = found.candidates.map((c) => c.sourceKey).sort();
      assert.deepEqual(keys, [...latest.map((r) => r.source_key), near!.source_key].sort());
    });
  });
}
