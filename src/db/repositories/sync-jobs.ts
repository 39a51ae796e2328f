/**
 * Sync jobs: the `sync_jobs` row that extends a job-engine row (`jobs`) with its connection, type,
 * counters, checkpoint and failures, and the API's view of both (API.md "Sync jobs").
 */
import type { JobStatus } from '../job-status.ts';
import type { Queryable } from '../database.ts';
import type { JobWarning } from './job-warnings.ts';

export type SyncJobType = 'sync' | 'reset';
export type SyncTrigger = 'api' | 'schedule';

/** One document that could not be synced, as listed on the job. */
export interface SyncFailure {
  externalId?: string;
  /** The document's table (`support_desk_tickets`...), when the connector said. */
  table?: string;
  message: string;
  retryable: boolean;
}

/** At most this many failures are kept per job (the count keeps going). */
const MAX_LISTED_FAILURES = 100;

/** The sync job as the API shows it: the seed's fields plus our extensions. */
export interface SyncJobView {
  jobId: number;
  status: JobStatus;
  jobType: SyncJobType;
  /** When it started running (epoch ms); when it was queued while still pending. */
  startTime: number;
  connectionId: string;
  lastUpdatedAt: number;
  /** Milliseconds it ran (so far, while running); 0 while pending. */
  duration: number;
  bytesSynced: number;
  rowsSynced: number;
  error?: string;
  trigger: SyncTrigger;
  attempts: number;
  createdAt: number;
  finishedAt: number | null;
  failureCount: number;
  failures: SyncFailure[];
  documents: DocumentCounts;
  /** Problems a person can act on (job-warnings.ts), a bounded list; `warningCount` counts them all. */
  warnings: JobWarning[];
  warningCount: number;
}

/** A sync job's documents so far: yielded by the source, stored (new or changed), unchanged, deleted, failed. */
export interface DocumentCounts {
  seen: number;
  stored: number;
  unchanged: number;
  deleted: number;
  failed: number;
}

const MS = (expr: string) => `floor(extract(epoch FROM ${expr}) * 1000)::float8`;

const VIEW = `SELECT j.id::float8 AS "jobId", j.status, s.job_type AS "jobType",
    ${MS('COALESCE(j.started_at, j.created_at)')} AS "startTime",
    s.connection_id AS "connectionId", ${MS('j.updated_at')} AS "lastUpdatedAt",
    CASE WHEN j.started_at IS NULL THEN 0
         ELSE greatest(0, ${MS('COALESCE(j.finished_at, now())')} - ${MS('j.started_at')}) END AS duration,
    s.bytes_synced::float8 AS "bytesSynced", s.rows_synced::float8 AS "rowsSynced", j.error,
    s.trigger, j.attempts, ${MS('j.created_at')} AS "createdAt",
    CASE WHEN j.finished_at IS NULL THEN NULL ELSE ${MS('j.finished_at')} END AS "finishedAt",
    s.failure_count AS "failureCount", s.failures,
    json_build_object('seen', s.documents_seen::float8, 'stored', s.documents_stored::float8,
      'unchanged', s.documents_unchanged::float8, 'deleted', s.documents_deleted::float8,
      'failed', s.failure_count) AS documents,
    j.warnings, j.warning_count AS "warningCount"
  FROM sync_jobs s JOIN jobs j ON j.id = s.job_id`;

function toView(row: SyncJobView & { error: string | null }): SyncJobView {
  const { error, ...rest } = row;
  return error ? { ...rest, error } : rest;
}

export async function insertSyncJob(
  q: Queryable,
  job: { jobId: number; connectionId: string; jobType: SyncJobType; trigger: SyncTrigger },
): Promise<void> {
  // The engine row's creation order comes along: listings sort by it, never by the (random) id.
  const rows = await q.query(
    `INSERT INTO sync_jobs (job_id, job_seq, connection_id, job_type, trigger)
     SELECT id, seq, $2::text, $3::text, $4::text FROM jobs WHERE id = $1 RETURNING job_id`,
    [job.jobId, job.connectionId, job.jobType, job.trigger],
  );
  if (rows.length === 0) throw new Error(`sync job ${job.jobId} has no engine row`);
}

export async function getSyncJob(
  q: Queryable,
  organizationId: string,
  jobId: number,
): Promise<SyncJobView | null> {
  const rows = await q.query<SyncJobView & { error: string | null }>(
    `${VIEW} WHERE j.organization_id = $1 AND j.id = $2`,
    [organizationId, jobId],
  );
  return rows[0] ? toView(rows[0]) : null;
}

