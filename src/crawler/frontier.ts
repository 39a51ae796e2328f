/**
 * The crawl job's bookkeeping under its row lock (`lockCrawlJob`): admitting candidates into the frontier
 * against the page budget, and counting refusals and outcomes on the locked row, which the caller writes
 * back with `saveCrawlJob` in the same transaction. Because the budget check and the insert happen under
 * the lock, `total_pages` can never pass the limit however many fetches finish at once. The SQL is in
 * src/db/repositories/crawl-frontier.ts and crawl-jobs.ts; nothing here commits.
 */
import type { Queryable } from '../db/database.ts';
import { insertFrontierRows, knownFrontierKeys } from '../db/repositories/crawl-frontier.ts';
import type { LockedCrawlJob } from '../db/repositories/crawl-jobs.ts';

/** A discovered URL on its way in. */
export interface Candidate {
  url: string;
  key: string;
  depth: number;
}

/** Examples kept per refusal reason. */
export const REFUSAL_SAMPLE_SIZE = 10;

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
 * Decides and inserts candidates in order, under the job lock taken by `lockCrawlJob`: `decide`
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
  const known = await knownFrontierKeys(
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
    await insertFrontierRows(
      q,
      crawlJobId,
      admitted.map((c) => ({ ...c, admitted: true, state: 'queued' as const })),
    );
    job.total += admitted.length;
  }
  return { admitted, refused };
}
