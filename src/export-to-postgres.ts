/**
 * `kb export-to-postgres DATABASE_URL`: move an embedded data directory (PGlite) to a server Postgres with
 * pgvector, as it is: organizations, keys, connections with their encrypted credentials, jobs, items,
 * chunks and their vectors (nothing is re-embedded), and every other table the migrations create.
 *
 * How, and why so:
 * - Both databases are migrated by this release first, so they have the same schema; the target must then
 *   be empty (a table that a migration filled, such as the job-status transitions, may hold exactly the
 *   source's rows). No table list is written here: the tables are read from the catalog, so a table a later
 *   migration adds is copied too, in foreign-key order.
 * - Rows travel in their text form (`col::text` out, `$n::type` in), which Postgres reads back exactly:
 *   vectors, tsvectors, arrays, jsonb and timestamps alike. They stream through a cursor in batches, so a
 *   large corpus never sits in memory. The source is read in one transaction (one snapshot); the target is
 *   written in one transaction, so a failed export leaves it as it was.
 * - Triggers are off while rows are copied (ALTER TABLE ... DISABLE TRIGGER USER, in that transaction): the
 *   rows are copied as they are, and a trigger that keeps derived data (search words, term statistics)
 *   would compute again what is copied anyway, or count it twice.
 * - Sequences (bigserial ids, chunk_generation_seq) take the source's values; then the HNSW index is built
 *   once for the stored model (far faster than growing it row by row) and the tables are analyzed.
 * - The credentials stay encrypted with the embedded key: the server-mode service needs the same key as
 *   KB_ENCRYPTION_KEY. This prints where the key is, never the key.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Database, Queryable } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { pgliteDataDir } from './db/open.ts';
import { openPglite } from './db/pglite.ts';
import { openPostgres } from './db/postgres.ts';
import { ensureVectorIndex, readStoredModel } from './search/vector-index.ts';
import { encryptionKeyFile } from './service.ts';

/** Rows per batch: about 2 MB of chunks (a 384-dimension vector is about 3.5 KB as text). */
const BATCH_ROWS = 500;

interface Column {
  name: string;
  type: string;
}

interface Table {
  name: string;
  columns: Column[];
}