/** A connection's jobs, newest first (by creation: ids are random), and how many there are. */
export async function listSyncJobs(
  q: Queryable,
  connectionId: string,
  opts: { limit: number; offset: number },
): Promise<{ jobs: SyncJobView[]; total: number }> {
  const [count] = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM sync_jobs WHERE connection_id = $1',
    [connectionId],
  );
  const rows = await q.query<SyncJobView & { error: string | null }>(
    `${VIEW} WHERE s.connection_id = $1 ORDER BY s.job_seq DESC LIMIT $2 OFFSET $3`,
    [connectionId, opts.limit, opts.offset],
  );
  return { jobs: rows.map(toView), total: count!.n };
}

/** Ids of the connection's pending or running jobs. */
export async function activeSyncJobIds(q: Queryable, connectionId: string): Promise<number[]> {
  const rows = await q.query<{ id: number }>(
    `SELECT j.id FROM sync_jobs s JOIN jobs j ON j.id = s.job_id
      WHERE s.connection_id = $1 AND j.status IN ('pending', 'running')`,
    [connectionId],
  );
  return rows.map((r) => r.id);
}

/** What a running sync job has to know when it starts or resumes. */
interface SyncJobState {
  connectionId: string;
  jobType: SyncJobType;
  bytesSynced: number;
  rowsSynced: number;
  /** This job's last checkpoint (set when a previous attempt got that far). */
  cursor: unknown;
}

export async function getSyncJobState(q: Queryable, jobId: number): Promise<SyncJobState | null> {
  const rows = await q.query<SyncJobState>(
    `SELECT connection_id AS "connectionId", job_type AS "jobType", bytes_synced::float8 AS "bytesSynced",
            rows_synced::float8 AS "rowsSynced", cursor
       FROM sync_jobs WHERE job_id = $1`,
    [jobId],
  );
  return rows[0] ?? null;
}

/** Record a committed batch's progress (and its checkpoint, when the batch ended at one). */
export async function recordSyncProgress(
  q: Queryable,
  jobId: number,
  p: {
    rowsAdded: number;
    bytesSynced: number;
    failures: SyncFailure[];
    cursor?: unknown;
    /** This batch's documents (failures are counted from `failures`). */
    documents?: Partial<Omit<DocumentCounts, 'failed'>>;
  },
): Promise<void> {
  const hasCursor = p.cursor !== undefined;
  await q.query(
    `UPDATE sync_jobs SET rows_synced = rows_synced + $2, bytes_synced = greatest(bytes_synced, $3),
            failure_count = failure_count + $4,
            failures = CASE WHEN jsonb_array_length(failures) >= $5 THEN failures
                            ELSE failures || (SELECT COALESCE(jsonb_agg(f), '[]'::jsonb) FROM (
                                   SELECT f FROM jsonb_array_elements($6::jsonb) AS f
                                   LIMIT greatest(0, $5 - jsonb_array_length(failures))) AS t) END,
            cursor = CASE WHEN $7 THEN $8::jsonb ELSE cursor END,
            deletions_blocked = deletions_blocked OR $9,
            documents_seen = documents_seen + $10, documents_stored = documents_stored + $11,
            documents_unchanged = documents_unchanged + $12, documents_deleted = documents_deleted + $13
      WHERE job_id = $1`,
    [
      jobId,
      p.rowsAdded,
      p.bytesSynced,
      p.failures.length,
      MAX_LISTED_FAILURES,
      JSON.stringify(p.failures),
      hasCursor,
      JSON.stringify(hasCursor ? (p.cursor ?? null) : null),
      p.failures.some((f) => f.externalId === undefined),
      p.documents?.seen ?? 0,
      p.documents?.stored ?? 0,
      p.documents?.unchanged ?? 0,
      p.documents?.deleted ?? 0,
    ],
  );
}

/** Failures recorded so far by this job (all attempts), and whether one named no document. */
export async function syncJobFailures(
  q: Queryable,
  jobId: number,
): Promise<{ count: number; deletionsBlocked: boolean }> {
  const rows = await q.query<{ count: number; deletionsBlocked: boolean }>(
    'SELECT failure_count AS count, deletions_blocked AS "deletionsBlocked" FROM sync_jobs WHERE job_id = $1',
    [jobId],
  );
  return rows[0] ?? { count: 0, deletionsBlocked: false };
}
