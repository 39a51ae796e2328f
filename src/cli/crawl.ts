/**
 * `kb crawl <url>`: start a crawl job with the crawl endpoint's options; with --wait, follow its pages
 * (done of admitted, by outcome) to its end.
 */
import type { Command } from 'commander';
import { type CrawlJob, type ItemStats, ok, type paths } from '../client/index.ts';
import { CliError } from './errors.ts';
import { count, counts, duration, eta, oneLine, warningLines } from './format.ts';
import {
  displayMode,
  follow,
  intervalMs,
  parseInterval,
  ProgressDisplay,
  type ProgressView,
} from './progress.ts';
import { collect, connect, intOption, printJson, type RemoteOptions, remoteOptions } from './remote.ts';
import { indexerRate, readStats } from './stats.ts';

type CrawlBody = paths['/api/connect/crawling/']['post']['requestBody']['content']['application/json'];
/** A crawl as GET by id answers it: with how many of its pages are not yet searchable. */
type CrawlJobWithIndexing =
  paths['/api/connect/crawling/{id}']['get']['responses'][200]['content']['application/json'];

const CRAWL_ENDED = new Set(['completed', 'failed', 'cancelled']);

interface CrawlOptions extends RemoteOptions {
  limit?: number;
  include?: string[];
  exclude?: string[];
  external?: boolean;
  maxDepth?: number;
  tag?: string[];
  render?: boolean;
  maxConcurrency?: number;
  delayMs?: number;
  wait?: boolean;
  /** With --wait: stop when the job ends, before its pages are searchable. */
  jobOnly?: boolean;
  interval?: number;
}

