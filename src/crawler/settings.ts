/** The crawler's tunables and their defaults; the composition root may override any of them. */
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './fetch-page.ts';

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
  /** Requests in flight per host, across all crawls of this process. */
  perHostConcurrency: number;
  /** Least time between two request starts to one host (a robots.txt Crawl-delay raises it). */
  minDelayMs: number;
  /** Whole-request deadline, redirects included. */
  timeoutMs: number;
  /** Bytes of a page kept; the rest is not downloaded (a PDF larger than this is refused: `pdf_too_large`). */
  maxPageBytes: number;
  maxRedirects: number;
  retry: RetryPolicy;
  /** Cap on a robots.txt Crawl-delay. */
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
    timeoutMs: 20_000,
    maxPageBytes: 5 * 1024 * 1024,
    maxRedirects: 5,
    retry: DEFAULT_RETRY_POLICY,
    maxCrawlDelayMs: 30_000,
    extractThreads: 1,
    maxSitemapUrls: 10_000,
  };
}
