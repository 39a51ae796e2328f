/**
 * Real HTTP sites for crawler and connector tests, served on 127.0.0.1 (port chosen by the OS unless one
 * is asked for). `serveDirectory` serves a mirrored site from disk; `serveRoutes` builds purpose-made sites
 * (redirect loops, traps, 429s, huge pages, non-HTML) from a table of handlers.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface ServedSite {
  /** e.g. `http://127.0.0.1:43123` (no trailing slash). */
  origin: string;
  /** Path and query of every request received, in order (for politeness and "never fetched" checks). */
  requests: string[];
  close(): Promise<void>;
}

export interface ServeDirectoryOptions {
  /** Port to bind; default 0 (the OS picks). */
  port?: number;
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /**
   * Absolute origin written into the mirrored files, replaced by the served origin in HTML, XML and text
   * bodies. Default `http://127.0.0.1:8000` (the fastapi-docs mirror); `false` serves files untouched.
   */
  rewriteOrigin?: string | false;
  /** Artificial latency per response, in ms. */
  delayMs?: number;
  /**
   * Requests past the first `after` wait for `open` before they are answered: a test that kills a crawler
   * mid-crawl holds its fetches in flight, however fast the machine crawls the first ones.
   */
  gate?: { after: number; open: Promise<void> };
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.ico': 'image/x-icon',
  '.pdf': 'application/pdf',
  '.gz': 'application/gzip',
};
const REWRITTEN = new Set(['.html', '.htm', '.xml', '.txt']);

/**
 * Serves `dir` as a static site. Directory URLs without a trailing slash redirect to it; `dir/` serves
 * `dir/index.html`. Responses carry ETag and Last-Modified and answer conditional requests with 304.
 */
export async function serveDirectory(dir: string, opts: ServeDirectoryOptions = {}): Promise<ServedSite> {
  const root = path.resolve(dir);
  const fromOrigin = opts.rewriteOrigin === undefined ? 'http://127.0.0.1:8000' : opts.rewriteOrigin;
  let origin = '';
  const requests: string[] = [];

  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '/');
    const gated = opts.gate !== undefined && requests.length > opts.gate.after;
    const respond = async () => {
      if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
      if (gated) await opts.gate!.open;
      const reqUrl = new URL(req.url ?? '/', origin);
      let pathname: string;
      try {
        pathname = decodeURIComponent(reqUrl.pathname);
      } catch {
        return send(res, 400, 'bad path');
      }
      let file = path.join(root, pathname);
      if (file !== root && !file.startsWith(root + path.sep)) return send(res, 403, 'forbidden');
      let info = await stat(file).catch(() => null);
      if (info?.isDirectory()) {
        if (!pathname.endsWith('/')) {
          res.writeHead(301, { location: reqUrl.pathname + '/' + reqUrl.search });
          return res.end();
        }
        file = path.join(file, 'index.html');
        info = await stat(file).catch(() => null);
      }
      if (!info?.isFile()) return send(res, 404, 'not found');
      const ext = path.extname(file).toLowerCase();
      let body = await readFile(file);
      if (fromOrigin && fromOrigin !== origin && REWRITTEN.has(ext)) {
        body = Buffer.from(body.toString('utf8').replaceAll(fromOrigin, origin));
      }
      const etag = `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`;
      const lastModified = info.mtime.toUTCString();
      const headers = {
        'content-type': CONTENT_TYPES[ext] ?? 'application/octet-stream',
        etag,
        'last-modified': lastModified,
      };
      const inm = req.headers['if-none-match'];
      const ims = req.headers['if-modified-since'];
      const notModified =
        inm !== undefined
          ? inm.split(',').some((t) => t.trim() === etag)
          : ims !== undefined && Date.parse(ims) >= Math.floor(info.mtime.getTime() / 1000) * 1000;
      if (notModified) {
        res.writeHead(304, headers);
        return res.end();
      }
      res.writeHead(200, { ...headers, 'content-length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    respond().catch(() => send(res, 500, 'error'));
  });

  origin = await listen(server, opts.host ?? '127.0.0.1', opts.port ?? 0);
  return { origin, requests, close: () => closeServer(server) };
}

/** What a route answers: a handler, or a fixed response. */
export type RouteHandler =
  | ((req: http.IncomingMessage, res: http.ServerResponse, ctx: RouteContext) => unknown)
  | RouteSpec;

export interface RouteSpec {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface RouteContext {
  /** The site's origin, for absolute links and redirects. */
  origin: string;
  /** The request URL, parsed. */
  url: URL;
  /** How many times this route has been hit, this request included. */
  hits: number;
}

export interface ServedRoutes extends ServedSite {
  /** Hits per route key. */
  hits: Map<string, number>;
}

/**
 * Serves a purpose-made site. Keys are exact paths (`/robots.txt`, `/page`); the key `*` answers every
 * other path (default: 404). A fixed response without a content-type is served as HTML.
 */
export async function serveRoutes(
  routes: Record<string, RouteHandler>,
  opts: { host?: string; port?: number } = {},
): Promise<ServedRoutes> {
  let origin = '';
  const requests: string[] = [];
  const hits = new Map<string, number>();

  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '/');
    const url = new URL(req.url ?? '/', origin);
    const key = url.pathname in routes ? url.pathname : '*';
    const route = routes[key];
    const count = (hits.get(key) ?? 0) + 1;
    hits.set(key, count);
    if (!route) return send(res, 404, 'not found');
    if (typeof route === 'function') {
      Promise.resolve(route(req, res, { origin, url, hits: count })).catch(() => {
        if (!res.headersSent) send(res, 500, 'error');
        else res.destroy();
      });
      return;
    }
    const body = route.body ?? '';
    res.writeHead(route.status ?? 200, {
      'content-type': 'text/html; charset=utf-8',
      ...route.headers,
    });
    res.end(body);
  });

  origin = await listen(server, opts.host ?? '127.0.0.1', opts.port ?? 0);
  return { origin, requests, hits, close: () => closeServer(server) };
}

function send(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}

function listen(server: http.Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = server.address() as AddressInfo;
      const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve(`http://${h}:${addr.port}`);
    });
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Keep-alive clients would otherwise hold the server open until they time out.
    server.closeAllConnections();
  });
}
