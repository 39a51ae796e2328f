/**
 * The job kinds this process can run. A kind is a name, a handler and its retry budget; the worker pool
 * claims only kinds registered here. Built-in kinds register in `builtin.ts` (one line each); tests may
 * register their own.
 *
 * Writing a handler (e.g. the crawler's `crawl` kind):
 * - enqueue with `enqueueJob(tx, { kind: 'crawl', organizationId, payload, dedupeKey })` (queue.ts) in the
 *   same transaction as your own job record, then call `ctx.jobs?.wake()`;
 * - parse `job.payload` with zod in the handler;
 * - write progress with `ctx.withLease(tx => ...)`: it locks the job row and throws `JobLostError` when
 *   the job was cancelled or taken back, so nothing is written for a job this worker no longer holds;
 * - pass `ctx.signal` to every wait and request: it fires on cancel, lost lease and shutdown;
 * - return `{ status: 'succeeded' | 'incomplete' }`, or throw: an `AppError` or `JobError` fails the job
 *   with its message; a `JobError` with `retryable` is retried while attempts remain; anything else fails
 *   it with a generic message (and is logged).
 */
import type { Queryable } from '../db/database.ts';
import type { AppContext } from '../http/context.ts';
import type { ClaimedJob } from './queue.ts';

/** The small pino-compatible logger of the job engine. Never pass secrets to it. */
export interface JobLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

export interface JobContext {
  job: ClaimedJob;
  /** The service's parts (db, config, cipher, connectors, onItemsChanged...). */
  app: AppContext;
  /** Fires when the job is cancelled, taken back (missed heartbeat) or the worker shuts down. */
  signal: AbortSignal;
  log: JobLogger;
  /**
   * Run `fn` in a transaction that first locks the job row and checks this worker still holds it
   * (throws `JobLostError` otherwise); also counts as a heartbeat.
   */
  withLease<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** How a handler ended a job that did not throw. */
export interface JobResult {
  /** `cancelled`: the handler found at start that the job should not run (e.g. its connection is inactive). */
  status: 'succeeded' | 'incomplete' | 'cancelled';
  /** Optional summary kept in the job's `error` column (e.g. how many documents failed). */
  note?: string | null;
}

export type JobHandler = (ctx: JobContext) => Promise<JobResult>;

export interface JobKindOptions {
  /** Attempts before a job whose worker keeps dying (or that keeps failing retryably) is failed. */
  maxAttempts?: number;
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

interface Registered {
  handler: JobHandler;
  options: JobKindOptions;
}

const handlers = new Map<string, Registered>();

/** Register (or replace) the handler of a job kind in this process. */
export function registerJobHandler(kind: string, handler: JobHandler, options: JobKindOptions = {}): void {
  if (!/^[a-z][a-z0-9_-]{0,63}$/.test(kind)) throw new Error(`invalid job kind ${JSON.stringify(kind)}`);
  handlers.set(kind, { handler, options });
}

export function jobHandler(kind: string): Registered | undefined {
  return handlers.get(kind);
}

export function registeredJobKinds(): string[] {
  return [...handlers.keys()];
}

/**
 * Work a worker pool does on a timer besides running jobs (e.g. turning due schedules into jobs). Runs in
 * every worker process; it must be safe to run concurrently (SKIP LOCKED, ON CONFLICT).
 */
export interface PeriodicTask {
  name: string;
  everyMs: number;
  run(app: AppContext): Promise<void>;
}

const periodicTasks = new Map<string, PeriodicTask>();

export function registerPeriodicTask(task: PeriodicTask): void {
  periodicTasks.set(task.name, task);
}

export function registeredPeriodicTasks(): PeriodicTask[] {
  return [...periodicTasks.values()];
}
