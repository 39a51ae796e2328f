import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { queryItems, rewriteItemSearchWords } from '../../src/db/repositories/items.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { itemSearchWords } from '../../src/lib/search-words.ts';
import { freshDatabase, STORAGE_MODES } from '../support/harness.ts';

const DOCS: Array<[string, string]> = [
  ['Release notes', 'Version 0.115.0 fixes snake_case handling.'],
  ['Shipping FAQ', 'We ship worldwide within 5 days.'],
  ['Pâtisserie', 'Un ÉCLAIR au café, Größe M.'],
  ['Contact', 'Write to help-desk@example.com.'],
  ['Empty', ''],
];

for (const mode of STORAGE_MODES) {
  describe(`migration 016: items' search words split by the service (${mode})`, () => {
    test('the words of items an older release stored are split again, and searches find them', async () => {
      const fresh = await freshDatabase(mode);
      const db = fresh.db;
      try {
        await migrate(db, { through: 15 });
        const org = await createOrganization(db, 'old-org');
        for (const [i, [title, content]] of DOCS.entries()) {
          // As release 015 wrote items: migration 013's trigger split the words with Postgres's parser.
          await db.query(
            `INSERT INTO items (id, organization_id, title, content, content_hash, source_type, source_table_name, source_key)
             VALUES ($1, $2, $3, $4, 'h', 'upload', 'uploaded_documents', $1)`,
            [`item-${i}`, org.id, title, content],
          );
        }
        // Postgres's parser kept a version number as one word: '115' began none of them.
        assert.equal((await queryItems(db, org.id, { limit: 10, page: 1, search: '115' })).total, 0);

        assert.equal((await migrate(db))[0], '016_item_search_words.sql');

        const rows = await db.query<{ title: string; content: string; words: string; expected: string }>(
          `SELECT title, content, search_words::text AS words,
                  array_to_tsvector(string_to_array(($1::text[])[substr(id, 6)::int + 1], ' '))::text AS expected
             FROM items ORDER BY id`,
          [DOCS.map(([title, content]) => itemSearchWords(title, content))],
        );
        assert.equal(rows.length, DOCS.length);
        for (const r of rows) assert.equal(r.words, r.expected, r.title);
        const found = async (search: string) =>
          (await queryItems(db, org.id, { limit: 10, page: 1, search })).items.map((i) => i.title);
        assert.deepEqual(await found('115'), ['Release notes']);
        assert.deepEqual(await found('0.115'), ['Release notes']);
        assert.deepEqual(await found('snake_case'), ['Release notes']);
        assert.deepEqual(await found('desk@example'), ['Contact']);
        assert.deepEqual(await found('éclair'), ['Pâtisserie']);
        // The triggers are gone: a write that names no words is refused, not stored unsearchable.
        await assert.rejects(
          db.query(
            `INSERT INTO items (id, organization_id, title, content, content_hash, source_type, source_table_name, source_key)
             VALUES ('late', $1, 't', 'c', 'h', 'upload', 'uploaded_documents', 'late')`,
            [org.id],
          ),
          /search_words/,
        );
      } finally {
        await fresh.drop();
      }
    });

    test('rewriting pages through the items and reads their text in bounded batches', async () => {
      const fresh = await freshDatabase(mode);
      const db = fresh.db;
      try {
        await migrate(db);
        const org = await createOrganization(db, 'org');
        for (const [i, [title, content]] of DOCS.entries()) {
          await db.query(
            `INSERT INTO items (id, organization_id, title, content, content_hash, source_type, source_table_name, source_key, search_words)
             VALUES ($1, $2, $3, $4, 'h', 'upload', 'uploaded_documents', $1, '')`,
            [`item-${i}`, org.id, title, content],
          );
        }
        // Two items a page, and a text budget smaller than most items: every branch of the batching.
        assert.equal(await rewriteItemSearchWords(db, { pageRows: 2, batchChars: 30 }), DOCS.length);
        const rows = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM items WHERE search_words = array_to_tsvector(string_to_array(($1::text[])[substr(id, 6)::int + 1], ' '))`,
          [DOCS.map(([title, content]) => itemSearchWords(title, content))],
        );
        assert.equal(rows[0]!.n, DOCS.length);
      } finally {
        await fresh.drop();
      }
    });
  });
}
