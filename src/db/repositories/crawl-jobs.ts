/**
 * Crawl jobs: the `crawl_jobs` row that extends a job-engine row (`jobs`, kind `crawl`) with the crawl's
 * URL, options and counters, and the API's view of both (seed "Crawl job" plus extensions). The frontier's
 * SQL lives in crawl-frontier.ts, a page's memory across crawls in crawl-pages.ts.
 */
import type { Queryable } from '../database.ts';
import { leaseRefreshSql } from './job-lease.ts';
import type { JobWarning } from './job-warnings.ts';

/** The crawl's options as the caller sent them (defaults applied). */
export interface CrawlOptions {
  includePaths: string[];
  excludePaths: string[];
  allowExternalLinks: boolean;
  /** Link depth from the start URL (0: the start page only); absent: no depth limit. */
  maxDepth?: number;
  tags: string[];
  /** Pages that are lists of links (src/ingest/link-lists.ts) are chunked for search too; absent: they are not. */
  indexListPages?: boolean;
  /** The crawl's pace per host, as asked (within the operator's bounds); absent: the host's default. */
  maxConcurrency?: number;
  delayMs?: number;
}

export type CrawlStatus = 'idle' | 'scraping' | 'completed' | 'failed' | 'cancelled';

/**
 * Why URLs were not crawled (or not stored), with a few examples each, for debugging a crawl. `of`: for
 * pages that stand for another (`duplicate`, `near_duplicate`, `canonical`), the URL each example stands for.
 */
export type RefusalSummary = Record<string, { count: number; sample: string[]; of?: Record<string, string> }>;

/** The crawl job as the API shows it: the seed's fields, then extensions. */
export interface CrawlJobView {
  id: string;
  service_project_id: string;
  url: string;
  status: CrawlStatus;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  /** Distinct pages stored (created, updated, retagged or unchanged): what `limit` counts. */
  completed_pages: number;
  error_message: string | null;
  /** Pages stored plus pages still queued or in flight, at most `limit`; `completed_pages` at the end. */
  total_pages: number;
  tenant_id: string;
  limit: number;
  /** Fetches made (every URL requested, whatever it yielded), at most `fetch_limit`. */
  fetched_pages: number;
  fetch_limit: number;
  includePaths: string[];
  excludePaths: string[];
  allowExternalLinks: boolean;
  maxDepth: number | null;
  tags: string[];
  indexListPages: boolean;
  maxConcurrency: number | null;
  delayMs: number | null;
  /** Finished pages by outcome (`created`, `updated`, `unchanged`, `removed`, `duplicate`, `failed`...). */
  outcomes: Record<string, number>;
  refused: RefusalSummary;
  /** Problems a person can act on (job-warnings.ts), a bounded list; `warning_count` counts them all. */
  warnings: JobWarning[];
  warning_count: number;
}

