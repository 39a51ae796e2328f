/**
 * The HTTP layer every connector talks to its source through: the service's one retry policy and loop
 * (src/net/retry.ts, DESIGN.md rule 4), byte counting for `bytesSynced`, cancellation, and errors that
 * name the request without ever carrying credentials.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { isAppError } from '../lib/errors.ts';
import { OutboundBlockedError, OutboundError } from '../net/outbound.ts';
import { redactUrl } from '../net/redact-url.ts';
import {
  DEFAULT_BASE_DELAY_MS,
  DEFAULT_MAX_DELAY_MS,
  DEFAULT_MAX_WAIT_MS,
  isRetryableStatus,
  type AttemptResult,
  type RetryLoopOptions,
  type RetryNotice,
  type RetryOutcome,
  retrying,
} from '../net/retry.ts';
import { appendQuery } from './base-url.ts';
import type {
  AccessTokens,
  JsonResponse,
  OutboundFetch,
  OutboundResponse,
  SourceHttpClient,
  SourceRequestOptions,
  SourceResponse,
} from './types.ts';

// ---------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------

type SourceHttpErrorKind = 'status' | 'network' | 'invalid_response' | 'too_large';

/**
 * A source refused something the credentials are not allowed to read (a Shopify access scope, a page not
 * shared with a Notion integration), in words that say what to grant. A person can fix it, so the job
 * carries a `permission_missing` warning besides the failure; a connector throws or reports this rather
 * than a plain Error for exactly that case.
 */
export class SourcePermissionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourcePermissionError';
  }
}

/**
 * A request to a source failed for good. The message names the method, the URL without query or user
 * info, the status and the source's own error text; never headers or credentials.
 */
export class SourceHttpError extends Error {
  readonly kind: SourceHttpErrorKind;
  /** The last HTTP status, undefined for network errors. */
  readonly status: number | undefined;
  /** The request URL without query string or user info. */
  readonly url: string;
  readonly attempts: number;
  /** The source's own error text (from its error body), trimmed and shortened. */
  readonly vendorMessage: string | undefined;
  /** What the source last asked to wait, when it said (429 / 503 with `Retry-After` or reset headers). */
  readonly retryAfterMs: number | undefined;
  /** For network errors: a short reason (`ECONNREFUSED`, `timed out`...). */
  readonly detail: string | undefined;

  constructor(
    message: string,
    fields: {
      kind: SourceHttpErrorKind;
      status?: number | undefined;
      url: string;
      attempts: number;
      vendorMessage?: string | undefined;
      retryAfterMs?: number | undefined;
      detail?: string | undefined;
      cause?: unknown;
    },
  ) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = 'SourceHttpError';
    this.kind = fields.kind;
    this.status = fields.status;
    this.url = fields.url;
    this.attempts = fields.attempts;
    this.vendorMessage = fields.vendorMessage;
    this.retryAfterMs = fields.retryAfterMs;
    this.detail = fields.detail;
  }
}

export function isSourceHttpError(err: unknown): err is SourceHttpError {
  return err instanceof SourceHttpError;
}

/**
 * A request that failed for a cause that may pass (network trouble, 429, 5xx that outlasted the client's
 * retries): a document that failed so is worth another try (`retryable`); anything else is not.
 */
export function isTransientSourceError(err: unknown): boolean {
  return (
    isSourceHttpError(err) &&
    (err.kind === 'network' || (err.kind === 'status' && isRetryableStatus(err.status)))
  );
}

const MAX_VENDOR_TEXT = 300;

/**
 * The human-readable error text of a source's error body, for the shapes our sources use:
 * Notion `{message}`, Zendesk `{error, description}` / `{error: "..."}`, Confluence v2
 * `{errors:[{title, detail}]}` and v1 `{message}`, Shopify `{errors: "..."}` / `{errors:[{message}]}`,
 * GitBook `{error:{message}}`; plain-text bodies are used as they are (HTML pages are not).
 */
