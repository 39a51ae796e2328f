/**
 * A crawl job's frontier (migrations 004, 011): one `crawl_frontier` row per URL key the crawl has seen,
 * claimed by priority with SKIP LOCKED within the job's budget, the `crawl_texts` the crawl has taken (a
 * page whose text another page of the crawl had is a duplicate), and the `crawl_patterns` whose pages
 * keep collapsing. Everything takes a `Queryable` and commits nothing; the crawl run opens the
 * transactions under its job's lease. Admission against the page budget takes the crawl job's row lock
 * first (`lockCrawlJob` in crawl-jobs.ts), so a check and the insert after it are one atomic step.
 */
import type { Queryable } from '../database.ts';
import { leaseHeldSql } from './job-lease.ts';

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
interface NewFrontierRow {
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
 * Rows left mid-fetch go back to the queue: a dead attempt's at the start of the next (only one worker
 * holds a job at a time), and at the end of a drain any a claim made under a lease that was being taken
 * back at that instant. Their fetches were never counted (a fetch is counted when its page commits).
 */
export async function requeueInFlight(q: Queryable, crawlJobId: string): Promise<number> {
  const rows = await q.query(
    `UPDATE crawl_frontier SET state = 'queued' WHERE crawl_job_id = $1 AND state = 'fetching' RETURNING url_key`,
    [crawlJobId],
  );
  return rows.length;
}

const ROW_COLUMNS = `url_key AS "urlKey", url, depth, admitted, pattern`;

/** The job-engine lease a claim is made under (`jobs` row id and lease token). */
export interface ClaimLease {
  jobId: number;
  token: string;
}

/**
 * Takes the next queued URL (lowest priority first, then in discovery order), or a given one, while the
 * fetches counted plus the `inFlight` ones stay under the fetch cap and (for the next URL) the pages
 * stored plus the `inFlight` ones under the page limit: so the limit is exact and no fetch is made that
 * could only be thrown away. `inFlight` counts every page claimed and not yet committed, so counters read
 * while a commit is being written (they are read, not locked) can only be low by pages still counted
 * there. The fetch itself is counted when its page commits (crawl/run.ts), under the crawl job's lock.
 *
 * One statement, outside any transaction, and it takes no lock a page commit holds (the crawl job's row,
 * the job's row): claims go on while pages are committed, and on PGlite a claim is one statement where it
 * was four. The frontier row is taken with SKIP LOCKED and rechecked on its newest version, so two claims
 * never take one row. With `lease`, nothing is taken unless the job's row still names it (`leaseHeld`
 * false then); a lease taken back during the claim itself can leave a row `fetching`, which the run
 * requeues at the end of its drain (`requeueInFlight`).
 */
