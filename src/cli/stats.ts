/**
 * `kb stats` (how far the knowledge base is) and `kb reembed` (embed every item again), both read from
 * GET /api/connect/knowledgebase-items/stats; and the indexing follow they share with `kb items upload
 * --wait`: a bar of items searchable until nothing is pending.
 */
import type { Command } from 'commander';
import { type ItemStats, type KbClient, ok } from '../client/index.ts';
import { EXIT } from './errors.ts';
import { count, duration, eta, rate, table } from './format.ts';
import {
  displayMode,
  follow,
  intervalMs,
  parseInterval,
  ProgressDisplay,
  type ProgressView,
} from './progress.ts';
import { connect, printJson, type Remote, type RemoteOptions, remoteOptions } from './remote.ts';

export async function readStats(client: KbClient): Promise<ItemStats> {
  return ok(client.GET('/api/connect/knowledgebase-items/stats'));
}

/** The indexer's part of a reading: its rate and the estimate for this organization's pending items. */
export function indexerRate(stats: ItemStats): Pick<ProgressView, 'rate' | 'etaSeconds'> {
  const { ratePerSecond, etaSeconds } = stats.indexer;
  return { rate: ratePerSecond === null ? null : { perSecond: ratePerSecond, unit: 'items' }, etaSeconds };
}

/** The readable form of the stats. */
export function formatStats(s: ItemStats): string {
  const st = s.byIndexingStatus;
  const lines = [
    `items        ${count(s.total)} (${count(st.indexed)} searchable, ${count(st.pending)} pending, ${count(st.failed)} failed)`,
    `by source    ${count(s.bySourceType.integration)} synced, ${count(s.bySourceType.crawl)} crawled, ${count(s.bySourceType.upload)} uploaded`,
    `chunks       ${count(s.chunks)}`,
    `indexer      ${s.indexer.ratePerSecond === null ? 'no recent rate' : `${rate(s.indexer.ratePerSecond)} items/s`}` +
      (st.pending > 0
        ? `, ${count(s.indexer.queuedAhead)} queued up to your last pending item` +
          (s.indexer.etaSeconds === null ? '' : `, ETA ${eta(s.indexer.etaSeconds)}`)
        : ', nothing of yours pending'),
  ];
  if (s.byConnection.length > 0) {
    lines.push('connections');
    const rows = s.byConnection.map((c) => [
      `  ${c.type}`,
      c.connectionId,
      `${count(c.total)} items`,
      `${count(c.byIndexingStatus.indexed)} searchable, ${count(c.byIndexingStatus.pending)} pending, ${count(c.byIndexingStatus.failed)} failed`,
    ]);
    lines.push(table(rows));
  }
  return lines.join('\n');
}

/**
 * Follows the organization's indexing until nothing is pending: the bar counts items made searchable
 * since the start (of `startPending`, or of what was pending at the first reading).
 */
export async function followIndexing(
  remote: Remote,
  opts: { label: string; startPending?: number; interval?: number | undefined },
): Promise<{ stats: ItemStats; done: number; total: number }> {
  const mode = displayMode({ json: remote.json, isTTY: Boolean(process.stderr.isTTY) });
  let total = opts.startPending;
  return follow({
    display: new ProgressDisplay(mode),
    intervalMs: intervalMs(opts.interval, mode),
    interruptHint: 'indexing goes on in the service (kb stats shows how far it is)',
    poll: async () => {
      const stats = await readStats(remote.client);
      const pending = stats.byIndexingStatus.pending;
      // More may be pending than at the start (a sync writing meanwhile): the total grows with it.
      total = Math.max(total ?? pending, pending);
      const done = total - pending;
      const view: ProgressView = {
        label: opts.label,
        done,
        total,
        unit: 'items',
        details: { pending, failed: stats.byIndexingStatus.failed },
        chunks: stats.chunks,
        ...indexerRate(stats),
      };
      return { view, finished: pending === 0, result: { stats, done, total } };
    },
  });
}

interface StatsOptions extends RemoteOptions {
  wait?: boolean;
  interval?: number;
}

interface ReembedOptions extends RemoteOptions {
  wait: boolean;
  interval?: number;
}

export function register(program: Command): void {
  remoteOptions(
    program
      .command('stats')
      .description(
        'how far the knowledge base is: items by state, source and connection, chunks, indexer rate and ETA',
      )
      .option('--wait', 'follow indexing until nothing is pending')
      .option(
        '--interval <seconds>',
        'how often progress is read (default 1 on a terminal, else 5)',
        parseInterval,
      ),
  ).action(async (opts: StatsOptions) => {
    const remote = connect(opts);
    const started = Date.now();
    let stats = await readStats(remote.client);
    if (opts.wait && stats.byIndexingStatus.pending > 0) {
      stats = (await followIndexing(remote, { label: 'indexing', interval: opts.interval })).stats;
      if (!remote.json) console.log(`indexed in ${duration(Date.now() - started)}`);
    }
    if (remote.json) printJson(opts.wait ? { type: 'result', stats } : stats);
    else console.log(formatStats(stats));
  });

  remoteOptions(
    program
      .command('reembed')
      .description(
        "embed every item of your organization again with the service's model, following it until done (offline model change: kb reembed-local)",
      )
      .option('--no-wait', 'return once the items are marked; kb stats --wait follows them')
      .option(
        '--interval <seconds>',
        'how often progress is read (default 1 on a terminal, else 5)',
        parseInterval,
      ),
  ).action(async (opts: ReembedOptions) => {
    const remote = connect(opts);
    const started = Date.now();
    const marked = await ok(remote.client.POST('/api/connect/knowledgebase-items/reembed', { body: {} }));
    if (!opts.wait) {
      if (remote.json) printJson(marked);
      else console.log(`re-embedding ${count(marked.pending)} items (kb stats --wait follows them)`);
      return;
    }
    if (!remote.json) process.stderr.write(`re-embedding ${count(marked.pending)} items\n`);
    const { stats, done } = await followIndexing(remote, {
      label: 'reembed',
      startPending: marked.pending,
      interval: opts.interval,
    });
    const failed = stats.byIndexingStatus.failed;
    const summary = {
      type: 'result',
      marked: marked.marked,
      reembedded: done,
      failed,
      chunks: stats.chunks,
      durationMs: Date.now() - started,
    };
    if (remote.json) printJson(summary);
    else {
      console.log(
        `re-embedded ${count(done)} items in ${duration(summary.durationMs)}: ${count(stats.chunks)} chunks` +
          (failed > 0 ? `, ${count(failed)} items failed to index` : ''),
      );
    }
    if (failed > 0) process.exitCode = EXIT.failed;
  });
}