/** Pages a second since the first reading, once there is a span to measure. */
class PageRate {
  #first: { at: number; pages: number } | null = null;
  read(pages: number, now = Date.now()): number | null {
    this.#first ??= { at: now, pages };
    const seconds = (now - this.#first.at) / 1000;
    return seconds >= 2 && pages > this.#first.pages ? (pages - this.#first.pages) / seconds : null;
  }
}

/** A crawl job (and the stats' chunk count), as a progress reading. */
export function crawlView(
  label: string,
  job: CrawlJob,
  stats: ItemStats,
  pagesPerSecond: number | null,
): ProgressView {
  const left = job.total_pages - job.completed_pages;
  return {
    label,
    status: job.status,
    done: job.completed_pages,
    total: job.total_pages,
    unit: `pages (limit ${count(job.limit)})`,
    details: job.outcomes,
    chunks: stats.chunks,
    rate: pagesPerSecond === null ? null : { perSecond: pagesPerSecond, unit: 'pages' },
    etaSeconds: pagesPerSecond === null ? null : Math.ceil(left / pagesPerSecond),
  };
}

/** A crawl that has ended while its pages are indexed, as a progress reading. */
export function indexingView(label: string, job: CrawlJobWithIndexing, stats: ItemStats): ProgressView {
  return {
    label,
    status: job.items_pending > 0 ? 'indexing' : job.status,
    done: job.completed_pages - job.items_pending,
    total: job.completed_pages,
    unit: 'pages searchable',
    details: job.outcomes,
    chunks: stats.chunks,
    ...indexerRate(stats),
  };
}

/** The summary after a followed crawl. */
export function crawlSummary(label: string, job: CrawlJobWithIndexing, stats: ItemStats): string {
  const ran = job.completed_at ? Date.parse(job.completed_at) - Date.parse(job.created_at) : null;
  const lines = [
    `${label} (job ${job.id}) ${job.status}${ran === null ? '' : ` in ${duration(ran)}`}`,
    `  pages      ${count(job.completed_pages)} of limit ${count(job.limit)}`,
  ];
  if (Object.keys(job.outcomes).length > 0) lines.push(`  outcomes   ${counts(job.outcomes)}`);
  const refused = Object.entries(job.refused);
  for (const [i, [reason, r]] of refused.entries()) {
    const example = r.sample[0] ? ` (e.g. ${oneLine(r.sample[0], 120)})` : '';
    lines.push(`${i === 0 ? '  not kept   ' : '             '}${reason}: ${count(r.count)}${example}`);
  }
  if (job.error_message) lines.push(`  error      ${oneLine(job.error_message, 300)}`);
  lines.push(...warningLines(job.warnings, job.warning_count));
  // Stored pages are searchable once indexed; say so when the indexer is behind (--job-only).
  const pending = job.items_pending;
  if (pending > 0) {
    const when = stats.indexer.etaSeconds === null ? '' : ` (ETA ${eta(stats.indexer.etaSeconds)})`;
    lines.push(
      `  indexing   ${count(pending)} pages not yet searchable${when}; kb stats --wait follows them`,
    );
  } else {
    lines.push(`  searchable every stored page`);
  }
  return lines.join('\n');
}

export function register(program: Command): void {
  remoteOptions(
    program
      .command('crawl')
      .description(
        'crawl a website into the knowledge base; --wait follows it to its end with progress and a summary',
      )
      .argument('<url>', 'start URL (http or https); the crawl stays on its site unless --external')
      .option('--limit <pages>', 'page budget (service default 100)', intOption('--limit', 1, 1_000_000))
      .option(
        '--include <regex>',
        'keep only pages whose URL path matches (RE2 regular expression; repeatable)',
        collect,
      )
      .option(
        '--exclude <regex>',
        'skip pages whose URL path matches (wins over --include; repeatable)',
        collect,
      )
      .option('--external', 'follow links to other sites')
      .option(
        '--max-depth <n>',
        'link depth from the start URL (0: the start page only); sitemaps are then not read',
        intOption('--max-depth', 0, 1000),
      )
      .option('--tag <tag>', 'tag every crawled item (repeatable)', collect)
      .option('--render', 'render each page in a headless browser before extracting it (slower)')
      .option(
        '--max-concurrency <n>',
        "requests in flight per host at most (default and ceiling: the operator's)",
        intOption('--max-concurrency', 1, 64),
      )
      .option(
        '--delay-ms <ms>',
        "milliseconds between two request starts per host (default and floor: the operator's)",
        intOption('--delay-ms', 0, 600_000),
      )
      .option(
        '--wait',
        'follow the job until it ends and its pages are searchable, then print a summary (exit 1 when it ' +
          'failed or was cancelled)',
      )
      .option('--job-only', 'with --wait: stop when the job ends, before its pages are searchable')
      .option(
        '--interval <seconds>',
        'how often progress is read (default 1 on a terminal, else 5)',
        parseInterval,
      ),
  ).action(async (url: string, opts: CrawlOptions) => {
    const remote = connect(opts);
    const body: CrawlBody = {
      url,
      ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
      ...(opts.include ? { includePaths: opts.include } : {}),
      ...(opts.exclude ? { excludePaths: opts.exclude } : {}),
      ...(opts.external ? { allowExternalLinks: true } : {}),
      ...(opts.maxDepth !== undefined ? { maxDepth: opts.maxDepth } : {}),
      ...(opts.tag ? { tags: opts.tag } : {}),
      ...(opts.render ? { renderJavaScript: true } : {}),
      ...(opts.maxConcurrency !== undefined ? { maxConcurrency: opts.maxConcurrency } : {}),
      ...(opts.delayMs !== undefined ? { delayMs: opts.delayMs } : {}),
    };
    const created = await ok(remote.client.POST('/api/connect/crawling/', { body }));
    const label = `crawl ${created.url}`;
    if (!opts.wait) {
      if (remote.json) printJson(created);
      else console.log(`${label} queued (job ${created.id})`);
      return;
    }
    const mode = displayMode({ json: remote.json, isTTY: Boolean(process.stderr.isTTY) });
    const pageRate = new PageRate();
    const { job, stats } = await follow({
      display: new ProgressDisplay(mode),
      intervalMs: intervalMs(opts.interval, mode),
      interruptHint: `the crawl goes on in the service (job ${created.id})`,
      poll: async () => {
        const [job, stats] = await Promise.all([
          ok(remote.client.GET('/api/connect/crawling/{id}', { params: { path: { id: created.id } } })),
          readStats(remote.client),
        ]);
        const ended = CRAWL_ENDED.has(job.status);
        return {
          view: ended
            ? indexingView(label, job, stats)
            : crawlView(label, job, stats, pageRate.read(job.completed_pages)),
          finished: ended && (opts.jobOnly === true || job.items_pending === 0),
          result: { job, stats },
        };
      },
    });
    if (remote.json) printJson({ type: 'result', job });
    else console.log(crawlSummary(label, job, stats));
    if (job.status !== 'completed') {
      throw new CliError(`the crawl ${job.status}${job.error_message ? `: ${job.error_message}` : ''}`);
    }
  });
}
