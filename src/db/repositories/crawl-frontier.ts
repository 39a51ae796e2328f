/**
 * A crawl job's frontier (migrations 004, 011): one `crawl_frontier` row per URL key the crawl has seen,
 * claimed by priority with SKIP LOCKED within the job's budget, the `crawl_texts` the crawl has taken (a
 * page whose text another page of the crawl had is a duplicate), and the `crawl_patterns` whose pages
 * keep collapsing. Everything takes a `Queryable` and commits nothing; the crawl run opens the
 * transactions under its job's lease. Admission against the page budget takes the crawl job's row lock
 * first (`lockCrawlJob` in crawl-jobs.ts), so a check and the insert after it are one atomic step.
 */
import type { Queryable } from '../database.ts';

/** A URL in the frontier. */
export interface FrontierRow {
  urlKey: string;
  url: string;
  depth: number;
  /** Fetched to become an item; false: fetched for its links only. */
  admitted: boolean;
  /** The URL's shape (src/crawler/patterns.ts); '' on rows from before migration 011. */
  pattern: string;
}

/** A frontier row with where it stands: `outcome` and `detail` are set once it is `done`. */
export interface FrontierRowState extends FrontierRow {
  state: string;
  outcome: string | null;
  detail: string | null;
}

/** A row to insert; `key` is the URL key (src/crawler/url.ts). */
export interface NewFrontierRow {
  key: string;
  url: string;
  depth: number;
  admitted: boolean;
  state: 'queued' | 'fetching' | 'done';
  outcome?: string;
  /** Lower is fetched first (default 0). */
  priority?: number;
  pattern?: string;
}

/** The subset of `keys` already in the crawl's frontier. */
export async function knownFrontierKeys(
  q: Queryable,
  crawlJobId: string,
  keys: readonly string[],
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await q.query<{ url_key: string }>(
    'SELECT url_key FROM crawl_frontier WHERE crawl_job_id = $1 AND url_key = ANY($2::text[])',
    [crawlJobId, [...new Set(keys)]],
  );
  return new Set(rows.map((r) => r.url_key));
}

