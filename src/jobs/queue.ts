/**
 * The job queue's SQL: enqueue, claim (FOR UPDATE SKIP LOCKED), heartbeat, finish, release, cancel, and
 * the reaper that takes jobs back from dead workers. Everything takes a `Queryable` and commits nothing;
 * the worker pool (worker.ts) and the routes open the transactions. Same SQL on PGlite and Postgres.
 *
 * Why not pg-boss (which DESIGN.md suggests): its heartbeat has a 10 s floor and its job rows live in its
 * own schema, so the API's job record (connection, counters, failures, the one-active-job-per-connection
 * rule) would be split across two stores that cannot be changed in one transaction with our documents and
 * checkpoints. A claim with SKIP LOCKED, a lease token, a heartbeat column and one reaper UPDATE over our
 * own table give the same guarantees in ~200 lines, testable with second-scale timeouts.
 */
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import type { JobStatus } from '../db/job-status.ts';
import { statusesLeadingTo } from '../db/job-status.ts';
import { leaseRefreshSql } from '../db/repositories/job-lease.ts';

/** The channel of Postgres NOTIFY wake-ups (`wake` or `cancel:<id>`). */
export const JOBS_CHANNEL = 'kb_jobs';

export interface EnqueueOptions {
  kind: string;
  organizationId: string;
  payload?: unknown;
  /** At most one pending or running job per key; enqueue answers null while one exists. */
  dedupeKey?: string | null;
  /** Attempts before a job whose worker keeps dying is failed (the kind's `maxAttempts`). Default 3. */
  maxAttempts?: number;
  /** Do not start before this many milliseconds from now. */
  delayMs?: number;
}

/**
 * Queue a job; returns its id, or null when `dedupeKey` already has a pending or running job (decided by
 * the partial unique index, so two concurrent callers cannot both win). Wakes listening workers when the
 * transaction commits.
 */
export async function enqueueJob(q: Queryable, opts: EnqueueOptions): Promise<number | null> {
  const rows = await q.query<{ id: number }>(
    `INSERT INTO jobs (kind, organization_id, payload, dedupe_key, max_attempts, run_after)
     VALUES ($1, $2, $3::jsonb, $4, $5, now() + ($6::float8 * interval '1 millisecond'))
     ON CONFLICT (dedupe_key) WHERE status IN ('pending', 'running') AND dedupe_key IS NOT NULL DO NOTHING
     RETURNING id`,
    [
      opts.kind,
      opts.organizationId,
      JSON.stringify(opts.payload ?? {}),
      opts.dedupeKey ?? null,
      opts.maxAttempts ?? 3,
      opts.delayMs ?? 0,
    ],
  );
  const id = rows[0]?.id;
  if (id === undefined) return null;
  await q.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, 'wake']);
  return id;
}

/** A job a worker holds. `leaseToken` proves ownership in every later write. */
export interface ClaimedJob {
  id: number;
  kind: string;
  organizationId: string;
  payload: unknown;
  /** 1 on the first run, 2 on the first retry... */
  attempt: number;
  maxAttempts: number;
  leaseToken: string;
}

interface ClaimRow {
  id: number;
  kind: string;
  organization_id: string;
  payload: unknown;
  attempts: number;
  max_attempts: number;
  lease_token: string;
}

/**
 * Claim the oldest due pending job of the given kinds for `workerId`, or null: earliest `run_after`, then
 * the first queued (`seq`; ids are random). SKIP LOCKED lets any number of workers claim at once without
 * waiting on each other or taking the same job.
 */
