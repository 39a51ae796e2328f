/**
 * The `source-changes` job kind: reads again the documents a source's change notifications named (the
 * pending work the webhook route recorded), through the connector's `syncChanged`, and commits them as an
 * incremental sync does (the sync runner's `applyOps`), removing the work in the same transaction. Plus
 * queueing, and the periodic task that queues a job for every connection with due work (after a crash,
 * a retry's backoff, or an event that came while the connection's job was finishing).
 */
import { z } from 'zod';
import { redactSecrets } from '../connectors/credential-check.ts';
import type { AnyConnector, ChangedDocument, ConnectorContext } from '../connectors/types.ts';
import type { Database, Queryable } from '../db/database.ts';
import { getConnectionById } from '../db/repositories/connections.ts';
import { addJobWarnings } from '../db/repositories/job-warnings.ts';
import {
  connectionsWithDueWork,
  type DocumentWork,
  dueDocumentWork,
  finishDocumentWork,
  markEventsProcessed,
  pruneProcessedEvents,
  retryDocumentWork,
  type WorkDone,
} from '../db/repositories/source-events.ts';
import { applyOps, type Op, searchWordsOf, toOp } from '../ingest/sync-runner.ts';
import { enqueueJob } from './queue.ts';
import {
  defineJobKind,
  type JobContext,
  type JobKind,
  type JobResult,
  type PeriodicTask,
} from './registry.ts';
import type { JobSignals } from './signals.ts';
import { jobConnectorContext, type SyncJobDeps } from './sync-job.ts';

export const SOURCE_CHANGES_JOB_KIND = 'source-changes';

const SOURCE_CHANGES_MAX_ATTEMPTS = 3;

/** Documents read again per commit. */
const WORK_BATCH = 50;

/** Rounds of one job before it ends and leaves the rest to the next (a source that keeps changing). */
const MAX_ROUNDS = 200;

/** A document that could not be read is tried again after 30 s, 60 s, 120 s..., this many times in all. */
const RETRY_DELAY_SECONDS = 30;
const MAX_WORK_ATTEMPTS = 5;

/** Processed events are kept this long (to recognize a vendor's late retry), then forgotten. */
const KEEP_PROCESSED_EVENTS_DAYS = 3;

const payloadSchema = z.object({ connectionId: z.string().min(1) });

function sourceChangesDedupeKey(connectionId: string): string {
  return `source-changes:${connectionId}`;
}

/**
 * Queue the connection's job in the caller's transaction; null when one is already pending or running
 * (a running one reads the new work before it ends, and the periodic task covers the moment it ends).
 * Call `JobSignals.wake()` after the commit.
 */
export async function enqueueSourceChangesJob(
  q: Queryable,
  job: { organizationId: string; connectionId: string },
): Promise<number | null> {
  return enqueueJob(q, {
    kind: SOURCE_CHANGES_JOB_KIND,
    organizationId: job.organizationId,
    payload: { connectionId: job.connectionId },
    dedupeKey: sourceChangesDedupeKey(job.connectionId),
    maxAttempts: SOURCE_CHANGES_MAX_ATTEMPTS,
  });
}

/** The `source-changes` job kind. */
export function sourceChangesJobKind(deps: SyncJobDeps): JobKind {
  return defineJobKind({
    kind: SOURCE_CHANGES_JOB_KIND,
    maxAttempts: SOURCE_CHANGES_MAX_ATTEMPTS,
    handler: (ctx) => runSourceChangesJob(deps, ctx),
  });
}

async function runSourceChangesJob(deps: SyncJobDeps, ctx: JobContext): Promise<JobResult> {
  const { connectionId } = payloadSchema.parse(ctx.job.payload);
  const connection = await getConnectionById(deps.db, connectionId);
  if (!connection) return { status: 'cancelled', note: 'The connection was removed.' };
  // The work stays: the periodic task queues it again once the connection is active.
  if (connection.status !== 'active') return { status: 'cancelled', note: 'The connection is inactive.' };
  const connector = deps.sources.connectorOf(connection.type);
  if (!connector?.syncChanged) {
    await dropAllWork(deps.db, connectionId);
    return {
      status: 'succeeded',
      note: 'This source does not read single documents; the schedule syncs it.',
    };
  }
  const { context, secrets } = await jobConnectorContext(deps, { connector, connection, ctx });
  const run = { connector, context, secrets, organizationId: connection.organizationId, connectionId };
  let failures = 0;
  let lastFailure = '';
  for (let round = 0; round < MAX_ROUNDS; round++) {
    ctx.signal.throwIfAborted();
    const work = await dueDocumentWork(deps.db, connectionId, WORK_BATCH);
    if (work.length === 0) break;
    const read = await readAgain(run, work);
    ctx.signal.throwIfAborted();
    const words = await searchWordsOf(read.ops);
    const rows = await ctx.withLease(async (tx) => {
      const applied = await applyOps(tx, { ...run, mode: 'incremental' }, read.ops, words);
      await finishDocumentWork(tx, connectionId, read.done);
      await retryDocumentWork(tx, connectionId, read.failed, {
        delaySeconds: RETRY_DELAY_SECONDS,
        maxAttempts: MAX_WORK_ATTEMPTS,
      });
      await addJobWarnings(tx, ctx.job.id, applied.warnings);
      await markEventsProcessed(tx, connectionId);
      return applied.rows;
    });
    if (rows > 0) deps.itemsChanged();
    failures += read.failed.length;
    if (read.failed.length > 0) lastFailure = read.failed[read.failed.length - 1]!.error;
  }
  if (failures === 0) return { status: 'succeeded' };
  return {
    status: 'incomplete',
    note: `${failures} changed document${failures === 1 ? '' : 's'} could not be read (tried again later): ${lastFailure}`,
  };
}

