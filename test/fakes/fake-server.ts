/**
 * The common core of the fake source servers: a node:http server on 127.0.0.1 (port chosen by the OS)
 * that records every request, answers through a vendor-specific handler, and can be told to fail the
 * next N requests (rate limit with the vendor's headers and body, or 503) before answering normally.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path without query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeReply {
  status: number;
  headers?: Record<string, string>;
  /** A string is sent as is (text/plain unless a content-type header is given); anything else as JSON. */
  body?: unknown;
}

export type FakeHandler = (req: RecordedRequest) => FakeReply | Promise<FakeReply>;

export interface FakeServerOptions {
  /** The vendor's rate-limit answer for a wait of `seconds`. Default: 429 with `Retry-After`. */
  rateLimitReply?: (seconds: number) => FakeReply;
  /** The vendor's 503 answer. */
  unavailableReply?: () => FakeReply;
}

export interface FakeServer {
  /** `http://127.0.0.1:<port>`: use as the connector's base-URL override. */
  url: string;
  port: number;
  /** Every request received, in order (failed-on-purpose ones included). */
  requests: RecordedRequest[];
  /** The next `count` requests get `reply` instead of the normal answer. */
  failNext(count: number, reply: FakeReply): void;
  /** The next `count` requests are rate-limited the vendor's way, asking to wait `seconds`. */
  rateLimitNext(count: number, seconds: number): void;
  /** The next `count` requests answer 503. */
  unavailableNext(count: number): void;
  close(): Promise<void>;
}

/** Starts a fake server; close it in the test's `after`. */
export async function startFakeServer(
  handler: FakeHandler,
  opts: FakeServerOptions = {},
): Promise<FakeServer> {
  const rateLimitReply =
    opts.rateLimitReply ??
    ((seconds: number) => ({
      status: 429,
      headers: { 'retry-after': String(seconds) },
      body: 'Too Many Requests',
    }));
  const unavailableReply = opts.unavailableReply ?? (() => ({ status: 503, body: 'Service Unavailable' }));
  const requests: RecordedRequest[] = [];
  const failures: FakeReply[] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake.invalid');
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const injected = failures.shift();
      Promise.resolve(injected ?? handler(recorded))
        .then((reply) => send(reply))
        .catch((err: unknown) => send({ status: 500, body: { error: String(err) } }));

      function send(reply: FakeReply): void {
        const headers: Record<string, string> = { ...reply.headers };
        let payload = '';
        if (typeof reply.body === 'string') {
          payload = reply.body;
          headers['content-type'] ??= 'text/plain; charset=utf-8';
        } else if (reply.body !== undefined) {
          payload = JSON.stringify(reply.body);
          headers['content-type'] ??= 'application/json; charset=utf-8';
        }
        res.writeHead(reply.status, headers);
        res.end(payload);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    failNext(count, reply) {
      for (let i = 0; i < count; i++) failures.push(reply);
    },
    rateLimitNext(count, seconds) {
      for (let i = 0; i < count; i++) failures.push(rateLimitReply(seconds));
    },
    unavailableNext(count) {
      for (let i = 0; i < count; i++) failures.push(unavailableReply());
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** A loopback URL on which nothing listens (a port the OS just handed out and released). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** The `Authorization: Basic` user and password of a request, or undefined. */
export function basicCredentials(req: RecordedRequest): { user: string; password: string } | undefined {
  const header = req.headers.authorization;
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The `Authorization: Bearer` token of a request, or undefined. */
export function bearerToken(req: RecordedRequest): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice(7) : undefined;
}
