/**
 * A query vector travels as pgvector's binary form (toVectorParam), and the indexer's chunk vectors as one
 * binary real[] (toRealArrayParam): in both storage modes the database must read exactly their float32
 * values, and a vector of the wrong dimension must be refused, not truncated or padded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { realArrayVectorSql, toRealArrayParam } from '../../src/db/real-array-param.ts';
import { toVectorLiteral, toVectorParam } from '../../src/embedding/vector.ts';
import { freshDatabase, STORAGE_MODES } from '../support/harness.ts';

// Values whose decimal text is long or awkward: a float32 that needs 9 digits, a tiny one, a negative zero.
const VALUES = new Float32Array([0.1, -2.5, 3.0000001e-5, 1 / 3, -0, 123456.79, 1e-38, -Math.SQRT1_2]);

for (const mode of STORAGE_MODES) {
  describe(`binary vector parameters (${mode})`, () => {
    let db: Database;
    let drop: () => Promise<void>;
    before(async () => {
      const fresh = await freshDatabase(mode);
      db = fresh.db;
      drop = fresh.drop;
      await migrate(db);
    });
    after(async () => drop?.());

    test('the database reads the exact float32 values', async () => {
      const [row] = await db.query<{ xs: number[]; dims: number }>(
        `SELECT $1::vector(${VALUES.length})::real[] AS xs, vector_dims($1::vector) AS dims`,
        [toVectorParam(VALUES)],
      );
      assert.equal(row!.dims, VALUES.length);
      assert.deepEqual(row!.xs.map(Math.fround), Array.from(VALUES));
    });

    test('a distance from the binary form equals the one from the text form up to the text form’s rounding', async () => {
      const other = new Float32Array([0.3, 0.1, -0.2, 0.5, 0.25, -0.125, 0.6, 0.05]);
      const [row] = await db.query<{ bin: number; txt: number }>(
        `SELECT $1::vector(8) <=> $3::vector(8) AS bin, $2::vector(8) <=> $3::vector(8) AS txt`,
        [toVectorParam(VALUES), toVectorLiteral(VALUES), toVectorLiteral(other)],
      );
      assert.ok(Math.abs(row!.bin - row!.txt) < 1e-6, `${row!.bin} vs ${row!.txt}`);
    });

    test('many vectors in one real[] are sliced back into exactly the vectors written', async () => {
      const vectors = [VALUES, VALUES.map((x) => -x), Float32Array.from({ length: 8 }, (_, i) => i / 7)];
      // With the indexer's own slice (realArrayVectorSql): the row's ordinal picks its vector.
      const rows = await db.query<{ n: number; xs: number[] }>(
        `SELECT u.n::int AS n, ${realArrayVectorSql('$2', 'u.n', 8)}::real[] AS xs
           FROM unnest($1::int[]) WITH ORDINALITY AS u(k, n) ORDER BY u.n`,
        [[10, 11, 12], toRealArrayParam(vectors, 8)],
      );
      assert.equal(rows.length, 3);
      for (const [i, row] of rows.entries())
        assert.deepEqual(row.xs.map(Math.fround), Array.from(vectors[i]!));
      assert.throws(() => toRealArrayParam([VALUES, new Float32Array(7)], 8), /7 dimensions, expected 8/);
    });

    test('a vector of another dimension is refused', async () => {
      await assert.rejects(
        db.query('SELECT $1::vector(4) AS v', [toVectorParam(new Float32Array([1, 2, 3]))]),
        /expected 4 dimensions, not 3/,
      );
      // The connection still answers afterwards.
      const [ok] = await db.query<{ one: number }>('SELECT 1 AS one');
      assert.equal(ok!.one, 1);
    });
  });
}
