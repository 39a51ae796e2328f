/**
 * The crawl frontier in the database (migration 004): one row per URL key a crawl has seen, claimed with
 * SKIP LOCKED, plus the crawl job's counters. Admission runs under a lock on the crawl job's row, so the
 * budget check and the insert are one atomic step: `total_pages` can never pass the limit, however many
 * fetches finish at once (the table's CHECK backs this up). Everything takes a `Queryable` and commits
 * nothing; the runner opens the transactions.
 */
import type { Queryable } from '../db/database.ts';
import type { RefusalSummary } from '../db/repositories/crawl-jobs.ts';

/** A URL in the frontier. */
export interface FrontierRow {
  urlKey: string;
  url: string;
  depth: number;
  /** Counts against the budget and becomes an item; false: fetched for its links only. */
  admitted: boolean;
}

/** A discovered URL on its way in. */
export interface Candidate {
  url: string;
  key: string;
  depth: number;
}

/** The crawl job's row, locked for the rest of the transaction. */
export interface LockedCrawlJob {
  total: number;
  limit: number;
  completed: number;
  outcomes: Record<string, number>;
  refused: RefusalSummary;
}

/** Examples kept per refusal reason. */
export const REFUSAL_SAMPLE_SIZE = 10;

export async function lockCrawlJob(q: Queryable, crawlJobId: string): Promise<LockedCrawlJob> {
  const rows = await q.query<LockedCrawlJob>(
    `SELECT total_pages AS total, page_limit AS "limit", completed_pages AS completed, outcomes, refused
       FROM crawl_jobs WHERE id = $1 FOR UPDATE`,
    [crawlJobId],
  );
  if (!rows[0]) throw new Error(`crawl job ${crawlJobId} does not exist`);
  return rows[0];
}

/** Writes the locked row's counters back (after {@link admitUrls}, {@link noteRefusals}, {@link noteOutcome}). */
export async function saveCrawlJob(q: Queryable, crawlJobId: string, job: LockedCrawlJob): Promise<void> {
  await q.query(
    `UPDATE crawl_jobs SET total_pages = $2, completed_pages = $3, outcomes = $4::jsonb, refused = $5::jsonb,
            updated_at = now()
      WHERE id = $1`,
    [crawlJobId, job.total, job.completed, JSON.stringify(job.outcomes), JSON.stringify(job.refused)],
  );
}

/** Adds refusals to the locked row's summary (counts, and a few example URLs per reason). */
export function noteRefusals(
  job: LockedCrawlJob,
  refusals: ReadonlyArray<{ url: string; reason: string }>,
): void {
  for (const { url, reason } of refusals) {
    const entry = job.refused[reason] ?? { count: 0, sample: [] };
    job.refused[reason] = entry;
    entry.count++;
    if (entry.sample.length < REFUSAL_SAMPLE_SIZE && !entry.sample.includes(url)) entry.sample.push(url);
  }
}

/** Counts a finished page by outcome; admitted pages also count as completed. */
export function noteOutcome(job: LockedCrawlJob, outcome: string, admitted: boolean): void {
  job.outcomes[outcome] = (job.outcomes[outcome] ?? 0) + 1;
  if (admitted) job.completed++;
}

/**
 * Decides and inserts candidates in order, under the job lock taken by {@link lockCrawlJob}: `decide`
 * sees whether a key is already in the frontier (or earlier in this batch) and how many pages are
 * admitted so far. Admitted candidates are inserted `queued` and counted in `job.total`.
 */
export async function admitUrls(
  q: Queryable,
  crawlJobId: string,
  job: LockedCrawlJob,
  candidates: readonly Candidate[],
  decide: (
    c: Candidate,
    state: { admitted: number; limit: number; isDuplicate: (key: string) => boolean },
  ) => { ok: true } | { ok: false; reason: string },
): Promise<{ admitted: Candidate[]; refused: Array<{ url: string; reason: string }> }> {
  const known = await knownKeys(
    q,
    crawlJobId,
    candidates.map((c) => c.key),
  );
  const admitted: Candidate[] = [];
  const refused: Array<{ url: string; reason: string }> = [];
  const state = { admitted: job.total, limit: job.limit, isDuplicate: (key: string) => known.has(key) };
  for (const c of candidates) {
    const verdict = decide(c, state);
    if (verdict.ok) {
      admitted.push(c);
      known.add(c.key);
      state.admitted++;
    } else {
      refused.push({ url: c.url, reason: verdict.reason });
    }
  }
  if (admitted.length > 0) {
    await insertRows(
      q,
      crawlJobId,
      admitted.map((c) => ({ ...c, admitted: true, state: 'queued' as const })),
    );
    job.total += admitted.length;
  }
  return { admitted, refused };
}

