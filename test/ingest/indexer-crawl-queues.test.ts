/**
 * Crawled pages in the indexer's queues: a large crawl of one organization must not hold back another
 * organization's crawl until all of its pages are embedded, a crawl's pages are embedded in the order they
 * were fetched, and its lists of links (indexes, tables of contents) give the model no work.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import type { Embedder } from '../../src/embedding/index.ts';
import { storeDocument } from '../../src/ingest/hash-skip.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import { indexerDatabase, STORAGE_MODES } from '../support/harness.ts';
import { hashEmbedder } from '../support/hash-embedder.ts';

const BATCH = 16;

/** A generated index page: nothing but links, as documentation generators write them. */
function indexPage(n: number): string {
  return [
    `# Index ${n}`,
    ...Array.from(
      { length: 40 },
      (_, i) => `- [function_${n}_${i}()](https://docs.example.com/api/${i}.html)`,
    ),
  ].join('\n');
}

/** The embedder, counting the texts it is asked to embed. */
function countingEmbedder(): { embedder: Embedder; texts: string[] } {
  const embedder = hashEmbedder({ dimensions: 32, maxTokens: 64 });
  const texts: string[] = [];
  const embed = embedder.embed.bind(embedder);
  embedder.embed = (batch, signal) => {
    texts.push(...batch);
    return embed(batch, signal);
  };
  return { embedder, texts };
}

for (const mode of STORAGE_MODES) {
  describe(`crawled pages in the indexer's queues (${mode})`, () => {
    let db: Database;
    let drop: () => Promise<void>;
    const { embedder, texts } = countingEmbedder();

    before(async () => {
      ({ db, drop } = await indexerDatabase(mode, embedder));
    });
    after(async () => drop?.());

    /** Stores pages as a crawl does, one after another (the order they were fetched); returns their ids. */
    const crawl = async (
      org: string,
      crawlJobId: string,
      pages: Array<{ title: string; markdown: string }>,
    ) => {
      const ids: string[] = [];
      for (const [i, page] of pages.entries()) {
        const { itemId } = await db.transaction((tx) =>
          storeDocument(
            tx,
            org,
            {
              sourceType: 'crawl',
              sourceTableName: 'crawled_pages',
              sourceKey: `https://${crawlJobId}.example.com/page-${i}`,
              title: page.title,
              markdown: page.markdown,
              url: `https://${crawlJobId}.example.com/page-${i}`,
              visibility: 'public',
              tags: [],
              crawlJobId,
            },
            { respectTombstones: false },
          ),
        );
        ids.push(itemId!);
      }
      return ids;
    };
    const contentPages = (label: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        title: `${label} ${i}`,
        markdown: `# ${label} ${i}\n\nHow to configure the ${label} handler number ${i}, with an example.`,
      }));
    const pendingOf = async (ids: string[]) =>
      new Set(
        (
          await db.query<{ id: string }>(
            "SELECT id FROM items WHERE id = ANY($1::text[]) AND indexing_status = 'pending'",
            [ids],
          )
        ).map((r) => r.id),
      );

    test("another organization's crawl is indexed in the first round after a large crawl's backlog", async () => {
      const a = (await createOrganization(db, 'large-crawl')).id;
      const b = (await createOrganization(db, 'small-crawl')).id;
      const large = await crawl(a, 'crawl-large', contentPages('large', 100));
      const small = await crawl(b, 'crawl-small', contentPages('small', 3));

      const indexer = new Indexer(db, embedder, { batchItems: BATCH });
      assert.equal(await indexer.indexOnce(), BATCH);
      assert.equal((await pendingOf(small)).size, 0, "all of the small crawl's pages in the first round");
      const stillPending = await pendingOf(large);
      assert.deepEqual(
        large.filter((id) => !stillPending.has(id)),
        large.slice(0, BATCH - small.length),
        "the large crawl's turns: its first pages",
      );
      assert.equal(await indexer.drain(), 100 - (BATCH - small.length));
    });

    test("a crawl's pages are indexed in the order they were fetched; its index pages give the model no work", async () => {
      const org = (await createOrganization(db, 'manual')).id;
      // A generator's site as a crawler meets it: the start page's links lead to the indexes first.
      const indexes = Array.from({ length: 6 }, (_, n) => ({ title: `Index ${n}`, markdown: indexPage(n) }));
      const ids = await crawl(org, 'crawl-manual', [...indexes, ...contentPages('manual', 34)]);
      const indexer = new Indexer(db, embedder, { batchItems: BATCH });
      texts.length = 0;
      for (let round = 1; round * BATCH <= ids.length; round++) {
        assert.equal(await indexer.indexOnce(), BATCH);
        assert.deepEqual(
          [...(await pendingOf(ids))].sort(),
          ids.slice(round * BATCH).sort(),
          `after round ${round}: the pages fetched first are indexed`,
        );
      }
      await indexer.drain();
      assert.equal((await pendingOf(ids)).size, 0);
      const [chunks] = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM chunks WHERE item_id = ANY($1::text[])',
        [ids.slice(0, indexes.length)],
      );
      assert.equal(chunks!.n, 0, 'the index pages are stored, not chunked');
      assert.equal(texts.length, 34, "the model embedded the content pages' passages only");
      assert.ok(texts.every((t) => !t.includes('function_')));
    });
  });
}
