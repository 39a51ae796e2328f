/**
 * The worker pool: `concurrency` loops that claim jobs, run their handlers with a heartbeat, and finish,
 * release or fail them; plus periodic tasks (the reaper, schedules). Runs inside the service process
 * (`npm start`, KB_WORKERS loops) or alone (`kb worker`), any number of processes against one database.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database, Queryable } from '../db/database.ts';
import { isAppError } from '../lib/errors.ts';
import { newShortId } from '../lib/ids.ts';
import { type Logger, silentLogger } from '../lib/logger.ts';
import { listenForJobs, type JobListener } from './notify.ts';
import {
  assertLease,
  type ClaimedJob,
  claimJob,
  finishJob,
  heartbeatJob,
  JobLostError,
  reapStaleJobs,
  releaseJob,
} from './queue.ts';
import { JobError, type JobKind, type PeriodicTask } from './registry.ts';
import type { JobSignals } from './signals.ts';

export interface WorkerPoolOptions {
  /** Jobs run at once by this pool. */
  concurrency: number;
  /** The kinds this pool claims and runs. */
  kinds: readonly JobKind[];
  /** How often an idle loop looks for work when nothing wakes it. Default 1 s. */
  pollMs?: number;
  /** Heartbeat period of a running job. Default 2 s. */
  heartbeatMs?: number;
  /** A running job whose heartbeat is older than this is taken back from its (dead) worker. Default 30 s. */
  staleMs?: number;
  /** How often this pool runs the reaper. Default staleMs / 3. */
  reapEveryMs?: number;
  /** Periodic tasks besides the reaper. */
  periodicTasks?: readonly PeriodicTask[];
  /** Postgres URL to LISTEN on for instant wake-ups (server mode); none on PGlite. */
  listenUrl?: string | null;
  log?: Logger;
  /** Default `<host>:<pid>:<random>`. */
  workerId?: string;
  /**
   * How long stop() waits for aborted handlers to return. A handler that ignores its signal is left
   * behind; its job stays `running` until the reaper takes it back. Default 10 s.
   */
  shutdownGraceMs?: number;
  /**
   * Take back every `running` job at start instead of waiting for its heartbeat to go stale. Only right
   * when no other live worker can hold jobs: default true on PGlite (one process owns the database),
   * false on Postgres.
   */
  reclaimOnStart?: boolean;
}

export interface WorkerPool extends JobSignals {
  readonly workerId: string;
  /** Jobs running in this pool now. */
  readonly running: number;
  /**
   * Stop claiming, abort running handlers and put their jobs back to pending (the attempt is not
   * counted), stop timers. Resolves when every loop has ended.
   */
  stop(): Promise<void>;
}

class WorkerShutdownError extends Error {
  override name = 'WorkerShutdownError';
}
class JobCancelledError extends Error {
  override name = 'JobCancelledError';
}

/** The message a failed job shows: handler-described errors as they are, anything else generic. */
function jobErrorMessage(err: unknown): string {
  if (isAppError(err) || err instanceof JobError) return err.message;
  return 'The job failed because of an internal error; it was logged.';
}

/**
 * Wake-ups of idle loops. The sequence number lets a loop notice a wake that came between its claim
 * finding nothing and its wait starting.
 */
function createWakeups(isStopping: () => boolean) {
  let seq = 0;
  const waiters = new Set<() => void>();
  return {
    seq: () => seq,
    wake: () => {
      seq++;
      for (const w of [...waiters]) w();
      waiters.clear();
    },
    wait: (ms: number, seenSeq: number) =>
      new Promise<void>((resolve) => {
        if (isStopping() || seq !== seenSeq) {
          resolve();
          return;
        }
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        waiters.add(done);
      }),
  };
}

/** A job's log lines carry its id and kind. */
function jobLogger(log: Logger, job: ClaimedJob): Logger {
  return {
    info: (o, m) => log.info({ jobId: job.id, kind: job.kind, ...o }, m),
    warn: (o, m) => log.warn({ jobId: job.id, kind: job.kind, ...o }, m),
    error: (o, m) => log.error({ jobId: job.id, kind: job.kind, ...o }, m),
  };
}

/**
 * The job's writes to its own row, one at a time, queued here rather than in the database. Every lease
 * transaction locks the job row first, and so does a heartbeat: a crawl's pages finishing together, or a
 * heartbeat during a sync batch, each held a pool connection while it waited for that lock
 * (docs/benchmarks.md, bench/load.ts, server mode). Queued here they wait without one, and run in the same
 * order. No lease transaction opens another, so the queue cannot wait on itself.
 */
function jobRowQueue(): <T>(fn: () => Promise<T>) => Promise<T> {
  let rowQueue: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const turn = rowQueue.then(fn, fn);
    rowQueue = turn.catch(() => {});
    return turn;
  };
}

