/**
 * Polite fetching of one page: conditional requests (ETag / Last-Modified), retries with backoff on 429
 * and 5xx honouring Retry-After, an HTML content-type check, and a per-host gate (concurrency and delay
 * between requests, Crawl-delay included) shared by every worker of a process and, through its shared
 * stage (host-slots.ts), by every worker process on one Postgres.
 */
import {
  type OutboundFetch,
  OutboundBlockedError,
  OutboundError,
  type OutboundResponse,
} from '../net/outbound.ts';
import { retrying } from '../net/retry.ts';
import { type HostAnswer, type HostBackoff, NO_BACKOFF, nextBackoff } from './backoff.ts';
import { isHtmlContentType } from './filters.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Backoff before the second attempt; doubles each time. */
  baseDelayMs: number;
  /** Longest wait accepted; a Retry-After beyond it ends the retries. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 30_000 };

/** Transport failures worth another attempt (timeouts, resets); policy refusals and loops are not. */
function isRetryableError(err: unknown): boolean {
  return err instanceof OutboundError && (err.code === 'timeout' || err.code === 'network');
}

/** A crawl's pace on one host: requests in flight at most, and the time between two request starts. */
export interface HostPace {
  concurrency: number;
  delayMs: number;
}

interface HostGateOptions {
  /** Requests in flight per host. Default 2. */
  concurrency?: number;
  /** Least time between the starts of two requests to one host, in ms. Default 250. */
  minDelayMs?: number;
  /** The widest gap adaptive back-off may keep between request starts. Default 30 s. */
  maxBackoffMs?: number;
  /**
   * The second stage, shared with other processes (host-slots.ts, over Postgres). Absent in the embedded
   * service: one process, so this gate alone holds the host to its limits.
   */
  shared?: SharedHostSlots;
}

/**
 * Per-host slots shared by several processes, with the same limits as the gate: a request takes one after
 * its process's own gate let it through, so each process waits in memory first and only its requests that
 * could start now ask the shared state.
 */
export interface SharedHostSlots {
  /**
   * Waits for a slot on `host` (lower case) at `pace` (the asking crawl's, back-off included); resolves
   * to the function that gives it back.
   */
  acquire(host: string, pace: HostPace, signal?: AbortSignal): Promise<() => Promise<void>>;
  /** Holds every process's requests to `host` back for `ms`. */
  pause(host: string, ms: number): Promise<void>;
  /** The host's robots.txt Crawl-delay, for every process; undefined clears it. */
  setCrawlDelay(host: string, crawlDelayMs: number | undefined): Promise<void>;
}

interface Waiter {
  /** The asking crawl's pace on the host: each request is held to its own crawl's limits. */
  pace: HostPace;
  grant: (release: () => void) => void;
}

interface HostState {
  active: number;
  /** When the last request was let start; the next waits the delay as it is then (a Crawl-delay learnt since included). */
  lastStartAt: number;
  pausedUntil: number;
  queue: Waiter[];
  timer: NodeJS.Timeout | undefined;
  crawlDelayMs: number | undefined;
  /** Adaptive back-off learnt from the host's answers in this process (backoff.ts). */
  backoff: HostBackoff;
}

/**
 * Per-host politeness shared by all workers of a process: at most `concurrency` requests in flight per
 * host and at least `minDelayMs` between request starts, or the larger of it, the host's robots.txt
 * Crawl-delay and the gap its answers call for (backoff.ts). A host with a Crawl-delay gets one request
 * at a time. With a `shared` stage the same limits hold across processes: a request passes this
 * process's gate, then takes a shared slot.
 *
 * A crawl with its own pace uses a view of the gate ({@link HostGate.withPace}): the same hosts, slots and
 * back-off, each request held to its own crawl's concurrency and delay counting every crawl's requests.
 */
export class HostGate {
  // Not readonly: a view (withPace) takes its gate's hosts and its own pace.
  #paceOf: (host: string) => HostPace;
  readonly #maxBackoffMs: number;
  readonly #shared: SharedHostSlots | undefined;
  #hosts: Map<string, HostState>;

