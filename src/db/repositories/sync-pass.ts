/**
 * The statements of a full sync pass (src/ingest/sync-runner.ts): every item the pass sees is marked with
 * its job id, and once the pass completed, the connection's items it did not see are removed. Each runs in
 * the caller's transaction, under the job's lease.
 */
import type { Queryable } from '../database.ts';

/** Mark items as seen by the pass of `jobId`. */
export async function markItemsSeenByJob(
  q: Queryable,
  jobId: number,
  itemIds: readonly string[],
): Promise<void> {
  await q.query('UPDATE items SET last_sync_job_id = $1 WHERE id = ANY($2::text[])', [jobId, itemIds]);
}

/**
 * A document that failed this time was not seen, but is not gone either: mark the connection's items of
 * `sourceKeys`, and of `anyTableIds` (external ids of failures that name no table) in every table, as seen.
 */
export async function markFailedDocumentsSeen(
  q: Queryable,
  opts: {
    jobId: number;
    organizationId: string;
    connectionId: string;
    sourceKeys: readonly string[];
    anyTableIds: readonly string[];
  },
): Promise<void> {
  await q.query(
    `UPDATE items SET last_sync_job_id = $1
              WHERE organization_id = $2 AND connection_id = $3
                AND (source_key = ANY($4::text[])
                     OR source_key = ANY(SELECT 'integration:' || $3 || ':' || source_table_name || ':' || f.id
                                           FROM unnest($5::text[]) AS f(id)))`,
    [opts.jobId, opts.organizationId, opts.connectionId, opts.sourceKeys, opts.anyTableIds],
  );
}

/** Delete the connection's items the completed pass of `jobId` did not see; returns how many went. */
export async function deleteItemsNotSeenByJob(
  q: Queryable,
  opts: { organizationId: string; connectionId: string; jobId: number },
): Promise<number> {
  const removed = await q.query(
    `DELETE FROM items WHERE organization_id = $1 AND connection_id = $2
              AND last_sync_job_id IS DISTINCT FROM $3 RETURNING id`,
    [opts.organizationId, opts.connectionId, opts.jobId],
  );
  return removed.length;
}