/** Renews the job's lease every `heartbeatMs`; a lease found lost aborts the handler. */
function startHeartbeat(
  db: Database,
  job: ClaimedJob,
  run: {
    onJobRow: ReturnType<typeof jobRowQueue>;
    controller: AbortController;
    log: Logger;
    heartbeatMs: number;
  },
): NodeJS.Timeout {
  let beating = false;
  return setInterval(() => {
    if (beating) return;
    beating = true;
    run
      .onJobRow(() => heartbeatJob(db, job.id, job.leaseToken))
      .then((held) => {
        if (!held) run.controller.abort(new JobLostError(job.id));
      })
      .catch((err: unknown) => run.log.warn({ err: (err as Error).message }, 'heartbeat failed'))
      .finally(() => {
        beating = false;
      });
  }, run.heartbeatMs);
}

/** Records how a job that threw ends: released (shutdown, retry), left as the database says, or failed. */
async function settleFailure(
  db: Database,
  job: ClaimedJob,
  signal: AbortSignal,
  err: unknown,
  jobLog: Logger,
): Promise<void> {
  const reason: unknown = signal.aborted ? signal.reason : undefined;
  try {
    if (reason instanceof WorkerShutdownError) {
      await releaseJob(db, job.id, job.leaseToken, { countAttempt: false });
      jobLog.info({}, 'job released for another worker (shutdown)');
      return;
    }
    if (
      reason instanceof JobCancelledError ||
      reason instanceof JobLostError ||
      err instanceof JobLostError
    ) {
      // The database already says what happened (cancelled, or requeued by the reaper).
      jobLog.info({ reason: (reason as Error | undefined)?.name ?? 'lost' }, 'job stopped');
      return;
    }
    if (err instanceof JobError && err.retryable && job.attempt < job.maxAttempts) {
      await releaseJob(db, job.id, job.leaseToken, {
        countAttempt: true,
        delayMs: err.retryAfterMs ?? 1000 * 2 ** job.attempt,
        error: err.message,
      });
      jobLog.warn({ err: err.message }, 'job will be retried');
      return;
    }
    if (!isAppError(err) && !(err instanceof JobError)) jobLog.error({ err }, 'job failed');
    else jobLog.warn({ err: err.message }, 'job failed');
    await finishJob(db, job.id, job.leaseToken, 'failed', jobErrorMessage(err));
  } catch (dbErr) {
    // The job stays `running` without heartbeats; the reaper takes it back.
    jobLog.error({ err: (dbErr as Error).message }, 'could not record the job outcome');
  }
}

/**
 * Runs each periodic task every `everyMs` after its previous run ended (the first soon after start);
 * `clear` stops scheduling, `running` are the runs in progress.
 */
