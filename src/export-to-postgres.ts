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
import {
  countRows,
  dropVectorIndexes,
  type ExportTable,
  foreignKeyEdges,
  insertRowsFromText,
  listSequences,
  migrationVersions,
  readSequence,
  readTables,
  setSequence,
  setUserTriggers,
  streamRowsAsText,
  tableDigest,
  vacuumAnalyze,
} from './db/export.ts';
import { migrate } from './db/migrate.ts';
import { pgliteDataDir } from './db/open.ts';
import { openPglite } from './db/pglite.ts';
import { openPostgres } from './db/postgres.ts';
import { ensureVectorIndex, readStoredModel } from './search/vector-index.ts';
import { encryptionKeyFile } from './storage.ts';

/** Rows per batch: about 2 MB of chunks (a 384-dimension vector is about 3.5 KB as text). */
const BATCH_ROWS = 500;

type Table = ExportTable;

interface ExportReport {
  /** Per table: rows in the source and in the target after the export. */
  tables: Array<{ table: string; source: number; target: number; copied: boolean }>;
  sequences: number;
  vectorIndex: boolean;
}

/** Tables ordered so that a table comes after every table its foreign keys reference. */
async function foreignKeyOrder(q: Queryable, tables: Table[]): Promise<Table[]> {
  const edges = await foreignKeyEdges(q);
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

interface ExportOptions {
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
    const plan = await planExport(source, target);
    const storedModel = await readStoredModel(source);
    const sequences = await copyRows(source, target, plan, say);

    let vectorIndex = false;
    if (storedModel) {
      say(`building the HNSW index for ${storedModel.id} (${storedModel.dimensions} dimensions)`);
      await ensureVectorIndex(target, storedModel);
      vectorIndex = true;
    }
    // Pages all-visible and statistics from the first query on (vacuumAnalyze says why).
    await vacuumAnalyze(target);
    const report: ExportReport = { tables: [], sequences, vectorIndex };
    // The source is not written meanwhile (no process has it open), so its counts from the plan stand.
    for (const { table, copy, rows } of plan) {
      const t = await countRows(target, table.name);
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

/** One table of the export: whether its rows are copied, and how many the source has. */
interface TablePlan {
  table: Table;
  copy: boolean;
  rows: number;
}

/**
 * Migrates both sides, then checks every table before the first row is written: the same schema on
 * both sides, and a target that is empty but for what a migration filled the same way.
 */
async function planExport(source: Database, target: Database): Promise<TablePlan[]> {
  // The same release's schema on both sides (the embedded one as the service would migrate it at start).
  await migrate(source);
  await migrate(target);
  const [sv, tv] = [await migrationVersions(source), await migrationVersions(target)];
  if (sv.join() !== tv.join())
    throw new ExportRefused(
      `the target's migrations (${tv.join(', ')}) differ from this release's (${sv.join(', ')}): ` +
        'export with the release that migrated the target, or into an empty database',
    );
  const tables = await foreignKeyOrder(source, await readTables(source));
  const targetTables = new Map((await readTables(target)).map((t) => [t.name, t]));
  // Every check before the first row is written.
  const plan: TablePlan[] = [];
  for (const t of tables) {
    const tt = targetTables.get(t.name);
    const shape = (x: Table) => x.columns.map((c) => `${c.name} ${c.type}`).join(', ');
    if (!tt || shape(tt) !== shape(t))
      throw new ExportRefused(`table ${t.name} differs between the data directory and the target`);
    const rows = await countRows(source, t.name);
    const there = await countRows(target, t.name);
    if (there === 0) plan.push({ table: t, copy: rows > 0, rows });
    else if (there === rows && (await tableDigest(source, t.name)) === (await tableDigest(target, t.name)))
      plan.push({ table: t, copy: false, rows }); // filled by a migration, the same on both sides
    else
      throw new ExportRefused(
        `the target database is not empty (table ${t.name} has ${there} rows): export into a new database`,
      );
  }
  return plan;
}

/**
 * Copies the planned rows and the sequences' values, from one snapshot into one transaction; returns how
 * many sequences it set.
 */
async function copyRows(
  source: Database,
  target: Database,
  plan: readonly TablePlan[],
  say: (line: string) => void,
): Promise<number> {
  let sequences = 0;
  await source.transaction(async (src) => {
    await target.transaction(async (dst) => {
      // A target that a server-mode service already started on has the HNSW index: drop it for the load.
      await dropVectorIndexes(dst);
      for (const { table, copy, rows } of plan) {
        if (!copy) continue;
        await setUserTriggers(dst, table.name, { enabled: false });
        let done = 0;
        await streamRowsAsText(src, table, BATCH_ROWS, async (columns, n) => {
          await insertRowsFromText(dst, table, columns);
          done += n;
          if (rows >= 10 * BATCH_ROWS) say(`  ${table.name}: ${done}/${rows}`);
        });
        await setUserTriggers(dst, table.name, { enabled: true });
        say(`${table.name}: ${done} rows`);
      }
      for (const seq of await listSequences(src)) {
        await setSequence(dst, seq, await readSequence(src, seq));
        sequences++;
      }
    });
  });
  return sequences;
}

/**
 * Where the credentials' key is, for the closing advice (never the key itself); `envKeySet` when
 * KB_ENCRYPTION_KEY is set, which then is the key.
 */
export function encryptionKeyAdvice(dataDir: string, opts: { envKeySet: boolean }): string {
  if (opts.envKeySet)
    return 'Credentials are encrypted with KB_ENCRYPTION_KEY: start the server-mode service with the same KB_ENCRYPTION_KEY.';
  const file = encryptionKeyFile(dataDir);
  if (existsSync(file) && readFileSync(file, 'utf8').trim())
    return `Credentials are encrypted with the key in ${file}: start the server-mode service with KB_ENCRYPTION_KEY set to that file's content.`;
  return 'The data directory has no encryption key file (no credentials were ever stored); choose a new KB_ENCRYPTION_KEY.';
}