const ISO = (expr: string) => `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

// The API status follows the engine's: a job that was claimed once and put back (worker restart, reaped)
// is still `scraping` from the caller's point of view; `incomplete` does not occur for crawls.
const VIEW = `SELECT c.id, c.organization_id AS service_project_id, c.url,
    CASE j.status
      WHEN 'pending' THEN CASE WHEN j.started_at IS NULL THEN 'idle' ELSE 'scraping' END
      WHEN 'running' THEN 'scraping'
      WHEN 'succeeded' THEN 'completed'
      WHEN 'incomplete' THEN 'completed'
      ELSE j.status END AS status,
    ${ISO('c.created_at')} AS created_at,
    ${ISO('greatest(c.updated_at, j.updated_at)')} AS updated_at,
    CASE WHEN j.finished_at IS NULL THEN NULL ELSE ${ISO('j.finished_at')} END AS completed_at,
    c.stored_pages AS completed_pages, CASE WHEN j.status = 'failed' THEN j.error ELSE NULL END AS error_message,
    LEAST(c.page_limit, c.stored_pages + c.admitted_pages - c.settled_pages) AS total_pages,
    c.organization_id AS tenant_id, c.page_limit AS "limit", c.fetched_pages, c.fetch_limit, c.options,
    c.outcomes, c.refused, j.warnings, j.warning_count
  FROM crawl_jobs c JOIN jobs j ON j.id = c.job_id`;

interface ViewRow
  extends Omit<
    CrawlJobView,
    | 'includePaths'
    | 'excludePaths'
    | 'allowExternalLinks'
    | 'maxDepth'
    | 'tags'
    | 'maxConcurrency'
    | 'delayMs'
    | 'indexListPages'
  > {
  options: CrawlOptions;
}

function toView(row: ViewRow): CrawlJobView {
  const { options, outcomes, refused, warnings, warning_count, ...rest } = row;
  return {
    ...rest,
    includePaths: options.includePaths ?? [],
    excludePaths: options.excludePaths ?? [],
    allowExternalLinks: options.allowExternalLinks ?? false,
    maxDepth: options.maxDepth ?? null,
    indexListPages: options.indexListPages ?? false,
    tags: options.tags ?? [],
    maxConcurrency: options.maxConcurrency ?? null,
    delayMs: options.delayMs ?? null,
    outcomes,
    refused,
    warnings,
    warning_count,
  };
}

export async function insertCrawlJob(q: Queryable, job: NewCrawlJob): Promise<void> {
  // The engine row's creation order comes along: listings sort by it, never by the (random) job id.
  const rows = await q.query(
    `INSERT INTO crawl_jobs (id, job_id, job_seq, organization_id, url, page_limit, fetch_limit, options)
     SELECT $1::text, id, seq, $3::text, $4::text, $5::int, $6::int, $7::jsonb FROM jobs WHERE id = $2
     RETURNING id`,
    [job.id, job.jobId, job.organizationId, job.url, job.limit, job.fetchLimit, JSON.stringify(job.options)],
  );
  if (rows.length === 0) throw new Error(`crawl job ${job.id} has no engine row`);
}

/** One of the organization's crawl jobs; null for unknown ids and other organizations' jobs alike. */
export async function getCrawlJob(
  q: Queryable,
  organizationId: string,
  id: string,
): Promise<CrawlJobView | null> {
  const rows = await q.query<ViewRow>(`${VIEW} WHERE c.organization_id = $1 AND c.id = $2`, [
    organizationId,
    id,
  ]);
  return rows[0] ? toView(rows[0]) : null;
}

/** The organization's crawl jobs, newest first (in the order they were created), and how many there are. */
export async function listCrawlJobs(
  q: Queryable,
  organizationId: string,
  opts: { limit: number; offset: number },
): Promise<{ jobs: CrawlJobView[]; total: number }> {
  const [count] = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM crawl_jobs WHERE organization_id = $1',
    [organizationId],
  );
  const rows = await q.query<ViewRow>(
    `${VIEW} WHERE c.organization_id = $1 ORDER BY c.job_seq DESC LIMIT $2 OFFSET $3`,
    [organizationId, opts.limit, opts.offset],
  );
  return { jobs: rows.map(toView), total: count!.n };
}

/** The engine job id of an organization's crawl job (for cancel); null when unknown. */
export async function crawlEngineJobId(
  q: Queryable,
  organizationId: string,
  id: string,
): Promise<number | null> {
  const rows = await q.query<{ job_id: number }>(
    'SELECT job_id::float8 AS job_id FROM crawl_jobs WHERE organization_id = $1 AND id = $2',
    [organizationId, id],
  );
  return rows[0]?.job_id ?? null;
}

/** A crawl job as it is recorded, before any page is fetched. */
export type NewCrawlJob = Omit<CrawlJobRecord, 'sitemapsDone'>;

/** What the runner reads when it starts or resumes a crawl. */
export interface CrawlJobRecord {
  id: string;
  jobId: number;
  organizationId: string;
  url: string;
  /** Distinct pages stored at most. */
  limit: number;
  /** Fetches at most. */
  fetchLimit: number;
  options: CrawlOptions;
  sitemapsDone: boolean;
}

export async function getCrawlJobRecord(q: Queryable, id: string): Promise<CrawlJobRecord | null> {
  const rows = await q.query<CrawlJobRecord>(
    `SELECT id, job_id::float8 AS "jobId", organization_id AS "organizationId", url, page_limit AS "limit",
            fetch_limit AS "fetchLimit", options, sitemaps_done AS "sitemapsDone"
       FROM crawl_jobs WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** The crawl job's counters, read under a lock on its row that holds for the rest of the transaction. */
