/**
 * `kb sync <type>`: start a sync of a connection; with --wait, follow the job (its documents seen,
 * stored, unchanged, deleted and failed, and the connection's items made searchable) to its end.
 */
import type { Command } from 'commander';
import { type ItemStats, ok, type paths, type SyncJob } from '../client/index.ts';
import { CliError, EXIT, UsageError } from './errors.ts';
import { count, counts, duration, eta, oneLine } from './format.ts';
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
  indexed?: boolean;
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

/**
 * Registers the `sync` commands: a table of commander definitions, one per command, kept together so
 * the help reads as one list (hence its length).
 */
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
        'follow the job until it ends, then print a summary (exit 1 failed or cancelled, 3 incomplete)',
      )
      .option('--indexed', "with --wait: also wait until the connection's items are searchable")
      .option(
        '--interval <seconds>',
        'how often progress is read (default 1 on a terminal, else 5)',
        parseInterval,
      ),
  ).action(async (type: string | undefined, opts: SyncOptions) => {
    if (!type && !opts.connection)
      throw new UsageError('name the connection: kb sync <type>, or --connection <id>');
    if (type && opts.connection)
      throw new UsageError('name the connection by type or by --connection, not both');
    const remote = connect(opts);
    const ref: ConnectionRef = opts.connection
      ? { connectionId: opts.connection }
      : { type: type as RunSyncBody['type'] };
    const started = await remote.client.POST('/api/connect/run-sync', {
      body: { ...ref, jobType: opts.reset ? 'reset' : 'sync' },
    });
    let jobId: number;
    const busy = started.error as { error?: string; jobId?: number } | undefined;
    if (
      opts.wait &&
      started.response.status === 409 &&
      busy?.error === 'sync_in_progress' &&
      busy.jobId !== undefined
    ) {
      // Asking to sync and wait while a sync runs: follow the one that runs.
      jobId = busy.jobId;
      if (!remote.json)
        process.stderr.write(`a sync of this connection is already running (job ${jobId}); following it\n`);
    } else {
      jobId = (await ok(Promise.resolve(started))).jobId;
    }
    const label = `sync ${type ?? opts.connection} (job ${jobId})`;
    if (!opts.wait) {
      if (remote.json) printJson({ success: true, jobId });
      else
        console.log(
          `${label} queued; kb sync ${type ?? `--connection ${opts.connection}`} --wait follows it`,
        );
      return;
    }
    const mode = displayMode({ json: remote.json, isTTY: Boolean(process.stderr.isTTY) });
    const { job, stats } = await follow({
      display: new ProgressDisplay(mode),
      intervalMs: intervalMs(opts.interval, mode),
      interruptHint: `the sync goes on in the service (kb sync ${type ?? `--connection ${opts.connection}`} --wait follows it again)`,
      poll: async () => {
        const [job, stats] = await Promise.all([readJob(remote, ref, jobId), readStats(remote.client)]);
        const ended = SYNC_ENDED.has(job.status);
        const searchable = connectionItems(stats, job.connectionId).byIndexingStatus.pending === 0;
        return {
          view: syncView(label, job, stats),
          finished: ended && (!opts.indexed || searchable),
          result: { job, stats },
        };
      },
    });
    if (remote.json) {
      printJson({
        type: 'result',
        job,
        items: connectionItems(stats, job.connectionId),
        chunks: stats.chunks,
      });
    } else {
      console.log(syncSummary(label, job, stats));
    }
    if (job.status === 'failed' || job.status === 'cancelled') {
      throw new CliError(`the sync ${job.status}${job.error ? `: ${job.error}` : ''}`);
    }
    if (job.status === 'incomplete') process.exitCode = EXIT.incomplete;
  });
}
