/**
 * The one door out of the service. Every outbound HTTP request (crawler, sitemaps, robots.txt, source
 * connectors) goes through an {@link OutboundFetch} so that one policy decides which addresses may be
 * reached: only globally routable unicast addresses, checked on the address each socket actually connects
 * to (a DNS lookup hook, so a name cannot resolve to a public address for the check and a private one for
 * the connection), on every redirect hop, for every scheme, port and host spelling.
 *
 * Over 400 lines on purpose: the address policy, the guarded lookup, the redirect walk and the body cap
 * must be read together to see that no path out skips the check; split, each part would look safe alone.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import ipaddr from 'ipaddr.js';
import { redactUrl } from './redact-url.ts';

/** A resolved address as `dns.lookup(..., { all: true })` reports it. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to its addresses; injectable so tests can make a name point anywhere. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

interface OutboundOptions {
  /** Operator setting (`KB_CRAWL_ALLOW_PRIVATE`): when true every address may be reached. */
  allowPrivate: boolean;
  /** Sent on every request unless the caller sets its own `user-agent` header. */
  userAgent: string;
  /** Whole-request deadline (connect, headers, body, every redirect hop). Default 30 s. */
  timeoutMs?: number;
  /** Redirect hops followed before giving up. Default 5. */
  maxRedirects?: number;
  /** Decoded body bytes kept; reading stops past it and the response is marked truncated. Default 10 MiB. */
  maxBytes?: number;
  /** Host name resolver; defaults to the system resolver (`dns.lookup`). */
  lookup?: Resolver;
  /**
   * Address policy used when `allowPrivate` is false; defaults to {@link isGlobalAddress}. Tests inject a
   * policy that admits one loopback address to prove that the others are refused (redirect hops).
   */
  isAllowedAddress?: (address: string) => boolean;
}

export interface OutboundRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Overrides the instance's `maxBytes` for this request. */
  maxBytes?: number;
  /**
   * `follow` (default): redirects are followed, each hop checked. `manual`: a redirect response is returned
   * as it is (body empty), for callers that judge every hop themselves (the crawler checks robots.txt and
   * its scope before requesting a redirect's target).
   */
  redirect?: 'follow' | 'manual';
}

export interface OutboundResponse {
  status: number;
  headers: Headers;
  /** Final URL after redirects. */
  url: string;
  redirected: boolean;
  /** Decoded (content-encoding removed) body, at most `maxBytes` long. */
  body: Buffer;
  truncated: boolean;
  /** Body as text, in the charset named by `content-type` (UTF-8 when none or unknown). */
  text(): string;
  /** Body parsed as JSON; throws on invalid JSON. */
  json(): unknown;
}

export type OutboundFetch = (url: string | URL, init?: OutboundRequestInit) => Promise<OutboundResponse>;

type OutboundBlockReason = 'scheme_not_allowed' | 'address_not_allowed';

/** The request was refused by policy before any byte reached the target. */
export class OutboundBlockedError extends Error {
  readonly reason: OutboundBlockReason;

  constructor(reason: OutboundBlockReason, message: string) {
    super(message);
    this.name = 'OutboundBlockedError';
    this.reason = reason;
  }
}

type OutboundErrorCode = 'timeout' | 'too_many_redirects' | 'invalid_url' | 'network';

/** The request was allowed but did not produce a response (timeout, redirect loop, connection failure). */
export class OutboundError extends Error {
  readonly code: OutboundErrorCode;

  constructor(code: OutboundErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutboundError';
    this.code = code;
  }
}

// Only the global unicast allocation (2000::/3) is routable on the public internet; ipaddr.js calls
// some addresses outside it (e.g. deprecated IPv4-compatible ::a.b.c.d) plain 'unicast'.
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * True when `address` (an IP literal, IPv4 or IPv6, brackets allowed) is a globally routable unicast
 * address: not loopback, private, link-local, unique-local, CGNAT, multicast, reserved, documentation,
 * metadata or any other special range. IPv4-mapped IPv6 addresses are judged by their IPv4 address.
 */
export function isGlobalAddress(address: string): boolean {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // Zone ids (fe80::1%eth0) only occur on link-local addresses.
  if (literal.includes('%') || !ipaddr.isValid(literal)) return false;
  let parsed = ipaddr.parse(literal);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    else if (!v6.match(IPV6_GLOBAL_UNICAST)) return false;
  }
  return parsed.range() === 'unicast';
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// The only request headers forwarded when a redirect leaves the origin. Everything else the caller set is
// dropped: sources send tokens in custom headers (`x-shopify-access-token`, `x-api-key`...) that no deny
// list could name, and validators (`if-none-match`) describe a resource of the first origin.
const CROSS_ORIGIN_SAFE_HEADERS = new Set([
  'user-agent',
  'accept',
  'accept-language',
  'accept-encoding',
  'content-type',
]);

