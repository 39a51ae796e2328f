/**
 * The job queue's statements (the engine, src/jobs/queue.ts, says how they are used and why the queue is
 * our own table): insert, claim (FOR UPDATE SKIP LOCKED), heartbeat, finish, release, cancel, the
 * reaper's UPDATE and the wake-up NOTIFY. Each takes a `Queryable` and commits nothing. Same SQL on PGlite
 * and Postgres.
 */
import type { Queryable } from '../database.ts';
import type { JobStatus } from '../job-status.ts';
import { statusesLeadingTo } from '../job-status.ts';
import { leaseRefreshSql } from './job-lease.ts';

/** A job as the queue inserts it. */
interface JobInsert {
  kind: string;
  organizationId: string;
  /** JSON text. */
  payload: string;
  dedupeKey: string | null;
  maxAttempts: number;
  delayMs: number;
}

/**
 * Insert a pending job; its id, or undefined when `dedupeKey` already has a pending or running job
 * (decided by the partial unique index, so two concurrent callers cannot both win).
 */
export async function insertJob(q: Queryable, job: JobInsert): Promise<number | undefined> {
  const rows = await q.query<{ id: number }>(
    `INSERT INTO jobs (kind, organization_id, payload, dedupe_key, max_attempts, run_after)
     VALUES ($1, $2, $3::jsonb, $4, $5, now() + ($6::float8 * interval '1 millisecond'))
     ON CONFLICT (dedupe_key) WHERE status IN ('pending', 'running') AND dedupe_key IS NOT NULL DO NOTHING
     RETURNING id`,
    [job.kind, job.organizationId, job.payload, job.dedupeKey, job.maxAttempts, job.delayMs],
  );
  return rows[0]?.id;
}

/** NOTIFY on `channel` (sent when the transaction commits). */
export async function notifyChannel(q: Queryable, channel: string, message: string): Promise<void> {
  await q.query('SELECT pg_notify($1, $2)', [channel, message]);
}

/** A job row as a claim returns it. */
interface ClaimedJobRow {
  id: number;
  kind: string;
  organization_id: string;
  payload: unknown;
  attempts: number;
  max_attempts: number;
  lease_token: string;
}

/**
 * Claim the oldest due pending job of `kinds` under `leaseToken`: earliest `run_after`, then the first
 * queued (`seq`; ids are random). SKIP LOCKED lets any number of workers claim at once without waiting on
 * each other or taking the same job.
 */
export async function claimPendingJob(
  q: Queryable,
  opts: { kinds: readonly string[]; leaseToken: string; workerId: string },
): Promise<ClaimedJobRow | undefined> {
  const rows = await q.query<ClaimedJobRow>(
    `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_token = $2, worker_id = $3,
            heartbeat_at = now(), started_at = COALESCE(started_at, now()), updated_at = now(), error = NULL
      WHERE id = (SELECT id FROM jobs
                   WHERE status = 'pending' AND run_after <= now() AND kind = ANY($1::text[])
                   ORDER BY run_after, seq
                   LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id, kind, organization_id, payload, attempts, max_attempts, lease_token`,
    [opts.kinds, opts.leaseToken, opts.workerId],
  );
  return rows[0];
}

/** Refresh a running job's heartbeat; false when `leaseToken` no longer holds it. */
export async function touchJobHeartbeat(q: Queryable, id: number, leaseToken: string): Promise<boolean> {
  const rows = await q.query(
    `UPDATE jobs SET heartbeat_at = now() WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING id`,
    [id, leaseToken],
  );
  return rows.length > 0;
}

/**
 * Lock the job row and refresh its lease; false when `leaseToken` no longer holds it. One statement (the
 * UPDATE locks the row as FOR UPDATE did): a crawl runs this for every commit of its pages, and on PGlite
 * every statement holds the whole process.
 */
export async function lockJobLease(q: Queryable, id: number, leaseToken: string): Promise<boolean> {
  const rows = await q.query(leaseRefreshSql('$1', '$2'), [id, leaseToken]);
  return rows.length > 0;
}

