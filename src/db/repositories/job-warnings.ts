/**
 * A job's warnings: problems a person can act on that did not fail the job (an unreadable sitemap or
 * robots.txt, a redirect not followed, a page cut or skipped for its size, a permission the source's
 * credentials lack). Kept on the engine row (`jobs.warnings`, `jobs.warning_count`) for every job kind,
 * shown with crawl jobs and sync jobs. Bounded: at most {@link MAX_LISTED_WARNINGS} distinct entries, and
 * at most {@link MAX_LISTED_PER_CODE} of one code, so a site with a thousand over-size pages still leaves
 * room for its robots.txt; a warning repeated (same code, same subject) counts up its entry, and
 * `warning_count` counts every warning, those left off the list included.
 */
import type { Queryable } from '../database.ts';

/** The kinds of warning, stable for API callers. */
export const JOB_WARNING_CODES = [
  'sitemap_unreadable',
  'sitemap_other_host',
  'robots_unreadable',
  'redirect_refused',
  'page_too_large',
  'permission_missing',
  'render_unavailable',
  'render_failed',
  'render_blocked',
] as const;

export type JobWarningCode = (typeof JOB_WARNING_CODES)[number];

/** One warning as the job lists it. */
export interface JobWarning {
  code: JobWarningCode;
  /** What happened and what a person can do, naming the URL or resource (never a secret). */
  message: string;
  /** The URL or resource it concerns: warnings of one code and subject are one entry. */
  subject: string;
  /** How many times it occurred. */
  count: number;
}

/** A warning to record; `count` defaults to 1 (a warning that stands for many URLs says how many). */
export type NewJobWarning = Omit<JobWarning, 'count'> & { count?: number };

export const MAX_LISTED_WARNINGS = 50;
export const MAX_LISTED_PER_CODE = 10;
const MAX_MESSAGE = 500;
const MAX_SUBJECT = 300;

/**
 * `added` folded into `listed`: a known entry (code and subject) counts up, a new one is appended while
 * the bounds allow. Returns the new list and how many warnings were added (for the total).
 */
export function mergeJobWarnings(
  listed: readonly JobWarning[],
  added: readonly NewJobWarning[],
): { warnings: JobWarning[]; added: number } {
  const warnings = listed.map((w) => ({ ...w }));
  let total = 0;
  for (const w of added) {
    const count = Math.max(1, Math.floor(w.count ?? 1));
    total += count;
    const subject = w.subject.slice(0, MAX_SUBJECT);
    const known = warnings.find((e) => e.code === w.code && e.subject === subject);
    if (known) {
      known.count += count;
      continue;
    }
    const ofCode = warnings.filter((e) => e.code === w.code).length;
    if (warnings.length >= MAX_LISTED_WARNINGS || ofCode >= MAX_LISTED_PER_CODE) continue;
    const message = w.message.length > MAX_MESSAGE ? `${w.message.slice(0, MAX_MESSAGE - 1)}…` : w.message;
    warnings.push({ code: w.code, message, subject, count });
  }
  return { warnings, added: total };
}

/**
 * Adds warnings to a job (engine id), in the caller's transaction: the row is read under a lock, so
 * concurrent writers of one job count up the same entries instead of overwriting each other.
 */
export async function addJobWarnings(
  q: Queryable,
  jobId: number,
  warnings: readonly NewJobWarning[],
): Promise<void> {
  if (warnings.length === 0) return;
  const rows = await q.query<{ warnings: JobWarning[] }>(
    'SELECT warnings FROM jobs WHERE id = $1 FOR UPDATE',
    [jobId],
  );
  if (!rows[0]) return;
  const merged = mergeJobWarnings(rows[0].warnings, warnings);
  await q.query('UPDATE jobs SET warnings = $2::jsonb, warning_count = warning_count + $3 WHERE id = $1', [
    jobId,
    JSON.stringify(merged.warnings),
    merged.added,
  ]);
}
