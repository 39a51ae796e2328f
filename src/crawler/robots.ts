/**
 * robots.txt for the crawler (RFC 9309, parsed by robots-parser): which paths our user agent may fetch,
 * the Crawl-delay it asks for, and the sitemaps it lists.
 */
import robotsParserModule from 'robots-parser';
import { type OutboundFetch, OutboundBlockedError } from '../net/outbound.ts';

// robots-parser is CommonJS (`module.exports = fn`) but its types declare an ES default export, so under
// Node's ESM interop the default import is the function itself while TypeScript sees `{ default: fn }`.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** RFC 9309 asks crawlers to parse at least 500 KiB; more than that is ignored. */
const MAX_ROBOTS_BYTES = 512 * 1024;
/** A hostile or careless Crawl-delay must not stall a job for hours. */
const DEFAULT_MAX_CRAWL_DELAY_MS = 30_000;

export interface RobotsRules {
  /** The robots.txt URL these rules came from. */
  url: string;
  /**
   * How they were obtained: `parsed` (2xx), `missing` (4xx: everything allowed), `unreachable` (5xx, 429
   * or network failure: nothing allowed, as RFC 9309 asks).
   */
  source: 'parsed' | 'missing' | 'unreachable';
  /** Why it is `unreachable` (`HTTP 503`, the network error), for the crawl's warning. */
  problem?: string;
  /** Whether our user agent may fetch `url` (any URL on the robots.txt's host; scheme and port ignored). */
  isAllowed(url: string): boolean;
  /** Crawl-delay for our user agent, in ms, capped; undefined when none is set. */
  crawlDelayMs: number | undefined;
  /** Absolute sitemap URLs listed with `Sitemap:`. */
  sitemaps: string[];
}

/**
 * The token robots.txt groups are matched against: the first product name of the user agent
 * (`KbConnector/1.0 (+https://...)` → `kbconnector`).
 */
export function robotsProductToken(userAgent: string): string {
  return (/^[A-Za-z0-9_-]+/.exec(userAgent.trim())?.[0] ?? '*').toLowerCase();
}

/** Parses a robots.txt body fetched from `robotsUrl`. */
export function parseRobots(
  robotsUrl: string,
  text: string,
  userAgent: string,
  opts: { maxCrawlDelayMs?: number } = {},
): RobotsRules {
  const base = new URL('/robots.txt', robotsUrl);
  const robot = robotsParser(base.href, text);
  const token = robotsProductToken(userAgent);
  const delay = robot.getCrawlDelay(token);
  const maxDelay = opts.maxCrawlDelayMs ?? DEFAULT_MAX_CRAWL_DELAY_MS;
  const sitemaps: string[] = [];
  for (const s of robot.getSitemaps()) {
    try {
      sitemaps.push(new URL(s, base).href);
    } catch {
      // A malformed Sitemap line is ignored, as the protocol allows.
    }
  }
  return {
    url: base.href,
    source: 'parsed',
    isAllowed(url: string): boolean {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return false;
      }
      // robots-parser only answers for its own origin; the rules of a host apply to its http and https
      // variants alike (we treat them as one page), so judge the path against the robots origin.
      return robot.isAllowed(new URL(target.pathname + target.search, base).href, token) !== false;
    },
    crawlDelayMs:
      typeof delay === 'number' && Number.isFinite(delay) && delay > 0
        ? Math.min(Math.round(delay * 1000), maxDelay)
        : undefined,
    sitemaps,
  };
}

function fixedRules(url: string, source: 'missing' | 'unreachable', problem?: string): RobotsRules {
  return {
    url,
    source,
    ...(problem === undefined ? {} : { problem }),
    isAllowed: () => source === 'missing',
    crawlDelayMs: undefined,
    sitemaps: [],
  };
}

/**
 * Fetches and parses `/robots.txt` of the site of `siteUrl` through the outbound guard. Never throws for
 * HTTP or network failures (they map to `missing` / `unreachable` rules); rethrows policy refusals
 * ({@link OutboundBlockedError}) and aborts, which concern the whole crawl.
 */
export async function fetchRobots(
  fetch: OutboundFetch,
  siteUrl: string,
  userAgent: string,
  opts: { signal?: AbortSignal; maxCrawlDelayMs?: number } = {},
): Promise<RobotsRules> {
  const robotsUrl = new URL('/robots.txt', siteUrl).href;
  try {
    const res = await fetch(robotsUrl, {
      signal: opts.signal,
      maxBytes: MAX_ROBOTS_BYTES,
      headers: { accept: 'text/plain, */*;q=0.5' },
    });
    if (res.status >= 200 && res.status < 300) {
      return parseRobots(robotsUrl, res.text(), userAgent, { maxCrawlDelayMs: opts.maxCrawlDelayMs });
    }
    if (res.status >= 400 && res.status < 500 && res.status !== 429) return fixedRules(robotsUrl, 'missing');
    return fixedRules(robotsUrl, 'unreachable', `HTTP ${res.status}`);
  } catch (err) {
    if (err instanceof OutboundBlockedError || opts.signal?.aborted) throw err;
    return fixedRules(robotsUrl, 'unreachable', err instanceof Error ? err.message : String(err));
  }
}
