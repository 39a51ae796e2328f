/** The crawler's tunables and their defaults; the composition root may override any of them. */
import { DEFAULT_RETRY_POLICY, type HostPace, type RetryPolicy } from './fetch-page.ts';

/** Tunables of the crawler; defaults suit a polite production crawler, tests and benchmarks shorten them. */
export interface CrawlerSettings {
  /** Sent with every crawler request; its first word is the token robots.txt groups are matched against. */
  userAgent: string;
  /**
   * Pages in flight per crawl job, from their claim until their commit. A page spends most of that time
   * waiting for the extraction thread and its commit, not on its host, which `perHostConcurrency` bounds
   * separately: with 4, a crawl's main thread and extraction thread waited on each other (fastapi-docs,
   * Postgres mode: 2.95 s against 2.6 s with 8).
   */
  pageConcurrency: number;
  /**
   * Requests in flight per host for a crawl that does not ask (`maxConcurrency`), counting every crawl's
   * requests to the host (in this process; over Postgres, in every worker process).
   */
  perHostConcurrency: number;
  /** Time between two request starts to one host for a crawl that does not ask (`delayMs`). */
  minDelayMs: number;
  /** The most `maxConcurrency` a crawl may ask for (fast hosts aside). */
  maxPerHostConcurrency: number;
  /** The least `delayMs` a crawl may ask for (fast hosts aside). */
  leastDelayMs: number;
  /**
   * Hosts the operator's organizations own (`docs.example.com`, or `*.example.com` for its subdomains):
   * their crawls go at `fastConcurrency` and `fastDelayMs` unless they ask for less. Pace only: the
   * outbound guard still refuses their private addresses unless private targets are allowed.
   */
  fastHosts: string[];
  fastConcurrency: number;
  fastDelayMs: number;
  /** Whole-request deadline, redirects included. */
  timeoutMs: number;
  /** Bytes of a page kept; the rest is not downloaded (a PDF larger than this is refused: `pdf_too_large`). */
  maxPageBytes: number;
  maxRedirects: number;
  retry: RetryPolicy;
  /** Cap on a robots.txt Crawl-delay, on a crawl's `delayMs` and on the gap that back-off widens to. */
  maxCrawlDelayMs: number;
  /** Threads that extract pages; 0 extracts on the main thread. */
  extractThreads: number;
  /** Page URLs read from a site's sitemaps at most. */
  maxSitemapUrls: number;
}

/**
 * What a crawl of `limit` pages may spend. `limit` counts distinct pages stored; fetches that store nothing
 * (404, non-HTML, duplicate, near-duplicate, noindex, canonical elsewhere) do not use it up, so the fetches
 * have their own cap: 3 x limit (at least limit + 10), after which the crawl ends with what it has. The
 * frontier holds at most 10 x limit URLs (at least 1,000), enough to choose the likely new pages from.
 */
export function crawlBounds(limit: number): { fetchLimit: number; frontierLimit: number } {
  return { fetchLimit: Math.max(3 * limit, limit + 10), frontierLimit: Math.max(10 * limit, 1000) };
}

/** `publicUrl`: this service's public origin, named in the user agent so site owners can reach us. */
export function defaultCrawlerSettings(opts: { publicUrl?: string | undefined } = {}): CrawlerSettings {
  return {
    userAgent: `KbCrawler/1.0 (knowledge-base connector${opts.publicUrl ? `; +${opts.publicUrl}` : ''})`,
    pageConcurrency: 8,
    perHostConcurrency: 2,
    minDelayMs: 100,
    maxPerHostConcurrency: 4,
    leastDelayMs: 50,
    fastHosts: [],
    fastConcurrency: 8,
    fastDelayMs: 0,
    timeoutMs: 20_000,
    maxPageBytes: 5 * 1024 * 1024,
    maxRedirects: 5,
    retry: DEFAULT_RETRY_POLICY,
    maxCrawlDelayMs: 30_000,
    extractThreads: 1,
    maxSitemapUrls: 10_000,
  };
}

/** What a crawl asked for (the create body's `maxConcurrency` and `delayMs`); absent: the host's default. */
export interface RequestedPace {
  maxConcurrency?: number | undefined;
  delayMs?: number | undefined;
}

type PaceSettings = Pick<
  CrawlerSettings,
  | 'perHostConcurrency'
  | 'minDelayMs'
  | 'maxPerHostConcurrency'
  | 'leastDelayMs'
  | 'maxCrawlDelayMs'
  | 'fastHosts'
  | 'fastConcurrency'
  | 'fastDelayMs'
>;

/** What a crawl of `hostname` may ask for, and what it gets when it does not ask. */
export interface PaceBounds {
  fast: boolean;
  maxConcurrency: number;
  minDelayMs: number;
  maxDelayMs: number;
  defaults: HostPace;
}

/** Whether `hostname` (no port) is one of the operator's fast hosts: named, or under a `*.` entry. */
export function isFastHost(hostname: string, fastHosts: readonly string[]): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return fastHosts.some((entry) => {
    const e = entry.toLowerCase();
    return e.startsWith('*.') ? name.endsWith(e.slice(1)) : name === e;
  });
}

export function paceBounds(hostname: string, s: PaceSettings): PaceBounds {
  const fast = isFastHost(hostname, s.fastHosts);
  // The operator's bounds never make the defaults unreachable: a default outside them widens them.
  const maxConcurrency = fast ? s.fastConcurrency : Math.max(s.maxPerHostConcurrency, s.perHostConcurrency);
  const minDelayMs = fast ? s.fastDelayMs : Math.min(s.leastDelayMs, s.minDelayMs);
  const defaults = fast
    ? { concurrency: s.fastConcurrency, delayMs: s.fastDelayMs }
    : { concurrency: s.perHostConcurrency, delayMs: s.minDelayMs };
  return { fast, maxConcurrency, minDelayMs, maxDelayMs: s.maxCrawlDelayMs, defaults };
}

/**
 * A crawl's pace on a host: what it asked for within the host's bounds (settings may have narrowed since
 * the crawl was queued), else the host's default.
 */
export function paceFor(hostname: string, requested: RequestedPace, s: PaceSettings): HostPace {
  const b = paceBounds(hostname, s);
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  return {
    concurrency:
      requested.maxConcurrency === undefined
        ? b.defaults.concurrency
        : clamp(requested.maxConcurrency, 1, b.maxConcurrency),
    delayMs:
      requested.delayMs === undefined
        ? b.defaults.delayMs
        : clamp(requested.delayMs, b.minDelayMs, b.maxDelayMs),
  };
}