interface ChangesRun {
  connector: AnyConnector;
  context: ConnectorContext<unknown>;
  secrets: readonly string[];
}

/** What reading a batch of work again gave: what to commit, the work done, the work to try again. */
interface ReadResult {
  ops: Op[];
  done: WorkDone[];
  failed: Array<WorkDone & { error: string }>;
}

const keyOf = (table: string, externalId: string) => `${table}\u0000${externalId}`;

/**
 * Reads the batch's documents through `syncChanged`. A document that failed retryably is tried again
 * later; one that failed for good is done (the next scheduled sync is the safety net). A failure naming
 * no document, or the whole read failing, puts every document not yet read back.
 */
async function readAgain(run: ChangesRun, work: readonly DocumentWork[]): Promise<ReadResult> {
  const changes: ChangedDocument[] = work.map((w) => ({
    table: w.table,
    externalId: w.externalId,
    deleted: w.deleted,
  }));
  const ops: Op[] = [];
  const answered = new Set<string>();
  const retry = new Map<string, string>();
  let retryRest: string | null = null;
  try {
    for await (const event of run.connector.syncChanged!(run.context, changes)) {
      if (event.kind === 'checkpoint') continue;
      const op = toOp(event, run.secrets);
      if (op.kind === 'failure') {
        const { externalId, table, message, retryable } = op.failure;
        if (externalId === undefined) retryRest = message;
        else {
          const matching = work.filter((w) => w.externalId === externalId && (!table || w.table === table));
          for (const w of matching) {
            answered.add(keyOf(w.table, w.externalId));
            if (retryable) retry.set(keyOf(w.table, w.externalId), message);
          }
        }
        // A failure for good keeps its permission warning, nothing else: the item stays as it was.
        if (!retryable && op.permissionMissing) ops.push(op);
        continue;
      }
      const key =
        op.kind === 'document' ? keyOf(op.doc.table, op.doc.externalId) : keyOf(op.table, op.externalId);
      answered.add(key);
      ops.push(op);
    }
  } catch (err) {
    if (run.context.signal.aborted) throw err;
    retryRest = redactSecrets(err instanceof Error ? err.message : String(err), run.secrets);
  }
  const done: WorkDone[] = [];
  const failed: ReadResult['failed'] = [];
  for (const w of work) {
    const key = keyOf(w.table, w.externalId);
    const error = retry.get(key) ?? (answered.has(key) ? undefined : (retryRest ?? undefined));
    const item = { table: w.table, externalId: w.externalId, revision: w.revision };
    if (error === undefined) done.push(item);
    else failed.push({ ...item, error: error.slice(0, 500) });
  }
  return { ops, done, failed };
}

async function dropAllWork(db: Database, connectionId: string): Promise<void> {
  await db.transaction(async (tx) => {
    for (;;) {
      const work = await dueDocumentWork(tx, connectionId, 1_000);
      if (work.length === 0) break;
      await finishDocumentWork(tx, connectionId, work);
    }
    await markEventsProcessed(tx, connectionId);
  });
}

/** Queues a job for every active connection with due work that has none queued. */
export async function enqueueDueSourceChanges(db: Database, jobs: JobSignals): Promise<number[]> {
  const ids = await db.transaction(async (tx) => {
    const queued: number[] = [];
    for (const c of await connectionsWithDueWork(tx, 100)) {
      const id = await enqueueSourceChangesJob(tx, c);
      if (id !== null) queued.push(id);
    }
    return queued;
  });
  if (ids.length > 0) jobs.wake();
  return ids;
}

/** The periodic task behind {@link enqueueDueSourceChanges}, which also forgets old processed events. */
export function sourceChangesTask(
  db: Database,
  jobs: JobSignals,
  opts: { everyMs?: number } = {},
): PeriodicTask {
  let lastPrune = 0;
  return {
    name: 'source-changes',
    everyMs: opts.everyMs ?? 5_000,
    run: async () => {
      await enqueueDueSourceChanges(db, jobs);
      if (Date.now() - lastPrune > 3_600_000) {
        lastPrune = Date.now();
        await pruneProcessedEvents(db, KEEP_PROCESSED_EVENTS_DAYS);
      }
    },
  };
}
