/**
 * A loopback site that records every request (path, user agent, start and end) and the most requests it
 * had in flight at once, for politeness tests and benchmarks (test/crawler/politeness.test.ts,
 * bench/crawl-workers.ts). `/` links to `pages` pages of their own words; each response is held `holdMs`,
 * so requests overlap when the crawler's gate lets them. A request counts as in flight from its arrival
 * until just before its response ends: a span inside the client's slot, so the count is exact, no clock in it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Hit {
  path: string;
  agent: string;
  /** performance.now() at the request's arrival and just before its response ends. */
  start: number;
  end: number;
}

export interface RecordingSite {
  origin: string;
  /** As in a URL: `127.0.0.1:port`. */
  host: string;
  hits: Hit[];
  /** Paths in the order their requests arrived (a hung one included). */
  arrived: string[];
  /** Most requests in flight at once. */
  peak: number;
  close(): Promise<void>;
}

export interface RecordingSiteOptions {
  /** Pages linked from `/` (`/p/1` ...). Default 6. */
  pages?: number;
  /** How long each response is held. */
  holdMs: number;
  /** robots.txt's text (404 without). */
  robots?: string;
  /** A path that is never answered: its client keeps its slot until it gives up or dies. */
  hang?: string;
}

export async function recordingSite(opts: RecordingSiteOptions): Promise<RecordingSite> {
  const pages = opts.pages ?? 6;
  const links = Array.from({ length: pages }, (_, i) => `<a href="/p/${i + 1}">page ${i + 1}</a>`).join(' ');
  const hits: Hit[] = [];
  const arrived: string[] = [];
  let active = 0;
  const site = { peak: 0 };
  const server = http.createServer((req, res) => {
    const start = performance.now();
    active++;
    site.peak = Math.max(site.peak, active);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    arrived.push(path);
    if (path === opts.hang) return;
    const [status, type, body] =
      path === '/robots.txt'
        ? opts.robots
          ? [200, 'text/plain', opts.robots]
          : [404, 'text/plain', 'none']
        : path === '/'
          ? [200, 'text/html', `<h1>Home</h1>${links}`]
          : /^\/p\/\d+$/.test(path) && Number(path.slice(3)) <= pages
            ? [200, 'text/html', `<h1>Page ${path}</h1><p>${pageText(Number(path.slice(3)))}</p>`]
            : [404, 'text/plain', 'not found'];
    setTimeout(() => {
      hits.push({ path, agent: String(req.headers['user-agent']), start, end: performance.now() });
      active--;
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    }, opts.holdMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(site, {
    origin,
    host: new URL(origin).host,
    hits,
    arrived,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

/** Words of their own per page, so no page collapses into another as a near-duplicate. */
function pageText(n: number): string {
  return Array.from({ length: 60 }, (_, i) => `word${(n * 7919 + i * 104729) % 100003}`).join(' ');
}
