/**
 * The one small database interface the service runs on. Two adapters implement it: PGlite in-process
 * (embedded default) and node-postgres (server mode). Repositories take a `Queryable` and never commit;
 * transactions are opened by routes and jobs with `db.transaction`.
 */
import type { ForegroundGate } from '../lib/foreground-gate.ts';

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Run several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface TransactionOptions {
  /**
   * Embedded mode: the transaction's statements with large parameters (long text, many rows) are answered
   * asynchronously, so the event loop serves other requests while PGlite writes them; small ones stay
   * synchronous calls (pglite-thread.ts). Only for a transaction whose caller keeps no state in memory
   * that other work of this process changes meanwhile: by default PGlite's transactions run without
   * letting other I/O in between their statements, and the crawler's group commits rely on that. Server
   * mode's statements are always asynchronous; it ignores this.
   */
  yieldOnLargeStatements?: boolean;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Embedded mode only: the requests this process is serving, for background writers to give way to
   * (ForegroundGate says why). Server mode has none: there a reader never waits for a writer.
   */
  readonly foreground?: ForegroundGate;
  transaction<T>(fn: (tx: Queryable) => Promise<T>, opts?: TransactionOptions): Promise<T>;
  /**
   * One statement under `SET LOCAL` settings (planner switches, ef_search), in a transaction of its own.
   * Same as a transaction that runs `settings` then `sql`, but one round trip where the adapter can make it
   * one: on PGlite's thread a transaction held open across the main thread's turns would keep every other
   * statement waiting while the main thread serves other requests.
   */
  queryWithSettings<T = Record<string, unknown>>(
    settings: string,
    sql: string,
    params?: readonly unknown[],
  ): Promise<T[]>;
  /** Close cleanly: in-flight work finishes first. */
  close(): Promise<void>;
}

/** {@link Database.queryWithSettings} as a transaction of two statements (adapters with no faster way). */
export function queryWithSettingsInTransaction<T = Record<string, unknown>>(
  db: Pick<Database, 'transaction'>,
  settings: string,
  sql: string,
  params?: readonly unknown[],
): Promise<T[]> {
  return db.transaction(async (tx) => {
    await tx.exec(settings);
    return tx.query<T>(sql, params);
  });
}

export class MissingExtensionError extends Error {
  override name = 'MissingExtensionError';
}