export interface LockedCrawlJob {
  /** URLs admitted into the frontier (fetched for the budget). */
  admitted: number;
  /** Admitted URLs done (fetched, or swept when the budget was spent). */
  settled: number;
  /** Distinct pages stored: never above `limit`. */
  stored: number;
  limit: number;
  /** URLs claimed for fetching: never above `fetchLimit`. */
  fetched: number;
  fetchLimit: number;
  outcomes: Record<string, number>;
  refused: RefusalSummary;
}

/** The counters a commit reads and writes back (saveCrawlJob), as LockedCrawlJob's fields. */
const LOCKED_COLUMNS = `admitted_pages AS admitted, settled_pages AS settled, stored_pages AS stored,
  page_limit AS "limit", fetched_pages AS fetched, fetch_limit AS "fetchLimit", outcomes, refused`;

/**
 * Locks the crawl job's row: admission and counting run under this lock, so the budget check and the
 * insert after it are one step however many pages finish at once (the table's CHECK backs this up).
 */
export async function lockCrawlJob(q: Queryable, crawlJobId: string): Promise<LockedCrawlJob> {
  const rows = await q.query<LockedCrawlJob>(
    `SELECT ${LOCKED_COLUMNS} FROM crawl_jobs WHERE id = $1 FOR UPDATE`,
    [crawlJobId],
  );
  if (!rows[0]) throw new Error(`crawl job ${crawlJobId} does not exist`);
  return rows[0];
}

/**
 * {@link lockCrawlJob} and the job engine's lease check in one statement (job-lease.ts: the heartbeat is
 * refreshed and the job's row locked, as `withLease` does in a statement of its own): null when the lease
 * no longer holds, and then the caller must write nothing. A crawl takes this lock once a commit of its
 * pages, so on PGlite, where every statement holds the whole process, it is one statement a commit fewer.
 */
export async function lockCrawlJobUnderLease(
  q: Queryable,
  crawlJobId: string,
  lease: { jobId: number; token: string },
): Promise<LockedCrawlJob | null> {
  const rows = await q.query<LockedCrawlJob & { leaseHeld: boolean }>(
    `WITH lease AS (${leaseRefreshSql('$2', '$3')})
     SELECT EXISTS (SELECT 1 FROM lease) AS "leaseHeld", ${LOCKED_COLUMNS} FROM crawl_jobs WHERE id = $1 FOR UPDATE`,
    [crawlJobId, lease.jobId, lease.token],
  );
  if (!rows[0]) throw new Error(`crawl job ${crawlJobId} does not exist`);
  const { leaseHeld, ...locked } = rows[0];
  return leaseHeld ? locked : null;
}

/** Writes the locked row's counters back. */
export async function saveCrawlJob(q: Queryable, crawlJobId: string, job: LockedCrawlJob): Promise<void> {
  await q.query(
    `UPDATE crawl_jobs SET admitted_pages = $2, settled_pages = $3, stored_pages = $4, fetched_pages = $5,
            outcomes = $6::jsonb, refused = $7::jsonb, updated_at = now()
      WHERE id = $1`,
    [
      crawlJobId,
      job.admitted,
      job.settled,
      job.stored,
      job.fetched,
      JSON.stringify(job.outcomes),
      JSON.stringify(job.refused),
    ],
  );
}

/** The site's sitemaps were read and their URLs admitted: a resumed attempt skips them. */
export async function markSitemapsDone(q: Queryable, crawlJobId: string): Promise<void> {
  await q.query('UPDATE crawl_jobs SET sitemaps_done = true, updated_at = now() WHERE id = $1', [crawlJobId]);
}

/** Items this crawl stored (or updated) that are not yet searchable: the crawl is searchable when 0. */
export async function crawlItemsPending(
  q: Queryable,
  organizationId: string,
  crawlJobId: string,
): Promise<number> {
  const [row] = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM items
      WHERE crawl_job_id = $2 AND indexing_status = 'pending' AND organization_id = $1`,
    [organizationId, crawlJobId],
  );
  return row?.n ?? 0;
}