  constructor(opts: HostGateOptions = {}) {
    const pace = { concurrency: opts.concurrency ?? 2, delayMs: opts.minDelayMs ?? 250 };
    this.#paceOf = () => pace;
    this.#maxBackoffMs = opts.maxBackoffMs ?? 30_000;
    this.#shared = opts.shared;
    this.#hosts = new Map();
  }

  /** This gate (same hosts, slots, pauses and back-off) at another pace: one crawl's, per host. */
  withPace(paceOf: (host: string) => HostPace): HostGate {
    const view = new HostGate({
      maxBackoffMs: this.#maxBackoffMs,
      ...(this.#shared ? { shared: this.#shared } : {}),
    });
    view.#hosts = this.#hosts;
    view.#paceOf = paceOf;
    return view;
  }

  /**
   * Tells the gate how the host answered a request (its status, null for none, and how long it took):
   * 429/503 and slow answers widen the gap between the host's request starts, other answers narrow it.
   */
  observe(host: string, answer: HostAnswer): void {
    const s = this.#state(host);
    s.backoff = nextBackoff(s.backoff, answer, { maxGapMs: this.#maxBackoffMs });
  }

  /** The pace this gate holds requests to `host` to. */
  paceOf(host: string): HostPace {
    return this.#paceOf(host.toLowerCase());
  }

  /** The gap back-off keeps on `host` now (ms). */
  backoffMs(host: string): number {
    return this.#hosts.get(host.toLowerCase())?.backoff.gapMs ?? 0;
  }

  /** True when the limits are shared with other processes. */
  get shared(): boolean {
    return this.#shared !== undefined;
  }

  /**
   * Applies a host's robots.txt Crawl-delay (ms); undefined clears it. This process's gate has it at once;
   * the promise settles once the shared stage has it too.
   */
  async setCrawlDelay(host: string, crawlDelayMs: number | undefined): Promise<void> {
    this.#state(host).crawlDelayMs = crawlDelayMs;
    // A failed write leaves other processes at the plain delay; this process still keeps the Crawl-delay,
    // and a database that cannot be written fails the crawl's own statements soon after.
    await this.#shared?.setCrawlDelay(host.toLowerCase(), crawlDelayMs).catch(() => {});
  }

  /** Holds every request to `host` back for `ms` (a 429 or 503 with Retry-After slows the whole host). */
  pause(host: string, ms: number): void {
    const s = this.#state(host);
    s.pausedUntil = Math.max(s.pausedUntil, performance.now() + ms);
    // Other processes' requests too; this one's wait for its retry outlasts the write.
    this.#shared?.pause(host.toLowerCase(), ms).catch(() => {});
  }

  /** Waits for a slot on `host`; call the returned function when the request is done. */
  async acquire(host: string, signal?: AbortSignal): Promise<() => void> {
    const pace = this.#paceOf(host.toLowerCase());
    const releaseLocal = await this.#acquireLocal(host, pace, signal);
    if (!this.#shared) return releaseLocal;
    let releaseShared: () => Promise<void>;
    try {
      // Other processes see this process's back-off as a longer delay of this request.
      const delayMs = Math.max(pace.delayMs, this.backoffMs(host));
      releaseShared = await this.#shared.acquire(host.toLowerCase(), { ...pace, delayMs }, signal);
    } catch (err) {
      releaseLocal();
      throw err;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // This process's next request to the host waits until the shared slot is back: let through earlier,
      // it would find the slot still taken and poll for it.
      void releaseShared()
        .catch(() => {})
        .finally(releaseLocal);
    };
  }

  #acquireLocal(host: string, pace: HostPace, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const s = this.#state(host);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = s.queue.indexOf(waiter);
        if (i >= 0) s.queue.splice(i, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        pace,
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      s.queue.push(waiter);
      this.#pump(host, s);
    });
  }

  /** Runs `fn` inside a slot on `host`. */
  async run<T>(host: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(host, signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  #state(host: string): HostState {
    const key = host.toLowerCase();
    let s = this.#hosts.get(key);
    if (!s) {
      s = {
        active: 0,
        lastStartAt: Number.NEGATIVE_INFINITY,
        pausedUntil: 0,
        queue: [],
        timer: undefined,
        crawlDelayMs: undefined,
        backoff: NO_BACKOFF,
      };
      this.#hosts.set(key, s);
    }
    return s;
  }

  /** Lets the waiters at the head of the host's queue start, each at its own crawl's pace. */
  #pump(host: string, s: HostState): void {
    for (;;) {
      const head = s.queue[0];
      if (!head) return;
      const delay = Math.max(head.pace.delayMs, s.crawlDelayMs ?? 0, s.backoff.gapMs);
      const concurrency = s.crawlDelayMs ? 1 : Math.max(1, head.pace.concurrency);
      if (s.active >= concurrency) return;
      // A monotonic clock: a wall-clock step (NTP, VM resume) must neither stall a host nor skip its delay.
      const now = performance.now();
      const readyAt = Math.max(s.lastStartAt + delay, s.pausedUntil);
      if (now < readyAt) {
        if (!s.timer) {
          s.timer = setTimeout(
            () => {
              s.timer = undefined;
              this.#pump(host, s);
            },
            Math.ceil(readyAt - now),
          );
        }
        return;
      }
      const waiter = s.queue.shift()!;
      s.active++;
      s.lastStartAt = now;
      let released = false;
      waiter.grant(() => {
        if (released) return;
        released = true;
        s.active--;
        this.#pump(host, s);
      });
    }
  }
}

interface FetchPageOptions {
  /** Validators from the previous fetch of this URL: the server may answer 304. */
  etag?: string;
  lastModified?: string;
  gate?: HostGate;
  signal?: AbortSignal;
  retry?: Partial<RetryPolicy>;
  /** Body cap for this page (the fetch's default otherwise). */
  maxBytes?: number;
  /**
   * Default true. False: a redirect is returned as `{ kind: 'redirect' }` with its target, so the caller
   * can judge the target (robots.txt, scope, already seen) before requesting it.
   */
  followRedirects?: boolean;
}

interface Fetched {
  /** Final URL after redirects. */
  url: string;
  attempts: number;
}

export type FetchPageResult =
  | (Fetched & {
      kind: 'ok';
      status: number;
      html: string;
      contentType: string;
      etag?: string;
      lastModified?: string;
      truncated: boolean;
      /** `X-Robots-Tag: noindex` on the response. */
      noindex: boolean;
    })
  | (Fetched & {
      kind: 'pdf';
      status: number;
      body: Buffer;
      contentType: string;
      etag?: string;
      lastModified?: string;
      /** Cut at the size cap: a cut-off PDF cannot be read. */
      truncated: boolean;
      noindex: boolean;
    })
  | (Fetched & { kind: 'not_modified'; status: 304 })
  | (Fetched & { kind: 'gone'; status: 404 | 410 })
  | (Fetched & { kind: 'redirect'; status: number; location: string })
  | (Fetched & { kind: 'skipped'; reason: 'not_html'; status: number; contentType: string })
  | (Fetched & { kind: 'failed'; status?: number; message: string; blocked: boolean });

const ACCEPT_HTML = 'text/html,application/xhtml+xml;q=0.9,application/pdf;q=0.8,*/*;q=0.1';

/**
 * Fetches one page through the outbound guard and the host gate, retrying transient failures. Never throws
 * except when `signal` aborts; every other outcome is a {@link FetchPageResult}.
 */
export async function fetchPage(
  fetch: OutboundFetch,
  url: string,
  opts: FetchPageOptions = {},
): Promise<FetchPageResult> {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
  const host = new URL(url).host;
  const headers: Record<string, string> = { accept: ACCEPT_HTML };
  if (opts.etag) headers['if-none-match'] = opts.etag;
  if (opts.lastModified) headers['if-modified-since'] = opts.lastModified;

  const redirect = opts.followRedirects === false ? ('manual' as const) : ('follow' as const);
  const request = () => fetch(url, { headers, signal: opts.signal, maxBytes: opts.maxBytes, redirect });
  const gate = opts.gate;
  // Inside the slot: the time the host took, not the wait for the slot; told to the gate before the slot
  // is given back, so the next start to the host already keeps the gap it calls for.
  const observed = async (): Promise<OutboundResponse> => {
    const started = performance.now();
    try {
      const res = await request();
      gate?.observe(host, { status: res.status, latencyMs: performance.now() - started });
      return res;
    } catch (err) {
      if (err instanceof OutboundError && err.code === 'timeout')
        gate?.observe(host, { status: null, latencyMs: performance.now() - started });
      throw err;
    }
  };
  const outcome = await retrying<OutboundResponse>(
    async () => {
      try {
        const res = gate ? await gate.run(host, observed, opts.signal) : await request();
        return { response: res, status: res.status, headers: res.headers };
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        return { error: err, retryable: isRetryableError(err) };
      }
    },
    {
      maxAttempts: policy.maxAttempts,
      baseDelayMs: policy.baseDelayMs,
      maxDelayMs: policy.maxDelayMs,
      // A longer Retry-After than the longest backoff ends the retries (the page fails; the crawl goes on).
      maxWaitMs: policy.maxDelayMs,
      signal: opts.signal,
      // A 429 or 503 slows every worker's requests to the host, not only this page's next attempt.
      onRetry: ({ status, delayMs }) => {
        if (status === 429 || status === 503) opts.gate?.pause(host, delayMs);
      },
    },
  );
  if ('error' in outcome) {
    const err = outcome.error;
    return {
      kind: 'failed',
      url,
      attempts: outcome.attempts,
      message: err instanceof Error ? err.message : String(err),
      blocked: err instanceof OutboundBlockedError,
    };
  }
  return classify(outcome.response, outcome.attempts);
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

function classify(res: OutboundResponse, attempts: number): FetchPageResult {
  const base = { url: res.url, attempts };
  const location = REDIRECT_STATUSES.has(res.status) ? res.headers.get('location') : null;
  if (location !== null) {
    try {
      return { ...base, kind: 'redirect', status: res.status, location: new URL(location, res.url).href };
    } catch {
      return {
        ...base,
        kind: 'failed',
        status: res.status,
        message: 'invalid redirect location',
        blocked: false,
      };
    }
  }
  if (res.status === 304) return { ...base, kind: 'not_modified', status: 304 };
  if (res.status === 404 || res.status === 410) return { ...base, kind: 'gone', status: res.status };
  if (res.status < 200 || res.status >= 300) {
    return { ...base, kind: 'failed', status: res.status, message: `HTTP ${res.status}`, blocked: false };
  }
  const contentType = res.headers.get('content-type') ?? '';
  const etag = res.headers.get('etag') ?? undefined;
  const lastModified = res.headers.get('last-modified') ?? undefined;
  const noindex = /\b(?:noindex|none)\b/i.test(res.headers.get('x-robots-tag') ?? '');
  if (isPdfContentType(contentType) || (!contentType && looksLikePdf(res.body))) {
    return {
      ...base,
      kind: 'pdf',
      status: res.status,
      body: res.body,
      contentType: contentType || 'application/pdf',
      ...(etag ? { etag } : {}),
      ...(lastModified ? { lastModified } : {}),
      truncated: res.truncated,
      noindex,
    };
  }
  const html = contentType ? isHtmlContentType(contentType) : looksLikeHtml(res.body);
  if (!html) return { ...base, kind: 'skipped', reason: 'not_html', status: res.status, contentType };
  return {
    ...base,
    kind: 'ok',
    status: res.status,
    html: decodeHtml(res),
    contentType: contentType || 'text/html',
    ...(etag ? { etag } : {}),
    ...(lastModified ? { lastModified } : {}),
    truncated: res.truncated,
    noindex,
  };
}

/** True when the bytes start like a PDF (`%PDF-`): a PDF served without a content type. */
function looksLikePdf(body: Buffer): boolean {
  return body.subarray(0, 5).toString('latin1') === '%PDF-';
}

function isPdfContentType(contentType: string): boolean {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/pdf' || type === 'application/x-pdf';
}

function looksLikeHtml(body: Buffer): boolean {
  return /^\s*(?:<!doctype html|<html|<head|<body)/i.test(body.subarray(0, 512).toString('latin1'));
}

/** The header's charset wins; without one, a `<meta charset>` in the first KiB; else UTF-8. */
function decodeHtml(res: OutboundResponse): string {
  if (/charset=/i.test(res.headers.get('content-type') ?? '')) return res.text();
  const head = res.body.subarray(0, 1024).toString('latin1');
  const charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  if (charset) {
    try {
      return new TextDecoder(charset).decode(res.body);
    } catch {
      // Unknown label: UTF-8 below.
    }
  }
  return res.text();
}
