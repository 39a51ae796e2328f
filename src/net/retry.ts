/**
 * The one retry policy of the service, for every request to the outside (source APIs, crawled sites,
 * the embedding provider): a pure function of the response, its headers and the attempt count
 * ({@link decideRetry}), and the one loop that applies it ({@link retrying}).
 */
import { setTimeout as sleepTimer } from 'node:timers/promises';

/** Header access that works for `Headers` and plain objects (keys matched case-insensitively). */
export type HeaderSource = Headers | Record<string, string | undefined>;

export interface RetryInput {
  /** The response status; `undefined` for a network error (no response at all). */
  status: number | undefined;
  headers?: HeaderSource;
  /** Attempts made so far, including the one that just failed (1 after the first). */
  attempt: number;
  maxAttempts: number;
  /** Current time, epoch milliseconds (for HTTP-date and epoch reset headers). */
  now: number;
  /** First backoff step; doubles per attempt. Default 500 ms. */
  baseDelayMs?: number;
  /** Cap of the computed backoff. Default 30 s. */
  maxDelayMs?: number;
  /**
   * Longest wait a source may demand through `Retry-After` / reset headers. A longer demand gives up at
   * once (retrying earlier is pointless) with reason `wait_too_long`. Default 120 s.
   */
  maxWaitMs?: number;
  /** A number in [0, 1) for jitter; the caller passes `Math.random()`. Default 0.5. */
  random?: number;
}

export type RetryDecision =
  | { retry: true; delayMs: number; basis: 'retry-after' | 'rate-limit-reset' | 'backoff' }
  | {
      retry: false;
      reason: 'not_retryable' | 'attempts_exhausted' | 'wait_too_long';
      /** What the source asked to wait, when it said. */
      retryAfterMs?: number;
    };

export const DEFAULT_BASE_DELAY_MS = 500;
export const DEFAULT_MAX_DELAY_MS = 30_000;
export const DEFAULT_MAX_WAIT_MS = 120_000;

/**
 * Statuses worth another try: 408, 429 and server errors except those that cannot change by waiting
 * (501 Not Implemented, 505 HTTP Version Not Supported). Notion's 529 `service_overload` is a 5xx.
 * `undefined` (network error, timeout) is retryable too.
 */
export function isRetryableStatus(status: number | undefined): boolean {
  if (status === undefined) return true;
  if (status === 408 || status === 429) return true;
  return status >= 500 && status <= 599 && status !== 501 && status !== 505;
}

function header(headers: HeaderSource | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === lower && value !== undefined) return value;
  }
  return undefined;
}

function headerEntries(headers: HeaderSource | undefined): [string, string][] {
  if (!headers) return [];
  if (headers instanceof Headers) return [...headers.entries()];
  return Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined);
}

const NUMBER = /^\s*\d+(?:\.\d+)?\s*$/;

/** `Retry-After`: delta seconds (`2`, `2.0`) or an HTTP date. Milliseconds to wait, or undefined. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  if (NUMBER.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * A rate-limit reset value, in whichever form the sources use: delta seconds (IETF `RateLimit-Reset`,
 * Zendesk `ratelimit-reset`), epoch seconds (GitBook `X-RateLimit-Reset`), epoch milliseconds, or an
 * ISO-8601 time (Confluence `X-RateLimit-Reset: 2024-05-20T08:43Z`). Milliseconds to wait, or undefined.
 */
export function parseResetValue(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  if (NUMBER.test(value)) {
    const n = Number(value);
    if (n >= 1e12) return n - now; // epoch milliseconds
    if (n >= 1e9) return n * 1000 - now; // epoch seconds
    return Math.ceil(n * 1000); // delta seconds
  }
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at - now;
}

/** Zendesk's per-endpoint header, e.g. `zendesk-ratelimit-tickets-index: total=100; remaining=0; resets=41`. */
function zendeskResetMs(headers: HeaderSource | undefined): number | undefined {
  let longest: number | undefined;
  for (const [key, value] of headerEntries(headers)) {
    if (!key.toLowerCase().startsWith('zendesk-ratelimit-')) continue;
    const remaining = /remaining=(\d+)/.exec(value)?.[1];
    const resets = /resets=(\d+)/.exec(value)?.[1];
    if (remaining === '0' && resets !== undefined) longest = Math.max(longest ?? 0, Number(resets) * 1000);
  }
  return longest;
}

/** The wait a 429 response asks for through reset headers (not `Retry-After`), when positive. */
function resetHeaderDelay(headers: HeaderSource | undefined, now: number): number | undefined {
  const candidates = [
    parseResetValue(header(headers, 'ratelimit-reset'), now),
    parseResetValue(header(headers, 'x-ratelimit-reset'), now),
    parseResetValue(header(headers, 'x-rate-limit-reset'), now),
    zendeskResetMs(headers),
  ].filter((v): v is number => v !== undefined && v > 0);
  return candidates.length > 0 ? Math.max(...candidates) : undefined;
}

/**
 * Whether to retry a failed attempt and how long to wait first. Pure: the same input gives the same
 * answer. Order of evidence: `Retry-After` (any retryable status), then rate-limit reset headers (429
 * only; a reset in the past is taken as clock skew and ignored), then exponential backoff with equal
 * jitter (`d/2 + random·d/2`, `d = min(maxDelayMs, baseDelayMs·2^(attempt-1))`).
 */
