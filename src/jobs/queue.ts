/**
 * The job queue: enqueue, claim (FOR UPDATE SKIP LOCKED), heartbeat, finish, release, cancel, and the
 * reaper that takes jobs back from dead workers; each statement is a function of
 * src/db/repositories/jobs.ts. Everything takes a `Queryable` and commits nothing; the worker pool
 * (worker.ts) and the routes open the transactions. Same SQL on PGlite and Postgres.
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
import {
  cancelJobRows,
  claimPendingJob,
  finishRunningJob,
  insertJob,
  type JobRow,
  lockJobLease,
  notifyChannel,
  reapStaleJobRows,
  requeueRunningJob,
  selectJob,
  touchJobHeartbeat,
} from '../db/repositories/jobs.ts';

export type { JobRow };

/** The channel of Postgres NOTIFY wake-ups (`wake` or `cancel:<id>`). */
export const JOBS_CHANNEL = 'kb_jobs';

interface EnqueueOptions {
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
  const id = await insertJob(q, {
    kind: opts.kind,
    organizationId: opts.organizationId,
    payload: JSON.stringify(opts.payload ?? {}),
    dedupeKey: opts.dedupeKey ?? null,
    maxAttempts: opts.maxAttempts ?? 3,
    delayMs: opts.delayMs ?? 0,
  });
  if (id === undefined) return null;
  await notifyChannel(q, JOBS_CHANNEL, 'wake');
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
  const r = await claimPendingJob(q, {
    kinds: opts.kinds,
    leaseToken: newLeaseToken(),
    workerId: opts.workerId,
  });
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
  return touchJobHeartbeat(q, id, leaseToken);
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
  if (!(await lockJobLease(q, id, leaseToken))) throw new JobLostError(id);
}

/** End a held job. False when the lease was lost meanwhile (the job is someone else's business). */
export async function finishJob(
  q: Queryable,
  id: number,
  leaseToken: string,
  status: Extract<JobStatus, 'succeeded' | 'incomplete' | 'failed' | 'cancelled'>,
  error: string | null,
): Promise<boolean> {
  return finishRunningJob(q, id, leaseToken, status, error);
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
  const released = await requeueRunningJob(q, id, leaseToken, {
    countAttempt: opts.countAttempt,
    delayMs: opts.delayMs ?? 0,
    error: opts.error ?? null,
  });
  if (released) await notifyChannel(q, JOBS_CHANNEL, 'wake');
  return released;
}

/**
 * Cancel pending and running jobs by id (already finished ones are left alone). Returns the ids cancelled;
 * their workers notice at their next write or heartbeat, or at once through {@link JobSignals.cancel}.
 */
export async function cancelJobs(q: Queryable, ids: readonly number[], reason: string): Promise<number[]> {
  if (ids.length === 0) return [];
  const cancelled = await cancelJobRows(q, ids, reason);
  for (const id of cancelled) await notifyChannel(q, JOBS_CHANNEL, `cancel:${id}`);
  return cancelled;
}

interface ReapResult {
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
  const rows = await reapStaleJobRows(q, staleMs, seconds);
  const result: ReapResult = { requeued: [], failed: [] };
  for (const r of rows) (r.status === 'pending' ? result.requeued : result.failed).push(r.id);
  if (result.requeued.length > 0) await notifyChannel(q, JOBS_CHANNEL, 'wake');
  return result;
}

/** One job's engine state (for tests, CLIs and handlers that look at other jobs). */
export async function getJob(q: Queryable, id: number): Promise<JobRow | null> {
  return selectJob(q, id);
}
