/**
 * Job statuses and the transitions between them. The same table lives in the database
 * (`job_status_transitions`, migration 003) where a trigger refuses any other change, so no writer (this
 * engine, a crawl runner, a hand-typed UPDATE) can move a finished job back to life.
 *
 * ```
 * pending ──claim──▶ running ──▶ succeeded | incomplete | failed | cancelled
 *    │                  │
 *    └──▶ cancelled     └──▶ pending   (dead worker reaped with attempts left, or released at shutdown)
 *    └──▶ failed        (no handler for its kind, gone before it ran)
 * ```
 */
export const JOB_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'cancelled', 'incomplete'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const JOB_TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  pending: ['running', 'cancelled', 'failed'],
  running: ['succeeded', 'incomplete', 'failed', 'cancelled', 'pending'],
  succeeded: [],
  failed: [],
  cancelled: [],
  incomplete: [],
};

function canTransition(from: JobStatus, to: JobStatus): boolean {
  return JOB_TRANSITIONS[from].includes(to);
}

/** The statuses a job may be in to move to `to` (for `WHERE status = ANY(...)` guards). */
export function statusesLeadingTo(to: JobStatus): JobStatus[] {
  return JOB_STATUSES.filter((from) => canTransition(from, to));
}
