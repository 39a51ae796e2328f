/**
 * The sync runner: drives a connector's `sync()` and turns what it yields into committed items.
 *
 * - Documents, deletions and failures are buffered and committed in batches; a checkpoint ends a batch,
 *   and is saved in the same transaction as everything before it (DESIGN.md rule 5). A crash loses at
 *   most the uncommitted tail, which the retried job re-reads from the last checkpoint; re-storing a
 *   document is an upsert, so nothing is duplicated.
 * - Every batch runs under the job's lease (`withLease`): a job cancelled or taken back meanwhile writes
 *   nothing more.
 * - Deletions of an incremental feed are applied as they come. A full pass (reset) marks every item it
 *   sees with the job id and, only once the pass completed, removes the connection's items it did not
 *   see (DESIGN.md rule 6); an interrupted pass deletes nothing.
 * - A document that fails is listed on the job (`incomplete`), the rest land.
 */
import { redactSecrets } from '../connectors/credential-check.ts';
import type {
  AnyConnector,
  ConnectorContext,
  KnownDocument,
  SourceDocument,
  SyncEvent,
  SyncMode,
} from '../connectors/types.ts';
import type { Queryable } from '../db/database.ts';
import { saveConnectionCursor } from '../db/repositories/connections.ts';
import { listConnectionDocuments } from '../db/repositories/items.ts';
import {
  deleteItemsNotSeenByJob,
  markFailedDocumentsSeen,
  markItemsSeenByJob,
} from '../db/repositories/sync-pass.ts';
import { addJobWarnings, type NewJobWarning } from '../db/repositories/job-warnings.ts';
import { recordSyncProgress, type SyncFailure, syncJobFailures } from '../db/repositories/sync-jobs.ts';
import {
  documentSearchWords,
  type IngestDocument,
  integrationSourceKey,
  legacyIntegrationTombstoneKey,
  removeDocument,
  storeDocument,
} from './hash-skip.ts';
import { isMissingPermission, permissionWarning } from './source-permissions.ts';

interface SyncRunOptions {
  organizationId: string;
  connectionId: string;
  jobId: number;
  connector: AnyConnector;
  /** The connector's context; its `http.bytesReceived` feeds `bytesSynced`, its `signal` cancels. */
  context: ConnectorContext<unknown>;
  mode: SyncMode;
  /** Where to start: this job's last checkpoint, the connection's (incremental), or null. */
  cursor: unknown;
  /** Bytes counted by earlier attempts of this job. */
  bytesBefore: number;
  /** Reads the connection's documents for the connector's `known()` (outside any transaction). */
  db: Queryable;
  /** Runs `fn` in a transaction that first checks the job is still this worker's (JobContext.withLease). */
  withLease<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Called after each commit that changed items (the indexer embeds pending items). */
  onItemsChanged?: (() => void) | undefined;
  /** Secret values to scrub from failure messages. */
  secrets?: readonly string[];
  /** Commit after this many buffered events. Default {@link DEFAULT_SYNC_BATCH}. */
  batchSize?: number;
  /** ...or when the oldest buffered event is this old. Default 1 s. */
  maxBatchAgeMs?: number;
}

interface SyncRunResult {
  /** Documents created, updated or deleted. */
  rowsChanged: number;
  /** Failures recorded by this job, earlier attempts included. */
  failures: number;
  /** Items removed after a full pass because the source no longer has them. */
  removedAfterPass: number;
}

/** One thing a connector yielded, as a batch keeps it (also for change notifications' documents). */
export type Op =
  | { kind: 'document'; doc: SourceDocument }
  | { kind: 'deleted'; externalId: string; table: string }
  | { kind: 'failure'; failure: SyncFailure; permissionMissing: boolean };

const MAX_FAILURE_MESSAGE = 500;

/**
 * Events per commit. A batch's transaction holds the job's row (the lease) and a connection for a few
 * statements per document; 200 held them up to 12 s under load in server mode (docs/benchmarks.md,
 * bench/load.ts), with the job's heartbeat and other requests waiting. A commit per 50 documents costs one
 * more WAL flush each and keeps every batch a quarter as long; a crash still re-reads at most from the
 * last checkpoint.
 */
const DEFAULT_SYNC_BATCH = 50;

