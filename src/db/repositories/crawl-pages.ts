/**
 * What the last crawl learnt about a page of an organization (`crawl_pages`, migrations 004 and 011),
 * keyed like its item: validators for a conditional request, the page's links and text hash, so that a
 * 304 still feeds discovery and dedupe, and its near-duplicate fingerprint (MinHash signature and LSH
 * bands, src/crawler/fingerprint.ts), so pages collapse into it across a resumed crawl and across
 * re-crawls. Unlike the frontier it outlives the crawl job. Takes a `Queryable`, commits nothing.
 */
import type { Queryable } from '../database.ts';

/** What the previous crawl of a page left: validators for a conditional request, links, text hash. */
export interface PageMemory {
  etag: string | null;
  lastModified: string | null;
  textHash: string;
  links: string[];
}

/** A page's memory as a crawl saves it, with its fingerprint. */
interface SavedPageMemory extends PageMemory {
  signature: number[] | null;
  bands: number[] | null;
}

/**
 * The tag on a crawled item that says how many other URLs of the last crawl that reached it had the same
 * or nearly the same text (`variants:12`); the rest of its tags are the crawl's.
 */
const VARIANTS_TAG_PREFIX = 'variants:';

/** The item's tags without the variants tag, in order (SQL over `tags`). */
const TAGS_WITHOUT_VARIANTS = `ARRAY(SELECT t FROM unnest(i.tags) WITH ORDINALITY AS u(t, n)
  WHERE t NOT LIKE '${VARIANTS_TAG_PREFIX}%' ORDER BY n)`;

/**
 * The page's memory, only while its item still exists with these tags (its variants tag aside) and its
 * fingerprint was taken: a 304 must not leave a deleted item missing, nor an item with the previous
 * crawl's tags, nor a page without a fingerprint (pages stored before fingerprints are fetched whole once).
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
      WHERE p.organization_id = $1 AND p.source_key = $2 AND p.signature IS NOT NULL
        AND ${TAGS_WITHOUT_VARIANTS} = $3::text[]`,
    [organizationId, sourceKey, tags],
  );
  return rows[0] ?? null;
}

/**
 * Saves a page's memory after it was stored by crawl `crawlJobId`; returns how many pages this crawl
 * already collapsed into it (0 when none or when the count is an earlier crawl's). With `textKey`, the
 * same statement records the page's text hash as taken by that frontier key in the crawl (`crawl_texts`,
 * kept by the first page that took it), which pages.ts did in a statement of its own.
 */
export async function savePageMemory(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
  crawlJobId: string,
  m: SavedPageMemory,
  textKey?: string,
): Promise<number> {
  const rows = await q.query<{ variants: number }>(
    `WITH text AS (
       INSERT INTO crawl_texts (crawl_job_id, text_hash, url_key) SELECT $9, $5, $10::text WHERE $10::text IS NOT NULL
       ON CONFLICT (crawl_job_id, text_hash) DO NOTHING)
     INSERT INTO crawl_pages AS p (organization_id, source_key, etag, last_modified, text_hash, links, signature, bands)
     VALUES ($1, $2, $3, $4, $5, $6::text[], $7::int[], $8::int[])
     ON CONFLICT (organization_id, source_key) DO UPDATE SET etag = EXCLUDED.etag,
       last_modified = EXCLUDED.last_modified, text_hash = EXCLUDED.text_hash, links = EXCLUDED.links,
       signature = EXCLUDED.signature, bands = EXCLUDED.bands, fetched_at = now()
     RETURNING CASE WHEN p.variants_crawl_job_id = $9 THEN p.variants ELSE 0 END AS variants`,
    [
      organizationId,
      sourceKey,
      m.etag,
      m.lastModified,
      m.textHash,
      m.links,
      m.signature,
      m.bands,
      crawlJobId,
      textKey ?? null,
    ],
  );
  return rows[0]?.variants ?? 0;
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

/**
 * For the rest of transaction `q`: statements look rows up by index rather than scan tables, and a page's
 * bands go into their GIN index through a pending list of at most 64 kB. A crawl's commits read and write
 * a few rows each, by key or by band. On PGlite no statistics are ever gathered (no autovacuum), so the
 * planner guesses: it scanned all of crawl_pages for the band overlap, a cost a page that grows with the
 * pages stored; and the GIN index's pending list, flushed at 4 MB by default, is read whole by every band
 * lookup (at 481 pages, busy machine: 4.7 ms a lookup with the list, 0.15 ms with it flushed).
 */
export async function preferIndexLookups(q: Queryable): Promise<void> {
  await q.query(
    `SELECT set_config('enable_seqscan', 'off', true), set_config('gin_pending_list_limit', '64', true)`,
  );
}

/**
 * Whether the organization has any crawled page's memory: before its first crawl it has none, and a crawl
 * then need not look up the memory of each page it fetches (a statement a page).
 */
export async function hasPageMemories(q: Queryable, organizationId: string): Promise<boolean> {
  const rows = await q.query<{ found: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM crawl_pages WHERE organization_id = $1) AS found',
    [organizationId],
  );
  return rows[0]?.found ?? true;
}

