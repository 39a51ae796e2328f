/**
 * A crawl job's frontier (migration 004): one `crawl_frontier` row per URL key the crawl has seen, claimed
 * with SKIP LOCKED, and the `crawl_texts` the crawl has taken (a page whose text another page of the crawl
 * had is a duplicate). Everything takes a `Queryable` and commits nothing; the crawl run opens the
 * transactions under its job's lease. Admission against the page budget takes the crawl job's row lock
 * first (`lockCrawlJob` in crawl-jobs.ts), so a check and the insert after it are one atomic step.
 */
import type { Queryable } from '../database.ts';

/** A URL in the frontier. */
export interface FrontierRow {
  urlKey: string;
  url: string;
  depth: number;
  /** Counts against the budget and becomes an item; false: fetched for its links only. */
  admitted: boolean;
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
export async function claimNextFrontierRow(
  q: Queryable,
  crawlJobId: string,
  key?: string,
): Promise<FrontierRow | null> {
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