async function knownKeys(q: Queryable, crawlJobId: string, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await q.query<{ url_key: string }>(
    'SELECT url_key FROM crawl_frontier WHERE crawl_job_id = $1 AND url_key = ANY($2::text[])',
    [crawlJobId, [...new Set(keys)]],
  );
  return new Set(rows.map((r) => r.url_key));
}

/** Inserts rows, skipping keys already present; returns the keys inserted. */
export async function insertRows(
  q: Queryable,
  crawlJobId: string,
  rows: ReadonlyArray<
    Candidate & { admitted: boolean; state: 'queued' | 'fetching' | 'done'; outcome?: string }
  >,
): Promise<string[]> {
  if (rows.length === 0) return [];
  const inserted = await q.query<{ url_key: string }>(
    `INSERT INTO crawl_frontier (crawl_job_id, url_key, url, depth, admitted, state, outcome)
     SELECT $1, k, u, d, a, s, o
       FROM unnest($2::text[], $3::text[], $4::int[], $5::boolean[], $6::text[], $7::text[])
            WITH ORDINALITY AS t(k, u, d, a, s, o, n)
      ORDER BY n
     ON CONFLICT (crawl_job_id, url_key) DO NOTHING
     RETURNING url_key`,
    [
      crawlJobId,
      rows.map((r) => r.key),
      rows.map((r) => r.url),
      rows.map((r) => r.depth),
      rows.map((r) => r.admitted),
      rows.map((r) => r.state),
      rows.map((r) => r.outcome ?? null),
    ],
  );
  return inserted.map((r) => r.url_key);
}

/** Rows a dead attempt left mid-fetch go back to the queue (only one worker holds a job at a time). */
export async function requeueInFlight(q: Queryable, crawlJobId: string): Promise<number> {
  const rows = await q.query(
    `UPDATE crawl_frontier SET state = 'queued' WHERE crawl_job_id = $1 AND state = 'fetching' RETURNING url_key`,
    [crawlJobId],
  );
  return rows.length;
}

const ROW_COLUMNS = `url_key AS "urlKey", url, depth, admitted`;

/** Takes the next queued URL (shallowest first, then in discovery order), or a given one. */
export async function claimNext(q: Queryable, crawlJobId: string, key?: string): Promise<FrontierRow | null> {
  const rows = await q.query<FrontierRow>(
    `UPDATE crawl_frontier SET state = 'fetching'
      WHERE crawl_job_id = $1 AND url_key = (
        SELECT url_key FROM crawl_frontier
         WHERE crawl_job_id = $1 AND state = 'queued' AND ($2::text IS NULL OR url_key = $2)
         ORDER BY depth, seq LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING ${ROW_COLUMNS}`,
    [crawlJobId, key ?? null],
  );
  return rows[0] ?? null;
}

export async function getRow(
  q: Queryable,
  crawlJobId: string,
  key: string,
): Promise<(FrontierRow & { state: string; outcome: string | null; detail: string | null }) | null> {
  const rows = await q.query<FrontierRow & { state: string; outcome: string | null; detail: string | null }>(
    `SELECT ${ROW_COLUMNS}, state, outcome, detail FROM crawl_frontier WHERE crawl_job_id = $1 AND url_key = $2`,
    [crawlJobId, key],
  );
  return rows[0] ?? null;
}

export async function finishRow(
  q: Queryable,
  crawlJobId: string,
  key: string,
  outcome: string,
  detail: string | null,
): Promise<void> {
  await q.query(
    `UPDATE crawl_frontier SET state = 'done', outcome = $3, detail = $4 WHERE crawl_job_id = $1 AND url_key = $2`,
    [crawlJobId, key, outcome, detail],
  );
}

/** Records that this crawl took a page with this text; false when another page of the crawl had it first. */
export async function claimText(
  q: Queryable,
  crawlJobId: string,
  textHash: string,
  key: string,
): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO crawl_texts (crawl_job_id, text_hash, url_key) VALUES ($1, $2, $3)
     ON CONFLICT (crawl_job_id, text_hash) DO NOTHING RETURNING url_key`,
    [crawlJobId, textHash, key],
  );
  return rows.length > 0;
}

export async function markSitemapsDone(q: Queryable, crawlJobId: string): Promise<void> {
  await q.query('UPDATE crawl_jobs SET sitemaps_done = true, updated_at = now() WHERE id = $1', [crawlJobId]);
}

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
