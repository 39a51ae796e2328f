/**
 * Live progress of a job the CLI follows (a sync, a crawl, a re-embedding, uploads). The numbers always
 * come from the service (the job endpoints and /stats); this file only shows them, three ways:
 *
 * - `tty`: a bar redrawn in place on stderr (cli-progress), when stderr is a terminal;
 * - `lines`: plain lines on stderr when it is not (a CI log, a file), written when something changed;
 * - `json` (--json): JSON lines on stdout, `{"type":"progress",...}`, for scripts and agents.
 *
 * Results and summaries go to stdout, progress to stderr, so `kb sync x --wait > out.txt` keeps the bar
 * on the screen and the summary in the file.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import cliProgress from 'cli-progress';
import { ServiceUnreachable, UsageError } from './errors.ts';
import { clock, count, counts, eta, rate } from './format.ts';

/** One reading of a job's progress, as shown. */
export interface ProgressView {
  /** What is followed: `sync docs_space (job 14)`. */
  label: string;
  /** The job's own status (`running`, `scraping`), when there is a job. */
  status?: string | undefined;
  /** The bar: `done` of `total`, in `unit` (`items searchable`, `pages`). */
  done: number;
  total: number;
  unit: string;
  /** Counts shown after the bar, in order (`{seen: 120, stored: 100}`). */
  details: Record<string, number>;
  /** Searchable passages, when known. */
  chunks?: number | undefined;
  /** How fast `done` moves, when known (`25.3 items/s`). */
  rate?: { perSecond: number; unit: string } | null | undefined;
  /** Seconds until `done` reaches `total` (or the indexer drains), when known. */
  etaSeconds?: number | null | undefined;
}

/**
 * The text of a progress reading. `bar` (a terminal) puts the bar after the label and the elapsed clock
 * last; `line` (plain output) starts with the clock, so a log reads as a timeline.
 */
export function formatProgress(
  view: ProgressView,
  opts: { elapsedMs: number; style: 'line' } | { elapsedMs: number; style: 'bar'; bar: string },
): string {
  const parts: string[] = [];
  parts.push(`${count(view.done)}/${count(view.total)} ${view.unit}`);
  if (Object.keys(view.details).length > 0) parts.push(counts(view.details));
  if (view.chunks !== undefined) parts.push(`${count(view.chunks)} chunks`);
  if (view.rate) parts.push(`${rate(view.rate.perSecond)} ${view.rate.unit}/s`);
  if (view.etaSeconds !== null && view.etaSeconds !== undefined && view.done < view.total) {
    parts.push(`ETA ${eta(view.etaSeconds)}`);
  }
  const head = view.status ? `${view.label} ${view.status}` : view.label;
  if (opts.style === 'bar') return `${head} ${opts.bar} ${parts.join(' · ')} · ${clock(opts.elapsedMs)}`;
  return `${clock(opts.elapsedMs)} ${head}: ${parts.join(' · ')}`;
}

type DisplayMode = 'tty' | 'lines' | 'json';

/** --json wins; otherwise a bar on a terminal and lines elsewhere. */
export function displayMode(opts: { json: boolean; isTTY: boolean }): DisplayMode {
  if (opts.json) return 'json';
  return opts.isTTY ? 'tty' : 'lines';
}

/** A plain line is written when the reading changed, and at least this often while it does not. */
const UNCHANGED_LINE_EVERY_MS = 30_000;

export class ProgressDisplay {
  readonly #mode: DisplayMode;
  readonly #started = Date.now();
  #bar: cliProgress.SingleBar | null = null;
  #last = '';
  #lastAt = 0;
  readonly #minGapMs: number;

  /** `minGapMs`: lines and JSON lines at most this often (for callers that update on every step). */
  constructor(mode: DisplayMode, opts: { minGapMs?: number } = {}) {
    this.#mode = mode;
    this.#minGapMs = opts.minGapMs ?? 0;
  }

  update(view: ProgressView): void {
    const now = Date.now();
    const elapsedMs = now - this.#started;
    if (this.#mode === 'tty') {
      if (!this.#bar) {
        this.#bar = new cliProgress.SingleBar({
          stream: process.stderr,
          format: (options, params, payload: { view: ProgressView }) =>
            formatProgress(payload.view, {
              style: 'bar',
              elapsedMs: Date.now() - this.#started,
              bar: cliProgress.Format.BarFormat(params.progress, options),
            }),
          barsize: 24,
          barCompleteChar: '█',
          barIncompleteChar: '░',
          hideCursor: true,
          linewrap: false,
          emptyOnZero: true,
          fps: 4,
          // We stop the bar ourselves on Ctrl-C (and say the job goes on).
          gracefulExit: false,
        });
        this.#bar.start(view.total, view.done, { view });
      } else {
        this.#bar.setTotal(view.total);
        this.#bar.update(view.done, { view });
      }
      return;
    }
    // Lines and JSON: only what changed (the elapsed time alone is not news).
    const key = JSON.stringify(view);
    if (key === this.#last && now - this.#lastAt < UNCHANGED_LINE_EVERY_MS) return;
    if (this.#lastAt > 0 && now - this.#lastAt < this.#minGapMs) return;
    this.#last = key;
    this.#lastAt = now;
    if (this.#mode === 'json') {
      process.stdout.write(`${JSON.stringify({ type: 'progress', elapsedMs, ...view })}\n`);
    } else {
      process.stderr.write(`${formatProgress(view, { style: 'line', elapsedMs })}\n`);
    }
  }

  /** Ends the display (the bar's line stays on screen). */
  stop(): void {
    this.#bar?.stop();
    this.#bar = null;
  }
}

/** Consecutive failures to reach the service that following tolerates (a restart of the service). */
const UNREACHABLE_RETRIES = 5;

/**
 * Reads `poll` every `intervalMs` and shows it until it says finished; returns the last reading's
 * result. Ctrl-C stops following (the job goes on in the service) with `interruptHint` and exit 130.
 */
export async function follow<T>(opts: {
  display: ProgressDisplay;
  intervalMs: number;
  poll: () => Promise<{ view: ProgressView; finished: boolean; result: T }>;
  interruptHint: string;
}): Promise<T> {
  const onInterrupt = () => {
    opts.display.stop();
    process.stderr.write(`kb: stopped following; ${opts.interruptHint}\n`);
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  let unreachable = 0;
  try {
    for (;;) {
      let reading: Awaited<ReturnType<typeof opts.poll>>;
      try {
        reading = await opts.poll();
        unreachable = 0;
      } catch (err) {
        if (!(err instanceof ServiceUnreachable) || ++unreachable > UNREACHABLE_RETRIES) throw err;
        await sleep(opts.intervalMs);
        continue;
      }
      opts.display.update(reading.view);
      if (reading.finished) return reading.result;
      await sleep(opts.intervalMs);
    }
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    opts.display.stop();
  }
}

/** `--interval <seconds>`: how often progress is read (default 1 s on a terminal, 5 s otherwise). */
export function intervalMs(option: number | undefined, mode: DisplayMode): number {
  if (option !== undefined) return option * 1000;
  return mode === 'tty' ? 1000 : 5000;
}

/** Parses `--interval`: seconds, 0.1 to 3600. */
export function parseInterval(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0.1 || n > 3600) {
    throw new UsageError(`--interval must be a number of seconds from 0.1 to 3600, not "${value}"`);
  }
  return n;
}
