/**
 * `kb sync <type>`: start a sync of a connection; with --wait, follow the job (its documents seen,
 * stored, unchanged, deleted and failed, and the connection's items made searchable) to its end.
 */
import { type Command, Option } from 'commander';
import { type ItemStats, ok, type paths, type SyncJob } from '../client/index.ts';
import { CliError, EXIT, UsageError } from './errors.ts';
import { count, counts, duration, eta, oneLine, warningLines } from './format.ts';
import {
  displayMode,
  follow,
  intervalMs,
  parseInterval,
  ProgressDisplay,
  type ProgressView,
} from './progress.ts';
import { connect, printJson, type Remote, type RemoteOptions, remoteOptions } from './remote.ts';
import { indexerRate, readStats } from './stats.ts';

type RunSyncBody = paths['/api/connect/run-sync']['post']['requestBody']['content']['application/json'];
type ConnectionRef = Pick<RunSyncBody, 'type' | 'connectionId'>;

const SYNC_ENDED = new Set(['succeeded', 'failed', 'cancelled', 'incomplete']);

interface SyncOptions extends RemoteOptions {
  connection?: string;
  reset?: boolean;
  wait?: boolean;
  /** With --wait: stop when the job ends, before its items are searchable. */
  jobOnly?: boolean;
  interval?: number;
}

/** The connection's item counts, as /stats shows them. */
type ConnectionItems = ItemStats['byConnection'][number];

function connectionItems(stats: ItemStats, connectionId: string): ConnectionItems {
  return (
    stats.byConnection.find((c) => c.connectionId === connectionId) ?? {
      connectionId,
      type: '',
      total: 0,
      byIndexingStatus: { pending: 0, indexed: 0, failed: 0 },
    }
  );
}

/** A sync job and the stats, as a progress reading. */
export function syncView(label: string, job: SyncJob, stats: ItemStats): ProgressView {
  const items = connectionItems(stats, job.connectionId);
  return {
    label,
    status: job.status,
    done: items.byIndexingStatus.indexed,
    total: items.total,
    unit: 'items searchable',
    details: { ...job.documents },
    chunks: stats.chunks,
    ...indexerRate(stats),
  };
}

/** The summary after a followed sync. */
export function syncSummary(label: string, job: SyncJob, stats: ItemStats): string {
  const items = connectionItems(stats, job.connectionId);
  const st = items.byIndexingStatus;
  const when =
    st.pending > 0 && stats.indexer.etaSeconds !== null ? ` (ETA ${eta(stats.indexer.etaSeconds)})` : '';
  const lines = [
    `${label} ${job.status} in ${duration(job.duration)}`,
    `  documents  ${counts({ ...job.documents })}`,
    `  items      ${count(st.indexed)}/${count(items.total)} searchable, ${count(st.pending)} pending${when}, ${count(st.failed)} failed to index; ${count(stats.chunks)} chunks in the knowledge base`,
  ];
  if (job.error) lines.push(`  error      ${oneLine(job.error, 300)}`);
  const shown = job.failures.slice(0, 10);
  for (const [i, f] of shown.entries()) {
    const what = f.externalId ? `${f.externalId}${f.table ? ` (${f.table})` : ''}: ` : '';
    lines.push(`${i === 0 ? '  failures   ' : '             '}${oneLine(`${what}${f.message}`, 200)}`);
  }
  if (job.failureCount > shown.length)
    lines.push(
      `             ... and ${count(job.failureCount - shown.length)} more (--json lists up to 100)`,
    );
  lines.push(...warningLines(job.warnings, job.warningCount));
  return lines.join('\n');
}

/** The job in the connection's job list (it is among the newest: it was just queued or is running). */
async function readJob(remote: Remote, ref: ConnectionRef, jobId: number): Promise<SyncJob> {
  const query = { ...ref, limit: 20 };
  const page = await ok(remote.client.GET('/api/connect/connection-sync-jobs', { params: { query } }));
  const job = page.data.find((j) => j.jobId === jobId);
  if (!job) throw new CliError(`sync job ${jobId} is not among the connection's latest jobs`);
  return job;
}

