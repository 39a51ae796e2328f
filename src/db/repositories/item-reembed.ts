import type { Queryable } from '../database.ts';

/**
 * Marks every item of the organization `pending`, so the indexer chunks and embeds it again with the
 * configured model (and the current chunker); it keeps serving the old chunks until each item's new ones
 * replace them. Items already pending keep their lease (a worker may be embedding them now). Returns the
 * organization's items now pending: the ones marked and the ones that were pending already.
 */
export async function markItemsForReembedding(
  q: Queryable,
  organizationId: string,
): Promise<{ marked: number; pending: number }> {
  const [row] = await q.query<{ marked: number; already: number }>(
    `WITH marked AS (
       UPDATE items SET indexing_status = 'pending', indexing_error = NULL, indexing_lease_until = NULL
        WHERE organization_id = $1 AND indexing_status <> 'pending'
        RETURNING 1)
     SELECT (SELECT count(*) FROM marked)::int AS marked,
            (SELECT count(*) FROM items WHERE organization_id = $1 AND indexing_status = 'pending')::int AS already`,
    [organizationId],
  );
  const marked = row?.marked ?? 0;
  return { marked, pending: marked + (row?.already ?? 0) };
}
