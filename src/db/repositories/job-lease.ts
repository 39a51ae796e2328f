/**
 * The job engine's lease (`jobs.lease_token`, src/jobs/queue.ts) as SQL fragments, for the statements that
 * check it themselves instead of in a statement of their own: every statement about the `jobs` row's lease
 * is built here. A lease holds while the row is `running` under that token.
 */

/** Rows (one) while the lease holds; reads the job's row without locking it. */
export function leaseHeldSql(idParam: string, tokenParam: string): string {
  return `SELECT 1 FROM jobs WHERE id = ${idParam} AND lease_token = ${tokenParam} AND status = 'running'`;
}

/**
 * Refreshes the heartbeat and returns one row while the lease holds. As an UPDATE it locks the job's row
 * for the rest of the transaction, so a cancel or a reap that commits first wins and one that comes later
 * waits: nothing the transaction writes after it belongs to a lost job.
 */
export function leaseRefreshSql(idParam: string, tokenParam: string): string {
  return `UPDATE jobs SET heartbeat_at = now(), updated_at = now()
      WHERE id = ${idParam} AND lease_token = ${tokenParam} AND status = 'running' RETURNING 1`;
}