/** Registers the `sync` command: its commander definition (the help) and its action. */
export function register(program: Command): void {
  remoteOptions(
    program
      .command('sync')
      .description('start a sync of a connection; --wait follows it to its end with progress and a summary')
      .argument(
        '[type]',
        'the connection by source type (notes, support_desk, wiki, storefront, docs_space, or the product name)',
      )
      .option('--connection <id>', 'the connection by id instead of type')
      .option(
        '--reset',
        're-read everything and remove what the source no longer has (default: what changed)',
      )
      .option(
        '--wait',
        "follow the job until it ends and the connection's items are searchable, then print a summary " +
          '(exit 1 failed or cancelled, 3 incomplete)',
      )
      .option('--job-only', 'with --wait: stop when the job ends, before its items are searchable')
      // Searchable is what --wait waits for now; the old flag that asked for it still works.
      .addOption(new Option('--indexed').hideHelp())
      .option(
        '--interval <seconds>',
        'how often progress is read (default 1 on a terminal, else 5)',
        parseInterval,
      ),
  ).action(runSync);
}

/** A queued sync: its job, how it is shown, and the command that follows it. */
interface StartedSync {
  ref: ConnectionRef;
  jobId: number;
  label: string;
  followCommand: string;
}

/** Starts the sync; with --wait, follows it and ends with the exit code its outcome calls for. */
async function runSync(type: string | undefined, opts: SyncOptions): Promise<void> {
  if (!type && !opts.connection)
    throw new UsageError('name the connection: kb sync <type>, or --connection <id>');
  if (type && opts.connection)
    throw new UsageError('name the connection by type or by --connection, not both');
  const remote = connect(opts);
  const ref: ConnectionRef = opts.connection
    ? { connectionId: opts.connection }
    : { type: type as RunSyncBody['type'] };
  const jobId = await startSync(remote, ref, opts);
  const sync: StartedSync = {
    ref,
    jobId,
    label: `sync ${type ?? opts.connection} (job ${jobId})`,
    followCommand: `kb sync ${type ?? `--connection ${opts.connection}`} --wait`,
  };
  if (!opts.wait) {
    if (remote.json) printJson({ success: true, jobId });
    else console.log(`${sync.label} queued; ${sync.followCommand} follows it`);
    return;
  }
  const { job, stats } = await followSync(remote, sync, opts);
  if (remote.json) {
    printJson({
      type: 'result',
      job,
      items: connectionItems(stats, job.connectionId),
      chunks: stats.chunks,
    });
  } else {
    console.log(syncSummary(sync.label, job, stats));
  }
  if (job.status === 'failed' || job.status === 'cancelled') {
    throw new CliError(`the sync ${job.status}${job.error ? `: ${job.error}` : ''}`);
  }
  if (job.status === 'incomplete') process.exitCode = EXIT.incomplete;
}

/**
 * Queues the sync and answers its job id. Asking to sync and wait while a sync of the connection runs
 * follows the one that runs instead of failing.
 */
async function startSync(remote: Remote, ref: ConnectionRef, opts: SyncOptions): Promise<number> {
  const started = await remote.client.POST('/api/connect/run-sync', {
    body: { ...ref, jobType: opts.reset ? 'reset' : 'sync' },
  });
  const busy = started.error as { error?: string; jobId?: number } | undefined;
  if (
    opts.wait &&
    started.response.status === 409 &&
    busy?.error === 'sync_in_progress' &&
    busy.jobId !== undefined
  ) {
    if (!remote.json)
      process.stderr.write(
        `a sync of this connection is already running (job ${busy.jobId}); following it\n`,
      );
    return busy.jobId;
  }
  return (await ok(Promise.resolve(started))).jobId;
}

/** Follows the job and its items' indexing (only the job with --job-only) to the end, showing progress. */
function followSync(
  remote: Remote,
  sync: StartedSync,
  opts: SyncOptions,
): Promise<{ job: SyncJob; stats: ItemStats }> {
  const mode = displayMode({ json: remote.json, isTTY: Boolean(process.stderr.isTTY) });
  return follow({
    display: new ProgressDisplay(mode),
    intervalMs: intervalMs(opts.interval, mode),
    interruptHint: `the sync goes on in the service (${sync.followCommand} follows it again)`,
    poll: async () => {
      const [job, stats] = await Promise.all([
        readJob(remote, sync.ref, sync.jobId),
        readStats(remote.client),
      ]);
      const ended = SYNC_ENDED.has(job.status);
      const searchable = connectionItems(stats, job.connectionId).byIndexingStatus.pending === 0;
      return {
        view: syncView(sync.label, job, stats),
        finished: ended && (opts.jobOnly === true || searchable),
        result: { job, stats },
      };
    },
  });
}