export async function runSync(opts: SyncRunOptions): Promise<SyncRunResult> {
  const batchSize = opts.batchSize ?? DEFAULT_SYNC_BATCH;
  const maxBatchAgeMs = opts.maxBatchAgeMs ?? 1_000;
  const { signal } = opts.context;

  let ops: Op[] = [];
  let batchStartedAt = 0;
  let rowsChanged = 0;
  let lastCursor: unknown;

  const flush = async (cursor: unknown) => {
    if (ops.length === 0 && cursor === undefined) return;
    const batch = ops;
    ops = [];
    const changed = await commitBatch(opts, batch, cursor);
    rowsChanged += changed;
    if (changed > 0) opts.onItemsChanged?.();
  };

  const known = () => knownDocuments(opts.db, opts.organizationId, opts.connectionId);
  for await (const event of opts.connector.sync(opts.context, {
    cursor: opts.cursor,
    mode: opts.mode,
    known,
  })) {
    signal.throwIfAborted();
    if (event.kind === 'checkpoint') {
      lastCursor = event.cursor;
      await flush(event.cursor);
      continue;
    }
    if (ops.length === 0) batchStartedAt = Date.now();
    ops.push(toOp(event, opts.secrets ?? []));
    if (ops.length >= batchSize || Date.now() - batchStartedAt >= maxBatchAgeMs) await flush(undefined);
  }
  signal.throwIfAborted();
  await flush(undefined);

  const { removedAfterPass, failures } = await finishPass(opts, lastCursor);
  rowsChanged += removedAfterPass;
  if (removedAfterPass > 0) opts.onItemsChanged?.();
  return { rowsChanged, failures, removedAfterPass };
}

/** What a connector yielded, as the batch keeps it (a failure's message scrubbed of secrets and cut short). */
export function toOp(
  event: Exclude<SyncEvent<unknown>, { kind: 'checkpoint' }>,
  secrets: readonly string[],
): Op {
  switch (event.kind) {
    case 'document':
      return { kind: 'document', doc: event.doc };
    case 'deleted':
      return { kind: 'deleted', externalId: event.externalId, table: event.table };
    case 'failure':
      return {
        kind: 'failure',
        failure: {
          ...(event.externalId === undefined ? {} : { externalId: event.externalId }),
          ...(event.table === undefined ? {} : { table: event.table }),
          message: failureMessage(event.error, secrets),
          retryable: event.retryable,
        },
        permissionMissing: isMissingPermission(event.error),
      };
  }
}

/**
 * One batch in one transaction under the job's lease, with the checkpoint that ended it (if any), so a
 * crash keeps everything up to a checkpoint or nothing after it. Returns the items created, updated or
 * deleted.
 */
async function commitBatch(opts: SyncRunOptions, batch: Op[], cursor: unknown): Promise<number> {
  const full = opts.mode === 'full';
  const words = await searchWordsOf(batch);
  return opts.withLease(async (tx) => {
    const applied = await applyOps(tx, opts, batch, words);
    if (full) {
      await markItemsSeenByJob(tx, opts.jobId, applied.seen);
      await keepFailedDocuments(tx, opts, applied.failures);
    }
    await recordSyncProgress(tx, opts.jobId, {
      rowsAdded: applied.rows,
      bytesSynced: opts.bytesBefore + opts.context.http.bytesReceived,
      failures: applied.failures,
      documents: applied.documents,
      ...(cursor === undefined ? {} : { cursor }),
    });
    await addJobWarnings(tx, opts.jobId, applied.warnings);
    // Incremental progress is real progress: the next sync may start here even if this job fails later.
    // A full pass's position only means something to this pass, so the connection gets it at the end.
    if (cursor !== undefined && !full) await saveConnectionCursor(tx, opts.connectionId, cursor);
    return applied.rows;
  });
}

/** The search words of a batch's documents, split before the lease's transaction opens (see documentSearchWords). */
export async function searchWordsOf(batch: readonly Op[]): Promise<Map<Op, string>> {
  const words = new Map<Op, string>();
  for (const op of batch) if (op.kind === 'document') words.set(op, await documentSearchWords(op.doc));
  return words;
}

/** Stores the batch's documents, removes its deletions and collects its failures, in the caller's transaction. */
export async function applyOps(
  tx: Queryable,
  opts: Pick<SyncRunOptions, 'organizationId' | 'connectionId' | 'mode'>,
  batch: readonly Op[],
  words: Map<Op, string>,
) {
  const full = opts.mode === 'full';
  let rows = 0;
  const documents = { seen: 0, stored: 0, unchanged: 0, deleted: 0 };
  const seen: string[] = [];
  const failures: SyncFailure[] = [];
  // A missing permission is on the job as a warning too: the person can grant it.
  const warnings: NewJobWarning[] = [];
  for (const op of batch) {
    if (op.kind === 'failure') {
      failures.push(op.failure);
      if (op.permissionMissing) warnings.push(permissionWarning(op.failure.table, op.failure.message));
    } else if (op.kind === 'deleted') {
      const key = integrationSourceKey(opts.connectionId, op.table, op.externalId);
      if (await removeDocument(tx, opts.organizationId, key)) {
        rows++;
        documents.deleted++;
      }
    } else {
      const { outcome, itemId } = await storeDocument(
        tx,
        opts.organizationId,
        integrationDocument(opts.connectionId, op.doc, words.get(op)!),
        // An item a user deleted stays deleted across incremental syncs; a reset brings it back.
        { respectTombstones: !full },
      );
      documents.seen++;
      if (outcome === 'created' || outcome === 'updated' || outcome === 'retagged') {
        rows++;
        documents.stored++;
      } else if (outcome === 'unchanged') {
        documents.unchanged++;
      }
      if (full && itemId) seen.push(itemId);
    }
  }
  return { rows, documents, seen, failures, warnings };
}