/** A page of the organization whose fingerprint shares a band with the one looked for. */
export interface FingerprintCandidate {
  sourceKey: string;
  url: string;
  signature: number[];
}

/** What a fetched page may be a copy of (see {@link pageTwins}). */
interface PageTwins {
  /** The page of this crawl that took the same text first (its frontier key and URL), if any. */
  sameText: { key: string; url: string } | null;
  /** Near-duplicate candidates: their signatures are compared by the caller. */
  candidates: FingerprintCandidate[];
}

/**
 * Most pages a fetched page is compared with that share only a band of words with it, the latest fetched
 * first. Pages of one template (a documentation site's, a store's) share most of their vocabulary, so
 * their word bands agree across nearly all of them: uncapped, every page was compared with every page
 * stored before it (350 candidates a page at 400 pages of a generated documentation site; 46 ms of CPU a
 * page where 9.4 had been). A variant is found near the page it varies (listed, linked or in the sitemap
 * beside it), and a near-copy shares bands of shingles, which are not capped.
 */
export const MAX_WORD_BAND_CANDIDATES = 32;

/** {@link pageTwins}' candidates by a band of words ($6), capped (see {@link MAX_WORD_BAND_CANDIDATES}). */
const WORD_BAND_CANDIDATES = `
        UNION
        (SELECT p.organization_id, p.source_key, p.signature FROM crawl_pages p
          WHERE p.bands && $6::int[] AND p.organization_id = $3
          ORDER BY p.fetched_at DESC, p.source_key DESC LIMIT ${MAX_WORD_BAND_CANDIDATES})`;

/**
 * In one statement, what a fetched page may be a copy of: the page of crawl `crawlJobId` that took the
 * same text (`crawl_texts`, the frontier's), and the organization's crawled pages (their items still
 * present) whose LSH bands overlap `bands`, but the page `exceptSourceKey` itself. Bands are salted with
 * organization and host, so these are pages of the same host. Both are read whatever the first answers
 * (each is one index lookup): a crawl stores most pages it fetches, and on PGlite every statement holds
 * the whole process.
 */
export async function pageTwins(
  q: Queryable,
  opts: {
    crawlJobId: string;
    organizationId: string;
    textHash: string;
    bands: readonly number[] | null;
    /** Where `bands` turns from bands of shingles to bands of words (all shingles when absent). */
    wordBandsFrom?: number;
    exceptSourceKey: string;
  },
): Promise<PageTwins> {
  const split = opts.wordBandsFrom ?? opts.bands?.length ?? 0;
  const shingleBands = opts.bands ? opts.bands.slice(0, split) : null;
  const wordBands = opts.bands && opts.bands.length > split ? opts.bands.slice(split) : null;
  // The band lookup runs first and alone (a materialized CTE), then joins the few pages it found to their
  // items. Written as one join, the planner (without statistics, see preferIndexLookups) walked every item
  // of the organization and probed crawl_pages for each: 1,539 buffers read at 500 pages stored, 104 now.
  const rows = await q.query<{ near: boolean; key: string; url: string | null; signature: number[] | null }>(
    `SELECT false AS near, t.url_key AS key, f.url, NULL::int[] AS signature FROM crawl_texts t
       LEFT JOIN crawl_frontier f ON f.crawl_job_id = t.crawl_job_id AND f.url_key = t.url_key
      WHERE t.crawl_job_id = $1 AND t.text_hash = $2
     UNION ALL
     (WITH near AS MATERIALIZED (
        SELECT p.organization_id, p.source_key, p.signature FROM crawl_pages p
         WHERE $4::int[] IS NOT NULL AND p.bands && $4::int[]${wordBands ? WORD_BAND_CANDIDATES : ''})
      SELECT true, n.source_key, i.source_url, n.signature
        FROM near n JOIN items i ON i.organization_id = n.organization_id AND i.source_key = n.source_key
       WHERE n.organization_id = $3 AND n.source_key <> $5)`,
    [
      opts.crawlJobId,
      opts.textHash,
      opts.organizationId,
      shingleBands,
      opts.exceptSourceKey,
      ...(wordBands ? [wordBands] : []),
    ],
  );
  let sameText: PageTwins['sameText'] = null;
  const candidates: FingerprintCandidate[] = [];
  for (const r of rows) {
    if (r.near) candidates.push({ sourceKey: r.key, url: r.url ?? '', signature: r.signature ?? [] });
    else sameText ??= { key: r.key, url: r.url ?? `http:${r.key}` };
  }
  return { sameText, candidates };
}

