/**
 * A table with a column of each kind the service stores, and one row of awkward values for it (quotes and
 * Unicode, an array holding a comma and a NULL, nested JSON, a timestamp with milliseconds, a bigint past
 * 2^53, a float, bytes, a vector): what a database adapter must hand back exactly as PGlite gives it.
 */
export const VALUES_TABLE = `CREATE EXTENSION IF NOT EXISTS vector;
  CREATE TABLE t (id int PRIMARY KEY, name text, tags text[], meta jsonb, at timestamptz, big bigint,
                  score float8, ok boolean, bytes bytea, v vector(3))`;

export function awkwardRow(): unknown[] {
  return [
    1,
    'ünïcode \' "quoted"',
    ['a', 'b,c', null],
    { nested: { n: 1, s: 'x' }, list: [1, 2] },
    new Date('2026-11-23T10:11:12.345Z'),
    9007199254740993n,
    0.1 + 0.2,
    true,
    new Uint8Array([0, 1, 255]),
    '[0.5,-1,2]',
  ];
}