/** Inserts rows in order, skipping keys already present; returns the keys inserted. */
export async function insertFrontierRows(
  q: Queryable,
  crawlJobId: string,
  rows: readonly NewFrontierRow[],
): Promise<string[]> {
  if (rows.length === 0) return [];
  const inserted = await q.query<{ url_key: string }>(
    `INSERT INTO crawl_frontier (crawl_job_id, url_key, url, depth, admitted, state, outcome, priority, pattern)
     SELECT $1, k, u, d, a, s, o, p, pt
       FROM unnest($2::text[], $3::text[], $4::int[], $5::boolean[], $6::text[], $7::text[], $8::int[], $9::text[])
            WITH ORDINALITY AS t(k, u, d, a, s, o, p, pt, n)
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
      rows.map((r) => r.priority ?? 0),
      rows.map((r) => r.pattern ?? ''),
    ],
  );
  return inserted.map((r) => r.url_key);
}

/**
 * Rows a dead attempt left mid-fetch go back to the queue (only one worker holds a job at a time), and
 * their fetches are not counted twice. Takes the crawl job's row lock first, like every writer of it.
 */
export async function requeueInFlight(q: Queryable, crawlJobId: string): Promise<number> {
  await q.query('SELECT 1 FROM crawl_jobs WHERE id = $1 FOR UPDATE', [crawlJobId]);
  const rows = await q.query(
    `UPDATE crawl_frontier SET state = 'queued' WHERE crawl_job_id = $1 AND state = 'fetching' RETURNING url_key`,
    [crawlJobId],
  );
  if (rows.length > 0) {
    await q.query('UPDATE crawl_jobs SET fetched_pages = greatest(0, fetched_pages - $2) WHERE id = $1', [
      crawlJobId,
      rows.length,
    ]);
  }
  return rows.length;
}

const ROW_COLUMNS = `url_key AS "urlKey", url, depth, admitted, pattern`;

/**
 * Takes the next queued URL (lowest priority first, then in discovery order), or a given one, and counts
 * the fetch. Under the crawl job's row lock: nothing is taken once the fetch cap is reached, nor (for
 * the next URL) while the pages stored plus the `inFlight` fetches already reach the page limit - so
 * the limit is exact and no fetch is made that could only be thrown away.
 *
 * One statement, where it was three (a crawl claims once per page, and on PGlite every statement costs
 * the whole process its time): the job's row is locked first (the `job` CTE, which `pick` reads), so
 * the counters the checks read are the latest, and the frontier row is taken with SKIP LOCKED and
 * rechecked on its newest version, so two claims never take one row.
 */
export async function claimNextFrontierRow(
  q: Queryable,
  crawlJobId: string,
  opts: { key?: string; inFlight?: number } = {},
): Promise<FrontierRow | null> {
  const rows = await q.query<FrontierRow>(
    `WITH job AS (
       SELECT stored_pages, page_limit, fetched_pages, fetch_limit FROM crawl_jobs WHERE id = $1 FOR UPDATE),
     pick AS (
       SELECT f.url_key FROM crawl_frontier f, job
        WHERE f.crawl_job_id = $1 AND f.state = 'queued' AND ($2::text IS NULL OR f.url_key = $2)
          AND job.fetched_pages < job.fetch_limit
          AND ($2::text IS NOT NULL OR job.stored_pages + $3::int < job.page_limit)
        ORDER BY f.priority, f.seq LIMIT 1 FOR UPDATE OF f SKIP LOCKED),
     claimed AS (
       UPDATE crawl_frontier f SET state = 'fetching' FROM pick
        WHERE f.crawl_job_id = $1 AND f.url_key = pick.url_key
        RETURNING f.url_key AS "urlKey", f.url, f.depth, f.admitted, f.pattern),
     counted AS (
       UPDATE crawl_jobs SET fetched_pages = fetched_pages + 1 WHERE id = $1 AND EXISTS (SELECT 1 FROM claimed))
     SELECT * FROM claimed`,
    [crawlJobId, opts.key ?? null, opts.inFlight ?? 0],
  );
  return rows[0] ?? null;
}

/**
 * Marks every URL still queued as done with outcome `budget` (the crawl ended at its page limit or fetch
 * cap before reaching them). Returns how many, how many of them were admitted, and a few of their URLs.
 */
export async function sweepQueued(
  q: Queryable,
  crawlJobId: string,
  sampleSize: number,
): Promise<{ count: number; admitted: number; sample: string[] }> {
  const [row] = await q.query<{ count: number; admitted: number; sample: string[] | null }>(
    `WITH swept AS (
       UPDATE crawl_frontier SET state = 'done', outcome = 'budget'
        WHERE crawl_job_id = $1 AND state = 'queued' RETURNING url, admitted, priority, seq)
     SELECT count(*)::int AS count, (count(*) FILTER (WHERE admitted))::int AS admitted,
            (array_agg(url ORDER BY priority, seq))[1:$2::int] AS sample
       FROM swept`,
    [crawlJobId, sampleSize],
  );
  return { count: row?.count ?? 0, admitted: row?.admitted ?? 0, sample: row?.sample ?? [] };
}

export async function getFrontierRow(
  q: Queryable,
  crawlJobId: string,
  key: string,
): Promise<FrontierRowState | null> {
  const rows = await q.query<FrontierRowState>(
    `SELECT ${ROW_COLUMNS}, state, outcome, detail FROM crawl_frontier WHERE crawl_job_id = $1 AND url_key = $2`,
    [crawlJobId, key],
  );
  return rows[0] ?? null;
}

export async function finishFrontierRow(
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

/** How many of the crawl's rows finished with one of `outcomes`. */
export async function countFrontierOutcomes(
  q: Queryable,
  crawlJobId: string,
  outcomes: readonly string[],
): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM crawl_frontier
      WHERE crawl_job_id = $1 AND outcome = ANY($2::text[])`,
    [crawlJobId, outcomes],
  );
  return rows[0]?.n ?? 0;
}

