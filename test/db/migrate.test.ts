import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import type { Database } from '../../src/db/database.ts';
import { MissingExtensionError, queryWithSettingsInTransaction } from '../../src/db/database.ts';
import { listMigrations, migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { freshDatabase, STORAGE_MODES } from '../support/harness.ts';

for (const mode of STORAGE_MODES) {
  describe(`migrations (${mode})`, () => {
    test('apply in order, are recorded, and a second run does nothing', async () => {
      const fresh = await freshDatabase(mode);
      try {
        const applied = await migrate(fresh.db);
        assert.deepEqual(
          applied,
          listMigrations().map((m) => m.name),
        );
        const recorded = await fresh.db.query<{ name: string }>(
          'SELECT name FROM schema_migrations ORDER BY version',
        );
        assert.deepEqual(
          recorded.map((r) => r.name),
          applied,
        );
        assert.deepEqual(await migrate(fresh.db), []);
        const ext = await fresh.db.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'");
        assert.equal(ext.length, 1);
      } finally {
        await fresh.drop();
      }
    });
  });
}

describe('migrations on a shared server', () => {
  test('two connections migrating at once (as two processes would) apply each migration exactly once', async () => {
    const fresh = await freshDatabase('postgres');
    const second: Database = await openPostgres(fresh.url!, { max: 2 });
    try {
      const [a, b] = await Promise.all([migrate(fresh.db), migrate(second)]);
      const all = listMigrations().map((m) => m.name);
      // One of them did the work, the other found nothing left.
      assert.deepEqual([...a, ...b].sort(), [...all].sort());
      const rows = await fresh.db.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
      assert.equal(rows[0]!.n, all.length);
    } finally {
      await second.close();
      await fresh.drop();
    }
  });
});

describe('a database without pgvector', () => {
  test('start-up fails with an error naming the missing extension', async () => {
    // PGlite without the vector extension bundle is a real Postgres that lacks pgvector.
    const pg = await PGlite.create();
    const db: Database = {
      kind: 'pglite',
      query: async (sql, params) => (await pg.query(sql, params as unknown[])).rows as never[],
      exec: async (sql) => {
        await pg.exec(sql);
      },
      transaction: (fn) =>
        pg.transaction((tx) =>
          fn({
            query: async (sql, params) => (await tx.query(sql, params as unknown[])).rows as never[],
            exec: async (sql) => {
              await tx.exec(sql);
            },
          }),
        ),
      close: () => pg.close(),
      queryWithSettings: (settings, sql, params) => queryWithSettingsInTransaction(db, settings, sql, params),
    };
    try {
      await assert.rejects(migrate(db), (err: Error) => {
        assert.ok(err instanceof MissingExtensionError);
        assert.match(err.message, /pgvector/);
        assert.match(err.message, /"vector" extension/);
        return true;
      });
      const tables = await db.query("SELECT 1 FROM pg_tables WHERE tablename = 'items'");
      assert.equal(tables.length, 0);
    } finally {
      await db.close();
    }
  });
});