export async function claimJob(
  q: Queryable,
  opts: { kinds: readonly string[]; workerId: string },
): Promise<ClaimedJob | null> {
  if (opts.kinds.length === 0) return null;
  const rows = await q.query<ClaimRow>(
    `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_token = $2, worker_id = $3,
            heartbeat_at = now(), started_at = COALESCE(started_at, now()), updated_at = now(), error = NULL
      WHERE id = (SELECT id FROM jobs
                   WHERE status = 'pending' AND run_after <= now() AND kind = ANY($1::text[])
                   ORDER BY run_after, seq
                   LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id, kind, organization_id, payload, attempts, max_attempts, lease_token`,
    [opts.kinds, newLeaseToken(), opts.workerId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    kind: r.kind,
    organizationId: r.organization_id,
    payload: r.payload,
    attempt: r.attempts,
    maxAttempts: r.max_attempts,
    leaseToken: r.lease_token,
  };
}

function newLeaseToken(): string {
  return randomBytes(12).toString('base64url');
}

/** Refresh the heartbeat; false when the worker no longer holds the job (cancelled, reaped, deleted). */
export async function heartbeatJob(q: Queryable, id: number, leaseToken: string): Promise<boolean> {
  const rows = await q.query(
    `UPDATE jobs SET heartbeat_at = now() WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING id`,
    [id, leaseToken],
  );
  return rows.length > 0;
}

/** The worker lost the job between two of its writes: it was cancelled, reaped or deleted. */
export class JobLostError extends Error {
  override name = 'JobLostError';
  constructor(id: number) {
    super(`job ${id} is no longer held by this worker (cancelled, or taken back after a missed heartbeat)`);
  }
}

/**
 * Lock the job row in the caller's transaction and check that this lease still holds it; throws
 * {@link JobLostError} otherwise. Everything a handler commits goes after this check, so a cancel or a
 * reap that committed first wins and nothing is written for a job its worker lost.
 */
export async function assertLease(q: Queryable, id: number, leaseToken: string): Promise<void> {
  // One statement (the UPDATE locks the row as FOR UPDATE did): a crawl runs this for every commit of
  // its pages, and on PGlite every statement holds the whole process.
  const rows = await q.query(leaseRefreshSql('$1', '$2'), [id, leaseToken]);
  if (rows.length === 0) throw new JobLostError(id);
}

/** End a held job. False when the lease was lost meanwhile (the job is someone else's business). */
export async function finishJob(
  q: Queryable,
  id: number,
  leaseToken: string,
  status: Extract<JobStatus, 'succeeded' | 'incomplete' | 'failed' | 'cancelled'>,
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
 * Put a held job back (worker shutting down, or a retryable failure). `countAttempt: false` gives the
 * attempt back, for a graceful shutdown that is not the job's fault.
 */
export async function releaseJob(
  q: Queryable,
  id: number,
  leaseToken: string,
  opts: { countAttempt: boolean; delayMs?: number; error?: string | null },
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE jobs SET status = 'pending', lease_token = NULL, worker_id = NULL, heartbeat_at = NULL,
            attempts = attempts - CASE WHEN $3 THEN 0 ELSE 1 END,
            run_after = now() + ($4::float8 * interval '1 millisecond'), error = $5, updated_at = now()
      WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING id`,
    [id, leaseToken, opts.countAttempt, opts.delayMs ?? 0, opts.error ?? null],
  );
  if (rows.length > 0) await q.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, 'wake']);
  return rows.length > 0;
}

/**
 * Cancel pending and running jobs by id (already finished ones are left alone). Returns the ids cancelled;
 * their workers notice at their next write or heartbeat, or at once through {@link JobSignals.cancel}.
 */
export async function cancelJobs(q: Queryable, ids: readonly number[], reason: string): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await q.query<{ id: number }>(
    `UPDATE jobs SET status = 'cancelled', error = $2, finished_at = now(), updated_at = now(), lease_token = NULL
      WHERE id = ANY($1::bigint[]) AND status = ANY($3::text[]) RETURNING id`,
    [ids, reason, statusesLeadingTo('cancelled')],
  );
  const cancelled = rows.map((r) => r.id);
  for (const id of cancelled) await q.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, `cancel:${id}`]);
  return cancelled;
}

export interface ReapResult {
  /** Jobs put back to pending for another attempt. */
  requeued: number[];
  /** Jobs failed because their attempts are used up. */
  failed: number[];
}

/**
 * Take back running jobs whose heartbeat is older than `staleMs` (their worker died or hangs): back to
 * pending while attempts remain, else failed with an error saying why. Uses the database clock, so
 * workers on machines with skewed clocks agree. Safe to run from every worker at once.
 */
export async function reapStaleJobs(q: Queryable, staleMs: number): Promise<ReapResult> {
  const seconds = Math.ceil(staleMs / 1000);
  const rows = await q.query<{ id: number; status: JobStatus }>(
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
    [staleMs, String(seconds)],
  );
  const result: ReapResult = { requeued: [], failed: [] };
  for (const r of rows) (r.status === 'pending' ? result.requeued : result.failed).push(r.id);
  if (result.requeued.length > 0) await q.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, 'wake']);
  return result;
}

/** Fail pending jobs that no handler can run (kind unknown to this build). */
export async function failJob(q: Queryable, id: number, error: string): Promise<boolean> {
  const rows = await q.query(
    `UPDATE jobs SET status = 'failed', error = $2, finished_at = now(), updated_at = now(), lease_token = NULL
      WHERE id = $1 AND status = ANY($3::text[]) RETURNING id`,
    [id, error, statusesLeadingTo('failed')],
  );
  return rows.length > 0;
}

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

/** One job's engine state (for tests, CLIs and handlers that look at other jobs). */
export async function getJob(q: Queryable, id: number): Promise<JobRow | null> {
  const rows = await q.query<JobRow>(
    `SELECT id, kind, organization_id AS "organizationId", status, attempts, max_attempts AS "maxAttempts",
            error, worker_id AS "workerId"
       FROM jobs WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}
