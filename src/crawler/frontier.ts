/**
 * The crawl job's bookkeeping under its row lock (`lockCrawlJob`): admitting candidates into the frontier
 * within its bound, and counting refusals and outcomes on the locked row, which the caller writes back
 * with `saveCrawlJob` in the same transaction. Because the checks and the writes happen under the lock,
 * neither the frontier's bound nor the page limit (`stored_pages`) can be passed however many fetches
 * finish at once. The SQL is in src/db/repositories/crawl-frontier.ts and crawl-jobs.ts; nothing here
 * commits.
 */
import type { Queryable } from '../db/database.ts';
import {
  insertFrontierRows,
  knownFrontierKeys,
  pushedBackPatterns,
} from '../db/repositories/crawl-frontier.ts';
import type { LockedCrawlJob } from '../db/repositories/crawl-jobs.ts';
import { PUSH_BACK } from './patterns.ts';

/** A discovered URL on its way in. */
export interface Candidate {
  url: string;
  key: string;
  depth: number;
  /** Queue order before any push-back (patterns.ts `basePriority`). */
  priority: number;
  /** patterns.ts `urlPattern`. */
  pattern: string;
}

/** Outcomes that mean "the page is in the knowledge base": what the page limit counts. */
export const STORED_OUTCOMES: ReadonlySet<string> = new Set(['created', 'updated', 'retagged', 'unchanged']);

/** Examples kept per refusal reason. */
export const REFUSAL_SAMPLE_SIZE = 10;

/**
 * Adds refusals to the locked row's summary (counts, and a few example URLs per reason; `of`: the URL
 * the example stands for, for a duplicate, near-duplicate or canonical elsewhere).
 */
export function noteRefusals(
  job: LockedCrawlJob,
  refusals: ReadonlyArray<{ url: string; reason: string; of?: string }>,
): void {
  for (const { url, reason, of } of refusals) {
    const entry = job.refused[reason] ?? { count: 0, sample: [] };
    job.refused[reason] = entry;
    entry.count++;
    if (entry.sample.length < REFUSAL_SAMPLE_SIZE && !entry.sample.includes(url)) {
      entry.sample.push(url);
      if (of !== undefined) entry.of = { ...entry.of, [url]: of };
    }
  }
}

/** Counts a finished page by outcome; admitted pages also count as settled, stored ones as stored. */
export function noteOutcome(job: LockedCrawlJob, outcome: string, page: { admitted: boolean }): void {
  job.outcomes[outcome] = (job.outcomes[outcome] ?? 0) + 1;
  if (!page.admitted) return;
  job.settled++;
  if (STORED_OUTCOMES.has(outcome)) job.stored++;
}

/**
 * Decides and inserts candidates in order, under the job lock taken by `lockCrawlJob`: `decide`
 * sees whether a key is already in the frontier (or earlier in this batch) and how many URLs are
 * admitted so far against the frontier's bound `limit`. Admitted candidates are inserted `queued` (pushed
 * back when their pattern is) and counted in `job.admitted`.
 */
export async function admitUrls(
  q: Queryable,
  crawlJobId: string,
  job: LockedCrawlJob,
  limit: number,
  candidates: readonly Candidate[],
  decide: (
    c: Candidate,
    state: { admitted: number; limit: number; isDuplicate: (key: string) => boolean },
  ) => { ok: true } | { ok: false; reason: string },
): Promise<{ admitted: Candidate[]; refused: Array<{ url: string; reason: string }> }> {
  const known = await knownFrontierKeys(
    q,
    crawlJobId,
    candidates.map((c) => c.key),
  );
  const admitted: Candidate[] = [];
  const refused: Array<{ url: string; reason: string }> = [];
  const state = { admitted: job.admitted, limit, isDuplicate: (key: string) => known.has(key) };
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
    const pushed = await pushedBackPatterns(
      q,
      crawlJobId,
      admitted.map((c) => c.pattern),
    );
    await insertFrontierRows(
      q,
      crawlJobId,
      admitted.map((c) => ({
        ...c,
        priority: c.priority + (pushed.has(c.pattern) ? PUSH_BACK : 0),
        admitted: true,
        state: 'queued' as const,
      })),
    );
    job.admitted += admitted.length;
  }
  return { admitted, refused };
}