function integrationDocument(connectionId: string, d: SourceDocument, searchWords: string): IngestDocument {
  return {
    sourceType: 'integration',
    sourceTableName: d.table,
    sourceKey: integrationSourceKey(connectionId, d.table, d.externalId),
    tombstoneKeys: [legacyIntegrationTombstoneKey(connectionId, d.externalId)],
    title: d.title,
    markdown: d.markdown,
    url: d.url,
    visibility: d.visibility,
    tags: d.tags,
    connectionId,
    sourceVersion: d.version ?? null,
    searchWords,
  };
}

/**
 * A full pass: a document that failed this time was not seen, but is not gone either, so it is kept (in
 * every table, when the failure does not say which).
 */
async function keepFailedDocuments(
  tx: Queryable,
  opts: SyncRunOptions,
  failures: SyncFailure[],
): Promise<void> {
  const failedKeys: string[] = [];
  const failedAnyTable: string[] = [];
  for (const f of failures) {
    if (f.externalId === undefined) continue;
    if (f.table) failedKeys.push(integrationSourceKey(opts.connectionId, f.table, f.externalId));
    else failedAnyTable.push(f.externalId);
  }
  if (failedKeys.length === 0 && failedAnyTable.length === 0) return;
  await markFailedDocumentsSeen(tx, {
    jobId: opts.jobId,
    organizationId: opts.organizationId,
    connectionId: opts.connectionId,
    sourceKeys: failedKeys,
    anyTableIds: failedAnyTable,
  });
}

/**
 * The pass completed. A full pass now removes what it did not see, unless a failure without a document
 * id leaves it unable to tell what is gone, and its last checkpoint (an earlier attempt's, when this one
 * saw none) becomes where the next incremental sync starts.
 */
async function finishPass(
  opts: SyncRunOptions,
  lastCursor: unknown,
): Promise<{ removedAfterPass: number; failures: number }> {
  return opts.withLease(async (tx) => {
    const failures = await syncJobFailures(tx, opts.jobId);
    let removedAfterPass = 0;
    if (opts.mode === 'full') {
      if (!failures.deletionsBlocked) {
        removedAfterPass = await deleteItemsNotSeenByJob(tx, {
          organizationId: opts.organizationId,
          connectionId: opts.connectionId,
          jobId: opts.jobId,
        });
        await recordSyncProgress(tx, opts.jobId, {
          rowsAdded: removedAfterPass,
          bytesSynced: opts.bytesBefore + opts.context.http.bytesReceived,
          failures: [],
          documents: { deleted: removedAfterPass },
        });
      }
      const finalCursor = lastCursor !== undefined ? lastCursor : opts.cursor;
      if (finalCursor !== undefined && finalCursor !== null)
        await saveConnectionCursor(tx, opts.connectionId, finalCursor);
    }
    return { removedAfterPass, failures: failures.count };
  });
}

const KNOWN_BATCH = 1_000;

/** The connection's documents as the connector sees them: external ids, tables and versions, in batches. */
export async function* knownDocuments(
  db: Queryable,
  organizationId: string,
  connectionId: string,
): AsyncGenerator<KnownDocument[]> {
  let afterKey: string | null = null;
  for (;;) {
    const rows = await listConnectionDocuments(db, organizationId, connectionId, {
      afterKey,
      limit: KNOWN_BATCH,
    });
    const docs: KnownDocument[] = [];
    for (const r of rows) {
      const prefix = integrationSourceKey(connectionId, r.table, '');
      if (r.sourceKey.startsWith(prefix))
        docs.push({ externalId: r.sourceKey.slice(prefix.length), table: r.table, version: r.version });
    }
    if (docs.length > 0) yield docs;
    if (rows.length < KNOWN_BATCH) return;
    afterKey = rows[rows.length - 1]!.sourceKey;
  }
}

function failureMessage(error: unknown, secrets: readonly string[]): string {
  const raw = error instanceof Error ? error.message : String(error);
  const text = redactSecrets(raw, secrets).replace(/\s+/g, ' ').trim();
  return text.length > MAX_FAILURE_MESSAGE
    ? `${text.slice(0, MAX_FAILURE_MESSAGE - 1)}…`
    : text || 'unknown error';
}
