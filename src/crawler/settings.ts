/** The crawler's tunables and their defaults; the composition root may override any of them. */
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './fetch-page.ts';

/** Tunables of the crawler; defaults suit a polite production crawler, tests and benchmarks shorten them. */
export interface CrawlerSettings {
  /** Sent with every crawler request; its first word is the token robots.txt groups are matched against. */
  userAgent: string;
  /** Pages in flight per crawl job. */
  pageConcurrency: number;
  /** Requests in flight per host, across all crawls of this process. */
  perHostConcurrency: number;
  /** Least time between two request starts to one host (a robots.txt Crawl-delay raises it). */
  minDelayMs: number;
  /** Whole-request deadline, redirects included. */
  timeoutMs: number;
  /** Bytes of a page kept; the rest is not downloaded. */
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

/** `publicUrl`: this service's public origin, named in the user agent so site owners can reach us. */
export function defaultCrawlerSettings(opts: { publicUrl?: string | undefined } = {}): CrawlerSettings {
  return {
    userAgent: `KbCrawler/1.0 (knowledge-base connector${opts.publicUrl ? `; +${opts.publicUrl}` : ''})`,
    pageConcurrency: 4,
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