/** End a running job held by `leaseToken` with `status`; false when the lease was lost. */
export async function finishRunningJob(
  q: Queryable,
  id: number,
  leaseToken: string,
  status: JobStatus,
  error: string | null,
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE jobs SET status = $3, error = $4, finished_at = now(), updated_at = now(), lease_token = NULL
      WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING id`,
    [id, leaseToken, status, error],
  );
  return rows.length > 0;
}

/**
 * Put a running job held by `leaseToken` back to pending, due in `delayMs`; `countAttempt: false` gives
 * the attempt back. False when the lease was lost.
 */
export async function requeueRunningJob(
  q: Queryable,
  id: number,
  leaseToken: string,
  opts: { countAttempt: boolean; delayMs: number; error: string | null },
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE jobs SET status = 'pending', lease_token = NULL, worker_id = NULL, heartbeat_at = NULL,
            attempts = attempts - CASE WHEN $3 THEN 0 ELSE 1 END,
            run_after = now() + ($4::float8 * interval '1 millisecond'), error = $5, updated_at = now()
      WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING id`,
    [id, leaseToken, opts.countAttempt, opts.delayMs, opts.error],
  );
  return rows.length > 0;
}

/** Cancel the jobs of `ids` that may still be cancelled; returns the ids cancelled. */
export async function cancelJobRows(q: Queryable, ids: readonly number[], reason: string): Promise<number[]> {
  const rows = await q.query<{ id: number }>(
    `UPDATE jobs SET status = 'cancelled', error = $2, finished_at = now(), updated_at = now(), lease_token = NULL
      WHERE id = ANY($1::bigint[]) AND status = ANY($3::text[]) RETURNING id`,
    [ids, reason, statusesLeadingTo('cancelled')],
  );
  return rows.map((r) => r.id);
}

/**
 * Take back running jobs whose heartbeat is older than `staleMs`: back to pending while attempts remain,
 * else failed with an error saying why (`staleSeconds` in its text). Uses the database clock, so workers
 * on machines with skewed clocks agree; SKIP LOCKED makes it safe to run from every worker at once.
 * Returns each job taken back with its new status.
 */
export function reapStaleJobRows(
  q: Queryable,
  staleMs: number,
  staleSeconds: number,
): Promise<Array<{ id: number; status: JobStatus }>> {
  return q.query<{ id: number; status: JobStatus }>(
    `UPDATE jobs SET
        status = CASE WHEN attempts < max_attempts THEN 'pending' ELSE 'failed' END,
        error = CASE WHEN attempts < max_attempts THEN NULL
                     ELSE 'The worker running this job stopped responding (no heartbeat for ' || $2::text ||
                          ' s) on each of its ' || attempts || ' attempts; gave up.' END,
        finished_at = CASE WHEN attempts < max_attempts THEN NULL ELSE now() END,
        lease_token = NULL, worker_id = NULL, heartbeat_at = NULL, run_after = now(), updated_at = now()
      WHERE id IN (SELECT id FROM jobs WHERE status = 'running'
                     -- <=, not <: PGlite's clock counts milliseconds, and a start's reclaim (staleMs 0) must
                     -- also take a job whose last heartbeat read the same now() as this statement.
                     AND heartbeat_at <= now() - ($1::float8 * interval '1 millisecond')
                   FOR UPDATE SKIP LOCKED)
      RETURNING id, status`,
    [staleMs, String(staleSeconds)],
  );
}

/** One job's engine state. */
export interface JobRow {
  id: number;
  kind: string;
  organizationId: string;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  error: string | null;
  workerId: string | null;
}

/** One job's engine state, or null. */
export async function selectJob(q: Queryable, id: number): Promise<JobRow | null> {
  const rows = await q.query<JobRow>(
    `SELECT id, kind, organization_id AS "organizationId", status, attempts, max_attempts AS "maxAttempts",
            error, worker_id AS "workerId"
       FROM jobs WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}
