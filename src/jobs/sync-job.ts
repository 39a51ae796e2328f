/**
 * The `sync` job kind: one sync or reset of one connection, run by the sync runner; plus queueing
 * (run-sync, schedules) and the schedule task.
 */
import { z } from 'zod';
import { CREDENTIAL_CHECK_HTTP } from '../connectors/context.ts';
import { redactSecrets, sourceName } from '../connectors/credential-check.ts';
import { isSourceHttpError } from '../connectors/http.ts';
import type { AnyConnector, ConnectorContext } from '../connectors/types.ts';
import type { Database, Queryable } from '../db/database.ts';
import { getConnectionById, takeDueSchedules } from '../db/repositories/connections.ts';
import {
  activeSyncJobIds,
  getSyncJobState,
  insertSyncJob,
  type SyncJobType,
  type SyncTrigger,
} from '../db/repositories/sync-jobs.ts';
import { addJobWarnings } from '../db/repositories/job-warnings.ts';
import { isMissingPermission, permissionWarning } from '../ingest/source-permissions.ts';
import { runSync } from '../ingest/sync-runner.ts';
import { AppError, isAppError } from '../lib/errors.ts';
import { OutboundBlockedError, OutboundError } from '../net/outbound.ts';
import { cancelJobs, enqueueJob } from './queue.ts';
import {
  defineJobKind,
  JobError,
  type JobContext,
  type JobKind,
  type JobResult,
  type PeriodicTask,
} from './registry.ts';
import { ConnectionTokens, refreshStoredTokens } from './connection-tokens.ts';
import { expiresSoon, refreshTokenOf } from './oauth-tokens.ts';
import type { JobSignals } from './signals.ts';
import { type SourceHttpSettings, type SourceServices, secretValues } from './source-services.ts';

const SYNC_JOB_KIND = 'sync';

/** Attempts of a sync job whose worker keeps dying before it is failed. */
const SYNC_MAX_ATTEMPTS = 3;

/** Retry budget of a sync's requests: longer than a credential check's, a sync runs in the background. */
export const SYNC_HTTP: SourceHttpSettings = {
  ...CREDENTIAL_CHECK_HTTP,
  maxAttempts: 6,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxWaitMs: 120_000,
  attemptTimeoutMs: 60_000,
  maxResponseBytes: 32 * 1024 * 1024,
};

const payloadSchema = z.object({ connectionId: z.string().min(1) });

/** The dedupe key that makes "one pending or running sync per connection" a database rule. */
function syncDedupeKey(connectionId: string): string {
  return `sync:${connectionId}`;
}

/** A connection whose source type this service no longer has a connector for (run-sync: 400 invalid_request). */
export function sourceUnavailable(type: string): AppError {
  return new AppError(
    'invalid_request',
    `This service has no connector for source type ${type} any more, so the connection cannot sync; disconnect it (its items stay searchable until then).`,
  );
}

/**
 * Queue a sync job for a connection, in the caller's transaction. Returns the job id, or null when the
 * connection already has a pending or running job. Call `JobSignals.wake()` after the commit.
 */
export async function enqueueSyncJob(
  q: Queryable,
  job: { organizationId: string; connectionId: string; jobType: SyncJobType; trigger: SyncTrigger },
): Promise<number | null> {
  const id = await enqueueJob(q, {
    kind: SYNC_JOB_KIND,
    organizationId: job.organizationId,
    payload: { connectionId: job.connectionId },
    dedupeKey: syncDedupeKey(job.connectionId),
    maxAttempts: SYNC_MAX_ATTEMPTS,
  });
  if (id === null) return null;
  await insertSyncJob(q, {
    jobId: id,
    connectionId: job.connectionId,
    jobType: job.jobType,
    trigger: job.trigger,
  });
  return id;
}

/**
 * Cancel a connection's pending and running sync jobs in the caller's transaction (disconnect,
 * deactivate). Returns their ids: pass them to `JobSignals.cancel` after the commit so a worker of this
 * process stops at once.
 */
export async function cancelConnectionSyncs(
  q: Queryable,
  connectionId: string,
  reason: string,
): Promise<number[]> {
  return cancelJobs(q, await activeSyncJobIds(q, connectionId), reason);
}

/** What a sync job needs besides its job context. */
export interface SyncJobDeps {
  db: Database;
  sources: SourceServices;
  /** Wakes the indexer after items were written. */
  itemsChanged: () => void;
}

/** The `sync` job kind. */
export function syncJobKind(deps: SyncJobDeps): JobKind {
  return defineJobKind({
    kind: SYNC_JOB_KIND,
    maxAttempts: SYNC_MAX_ATTEMPTS,
    handler: (ctx) => runSyncJob(deps, ctx),
  });
}

