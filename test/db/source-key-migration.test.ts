import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { knownDocuments } from '../../src/ingest/sync-runner.ts';
import {
  integrationSourceKey,
  legacyIntegrationTombstoneKey,
  storeDocument,
} from '../../src/ingest/hash-skip.ts';
import { freshDatabase, STORAGE_MODES } from '../support/harness.ts';

async function collect<T>(gen: AsyncGenerator<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const batch of gen) out.push(...batch);
  return out;
}

for (const mode of STORAGE_MODES) {
  describe(`migration 006: synced documents keyed by table (${mode})`, () => {
    test('rewrites keys of a database an older release left, keeping item rows and tombstones', async () => {
      const fresh = await freshDatabase(mode);
      const db = fresh.db;
      try {
        await migrate(db, { through: 5 });
        const org = await createOrganization(db, 'old-org');
        await db.query(
          `INSERT INTO connections (id, organization_id, type, credentials_encrypted) VALUES ('conn1', $1, 'wiki', 'x')`,
          [org.id],
        );
        const insert = (id: string, key: string, table: string, sourceType = 'integration') =>
          db.query(
            `INSERT INTO items (id, organization_id, title, content, content_hash, visibility, source_type,
                                source_table_name, source_url, source_key, connection_id, tags, source_version)
             VALUES ($1, $2, $1, 'body', 'h', 'private', $5, $4, 'https://x.test', $3,
                     CASE WHEN $5 = 'integration' THEN 'conn1' END, '{}', 'v1')`,
            [id, org.id, key, table, sourceType],
          );
        await insert('item-page', 'integration:conn1:42', 'wiki_pages');
        await insert('item-gid', 'integration:conn1:gid://shopify/Product/7', 'wiki_blogposts');
        await insert('item-crawl', 'crawl:https://docs.test/a', 'crawled_pages', 'crawl');
        await db.query(
          `INSERT INTO item_tombstones (organization_id, source_key) VALUES ($1, 'integration:conn1:99'), ($1, 'crawl:https://docs.test/b')`,
          [org.id],
        );

        assert.equal((await migrate(db))[0], '006_source_key_table.sql');

        const rows = await db.query<{ id: string; source_key: string }>(
          'SELECT id, source_key FROM items ORDER BY id',
        );
        assert.deepEqual(rows, [
          { id: 'item-crawl', source_key: 'crawl:https://docs.test/a' },
          { id: 'item-gid', source_key: 'integration:conn1:wiki_blogposts:gid://shopify/Product/7' },
          { id: 'item-page', source_key: 'integration:conn1:wiki_pages:42' },
        ]);
        assert.equal(rows[2]!.source_key, integrationSourceKey('conn1', 'wiki_pages', '42'));
        const tombstones = await db.query<{ source_key: string }>(
          'SELECT source_key FROM item_tombstones ORDER BY source_key',
        );
        assert.deepEqual(
          tombstones.map((t) => t.source_key),
          ['crawl:https://docs.test/b', legacyIntegrationTombstoneKey('conn1', '99')],
        );

        // What a connector is told it holds: the ids it yielded, each with its table.
        const known = await collect(knownDocuments(db, org.id, 'conn1'));
        assert.deepEqual(known.map((k) => [k.externalId, k.table]).sort(), [
          ['42', 'wiki_pages'],
          ['gid://shopify/Product/7', 'wiki_blogposts'],
        ]);

        // A document the user deleted before the upgrade stays deleted on an incremental sync...
        const deleted = {
          sourceType: 'integration' as const,
          sourceTableName: 'wiki_pages',
          sourceKey: integrationSourceKey('conn1', 'wiki_pages', '99'),
          tombstoneKeys: [legacyIntegrationTombstoneKey('conn1', '99')],
          title: 'Deleted page',
          markdown: 'gone',
          url: 'https://x.test/99',
          visibility: 'private' as const,
          tags: [],
          connectionId: 'conn1',
        };
        const again = await storeDocument(db, org.id, deleted, { respectTombstones: true });
        assert.equal(again.outcome, 'tombstoned');
        // ...and a reset brings it back, lifting the old tombstone.
        const reset = await storeDocument(db, org.id, deleted, { respectTombstones: false });
        assert.equal(reset.outcome, 'created');
        const left = await db.query("SELECT 1 FROM item_tombstones WHERE source_key LIKE 'integration:%'");
        assert.equal(left.length, 0);
      } finally {
        await fresh.drop();
      }
    });
  });
}