function schedulePeriodicTasks(tasks: readonly PeriodicTask[], log: Logger, isStopping: () => boolean) {
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  const scheduleTask = (task: PeriodicTask, delay: number) => {
    if (isStopping()) return;
    const t = setTimeout(() => {
      timers.delete(t);
      const p = task
        .run()
        .catch((err: unknown) =>
          log.warn({ task: task.name, err: (err as Error).message }, 'periodic task failed'),
        )
        .finally(() => {
          running.delete(p);
          scheduleTask(task, task.everyMs);
        });
      running.add(p);
    }, delay);
    timers.add(t);
  };
  for (const task of tasks) scheduleTask(task, Math.min(task.everyMs, 50));
  return {
    running,
    clear: () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}

/** Takes back the jobs of workers whose heartbeat went stale, and wakes the loops for those requeued. */
function reaperTask(
  db: Database,
  opts: { everyMs: number; staleMs: number; log: Logger; wake: () => void },
): PeriodicTask {
  return {
    name: 'reaper',
    everyMs: opts.everyMs,
    run: async () => {
      const r = await reapStaleJobs(db, opts.staleMs);
      if (r.requeued.length + r.failed.length > 0) opts.log.warn({ ...r }, 'took back jobs of dead workers');
      if (r.requeued.length > 0) opts.wake();
    },
  };
}

/**
 * A PGlite database belongs to this one process: jobs it shows as running were left by a previous run
 * of it that died, so they can be taken back now rather than after staleMs.
 */
function reclaimLeftRunning(db: Database, reclaimOnStart: boolean | undefined, log: Logger): Promise<void> {
  if (!(reclaimOnStart ?? db.kind === 'pglite')) return Promise.resolve();
  return reapStaleJobs(db, 0).then(
    (r) => {
      if (r.requeued.length + r.failed.length > 0)
        log.warn({ ...r }, 'took back jobs left running by a previous run');
    },
    (err: unknown) => log.warn({ err: (err as Error).message }, 'could not take back jobs left running'),
  );
}

/** What a pool hands each job it runs. */
interface JobRunContext {
  handlers: ReadonlyMap<string, JobKind>;
  /** The jobs running in the pool, by id (for cancel and stop). */
  active: Map<number, { controller: AbortController; job: ClaimedJob }>;
  log: Logger;
  heartbeatMs: number;
}

/** Runs one claimed job's handler under a heartbeat, then records how it ended. */
async function runJob(db: Database, job: ClaimedJob, pool: JobRunContext): Promise<void> {
  const { handlers, active, log, heartbeatMs } = pool;
  const controller = new AbortController();
  active.set(job.id, { controller, job });
  const jobLog = jobLogger(log, job);
  const onJobRow = jobRowQueue();
  const heartbeat = startHeartbeat(db, job, { onJobRow, controller, log: jobLog, heartbeatMs });

  const leaseTransaction = <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> =>
    onJobRow(() => db.transaction(fn));
  const withLease = <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> =>
    leaseTransaction(async (tx) => {
      await assertLease(tx, job.id, job.leaseToken);
      return fn(tx);
    });

  try {
    const registered = handlers.get(job.kind);
    if (!registered) throw new JobError(`No handler for jobs of kind "${job.kind}" in this worker.`);
    jobLog.info({ attempt: job.attempt }, 'job started');
    const result = await registered.handler({
      job,
      signal: controller.signal,
      log: jobLog,
      withLease,
      leaseTransaction,
    });
    const finished = await finishJob(db, job.id, job.leaseToken, result.status, result.note ?? null);
    jobLog.info({ status: result.status, recorded: finished }, 'job finished');
  } catch (err) {
    await settleFailure(db, job, controller.signal, err, jobLog);
  } finally {
    clearInterval(heartbeat);
    active.delete(job.id);
  }
}

/** What one of a pool's claim loops needs beyond what each job it runs is handed. */
interface ClaimLoopContext extends JobRunContext {
  kinds: string[];
  workerId: string;
  pollMs: number;
  wakeups: ReturnType<typeof createWakeups>;
  isStopping: () => boolean;
}

/** Claims and runs jobs one at a time until the pool stops; with none queued, waits for a wake or pollMs. */
async function claimLoop(db: Database, pool: ClaimLoopContext): Promise<void> {
  const { kinds, workerId, pollMs, wakeups, isStopping, log } = pool;
  while (!isStopping()) {
    const seen = wakeups.seq();
    let job: ClaimedJob | null = null;
    try {
      job = await claimJob(db, { kinds, workerId });
    } catch (err) {
      if (isStopping()) break;
      log.warn({ err: (err as Error).message }, 'claiming a job failed; retrying');
      await sleep(pollMs);
      continue;
    }
    if (!job) {
      await wakeups.wait(pollMs, seen);
      continue;
    }
    await runJob(db, job, pool);
  }
}

export function startWorkerPool(db: Database, opts: WorkerPoolOptions): WorkerPool {
  const log = opts.log ?? silentLogger;
  const pollMs = opts.pollMs ?? 1_000;
  const heartbeatMs = opts.heartbeatMs ?? 2_000;
  const staleMs = opts.staleMs ?? 30_000;
  const reapEveryMs = opts.reapEveryMs ?? Math.max(100, Math.floor(staleMs / 3));
  const workerId = opts.workerId ?? `${hostname()}:${process.pid}:${newShortId(4)}`;
  const handlers = new Map(opts.kinds.map((k) => [k.kind, k]));
  const kindNames = [...handlers.keys()];

  let stopping = false;
  const isStopping = () => stopping;
  const wakeups = createWakeups(isStopping);
  const wake = wakeups.wake;
  const active = new Map<number, { controller: AbortController; job: ClaimedJob }>();

  const cancel = (ids: readonly number[]) => {
    for (const id of ids) {
      active.get(id)?.controller.abort(new JobCancelledError(`job ${id} was cancelled`));
    }
  };

  const loop = () =>
    claimLoop(db, {
      handlers,
      active,
      log,
      heartbeatMs,
      kinds: kindNames,
      workerId,
      pollMs,
      wakeups,
      isStopping,
    });

  const reaper = reaperTask(db, { everyMs: reapEveryMs, staleMs, log, wake });
  const periodic = schedulePeriodicTasks([reaper, ...(opts.periodicTasks ?? [])], log, isStopping);

  const listenUrl = opts.listenUrl ?? null;
  const listener: JobListener | null = listenUrl
    ? listenForJobs(
        listenUrl,
        (payload) => {
          if (payload === 'wake') wake();
          else if (payload.startsWith('cancel:')) cancel([Number(payload.slice(7))]);
        },
        log,
      )
    : null;

  const reclaimed = reclaimLeftRunning(db, opts.reclaimOnStart, log);
  const loops = Array.from({ length: Math.max(0, opts.concurrency) }, () =>
    reclaimed.then(loop).catch((err: unknown) => log.error({ err }, 'worker loop crashed')),
  );
  log.info({ workerId, concurrency: opts.concurrency, kinds: kindNames }, 'workers started');

  let stopped: Promise<void> | null = null;
  return {
    workerId,
    get running() {
      return active.size;
    },
    wake,
    cancel,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        periodic.clear();
        wake();
        for (const { controller } of active.values())
          controller.abort(new WorkerShutdownError('worker shutting down'));
        const grace = sleep(opts.shutdownGraceMs ?? 10_000, undefined, { ref: false });
        await Promise.race([Promise.all([...loops, ...periodic.running]), grace]);
        await listener?.close();
        log.info({ workerId }, 'workers stopped');
      })();
      return stopped;
    },
  };
}