export function vendorErrorText(body: string): string | undefined {
  const trimmed = body.trim();
  if (!trimmed) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    if (/^<(!doctype|html|\?xml)/i.test(trimmed)) return undefined;
    return shorten(trimmed);
  }
  const text = textFromErrorJson(parsed);
  return text === undefined ? undefined : shorten(text);
}

function textFromErrorJson(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (!value || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.message === 'string') return v.message;
  if (typeof v.error === 'string') {
    return typeof v.description === 'string' ? `${v.error}: ${v.description}` : v.error;
  }
  if (v.error && typeof v.error === 'object') return textFromErrorJson(v.error);
  if (typeof v.errors === 'string') return v.errors;
  if (Array.isArray(v.errors) && v.errors.length > 0) {
    const first = v.errors[0] as Record<string, unknown> | string;
    if (typeof first === 'string') return first;
    if (first && typeof first === 'object') {
      const parts = [first.title, first.message, first.detail].filter((p) => typeof p === 'string' && p);
      if (parts.length > 0) return parts.join(': ');
    }
  }
  if (typeof v.reason === 'string') return v.reason;
  return undefined;
}

function shorten(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_VENDOR_TEXT ? `${oneLine.slice(0, MAX_VENDOR_TEXT - 1)}…` : oneLine;
}

// ---------------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------------

export interface SourceHttpClientOptions {
  fetch: OutboundFetch;
  /** Cancels requests and waits between retries; the client then rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Attempts per logical request, the first included. Default 5. */
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxWaitMs?: number;
  /** Time limit of one attempt; a timeout counts as a network error. Default 60 s. */
  attemptTimeoutMs?: number;
  /** Largest response body accepted. Default 32 MiB. */
  maxResponseBytes?: number;
  /** Sent with every request unless a request sets the same header. */
  defaultHeaders?: Record<string, string>;
  /** Waits `ms`, rejecting when `signal` fires. Default: node:timers/promises. Tests may shorten it. */
  sleep?: RetryLoopOptions['sleep'];
  now?: () => number;
  random?: () => number;
  /**
   * Paces requests (every attempt) to this sustained rate, allowing bursts of one second's worth: the
   * source's documented limit (`Connector.requestsPerSecond`). Unset: no pacing.
   */
  requestsPerSecond?: number;
  /** Called before each wait, for logging and metrics. Never receives headers or bodies. */
  onRetry?: (info: RetryNotice & { method: string; url: string }) => void;
  /**
   * The connection's expiring access token (a sync's): a header carrying one of its tokens (`Bearer` or
   * bare) gets the current one, and a 401 to it is answered by one refresh and one more try. A request's
   * own `accessTokens` replaces it for that request.
   */
  accessTokens?: AccessTokens;
}

const DEFAULT_MAX_ATTEMPTS = 5;
const DEFAULT_ATTEMPT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
// No user-agent here: the outbound fetch sets the operator's one.
const DEFAULT_HEADERS: Record<string, string> = { accept: 'application/json' };

const defaultSleep = (ms: number, signal?: AbortSignal) => delay(ms, undefined, signal ? { signal } : {});

/**
 * A token bucket of `perSecond` tokens refilled continuously, holding at most one second's worth: the
 * returned function resolves when the next request may go. Concurrent callers queue in call order.
 */