/** The page (key and URL) that took this text in this crawl, if one did. */
export async function crawlTextHolder(
  q: Queryable,
  crawlJobId: string,
  textHash: string,
): Promise<{ key: string; url: string } | null> {
  const rows = await q.query<{ key: string; url: string | null }>(
    `SELECT t.url_key AS key, f.url FROM crawl_texts t
       LEFT JOIN crawl_frontier f ON f.crawl_job_id = t.crawl_job_id AND f.url_key = t.url_key
      WHERE t.crawl_job_id = $1 AND t.text_hash = $2`,
    [crawlJobId, textHash],
  );
  const row = rows[0];
  return row ? { key: row.key, url: row.url ?? `http:${row.key}` } : null;
}

/**
 * Counts one fetched page of `pattern`, collapsed or not, and says whether the pattern's push-back
 * changed (`decide` gets the new counts and says whether it is pushed back now).
 */
export async function notePatternPage(
  q: Queryable,
  crawlJobId: string,
  pattern: string,
  collapsed: boolean,
  decide: (fetched: number, collapsed: number) => boolean,
): Promise<{ changed: boolean; pushedBack: boolean }> {
  const [row] = await q.query<{ fetched: number; collapsed: number; pushed_back: boolean }>(
    `INSERT INTO crawl_patterns AS p (crawl_job_id, pattern, fetched, collapsed) VALUES ($1, $2, 1, $3)
     ON CONFLICT (crawl_job_id, pattern) DO UPDATE SET fetched = p.fetched + 1, collapsed = p.collapsed + $3
     RETURNING fetched, collapsed, pushed_back`,
    [crawlJobId, pattern, collapsed ? 1 : 0],
  );
  const pushedBack = decide(row!.fetched, row!.collapsed);
  if (pushedBack === row!.pushed_back) return { changed: false, pushedBack };
  await q.query('UPDATE crawl_patterns SET pushed_back = $3 WHERE crawl_job_id = $1 AND pattern = $2', [
    crawlJobId,
    pattern,
    pushedBack,
  ]);
  return { changed: true, pushedBack };
}

/** Moves the queued URLs of a pattern by `delta` in the queue's order. */
export async function shiftPatternPriority(
  q: Queryable,
  crawlJobId: string,
  pattern: string,
  delta: number,
): Promise<void> {
  await q.query(
    `UPDATE crawl_frontier SET priority = priority + $3
      WHERE crawl_job_id = $1 AND pattern = $2 AND state = 'queued'`,
    [crawlJobId, pattern, delta],
  );
}

/**
 * Moves queued URLs found again with a better (lower) priority forward - a sitemap listing a page first
 * found as a deep link - leaving pushed-back ones (`pushBack` and above) where they are.
 */
export async function raiseQueuedPriority(
  q: Queryable,
  crawlJobId: string,
  rows: ReadonlyArray<{ key: string; priority: number }>,
  pushBack: number,
): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `UPDATE crawl_frontier f SET priority = t.p
       FROM unnest($2::text[], $3::int[]) AS t(k, p)
      WHERE f.crawl_job_id = $1 AND f.url_key = t.k AND f.state = 'queued' AND f.priority > t.p
        AND f.priority < $4`,
    [crawlJobId, rows.map((r) => r.key), rows.map((r) => r.priority), pushBack],
  );
}

/** The subset of `patterns` pushed back in this crawl. */
export async function pushedBackPatterns(
  q: Queryable,
  crawlJobId: string,
  patterns: readonly string[],
): Promise<Set<string>> {
  if (patterns.length === 0) return new Set();
  const rows = await q.query<{ pattern: string }>(
    `SELECT pattern FROM crawl_patterns WHERE crawl_job_id = $1 AND pushed_back AND pattern = ANY($2::text[])`,
    [crawlJobId, [...new Set(patterns)]],
  );
  return new Set(rows.map((r) => r.pattern));
}

/** Records that this crawl took a page with this text; false when another page of the crawl had it first. */
export async function claimCrawlText(
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