const defaultResolver: Resolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true })) as ResolvedAddress[];

/** Creates the guarded fetch; one instance per policy (it owns keep-alive connection pools). */
export function createOutboundFetch(opts: OutboundOptions): OutboundFetch {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxRedirects = opts.maxRedirects ?? 5;
  const defaultMaxBytes = opts.maxBytes ?? 10 * 1024 * 1024;
  const resolve = opts.lookup ?? defaultResolver;
  const allowed = opts.allowPrivate ? () => true : (opts.isAllowedAddress ?? isGlobalAddress);
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
  };
  const lookup = guardedLookup(resolve, allowed);

  return async function outboundFetch(input, init = {}) {
    const maxBytes = init.maxBytes ?? defaultMaxBytes;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    let url = toUrl(input);
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    const headers: Record<string, string> = {
      'user-agent': opts.userAgent,
      'accept-encoding': 'gzip, deflate, br',
      accept: '*/*',
    };
    for (const [k, v] of Object.entries(init.headers ?? {})) headers[k.toLowerCase()] = v;

    for (let hop = 0; ; hop++) {
      checkTarget(url, allowed);
      let res: RawResponse;
      try {
        res = await requestOnce(url, method, headers, body, signal, maxBytes, agents, lookup);
      } catch (err) {
        throw mapError(err, url, signal, init.signal, timeoutMs);
      }
      const location = res.headers.get('location');
      if (!REDIRECT_STATUSES.has(res.status) || !location || init.redirect === 'manual') {
        return toResponse(res, url, { redirected: hop > 0 });
      }
      if (hop >= maxRedirects) {
        throw new OutboundError(
          'too_many_redirects',
          `more than ${maxRedirects} redirects from ${redactUrl(url)}`,
        );
      }
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new OutboundError('invalid_url', `invalid redirect location from ${redactUrl(url)}`);
      }
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        if (method !== 'HEAD') method = 'GET';
        body = undefined;
        delete headers['content-type'];
        delete headers['content-length'];
      }
      if (next.origin !== url.origin) {
        for (const h of Object.keys(headers)) if (!CROSS_ORIGIN_SAFE_HEADERS.has(h)) delete headers[h];
      }
      url = next;
    }
  };
}

/**
 * The lookup hook the sockets use, called by the socket itself for every connection it opens to a host
 * name: the address checked is the address connected to. Disallowed addresses are dropped; none left
 * means the request is refused.
 */