export function decideRetry(input: RetryInput): RetryDecision {
  const {
    status,
    headers,
    attempt,
    maxAttempts,
    now,
    baseDelayMs = DEFAULT_BASE_DELAY_MS,
    maxDelayMs = DEFAULT_MAX_DELAY_MS,
    maxWaitMs = DEFAULT_MAX_WAIT_MS,
    random = 0.5,
  } = input;
  if (!isRetryableStatus(status)) return { retry: false, reason: 'not_retryable' };

  const retryAfter = status === undefined ? undefined : parseRetryAfter(header(headers, 'retry-after'), now);
  const reset = status === 429 && retryAfter === undefined ? resetHeaderDelay(headers, now) : undefined;
  const demanded = retryAfter ?? reset;

  if (attempt >= maxAttempts) {
    return demanded === undefined
      ? { retry: false, reason: 'attempts_exhausted' }
      : { retry: false, reason: 'attempts_exhausted', retryAfterMs: demanded };
  }
  if (demanded !== undefined) {
    if (demanded > maxWaitMs) return { retry: false, reason: 'wait_too_long', retryAfterMs: demanded };
    return {
      retry: true,
      delayMs: demanded,
      basis: retryAfter !== undefined ? 'retry-after' : 'rate-limit-reset',
    };
  }
  const step = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, attempt - 1));
  const jitter = Math.min(Math.max(random, 0), 1);
  return { retry: true, delayMs: Math.round(step / 2 + (jitter * step) / 2), basis: 'backoff' };
}

// ---------------------------------------------------------------------------------------------------
// The loop
// ---------------------------------------------------------------------------------------------------

/** What one attempt produced: a response (its status and headers decide), or no response at all. */
export type AttemptResult<R> =
  | { response: R; status: number; headers?: HeaderSource }
  /** A transport failure. `retryable: false` ends the loop at once (a refused address, a redirect loop). */
  | { error: unknown; retryable: boolean };

/** Why the loop stopped (`not_retryable` includes every success). */
export type RetryStop = Extract<RetryDecision, { retry: false }>;

/** The last attempt's result, how many attempts were made, and why there was no other. */
export type RetryOutcome<R> =
  | { response: R; attempts: number; stop: RetryStop }
  | { error: unknown; attempts: number; stop: RetryStop };

/** One wait before another attempt, for logging, metrics and per-host pauses. */
export interface RetryNotice {
  /** The attempt that just failed (1 after the first). */
  attempt: number;
  /** Its status; undefined for a transport failure. */
  status: number | undefined;
  delayMs: number;
  basis: Extract<RetryDecision, { retry: true }>['basis'];
}

/** A caller's bounds on the one policy, and the clock, dice and sleep (injectable for tests). */
export interface RetryLoopOptions {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxWaitMs?: number;
  /** Cancels the wait between attempts: the loop then rejects with `signal.reason`. */
  signal?: AbortSignal | undefined;
  /** Waits `ms`, rejecting when `signal` fires. Default: node:timers/promises. */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  now?: () => number;
  random?: () => number;
  /** Called before each wait. */
  onRetry?: (notice: RetryNotice) => void;
}

async function defaultSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  await sleepTimer(ms, undefined, signal ? { signal } : undefined);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

/**
 * The one retry loop of the service: runs `attempt` until {@link decideRetry} says stop, waiting what it
 * says in between. It never throws for a failed attempt; it answers the last one, so each caller keeps
 * its own way of reporting failure (an error of its own, or a result value). What `attempt` throws
 * (cancellation, a permanent failure) propagates at once.
 */
export async function retrying<R>(
  attempt: (attemptNumber: number) => Promise<AttemptResult<R>>,
  opts: RetryLoopOptions,
): Promise<RetryOutcome<R>> {
  const { signal, sleep = defaultSleep, now = Date.now, random = Math.random } = opts;
  for (let n = 1; ; n++) {
    if (signal?.aborted) throw abortReason(signal);
    const result = await attempt(n);
    if ('error' in result && !result.retryable) {
      return { error: result.error, attempts: n, stop: { retry: false, reason: 'not_retryable' } };
    }
    const decision = decideRetry({
      status: 'response' in result ? result.status : undefined,
      ...('response' in result && result.headers ? { headers: result.headers } : {}),
      attempt: n,
      maxAttempts: opts.maxAttempts,
      now: now(),
      ...(opts.baseDelayMs === undefined ? {} : { baseDelayMs: opts.baseDelayMs }),
      ...(opts.maxDelayMs === undefined ? {} : { maxDelayMs: opts.maxDelayMs }),
      ...(opts.maxWaitMs === undefined ? {} : { maxWaitMs: opts.maxWaitMs }),
      random: random(),
    });
    if (!decision.retry) {
      return 'response' in result
        ? { response: result.response, attempts: n, stop: decision }
        : { error: result.error, attempts: n, stop: decision };
    }
    opts.onRetry?.({
      attempt: n,
      status: 'response' in result ? result.status : undefined,
      delayMs: decision.delayMs,
      basis: decision.basis,
    });
    if (decision.delayMs > 0) {
      try {
        await sleep(decision.delayMs, signal);
      } catch (err) {
        if (signal?.aborted) throw abortReason(signal);
        throw err;
      }
    }
  }
}
