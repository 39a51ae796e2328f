/**
 * Server mode states its requirement: a database whose pgvector is older than 0.8.0 (no iterative index
 * scans) is refused at start with the version found and the version needed.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { MissingExtensionError, type Queryable } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import {
  checkPgvectorVersion,
  compareVersions,
  MIN_PGVECTOR_VERSION,
  parseVersion,
  UnsupportedExtensionError,
} from '../../src/db/pgvector-version.ts';
import { freshDatabase, STORAGE_MODES } from '../support/harness.ts';
import { runNode } from '../support/run-node.ts';

describe('pgvector versions', () => {
  test('compare numerically, part by part', () => {
    assert.deepEqual(parseVersion('0.8.1'), [0, 8, 1]);
    assert.deepEqual(parseVersion('0.8.0-dev'), [0, 8, 0]);
    assert.equal(parseVersion('unknown'), null);
    assert.ok(compareVersions('0.7.4', '0.8.0') < 0);
    assert.ok(compareVersions('0.8.0', '0.8.0') === 0);
    assert.ok(compareVersions('0.8', '0.8.0') === 0);
    assert.ok(compareVersions('0.8.6', '0.8.0') > 0);
    // Not text order: 0.10 is newer than 0.8, 1.0 newer than 0.99.
    assert.ok(compareVersions('0.10.0', '0.8.0') > 0);
    assert.ok(compareVersions('1.0.0', '0.99.9') > 0);
    assert.equal(MIN_PGVECTOR_VERSION, '0.8.0');
  });

  /** A database that answers the version query with the given versions. */
  const answering = (installed: string | null, available: string | null): Queryable => ({
    query: async <T>() => [{ installed, available }] as T[],
    exec: async () => {},
  });

  test('an old pgvector on a server that has a new one: the message says to update the extension', async () => {
    await assert.rejects(checkPgvectorVersion(answering('0.7.4', '0.8.1')), (err: Error) => {
      assert.ok(err instanceof UnsupportedExtensionError);
      assert.ok(
        err instanceof MissingExtensionError,
        'main.ts and the CLI report it as a clean start failure',
      );
      assert.match(err.message, /version 0\.7\.4; this service needs pgvector 0\.8\.0 or newer/);
      assert.match(err.message, /The server has pgvector 0\.8\.1: run ALTER EXTENSION vector UPDATE/);
      return true;
    });
  });

  test('an old pgvector on an old server: the message says to upgrade the server', async () => {
    await assert.rejects(checkPgvectorVersion(answering('0.5.1', '0.5.1')), (err: Error) => {
      assert.ok(err instanceof UnsupportedExtensionError);
      assert.match(err.message, /version 0\.5\.1; this service needs pgvector 0\.8\.0 or newer/);
      assert.match(err.message, /Upgrade pgvector on the Postgres server/);
      return true;
    });
  });

  test('0.8.0 and newer pass', async () => {
    assert.equal(await checkPgvectorVersion(answering('0.8.0', '0.8.0')), '0.8.0');
    assert.equal(await checkPgvectorVersion(answering('0.10.1', '0.10.1')), '0.10.1');
  });

  for (const mode of STORAGE_MODES) {
    test(`the real pgvector passes (${mode})`, async (t) => {
      const fresh = await freshDatabase(mode);
      try {
        await migrate(fresh.db);
        const version = await checkPgvectorVersion(fresh.db);
        t.diagnostic(`${mode}: pgvector ${version}`);
        assert.ok(compareVersions(version, MIN_PGVECTOR_VERSION) >= 0, version);
      } finally {
        await fresh.drop();
      }
    });
  }

  test('the service refuses to start on a database whose pgvector is 0.7.4, naming both versions', async () => {
    // A real Postgres whose installed extension claims 0.7.4, as one created years ago and never updated
    // would (the catalog row is what `ALTER EXTENSION ... UPDATE` changes; the fixture has no 0.7 build).
    const fresh = await freshDatabase('postgres');
    try {
      const client = new pg.Client({ connectionString: fresh.url });
      await client.connect();
      await client.query('CREATE EXTENSION vector');
      await client.query("UPDATE pg_extension SET extversion = '0.7.4' WHERE extname = 'vector'");
      await client.end();

      await assert.rejects(migrate(fresh.db), UnsupportedExtensionError);
      const tables = await fresh.db.query("SELECT 1 FROM pg_tables WHERE tablename = 'schema_migrations'");
      assert.equal(tables.length, 0, 'nothing is migrated on a database the service refuses');

      // The real entry point: a clean exit with the message, not a stack trace.
      const { code, out } = await runNode(['src/main.ts'], {
        env: {
          DATABASE_URL: fresh.url!,
          KB_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
          KB_LOG_LEVEL: 'silent',
          PORT: '0',
        },
        killAfterMs: 60_000,
      });
      assert.equal(code, 2, out);
      assert.match(
        out,
        /kb: The database's pgvector extension is version 0\.7\.4; this service needs pgvector 0\.8\.0/,
      );
      assert.doesNotMatch(out, /\n\s+at /, 'no stack trace');
    } finally {
      await fresh.drop();
    }
  });
});
