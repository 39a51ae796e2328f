/**
 * The one small database interface the service runs on. Two adapters implement it: PGlite in-process
 * (embedded default) and node-postgres (server mode). Repositories take a `Queryable` and never commit;
 * transactions are opened by routes and jobs with `db.transaction`.
 */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Run several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Close cleanly: in-flight work finishes first. */
  close(): Promise<void>;
}

export class MissingExtensionError extends Error {
  override name = 'MissingExtensionError';
}