/**
 * The text of the organization's crawled page `sourceKey` (its item's content): what a page the
 * fingerprints take for a variant of it is compared with word by word. Null when it has no item.
 */
export async function crawledPageText(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
): Promise<string | null> {
  const rows = await q.query<{ content: string }>(
    'SELECT content FROM items WHERE organization_id = $1 AND source_key = $2',
    [organizationId, sourceKey],
  );
  return rows[0]?.content ?? null;
}

/**
 * Counts one more page that crawl `crawlJobId` collapsed into the stored page `sourceKey` (a count left
 * by an earlier crawl starts over) and writes the count into its item's variants tag.
 */
export async function countVariant(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
  crawlJobId: string,
): Promise<void> {
  const rows = await q.query<{ variants: number }>(
    `UPDATE crawl_pages SET
       variants = CASE WHEN variants_crawl_job_id = $3 THEN variants + 1 ELSE 1 END,
       variants_crawl_job_id = $3
     WHERE organization_id = $1 AND source_key = $2 RETURNING variants`,
    [organizationId, sourceKey, crawlJobId],
  );
  if (rows[0]) await setVariantsTag(q, organizationId, sourceKey, rows[0].variants);
}

/**
 * Makes the item's variants tag say `variants` (none for 0), leaving its other tags as they are; the
 * item's chunks carry tags for search filters and follow.
 */
export async function setVariantsTag(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
  variants: number,
): Promise<void> {
  const rows = await q.query<{ id: string; tags: string[] }>(
    `UPDATE items i SET tags = CASE WHEN $3::int > 0 THEN ${TAGS_WITHOUT_VARIANTS} || $4::text
                                    ELSE ${TAGS_WITHOUT_VARIANTS} END
      WHERE i.organization_id = $1 AND i.source_key = $2
        AND i.tags IS DISTINCT FROM (CASE WHEN $3::int > 0 THEN ${TAGS_WITHOUT_VARIANTS} || $4::text
                                          ELSE ${TAGS_WITHOUT_VARIANTS} END)
      RETURNING i.id, i.tags`,
    [organizationId, sourceKey, variants, `${VARIANTS_TAG_PREFIX}${variants}`],
  );
  if (rows[0]) await q.query('UPDATE chunks SET tags = $2 WHERE item_id = $1', [rows[0].id, rows[0].tags]);
}

/**
 * A page found unchanged (304) by crawl `crawlJobId`: its variants tag is made to say this crawl's count
 * (a count from an earlier crawl goes).
 */
export async function refreshVariantsTag(
  q: Queryable,
  organizationId: string,
  sourceKey: string,
  crawlJobId: string,
): Promise<void> {
  const rows = await q.query<{ variants: number }>(
    `SELECT CASE WHEN variants_crawl_job_id = $3 THEN variants ELSE 0 END AS variants
       FROM crawl_pages WHERE organization_id = $1 AND source_key = $2`,
    [organizationId, sourceKey, crawlJobId],
  );
  await setVariantsTag(q, organizationId, sourceKey, rows[0]?.variants ?? 0);
}

/**
 * The stored page `fromSourceKey`, taken over by `toSourceKey` in crawl `crawlJobId`, passes on what it
 * stood for: itself and the pages this crawl collapsed into it are counted on `toSourceKey`, whose item's
 * variants tag follows. Run before `fromSourceKey`'s memory is deleted.
 */
export async function moveVariants(
  q: Queryable,
  organizationId: string,
  from: { sourceKey: string; to: string },
  crawlJobId: string,
): Promise<void> {
  const rows = await q.query<{ variants: number }>(
    `WITH moved AS (
       SELECT 1 + COALESCE((SELECT CASE WHEN variants_crawl_job_id = $4 THEN variants ELSE 0 END
                              FROM crawl_pages WHERE organization_id = $1 AND source_key = $2), 0) AS n)
     UPDATE crawl_pages SET
       variants = (CASE WHEN variants_crawl_job_id = $4 THEN variants ELSE 0 END) + (SELECT n FROM moved),
       variants_crawl_job_id = $4
     WHERE organization_id = $1 AND source_key = $3 RETURNING variants`,
    [organizationId, from.sourceKey, from.to, crawlJobId],
  );
  if (rows[0]) await setVariantsTag(q, organizationId, from.to, rows[0].variants);
}