export async function claimNextFrontierRow(
  q: Queryable,
  crawlJobId: string,
  opts: { key?: string; inFlight?: number; lease?: ClaimLease } = {},
): Promise<{ row: FrontierRow | null; leaseHeld: boolean }> {
  const params: unknown[] = [crawlJobId, opts.key ?? null, opts.inFlight ?? 0];
  let lease = 'SELECT 1';
  if (opts.lease) {
    params.push(opts.lease.jobId, opts.lease.token);
    // The job engine's row: read, not locked, so the claim never waits on a commit.
    lease = leaseHeldSql('$4', '$5');
  }
  const [result] = await q.query<FrontierRow & { leaseHeld: boolean; urlKey: string | null }>(
    `WITH lease AS (${lease}),
     job AS (
       SELECT stored_pages, page_limit, fetched_pages, fetch_limit FROM crawl_jobs WHERE id = $1),
     pick AS (
       SELECT f.url_key FROM crawl_frontier f, job
        WHERE EXISTS (SELECT 1 FROM lease)
          AND f.crawl_job_id = $1 AND f.state = 'queued' AND ($2::text IS NULL OR f.url_key = $2)
          AND job.fetched_pages + $3::int < job.fetch_limit
          AND ($2::text IS NOT NULL OR job.stored_pages + $3::int < job.page_limit)
        ORDER BY f.priority, f.seq LIMIT 1 FOR UPDATE OF f SKIP LOCKED),
     claimed AS (
       UPDATE crawl_frontier f SET state = 'fetching' FROM pick
        WHERE f.crawl_job_id = $1 AND f.url_key = pick.url_key
        RETURNING f.url_key AS "urlKey", f.url, f.depth, f.admitted, f.pattern)
     SELECT EXISTS (SELECT 1 FROM lease) AS "leaseHeld", claimed.*
       FROM (SELECT 1) AS one LEFT JOIN claimed ON true`,
    params,
  );
  const { leaseHeld, ...row } = result!;
  return { row: row.urlKey === null ? null : (row as FrontierRow), leaseHeld };
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

/**
 * Counts one fetched page of `page.pattern`, collapsed or not, and says whether the pattern's push-back
 * changed (`decide` gets the new counts and says whether it is pushed back now). With `page.finish`, the
 * page's frontier row is marked done in the same statement (one statement a page fewer in a crawl's commit).
 */
export async function notePatternPage(
  q: Queryable,
  crawlJobId: string,
  page: {
    pattern: string;
    collapsed: boolean;
    finish?: { key: string; outcome: string; detail: string | null };
  },
  decide: (fetched: number, collapsed: number) => boolean,
): Promise<{ changed: boolean; pushedBack: boolean }> {
  const { pattern, collapsed, finish } = page;
  const params: unknown[] = [crawlJobId, pattern, collapsed ? 1 : 0];
  let done = '';
  if (finish) {
    // The page's frontier row is marked done by the same statement (as finishFrontierRow would).
    params.push(finish.key, finish.outcome, finish.detail);
    done = `WITH done AS (
       UPDATE crawl_frontier SET state = 'done', outcome = $5, detail = $6 WHERE crawl_job_id = $1 AND url_key = $4)
     `;
  }
  const [row] = await q.query<{ fetched: number; collapsed: number; pushed_back: boolean }>(
    `${done}INSERT INTO crawl_patterns AS p (crawl_job_id, pattern, fetched, collapsed) VALUES ($1, $2, 1, $3)
     ON CONFLICT (crawl_job_id, pattern) DO UPDATE SET fetched = p.fetched + 1, collapsed = p.collapsed + $3
     RETURNING fetched, collapsed, pushed_back`,
    params,
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

/**
 * Counts one more collapsed page of `pattern` that was counted as fetched already (a stored page taken
 * over by a later one), and says whether the pattern's push-back changed, as {@link notePatternPage}.
 */
export async function notePatternCollapse(
  q: Queryable,
  crawlJobId: string,
  pattern: string,
  decide: (fetched: number, collapsed: number) => boolean,
): Promise<{ changed: boolean; pushedBack: boolean }> {
  const [row] = await q.query<{ fetched: number; collapsed: number; pushed_back: boolean }>(
    `UPDATE crawl_patterns SET collapsed = collapsed + 1 WHERE crawl_job_id = $1 AND pattern = $2
     RETURNING fetched, collapsed, pushed_back`,
    [crawlJobId, pattern],
  );
  if (!row) return { changed: false, pushedBack: false };
  const pushedBack = decide(row.fetched, row.collapsed);
  if (pushedBack === row.pushed_back) return { changed: false, pushedBack };
  await q.query('UPDATE crawl_patterns SET pushed_back = $3 WHERE crawl_job_id = $1 AND pattern = $2', [
    crawlJobId,
    pattern,
    pushedBack,
  ]);
  return { changed: true, pushedBack };
}

/**
 * The texts frontier key `from` took in crawl `crawlJobId` are `to`'s now (`crawl_texts`): a later fetch of
 * the same text is a duplicate of the page that took `from` over.
 */
export async function moveCrawlTexts(
  q: Queryable,
  crawlJobId: string,
  from: string,
  to: string,
): Promise<void> {
  await q.query('UPDATE crawl_texts SET url_key = $3 WHERE crawl_job_id = $1 AND url_key = $2', [
    crawlJobId,
    from,
    to,
  ]);
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
