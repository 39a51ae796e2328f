/**
 * Embedded mode runs PGlite on a thread of its own (src/db/pglite-thread.ts). Through it, rows and
 * parameters must come back as they do on the calling thread, a Postgres error must keep its fields and
 * name its caller, transactions must commit, roll back and exclude each other as before, settings given
 * with a statement must hold for that statement only, `close()` must let work already sent finish, and a
 * script that never closes the database must still exit.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Database } from '../../src/db/database.ts';
import { pgliteDatabase } from '../../src/db/pglite.ts';
import { ANSWERED, openPgliteThread, SIGNAL, WAITING, waitForAnswer } from '../../src/db/pglite-thread.ts';
import { awkwardRow, VALUES_TABLE } from '../support/pg-values.ts';

describe('PGlite on its own thread', () => {
  let db: Database;
  before(async () => {
    db = await openPgliteThread(null);
    await db.exec(VALUES_TABLE);
  });
  after(async () => db?.close());

  test('rows and parameters come back as PGlite gives them on the calling thread', async () => {
    const pg = await PGlite.create(undefined, { extensions: { vector } });
    const here = pgliteDatabase(pg);
    try {
      await here.exec(VALUES_TABLE);
      const params = awkwardRow();
      const insert = 'INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *';
      const onThread = await db.query(insert, params);
      const onCaller = await here.query(insert, params);
      assert.deepEqual(onThread, onCaller);
      assert.ok((onThread[0] as { at: unknown }).at instanceof Date);
      assert.ok((onThread[0] as { bytes: unknown }).bytes instanceof Uint8Array);
      assert.deepEqual(await db.query('SELECT * FROM t'), await here.query('SELECT * FROM t'));
    } finally {
      await here.close();
      await db.exec('DELETE FROM t');
    }
  });

  test('a Postgres error keeps its code, detail and constraint, and its stack names the caller', async () => {
    await db.query('INSERT INTO t (id, name) VALUES (1, $1)', ['first']);
    try {
      await assert.rejects(
        db.query('INSERT INTO t (id, name) VALUES (1, $1)', ['again']),
        (err: Error & Record<string, unknown>) => {
          assert.match(err.message, /duplicate key value violates unique constraint "t_pkey"/);
          assert.equal(err.code, '23505');
          assert.equal(err.constraint, 't_pkey');
          assert.match(String(err.detail), /Key \(id\)=\(1\) already exists/);
          assert.match(String(err.stack), /pglite-thread\.test\.ts/);
          return true;
        },
      );
      // The thread goes on answering.
      assert.deepEqual(await db.query('SELECT name FROM t'), [{ name: 'first' }]);
    } finally {
      await db.exec('DELETE FROM t');
    }
  });

  test('a transaction commits what it wrote, or nothing when its function throws', async () => {
    const out = await db.transaction(async (tx) => {
      await tx.query('INSERT INTO t (id, name) VALUES (1, $1)', ['kept']);
      return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM t'))[0]!.n;
    });
    assert.equal(out, 1);
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO t (id, name) VALUES (2, $1)', ['dropped']);
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    // A failed statement inside: the caller's error, and the transaction rolled back.
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO t (id, name) VALUES (3, $1)', ['dropped too']);
        await tx.query('INSERT INTO t (id, name) VALUES (1, $1)', ['duplicate']);
      }),
      /duplicate key/,
    );
    assert.deepEqual(await db.query('SELECT id, name FROM t ORDER BY id'), [{ id: 1, name: 'kept' }]);
    await db.exec('DELETE FROM t');
  });

  test('transactions run one after the other, and a statement outside waits for the open one', async () => {
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = db.transaction(async (tx) => {
      order.push('first began');
      await tx.query('INSERT INTO t (id, name) VALUES (1, $1)', ['first']);
      await firstHolds;
      order.push('first ends');
    });
    // Let the first one begin before the others are sent.
    while (order.length === 0) await new Promise((r) => setTimeout(r, 5));
    const second = db.transaction(async (tx) => {
      order.push('second began');
      return tx.query('SELECT name FROM t');
    });
    const outside = db.query('SELECT name FROM t').then((rows) => {
      order.push('outside answered');
      return rows;
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(order, ['first began'], 'nothing ran while the first transaction was open');
    releaseFirst();
    await first;
    assert.deepEqual(await second, [{ name: 'first' }]);
    assert.deepEqual(await outside, [{ name: 'first' }]);
    assert.deepEqual(order, ['first began', 'first ends', 'second began', 'outside answered']);
    await db.exec('DELETE FROM t');
  });

  test('settings given with a statement hold for that statement only', async () => {
    const [under] = await db.queryWithSettings<{ s: string; ef: string }>(
      'SET LOCAL enable_seqscan = off; SET LOCAL hnsw.ef_search = 77',
      "SELECT current_setting('enable_seqscan') AS s, current_setting('hnsw.ef_search') AS ef",
    );
    assert.deepEqual(under, { s: 'off', ef: '77' });
    const [afterwards] = await db.query<{ s: string }>("SELECT current_setting('enable_seqscan') AS s");
    assert.deepEqual(afterwards, { s: 'on' });
    await assert.rejects(
      db.queryWithSettings('SET LOCAL no_such_setting = 1', 'SELECT 1'),
      /no_such_setting/,
    );
  });

  test('a synchronous call is not ended by a wake-up that brings no answer', async () => {
    // What a late wake-up of the previous call looks like: woken while the value still says waiting.
    const signal = new Int32Array(new SharedArrayBuffer(4));
    Atomics.store(signal, SIGNAL, WAITING);
    const other = new Worker(
      `const { workerData: { buffer, at, answered } } = require('node:worker_threads');
       const signal = new Int32Array(buffer);
       for (let i = 0; i < 5; i++) { Atomics.notify(signal, at); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); }
       Atomics.store(signal, at, answered);
       Atomics.notify(signal, at);`,
      { eval: true, workerData: { buffer: signal.buffer, at: SIGNAL, answered: ANSWERED } },
    );
    const exited = new Promise((resolve) => other.once('exit', resolve));
    waitForAnswer(signal);
    assert.equal(Atomics.load(signal, SIGNAL), ANSWERED, 'returned only once the answer was stored');
    await exited;
  });

  test('close() lets the statements already sent finish, then refuses more', async () => {
    const other = await openPgliteThread(null);
    const slow = other.query<{ n: number }>('SELECT pg_sleep(0.2), 42 AS n');
    await other.close();
    assert.equal((await slow)[0]!.n, 42);
    await assert.rejects(other.query('SELECT 1'), /stopped/);
  });

  test('a script that never closes the database still exits', async () => {
    const script = `
      import { openPgliteThread } from ${JSON.stringify(new URL('../../src/db/pglite-thread.ts', import.meta.url).href)};
      const db = await openPgliteThread(null);
      const rows = await db.query('SELECT 41 + 1 AS n');
      console.log(JSON.stringify(rows));`;
    const dir = mkdtempSync(path.join(tmpdir(), 'kb-pglite-thread-'));
    try {
      const file = path.join(dir, 'never-closes.mjs');
      writeFileSync(file, script);
      const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 30_000 });
      assert.equal(stdout.trim(), '[{"n":42}]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
