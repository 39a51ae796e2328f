/**
 * What a job kind is: a name, a handler and its retry budget. The composition root (src/compose.ts)
 * builds the service's kinds (`sync`, `crawl`) with the parts each needs and hands them to the worker
 * pool; tests build pools with kinds of their own. Nothing here is global.
 *
 * Writing a handler:
 * - enqueue with `enqueueJob(tx, { kind, organizationId, payload, dedupeKey, maxAttempts })` (queue.ts)
 *   in the same transaction as your own job record, then call `JobSignals.wake()`;
 * - parse `job.payload` with zod in the handler;
 * - write progress with `ctx.withLease(tx => ...)`: it locks the job row and throws `JobLostError` when
 *   the job was cancelled or taken back, so nothing is written for a job this worker no longer holds;
 * - pass `ctx.signal` to every wait and request: it fires on cancel, lost lease and shutdown;
 * - return `{ status: 'succeeded' | 'incomplete' }`, or throw: an `AppError` or `JobError` fails the job
 *   with its message; a `JobError` with `retryable` is retried while attempts remain; anything else fails
 *   it with a generic message (and is logged).
 */
import type { Queryable } from '../db/database.ts';
import type { Logger } from '../lib/logger.ts';
import type { ClaimedJob } from './queue.ts';

export interface JobContext {
  job: ClaimedJob;
  /** Fires when the job is cancelled, taken back (missed heartbeat) or the worker shuts down. */
  signal: AbortSignal;
  log: Logger;
  /**
   * Run `fn` in a transaction that first locks the job row and checks this worker still holds it
   * (throws `JobLostError` otherwise); also counts as a heartbeat.
   */
  withLease<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Run `fn` in a transaction in turn with this job's other writes to its row (withLease, heartbeats) but
   * without the lease check: for a handler whose own first statement checks the lease
   * (src/db/repositories/job-lease.ts `leaseRefreshSql`), one statement a transaction fewer. `fn` must
   * write nothing unless that check held.
   */
  leaseTransaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** How a handler ended a job that did not throw. */
export interface JobResult {
  /** `cancelled`: the handler found at start that the job should not run (e.g. its connection is inactive). */
  status: 'succeeded' | 'incomplete' | 'cancelled';
  /** Optional summary kept in the job's `error` column (e.g. how many documents failed). */
  note?: string | null;
}

export type JobHandler = (ctx: JobContext) => Promise<JobResult>;

/** A kind of job the worker pool can run. */
export interface JobKind {
  /** Lower-case name stored in `jobs.kind`. */
  kind: string;
  handler: JobHandler;
  /** Attempts before a job whose worker keeps dying (or that keeps failing retryably) is failed. */
  maxAttempts: number;
}

/** A failure the handler describes itself; `message` is shown to API callers, so never put secrets in it. */
export class JobError extends Error {
  override name = 'JobError';
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, opts: { retryable?: boolean; retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.retryable = opts.retryable ?? false;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** Checks a kind's name (it is stored and matched in SQL). */
export function defineJobKind(kind: JobKind): JobKind {
  if (!/^[a-z][a-z0-9_-]{0,63}$/.test(kind.kind))
    throw new Error(`invalid job kind ${JSON.stringify(kind.kind)}`);
  return kind;
}

/**
 * Work a worker pool does on a timer besides running jobs (e.g. turning due schedules into jobs). Runs in
 * every worker process; it must be safe to run concurrently (SKIP LOCKED, ON CONFLICT).
 */
export interface PeriodicTask {
  name: string;
  everyMs: number;
  run(): Promise<void>;
}