function requestPacer(
  perSecond: number,
  opts: {
    now: () => number;
    sleep: (ms: number, signal?: AbortSignal) => Promise<unknown>;
    signal?: AbortSignal | undefined;
  },
): () => Promise<void> {
  const capacity = Math.max(1, perSecond);
  let tokens = capacity;
  let last = opts.now();
  let queue: Promise<void> = Promise.resolve();
  const take = async () => {
    const t = opts.now();
    tokens = Math.min(capacity, tokens + ((t - last) / 1000) * perSecond);
    last = t;
    if (tokens < 1) {
      const waitMs = Math.ceil(((1 - tokens) / perSecond) * 1000);
      await opts.sleep(waitMs, opts.signal);
      tokens = Math.min(capacity, tokens + (waitMs / 1000) * perSecond);
      last = opts.now();
    }
    tokens -= 1;
  };
  return () => {
    const next = queue.then(take);
    queue = next.catch(() => undefined);
    return next;
  };
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

function describe(method: string, url: string): string {
  return `${method} ${url}`;
}

/** The error of a request the retry loop gave up on: no response at all, or a failing status to the end. */
function gaveUpError(
  outcome: RetryOutcome<OutboundResponse>,
  upperMethod: string,
  shownUrl: string,
): SourceHttpError {
  const { attempts, stop } = outcome;
  // Gave up on a retryable failure.
  if (!('response' in outcome)) {
    const detail = networkMessage(outcome.error);
    return new SourceHttpError(
      `${describe(upperMethod, shownUrl)} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${detail}`,
      {
        kind: 'network',
        url: shownUrl,
        attempts,
        detail,
        cause: outcome.error,
      },
    );
  }
  const res = outcome.response;
  const vendorMessage = vendorErrorText(res.text());
  const why =
    stop.reason === 'wait_too_long'
      ? `asked to wait ${Math.ceil((stop.retryAfterMs ?? 0) / 1000)} s, longer than allowed`
      : `after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
  return new SourceHttpError(
    `${describe(upperMethod, shownUrl)} answered HTTP ${res.status} ${why}${vendorMessage ? `: ${vendorMessage}` : ''}`,
    {
      kind: 'status',
      status: res.status,
      url: shownUrl,
      attempts,
      vendorMessage,
      retryAfterMs: stop.retryAfterMs,
    },
  );
}

/** The body of a 2xx JSON answer, parsed by `schema`; any other status, or another shape, is an error. */
function jsonBody<T>(
  res: SourceResponse,
  method: string,
  url: string | URL,
  schema: z.ZodType<T>,
): JsonResponse<T> {
  const shownUrl = redactUrl(res.url || url);
  if (res.status < 200 || res.status > 299) {
    const vendorMessage = vendorErrorText(res.text());
    throw new SourceHttpError(
      `${describe(method.toUpperCase(), shownUrl)} answered HTTP ${res.status}${vendorMessage ? `: ${vendorMessage}` : ''}`,
      {
        kind: 'status',
        status: res.status,
        url: shownUrl,
        attempts: 1,
        vendorMessage,
      },
    );
  }
  const parsed = schema.safeParse(res.json());
  if (!parsed.success) {
    throw new SourceHttpError(
      `${describe(method.toUpperCase(), shownUrl)} answered with an unexpected shape: ${z.prettifyError(parsed.error).replace(/\s+/g, ' ')}`,
      {
        kind: 'invalid_response',
        status: res.status,
        url: shownUrl,
        attempts: 1,
      },
    );
  }
  return { data: parsed.data, status: res.status, headers: res.headers, url: res.url };
}

/** A request as every attempt of it sends it. */
interface PreparedRequest {
  target: URL;
  /** The URL with credentials in its query redacted: the one errors and notices show. */
  shownUrl: string;
  upperMethod: string;
  headers: Record<string, string>;
  body: string | undefined;
  maxBytes: number;
}

function prepareRequest(
  method: string,
  url: string | URL,
  opts: SourceRequestOptions,
  client: { defaultHeaders: Record<string, string>; maxResponseBytes: number },
): PreparedRequest {
  const target = new URL(url);
  if (opts.query) appendQuery(target, opts.query);
  const headers = { ...client.defaultHeaders, ...lowerKeys(opts.headers ?? {}) };
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  }
  return {
    target,
    shownUrl: redactUrl(target),
    upperMethod: method.toUpperCase(),
    headers,
    body,
    maxBytes: opts.maxBytes ?? client.maxResponseBytes,
  };
}

/** One attempt of a request: paced, under its own time limit; what the retry loop decides on. */
async function sendAttempt(
  req: PreparedRequest,
  attempt: number,
  client: {
    fetch: OutboundFetch;
    signal: AbortSignal | undefined;
    attemptTimeoutMs: number;
    pace: (() => Promise<void>) | undefined;
    counts: { bytesReceived: number; requestCount: number };
  },
): Promise<AttemptResult<OutboundResponse>> {
  const { signal, attemptTimeoutMs, pace } = client;
  const { target, shownUrl, upperMethod, headers, body, maxBytes } = req;
  const attemptSignal = signal
    ? AbortSignal.any([signal, AbortSignal.timeout(attemptTimeoutMs)])
    : AbortSignal.timeout(attemptTimeoutMs);
  if (pace) {
    try {
      await pace();
    } catch (err) {
      throw signal?.aborted ? abortReason(signal) : err;
    }
  }
  client.counts.requestCount++;
  let res: OutboundResponse;
  try {
    res = await client.fetch(target, {
      method: upperMethod,
      headers,
      ...(body === undefined ? {} : { body }),
      signal: attemptSignal,
      maxBytes,
    });
  } catch (err) {
    if (signal?.aborted) throw abortReason(signal);
    // The outbound guard refusing an address, or a redirect loop, is not a transient failure.
    if (isPermanentFetchError(err)) throw err;
    return { error: err, retryable: true };
  }
  client.counts.bytesReceived += res.body.length;
  if (res.truncated) {
    throw new SourceHttpError(`${describe(upperMethod, shownUrl)} answered more than ${maxBytes} bytes`, {
      kind: 'too_large',
      status: res.status,
      url: shownUrl,
      attempts: attempt,
    });
  }
  return { response: res, status: res.status, headers: res.headers };
}

/** The attempts of one request under the client's retry policy, paced when the source declares a rate. */
function retryingSender(
  options: SourceHttpClientOptions,
  counts: { bytesReceived: number; requestCount: number },
): (req: PreparedRequest) => ReturnType<typeof retrying<OutboundResponse>> {
  const {
    fetch,
    signal,
    maxAttempts = DEFAULT_MAX_ATTEMPTS,
    baseDelayMs = DEFAULT_BASE_DELAY_MS,
    maxDelayMs = DEFAULT_MAX_DELAY_MS,
    maxWaitMs = DEFAULT_MAX_WAIT_MS,
    attemptTimeoutMs = DEFAULT_ATTEMPT_TIMEOUT_MS,
    sleep,
    now = Date.now,
    random = Math.random,
    onRetry,
  } = options;
  const pace = options.requestsPerSecond
    ? requestPacer(options.requestsPerSecond, { now, sleep: sleep ?? defaultSleep, signal })
    : undefined;
  return (req: PreparedRequest) =>
    retrying<OutboundResponse>(
      (attempt) => sendAttempt(req, attempt, { fetch, signal, attemptTimeoutMs, pace, counts }),
      {
        maxAttempts,
        baseDelayMs,
        maxDelayMs,
        maxWaitMs,
        signal,
        sleep,
        now,
        random,
        onRetry: (notice) => onRetry?.({ method: req.upperMethod, url: req.shownUrl, ...notice }),
      },
    );
}

/** Creates the client connectors use as `ctx.http`. */
export function createSourceHttpClient(options: SourceHttpClientOptions): SourceHttpClient {
  const { maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES } = options;
  const defaultHeaders = lowerKeys({ ...DEFAULT_HEADERS, ...options.defaultHeaders });
  const counts = { bytesReceived: 0, requestCount: 0 };
  const attempts = retryingSender(options, counts);

  async function request(
    method: string,
    url: string | URL,
    opts: SourceRequestOptions = {},
  ): Promise<SourceResponse> {
    const req = prepareRequest(method, url, opts, { defaultHeaders, maxResponseBytes });
    const { shownUrl, upperMethod } = req;
    const tokens = opts.accessTokens ?? options.accessTokens;
    const carried = tokens ? await putCurrentToken(req, tokens) : undefined;
    let outcome = await attempts(req);
    if (tokens && carried && 'response' in outcome && outcome.response.status === 401) {
      // An access token can be refused before its announced expiry (revoked, rotated by another process,
      // clocks apart): one refresh, one more try; a second 401 is the connector's to name.
      req.headers[carried.header] = `${carried.prefix}${await tokens.refresh(carried.token)}`;
      outcome = await attempts(req);
    }

    if ('response' in outcome && outcome.stop.reason === 'not_retryable') {
      return wrapResponse(outcome.response, upperMethod, shownUrl, outcome.attempts);
    }
    throw gaveUpError(outcome, upperMethod, shownUrl);
  }

  async function sendJson<T>(
    method: string,
    url: string | URL,
    schema: z.ZodType<T>,
    opts: SourceRequestOptions,
  ): Promise<JsonResponse<T>> {
    return jsonBody(await request(method, url, opts), method, url, schema);
  }

  return {
    request,
    requestJson: (method, url, schema, opts = {}) => sendJson(method, url, schema, opts),
    getJson: async (url, schema, opts = {}) => (await sendJson('GET', url, schema, opts)).data,
    postJson: async (url, body, schema, opts = {}) =>
      (await sendJson('POST', url, schema, { ...opts, json: body })).data,
    get bytesReceived() {
      return counts.bytesReceived;
    },
    get requestCount() {
      return counts.requestCount;
    },
  };
}

/** Where a request carries one of the connection's access tokens: the header, what precedes the token. */
interface CarriedToken {
  header: string;
  /** `Bearer ` in an Authorization header; empty where the header holds the bare token. */
  prefix: string;
  /** The token sent. */
  token: string;
}

/**
 * Puts the current access token in place of one of the connection's tokens, in whichever header carries
 * it: `Authorization: Bearer …`, or a header whose whole value is the token (Shopify's
 * `X-Shopify-Access-Token`). Returns where it went, or undefined for a request that carries none.
 */
async function putCurrentToken(
  req: PreparedRequest,
  tokens: AccessTokens,
): Promise<CarriedToken | undefined> {
  for (const [header, value] of Object.entries(req.headers)) {
    const bearer = /^(Bearer\s+)(\S+)$/i.exec(value);
    const [prefix, carried] = bearer ? [bearer[1]!, bearer[2]!] : ['', value];
    if (!carried || !tokens.owns(carried)) continue;
    const token = await tokens.current();
    req.headers[header] = `${prefix}${token}`;
    return { header, prefix, token };
  }
  return undefined;
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/** Errors of the fetch layer that another attempt cannot change. */
function isPermanentFetchError(err: unknown): boolean {
  if (isAppError(err) || err instanceof OutboundBlockedError) return true;
  return err instanceof OutboundError && (err.code === 'too_many_redirects' || err.code === 'invalid_url');
}

/** A short, secret-free reason for a failed connection: the system error code when there is one. */
function networkMessage(err: unknown): string {
  if (!(err instanceof Error)) return 'network error';
  if (err.name === 'TimeoutError' || (err instanceof OutboundError && err.code === 'timeout'))
    return 'timed out';
  const causeCode: unknown = (err.cause as { code?: unknown } | undefined)?.code;
  if (typeof causeCode === 'string') return causeCode;
  const code: unknown = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code !== 'network') return code;
  return err.message;
}

function wrapResponse(res: OutboundResponse, method: string, url: string, attempts: number): SourceResponse {
  return {
    status: res.status,
    headers: res.headers,
    url: res.url,
    text: () => res.text(),
    json: () => {
      try {
        return JSON.parse(res.text());
      } catch {
        throw new SourceHttpError(
          `${describe(method, url)} answered HTTP ${res.status} with a body that is not JSON`,
          {
            kind: 'invalid_response',
            status: res.status,
            url,
            attempts,
          },
        );
      }
    },
  };
}
