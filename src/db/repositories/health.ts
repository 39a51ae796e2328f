import type { Queryable } from '../database.ts';

/** Resolves when the database answers a statement; rejects when it cannot be reached. */
export async function pingDatabase(q: Queryable): Promise<void> {
  await q.query('SELECT 1');
}