function guardedLookup(resolve: Resolver, allowed: (address: string) => boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = addresses.filter((a) => (family === 0 || a.family === family) && allowed(a.address));
        const first = usable[0];
        if (!first) {
          const err = new OutboundBlockedError(
            'address_not_allowed',
            `refused to connect to ${hostname}: it resolves only to non-public addresses`,
          );
          callback(err as unknown as NodeJS.ErrnoException, '', 0);
        } else if (options.all) {
          (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

function toUrl(input: string | URL): URL {
  try {
    // The WHATWG parser normalises numeric host spellings (2130706433, 0x7f.1, 017700000001) to dotted
    // IPv4, so the policy below sees the address the socket would use.
    return new URL(String(input));
  } catch {
    throw new OutboundError('invalid_url', 'invalid URL');
  }
}

/** Scheme check and, for IP-literal hosts (which never reach the lookup hook), the address check. */
function checkTarget(url: URL, allowed: (address: string) => boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundBlockedError(
      'scheme_not_allowed',
      `refused ${url.protocol} URL: only http and https are allowed`,
    );
  }
  const host = hostOf(url);
  if (net.isIP(host) !== 0 && !allowed(host)) {
    throw new OutboundBlockedError(
      'address_not_allowed',
      `refused to connect to ${host}: not a public address`,
    );
  }
}

function hostOf(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

interface RawResponse {
  status: number;
  headers: Headers;
  body: Buffer;
  truncated: boolean;
}

function requestOnce(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal,
  maxBytes: number,
  agents: { 'http:': http.Agent; 'https:': https.Agent },
  lookup: net.LookupFunction,
): Promise<RawResponse> {
  return new Promise((resolvePromise, reject) => {
    const isHttps = url.protocol === 'https:';
    const reqHeaders = { ...headers };
    if (body !== undefined) reqHeaders['content-length'] = String(Buffer.byteLength(body));
    const req = (isHttps ? https : http).request({
      protocol: url.protocol,
      hostname: hostOf(url),
      port: url.port || undefined,
      path: url.pathname + url.search,
      method,
      headers: reqHeaders,
      agent: isHttps ? agents['https:'] : agents['http:'],
      lookup,
      signal,
      servername: isHttps && net.isIP(hostOf(url)) === 0 ? hostOf(url) : undefined,
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const resHeaders = new Headers();
      for (const [k, v] of Object.entries(res.headers)) {
        if (Array.isArray(v)) for (const item of v) resHeaders.append(k, item);
        else if (v !== undefined) resHeaders.set(k, v);
      }
      // Redirect bodies are never read; HEAD and 204/304 have none.
      if (REDIRECT_STATUSES.has(status) || method === 'HEAD' || status === 204 || status === 304) {
        res.resume();
        res.on('error', () => {});
        resolvePromise({ status, headers: resHeaders, body: Buffer.alloc(0), truncated: false });
        return;
      }
      readCapped(res, resHeaders.get('content-encoding'), maxBytes).then(
        ({ body: buf, truncated }) => resolvePromise({ status, headers: resHeaders, body: buf, truncated }),
        reject,
      );
    });
    req.end(body);
  });
}

/** Reads and decodes a body, stopping (and closing the connection) once `maxBytes` decoded bytes arrived. */
function readCapped(
  res: http.IncomingMessage,
  encoding: string | null,
  maxBytes: number,
): Promise<{ body: Buffer; truncated: boolean }> {
  const enc = (encoding ?? '').trim().toLowerCase();
  let stream: Readable = res;
  // The cap applies to decoded bytes, so a small compressed bomb cannot blow up memory.
  if (enc === 'gzip' || enc === 'x-gzip') stream = res.pipe(zlib.createGunzip());
  else if (enc === 'deflate') stream = res.pipe(zlib.createInflate());
  else if (enc === 'br') stream = res.pipe(zlib.createBrotliDecompress());

  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      resolvePromise({ body: Buffer.concat(chunks, size), truncated });
    };
    stream.on('data', (chunk: Buffer) => {
      if (done) return;
      const room = maxBytes - size;
      if (chunk.length > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        size += room;
        finish(true);
        // Past the cap: stop reading and drop the connection rather than download the rest.
        res.destroy();
        if (stream !== res) stream.destroy();
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    stream.on('end', () => finish(false));
    stream.on('error', (err) => {
      if (!done) {
        done = true;
        reject(err);
      }
    });
    res.on('error', (err) => {
      if (!done) {
        done = true;
        reject(err);
      }
    });
    res.on('aborted', () => {
      if (!done) {
        done = true;
        reject(new OutboundError('network', 'connection closed before the response body ended'));
      }
    });
  });
}

function mapError(
  err: unknown,
  url: URL,
  signal: AbortSignal,
  callerSignal: AbortSignal | undefined,
  timeoutMs: number,
): unknown {
  if (err instanceof OutboundBlockedError || err instanceof OutboundError) return err;
  // Node wraps errors from the lookup hook in some code paths (happy eyeballs); unwrap ours.
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (cause instanceof OutboundBlockedError) return cause;
  if (callerSignal?.aborted) return callerSignal.reason;
  if (signal.aborted) {
    return new OutboundError('timeout', `request to ${redactUrl(url)} timed out after ${timeoutMs} ms`, {
      cause: err,
    });
  }
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return new OutboundError('network', `request to ${redactUrl(url)} failed${code ? `: ${code}` : ''}`, {
    cause: err,
  });
}

function toResponse(raw: RawResponse, url: URL, { redirected }: { redirected: boolean }): OutboundResponse {
  const { status, headers, body, truncated } = raw;
  return {
    status,
    headers,
    url: url.href,
    redirected,
    body,
    truncated,
    text: () => decodeText(body, headers.get('content-type')),
    json: () => JSON.parse(decodeText(body, headers.get('content-type'))),
  };
}

function decodeText(body: Buffer, contentType: string | null): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType ?? '')?.[1];
  if (charset) {
    try {
      return new TextDecoder(charset).decode(body);
    } catch {
      // Unknown charset label: fall through to UTF-8.
    }
  }
  return new TextDecoder('utf-8').decode(body);
}
