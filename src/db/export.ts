/**
 * The statements of `kb export-to-postgres` (src/export-to-postgres.ts says how and why it copies an
 * embedded data directory to a server Postgres): catalog reads, row counts and digests, the row stream
 * (a cursor in the source, `$n::text[]` batches into the target), triggers, sequences and the final VACUUM.
 * Table and column names come from the catalog and are quoted here.
 */
import type { Queryable } from './database.ts';

export interface ExportColumn {
  name: string;
  type: string;
}

export interface ExportTable {
  name: string;
  columns: ExportColumn[];
}

/** A quoted SQL identifier. */
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** The public schema's tables (views, partitions' parents and the migrations' own table aside). */
export async function readTables(q: Queryable): Promise<ExportTable[]> {
  const rows = await q.query<{ table_name: string; column_name: string; type: string }>(
    `SELECT c.relname AS table_name, a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> 'schema_migrations'
      ORDER BY c.relname, a.attnum`,
  );
  const byName = new Map<string, ExportTable>();
  for (const r of rows) {
    const t = byName.get(r.table_name) ?? { name: r.table_name, columns: [] };
    t.columns.push({ name: r.column_name, type: r.type });
    byName.set(r.table_name, t);
  }
  return [...byName.values()];
}

/** The public schema's foreign keys between two different tables, as child and parent table names. */
export function foreignKeyEdges(q: Queryable): Promise<Array<{ child: string; parent: string }>> {
  return q.query<{ child: string; parent: string }>(
    `SELECT DISTINCT c.relname AS child, p.relname AS parent
       FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid
       JOIN pg_class p ON p.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE k.contype = 'f' AND n.nspname = 'public' AND c.oid <> p.oid`,
  );
}

export async function countRows(q: Queryable, table: string): Promise<number> {
  const [row] = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${ident(table)}`);
  return row?.n ?? 0;
}

/** A digest of a table's rows in a fixed order, to see that a table a migration filled is the same. */
export async function tableDigest(q: Queryable, table: string): Promise<string> {
  const [row] = await q.query<{ d: string | null }>(
    `SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)) AS d FROM ${ident(table)} AS t`,
  );
  return row?.d ?? '';
}

/** The migrations applied, in order. */
export async function migrationVersions(q: Queryable): Promise<number[]> {
  return (await q.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map(
    (r) => r.version,
  );
}

/**
 * Drops the HNSW indexes of `chunks` (a target that a server-mode service already started on has one):
 * the export builds the index once after the load.
 */
export async function dropVectorIndexes(q: Queryable): Promise<void> {
  for (const { indexname } of await q.query<{ indexname: string }>(
    "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname LIKE 'chunks_embedding_hnsw_%'",
  ))
    await q.exec(`DROP INDEX ${ident(indexname)}`);
}

/**
 * Turns the table's user triggers off (`enabled: false`) or back on, in the caller's transaction: rows are
 * copied as they are, and a trigger that keeps derived data would compute again what is copied anyway.
 */
export async function setUserTriggers(
  q: Queryable,
  table: string,
  opts: { enabled: boolean },
): Promise<void> {
  await q.exec(`ALTER TABLE ${ident(table)} ${opts.enabled ? 'ENABLE' : 'DISABLE'} TRIGGER USER`);
}

/**
 * Streams a table's rows in their text form (`col::text`, which Postgres reads back exactly), in batches of
 * `batchRows`, through a cursor in the caller's transaction; `onBatch` gets each batch as one text array
 * per column, in `table.columns` order.
 */
export async function streamRowsAsText(
  q: Queryable,
  table: ExportTable,
  batchRows: number,
  onBatch: (columns: Array<Array<string | null>>, rows: number) => Promise<void>,
): Promise<void> {
  await q.exec(
    `DECLARE export_rows NO SCROLL CURSOR FOR SELECT ${table.columns
      .map((c) => `${ident(c.name)}::text`)
      .join(', ')} FROM ${ident(table.name)}`,
  );
  for (;;) {
    const batch = await q.query<Record<string, string | null>>(`FETCH ${batchRows} FROM export_rows`);
    if (batch.length === 0) break;
    await onBatch(
      table.columns.map((c) => batch.map((r) => r[c.name] ?? null)),
      batch.length,
    );
  }
  await q.exec('CLOSE export_rows');
}

/**
 * Inserts rows given in their text form (one array per column, in `table.columns` order), each cast back
 * to its column's type; identity columns keep the given values.
 */
export async function insertRowsFromText(
  q: Queryable,
  table: ExportTable,
  columns: Array<Array<string | null>>,
): Promise<void> {
  const cols = table.columns.map((c) => ident(c.name)).join(', ');
  const insert =
    `INSERT INTO ${ident(table.name)} (${cols}) OVERRIDING SYSTEM VALUE SELECT ${table.columns
      .map((c, i) => `u.c${i}::${c.type}`)
      .join(', ')} FROM unnest(${table.columns.map((_, i) => `$${i + 1}::text[]`).join(', ')}) AS u(` +
    `${table.columns.map((_, i) => `c${i}`).join(', ')})`;
  await q.query(insert, columns);
}

/** The public schema's sequences. */
export async function listSequences(q: Queryable): Promise<string[]> {
  const rows = await q.query<{ seq: string }>(
    "SELECT c.relname AS seq FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'S' AND n.nspname = 'public'",
  );
  return rows.map((r) => r.seq);
}

/** A sequence's position (its last value as text, exact for bigint). */
export async function readSequence(
  q: Queryable,
  seq: string,
): Promise<{ lastValue: string; isCalled: boolean }> {
  const [v] = await q.query<{ last_value: string; is_called: boolean }>(
    `SELECT last_value::text, is_called FROM ${ident(seq)}`,
  );
  return { lastValue: v!.last_value, isCalled: v!.is_called };
}

/** Sets a sequence to a position {@link readSequence} read. */
export async function setSequence(
  q: Queryable,
  seq: string,
  position: { lastValue: string; isCalled: boolean },
): Promise<void> {
  await q.query('SELECT setval($1::regclass, $2::bigint, $3)', [
    ident(seq),
    position.lastValue,
    position.isCalled,
  ]);
}

/**
 * VACUUM ANALYZE of the whole database: marks the copied pages all-visible, so keyword search reads
 * postings from the index alone from the first query on (migration 015) instead of after autovacuum gets
 * to it, and gives the planner its statistics.
 */
export async function vacuumAnalyze(q: Queryable): Promise<void> {
  await q.exec('VACUUM ANALYZE');
}
