/**
 * Embedded mode runs every query as a named prepared statement (src/db/pglite.ts): the answers must be
 * exactly what PGlite's own `query` gives, a statement must keep answering right after Postgres switches
 * it to a generic plan and after the schema changes under it, the prepared statements stay bounded, a
 * failed statement leaves the connection usable, and a query outside a transaction never runs inside
 * someone else's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Database } from '../../src/db/database.ts';
import { pgliteDatabase } from '../../src/db/pglite.ts';
import { awkwardRow, VALUES_TABLE } from '../support/pg-values.ts';

describe('PGlite prepared statements', () => {
  let pg: PGlite;
  let db: Database;
  before(async () => {
    pg = await PGlite.create(undefined, { extensions: { vector } });
    db = pgliteDatabase(pg);
    await db.exec(VALUES_TABLE);
  });
  after(async () => db?.close());

  test('rows and parameters convert exactly as PGlite.query converts them', async () => {
    await db.query(
      'INSERT INTO t (id, name, tags, meta, at, big, score, ok, bytes, v) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
      awkwardRow(),
    );
    await db.query(`INSERT INTO t (id) VALUES ($1)`, [2]);
    const sql = `SELECT *, v::text AS vt, at::text AS at_text, count(*) OVER () AS n FROM t ORDER BY id`;
    const ours = await db.query(sql);
    const theirs = (await pg.query(sql)).rows;
    assert.deepEqual(ours, theirs);
    assert.equal(ours.length, 2);
    assert.deepEqual((ours[0] as { tags: unknown }).tags, ['a', 'b,c', null]);
    assert.equal((ours[1] as { name: unknown }).name, null, 'NULL stays null');
  });

  test('a statement answers right for every parameter after Postgres switches it to a generic plan', async () => {
    await db.exec(`CREATE TABLE g (k int PRIMARY KEY, label text)`);
    await db.query(`INSERT INTO g SELECT i, 'label ' || i FROM generate_series(1, 500) AS i`);
    // An optional filter: a generic plan cannot fold `$1 IS NULL` away, a custom plan can.
    const sql = `SELECT count(*)::int AS n FROM g WHERE ($1::int IS NULL OR k = $1) AND k <= $2`;
    for (let i = 0; i < 12; i++) {
      const [one] = await db.query<{ n: number }>(sql, [i + 1, 500]);
      assert.equal(one!.n, 1);
      const [all] = await db.query<{ n: number }>(sql, [null, 100 + i]);
      assert.equal(all!.n, 100 + i);
    }
  });

  test('a schema change under a prepared statement does not break it', async () => {
    await db.exec(`CREATE TABLE s (a int)`);
    await db.query(`INSERT INTO s VALUES (1)`);
    for (let i = 0; i < 6; i++) assert.deepEqual(await db.query(`SELECT * FROM s`), [{ a: 1 }]);
    await db.exec(`ALTER TABLE s ADD COLUMN b text DEFAULT 'x'`);
    assert.deepEqual(await db.query(`SELECT * FROM s`), [{ a: 1, b: 'x' }]);
    // The same through query(), and inside a transaction.
    await db.query(`ALTER TABLE s ADD COLUMN c int DEFAULT 7`);
    assert.deepEqual(await db.query(`SELECT * FROM s`), [{ a: 1, b: 'x', c: 7 }]);
    await db.transaction(async (tx) => {
      await tx.exec(`ALTER TABLE s DROP COLUMN b`);
      assert.deepEqual(await tx.query(`SELECT * FROM s`), [{ a: 1, c: 7 }]);
    });
    assert.deepEqual(await db.query(`SELECT * FROM s`), [{ a: 1, c: 7 }]);
  });

  test('prepared statements stay bounded, and an evicted one is prepared again', async () => {
    for (let i = 0; i < 260; i++) {
      const [row] = await db.query<{ x: number }>(`SELECT $1::int + ${i} AS x`, [1]);
      assert.equal(row!.x, i + 1);
    }
    const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements`);
    assert.ok(count!.n <= 200, `${count!.n} prepared statements`);
    const [first] = await db.query<{ x: number }>(`SELECT $1::int + 0 AS x`, [41]);
    assert.equal(first!.x, 41);
  });

  test('a failed statement throws the database error and leaves the connection usable', async () => {
    await assert.rejects(
      db.query(`INSERT INTO t (id) VALUES ($1)`, [1]),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, '23505');
        return true;
      },
    );
    await assert.rejects(db.query(`SELEC 1`), /syntax error/);
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO t (id) VALUES ($1)`, [50]);
        await tx.query(`INSERT INTO t (id) VALUES ($1)`, [50]);
      }),
      (err: Error & { code?: string }) => err.code === '23505',
    );
    const rows = await db.query<{ id: number }>(`SELECT id FROM t WHERE id = $1`, [50]);
    assert.deepEqual(rows, [], 'the failed transaction wrote nothing');
    assert.deepEqual(await db.query(`SELECT 1 AS one`), [{ one: 1 }]);
  });

  test('a query outside a transaction waits for an open one instead of running inside it', async () => {
    const order: string[] = [];
    const tx = db.transaction(async (q) => {
      await q.query(`INSERT INTO t (id) VALUES ($1)`, [60]);
      await sleep(50);
      await q.query(`DELETE FROM t WHERE id = $1`, [60]);
      order.push('transaction');
    });
    await sleep(10);
    const seen = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM t WHERE id = $1`, [60]);
    order.push('query');
    await tx;
    assert.deepEqual(order, ['transaction', 'query']);
    assert.equal(seen[0]!.n, 0, 'the query never saw the open transaction’s row');
  });
});
