/**
 * What the last crawl learnt about a page of an organization (`crawl_pages`, migration 004), keyed like
 * its item: validators for a conditional request, and the page's links and text hash, so that a 304 still
 * feeds discovery and dedupe. Unlike the frontier it outlives the crawl job. Takes a `Queryable`, commits
 * nothing.
 */
import type { Queryable } from '../database.ts';

/** What the previous crawl of a page left: validators for a conditional request, links and text hash. */
export interface PageMemory {
  etag: string | null;
  lastModified: string | null;
  textHash: string;
  links: string[];
}

/**
 * The page's memory, only while its item still exists with these tags: a 304 must not leave a deleted
 * item missing, nor an item with the previous crawl's tags.
 */
export async function getPageMemory(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
  tags: readonly string[],
): Promise<PageMemory | null> {
  const rows = await q.query<PageMemory>(
    `SELECT p.etag, p.last_modified AS "lastModified", p.text_hash AS "textHash", p.links
       FROM crawl_pages p JOIN items i ON i.organization_id = p.organization_id AND i.source_key = p.source_key
      WHERE p.organization_id = $1 AND p.source_key = $2 AND i.tags = $3::text[]`,
    [organizationId, sourceKey, tags],
  );
  return rows[0] ?? null;
}

export async function savePageMemory(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
  m: PageMemory,
): Promise<void> {
  await q.query(
    `INSERT INTO crawl_pages (organization_id, source_key, etag, last_modified, text_hash, links)
     VALUES ($1, $2, $3, $4, $5, $6::text[])
     ON CONFLICT (organization_id, source_key) DO UPDATE SET etag = EXCLUDED.etag,
       last_modified = EXCLUDED.last_modified, text_hash = EXCLUDED.text_hash, links = EXCLUDED.links,
       fetched_at = now()`,
    [organizationId, sourceKey, m.etag, m.lastModified, m.textHash, m.links],
  );
}

export async function deletePageMemory(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
): Promise<void> {
  await q.query('DELETE FROM crawl_pages WHERE organization_id = $1 AND source_key = $2', [
    organizationId,
    sourceKey,
  ]);
}