async function runSyncJob(deps: SyncJobDeps, ctx: JobContext): Promise<JobResult> {
  const { job } = ctx;
  const { connectionId } = payloadSchema.parse(job.payload);
  const state = await getSyncJobState(deps.db, job.id);
  const connection = await getConnectionById(deps.db, connectionId);
  if (!state || !connection) return { status: 'cancelled', note: 'The connection was removed.' };
  if (connection.status !== 'active') {
    return { status: 'cancelled', note: 'The connection is inactive; activate it to sync.' };
  }
  const connector = deps.sources.connectorOf(connection.type);
  if (!connector) throw new JobError(sourceUnavailable(connection.type).message);

  const { context, secrets } = await jobConnectorContext(deps, { connector, connection, ctx });
  const mode = state.jobType === 'reset' ? 'full' : 'incremental';
  const cursor = parseCursor(
    connector,
    state.cursor ?? (mode === 'incremental' ? connection.cursor : null),
    ctx,
  );

  try {
    const result = await runSync({
      organizationId: job.organizationId,
      connectionId: connection.id,
      jobId: job.id,
      connector,
      context,
      mode,
      cursor,
      bytesBefore: state.bytesSynced,
      db: deps.db,
      withLease: ctx.withLease,
      onItemsChanged: deps.itemsChanged,
      secrets,
    });
    if (result.failures > 0) {
      return {
        status: 'incomplete',
        note: `${result.failures} document${result.failures === 1 ? '' : 's'} could not be synced; see failures.`,
      };
    }
    return { status: 'succeeded' };
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason ?? err;
    const described = describeSyncError(connector, err, secrets);
    // A permission the whole sync needed: the job fails, and says which permission on its warnings too.
    if (isMissingPermission(err)) {
      const warning = permissionWarning(undefined, described.message);
      await ctx.withLease((tx) => addJobWarnings(tx, job.id, [warning])).catch(() => {});
    }
    throw described;
  }
}

/**
 * The connector's context for a job of a connection: its credentials decrypted (an expiring OAuth token
 * refreshed first), kept current for as long as the job runs. `secrets`: values to scrub from messages.
 */
export async function jobConnectorContext(
  deps: Pick<SyncJobDeps, 'db' | 'sources'>,
  opts: {
    connector: AnyConnector;
    connection: { id: string; credentialsEncrypted: string };
    ctx: JobContext;
  },
): Promise<{ context: ConnectorContext<unknown>; secrets: string[] }> {
  const { connector, connection, ctx } = opts;
  let credentials = deps.sources.decryptCredentials(connection.id, connection.credentialsEncrypted);
  if (connector.oauth?.refresh && expiresSoon(credentials, deps.sources.now())) {
    credentials = await refreshStoredTokens(deps, {
      connector,
      connectionId: connection.id,
      holding: credentials,
      due: (stored) => expiresSoon(stored, deps.sources.now()),
      signal: ctx.signal,
    });
  }
  const secrets = secretValues(credentials);
  // Tokens that expire are kept current inside the sync, however long it runs (connection-tokens.ts).
  const accessTokens =
    connector.oauth?.refresh && refreshTokenOf(credentials)
      ? new ConnectionTokens(deps, {
          connector,
          connectionId: connection.id,
          credentials,
          signal: ctx.signal,
          secrets,
        })
      : undefined;
  const context = deps.sources.syncContext(connector, credentials, {
    signal: ctx.signal,
    log: ctx.log,
    accessTokens,
  });
  return { context, secrets };
}

function parseCursor(connector: AnyConnector, raw: unknown, ctx: JobContext): unknown {
  if (raw === null || raw === undefined) return null;
  const parsed = connector.cursor.safeParse(raw);
  if (parsed.success) return parsed.data;
  // A checkpoint from an older version of the connector: start over rather than fail forever.
  ctx.log.warn({}, 'stored sync checkpoint has an unknown shape; starting from the beginning');
  return null;
}

/** The job's `error`: which source, what went wrong, never a secret. */
function describeSyncError(connector: AnyConnector, err: unknown, secrets: string[]): Error {
  const scrub = (text: string) => redactSecrets(text, secrets);
  if (isAppError(err)) return new AppError(err.code, scrub(err.message));
  if (err instanceof JobError) return new JobError(scrub(err.message), { retryable: err.retryable });
  if (isSourceHttpError(err)) return new JobError(`${sourceName(connector)}: ${scrub(err.message)}.`);
  if (err instanceof OutboundBlockedError || err instanceof OutboundError) {
    return new JobError(`${sourceName(connector)} could not be reached: ${scrub(err.message)}.`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Turn due schedules into ordinary sync jobs (a connection with a job in progress skips this turn).
 * `now` lets tests move the clock.
 */
export async function enqueueDueSyncs(
  db: Database,
  jobs: JobSignals,
  opts: { now?: Date } = {},
): Promise<number[]> {
  const ids = await db.transaction(async (tx) => {
    const due = await takeDueSchedules(tx, { limit: 100, ...(opts.now ? { now: opts.now } : {}) });
    const queued: number[] = [];
    for (const c of due) {
      const id = await enqueueSyncJob(tx, {
        organizationId: c.organizationId,
        connectionId: c.id,
        jobType: 'sync',
        trigger: 'schedule',
      });
      if (id !== null) queued.push(id);
    }
    return queued;
  });
  if (ids.length > 0) jobs.wake();
  return ids;
}

/** The periodic task that turns due schedules into jobs (every worker process runs it). */
export function syncScheduleTask(db: Database, jobs: JobSignals): PeriodicTask {
  return {
    name: 'sync-schedules',
    everyMs: 15_000,
    run: async () => {
      await enqueueDueSyncs(db, jobs);
    },
  };
}