export interface ExportReport {
  /** Per table: rows in the source and in the target after the export. */
  tables: Array<{ table: string; source: number; target: number; copied: boolean }>;
  sequences: number;
  vectorIndex: boolean;
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** The public schema's tables (views, partitions' parents and the migrations' own table aside). */
async function readTables(q: Queryable): Promise<Table[]> {
  const rows = await q.query<{ table_name: string; column_name: string; type: string }>(
    `SELECT c.relname AS table_name, a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> 'schema_migrations'
      ORDER BY c.relname, a.attnum`,
  );
  const byName = new Map<string, Table>();
  for (const r of rows) {
    const t = byName.get(r.table_name) ?? { name: r.table_name, columns: [] };
    t.columns.push({ name: r.column_name, type: r.type });
    byName.set(r.table_name, t);
  }
  return [...byName.values()];
}

/** Tables ordered so that a table comes after every table its foreign keys reference. */
async function foreignKeyOrder(q: Queryable, tables: Table[]): Promise<Table[]> {
  const edges = await q.query<{ child: string; parent: string }>(
    `SELECT DISTINCT c.relname AS child, p.relname AS parent
       FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid
       JOIN pg_class p ON p.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE k.contype = 'f' AND n.nspname = 'public' AND c.oid <> p.oid`,
  );
  const parents = new Map<string, Set<string>>(tables.map((t) => [t.name, new Set()]));
  for (const e of edges) parents.get(e.child)?.add(e.parent);
  const ordered: Table[] = [];
  const done = new Set<string>();
  let left = [...tables];
  while (left.length) {
    const ready = left.filter((t) => [...parents.get(t.name)!].every((p) => done.has(p) || !parents.has(p)));
    if (ready.length === 0)
      throw new Error(`foreign keys form a cycle among ${left.map((t) => t.name).join(', ')}`);
    for (const t of ready) {
      ordered.push(t);
      done.add(t.name);
    }
    left = left.filter((t) => !done.has(t.name));
  }
  return ordered;
}

async function count(q: Queryable, table: string): Promise<number> {
  const [row] = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${ident(table)}`);
  return row?.n ?? 0;
}

/** A digest of a table's rows in a fixed order, to see that a table a migration filled is the same. */
async function digest(q: Queryable, table: string): Promise<string> {
  const [row] = await q.query<{ d: string | null }>(
    `SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)) AS d FROM ${ident(table)} AS t`,
  );
  return row?.d ?? '';
}

async function versions(q: Queryable): Promise<number[]> {
  return (await q.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map(
    (r) => r.version,
  );
}

/**
 * A refusal the operator fixes before running the export again (no data directory there, the target
 * unreachable, not empty or of another release); the message says what to do. Nothing was written.
 * The `kb` command reports it as a usage error; this module does not know the CLI.
 */
export class ExportRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExportRefused';
  }
}

export interface ExportOptions {
  dataDir: string;
  databaseUrl: string;
  /** Progress lines for people (stderr). */
  progress?: (line: string) => void;
}

export async function exportToPostgres(opts: ExportOptions): Promise<ExportReport> {
  const say = opts.progress ?? (() => {});
  const pgdata = pgliteDataDir(opts.dataDir);
  if (!existsSync(path.join(pgdata, 'PG_VERSION')))
    throw new ExportRefused(
      `no embedded database in ${opts.dataDir} (no pgdata/PG_VERSION); set KB_DATA_DIR or --data-dir`,
    );
  // First, before the target is touched: the directory's lock (a running service holds it, and the
  // export is refused with DataDirInUseError). A directory left by a killed service is free, and PGlite
  // recovers it as it opens.
  const source = await openPglite(pgdata);
  let target: Database;
  try {
    target = await openPostgres(opts.databaseUrl, { max: 2 });
  } catch (err) {
    await source.close();
    throw new ExportRefused(`cannot connect to the target Postgres: ${(err as Error).message}`);
  }
  try {
    // The same release's schema on both sides (the embedded one as the service would migrate it at start).
    await migrate(source);
    await migrate(target);
    const [sv, tv] = [await versions(source), await versions(target)];
    if (sv.join() !== tv.join())
      throw new ExportRefused(
        `the target's migrations (${tv.join(', ')}) differ from this release's (${sv.join(', ')}): ` +
          'export with the release that migrated the target, or into an empty database',
      );
    const tables = await foreignKeyOrder(source, await readTables(source));
    const targetTables = new Map((await readTables(target)).map((t) => [t.name, t]));
    // Every check before the first row is written.
    const plan: Array<{ table: Table; copy: boolean; rows: number }> = [];
    for (const t of tables) {
      const tt = targetTables.get(t.name);
      const shape = (x: Table) => x.columns.map((c) => `${c.name} ${c.type}`).join(', ');
      if (!tt || shape(tt) !== shape(t))
        throw new ExportRefused(`table ${t.name} differs between the data directory and the target`);
      const rows = await count(source, t.name);
      const there = await count(target, t.name);
      if (there === 0) plan.push({ table: t, copy: rows > 0, rows });
      else if (there === rows && (await digest(source, t.name)) === (await digest(target, t.name)))
        plan.push({ table: t, copy: false, rows }); // filled by a migration, the same on both sides
      else
        throw new ExportRefused(
          `the target database is not empty (table ${t.name} has ${there} rows): export into a new database`,
        );
    }

    const storedModel = await readStoredModel(source);
    let sequences = 0;
    await source.transaction(async (src) => {
      await target.transaction(async (dst) => {
        // A target that a server-mode service already started on has the HNSW index: drop it for the load.
        for (const { indexname } of await dst.query<{ indexname: string }>(
          "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname LIKE 'chunks_embedding_hnsw_%'",
        ))
          await dst.exec(`DROP INDEX ${ident(indexname)}`);
        for (const { table, copy, rows } of plan) {
          if (!copy) continue;
          await dst.exec(`ALTER TABLE ${ident(table.name)} DISABLE TRIGGER USER`);
          const cols = table.columns.map((c) => ident(c.name)).join(', ');
          await src.exec(
            `DECLARE export_rows NO SCROLL CURSOR FOR SELECT ${table.columns
              .map((c) => `${ident(c.name)}::text`)
              .join(', ')} FROM ${ident(table.name)}`,
          );
          const insert =
            `INSERT INTO ${ident(table.name)} (${cols}) OVERRIDING SYSTEM VALUE SELECT ${table.columns
              .map((c, i) => `u.c${i}::${c.type}`)
              .join(
                ', ',
              )} FROM unnest(${table.columns.map((_, i) => `$${i + 1}::text[]`).join(', ')}) AS u(` +
            `${table.columns.map((_, i) => `c${i}`).join(', ')})`;
          let done = 0;
          for (;;) {
            const batch = await src.query<Record<string, string | null>>(
              `FETCH ${BATCH_ROWS} FROM export_rows`,
            );
            if (batch.length === 0) break;
            await dst.query(
              insert,
              table.columns.map((c) => batch.map((r) => r[c.name] ?? null)),
            );
            done += batch.length;
            if (rows >= 10 * BATCH_ROWS) say(`  ${table.name}: ${done}/${rows}`);
          }
          await src.exec('CLOSE export_rows');
          await dst.exec(`ALTER TABLE ${ident(table.name)} ENABLE TRIGGER USER`);
          say(`${table.name}: ${done} rows`);
        }
        for (const { seq } of await src.query<{ seq: string }>(
          "SELECT c.relname AS seq FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'S' AND n.nspname = 'public'",
        )) {
          const [v] = await src.query<{ last_value: string; is_called: boolean }>(
            `SELECT last_value::text, is_called FROM ${ident(seq)}`,
          );
          await dst.query('SELECT setval($1::regclass, $2::bigint, $3)', [
            ident(seq),
            v!.last_value,
            v!.is_called,
          ]);
          sequences++;
        }
      });
    });

    let vectorIndex = false;
    if (storedModel) {
      say(`building the HNSW index for ${storedModel.id} (${storedModel.dimensions} dimensions)`);
      await ensureVectorIndex(target, storedModel);
      vectorIndex = true;
    }
    // VACUUM marks the copied pages all-visible, so keyword search reads postings from the index alone
    // from the first query on (migration 015) instead of after autovacuum gets to it.
    await target.exec('VACUUM ANALYZE');
    const report: ExportReport = { tables: [], sequences, vectorIndex };
    // The source is not written meanwhile (no process has it open), so its counts from the plan stand.
    for (const { table, copy, rows } of plan) {
      const t = await count(target, table.name);
      report.tables.push({ table: table.name, source: rows, target: t, copied: copy });
      if (rows !== t)
        throw new Error(`table ${table.name}: ${rows} rows in the data directory, ${t} in the target`);
    }
    return report;
  } finally {
    await source.close();
    await target.close();
  }
}

/** Where the credentials' key is, for the closing advice (never the key itself). */
export function encryptionKeyAdvice(dataDir: string, envKeySet: boolean): string {
  if (envKeySet)
    return 'Credentials are encrypted with KB_ENCRYPTION_KEY: start the server-mode service with the same KB_ENCRYPTION_KEY.';
  const file = encryptionKeyFile(dataDir);
  if (existsSync(file) && readFileSync(file, 'utf8').trim())
    return `Credentials are encrypted with the key in ${file}: start the server-mode service with KB_ENCRYPTION_KEY set to that file's content.`;
  return 'The data directory has no encryption key file (no credentials were ever stored); choose a new KB_ENCRYPTION_KEY.';
}
