/**
 * The crawler's shared parts in one process, built once by the composition root and handed to every
 * crawl run: the settings, one outbound fetch (keep-alive pools), one host gate (per-host concurrency and
 * delay across all crawls) and one extraction pool.
 */
import { createOutboundFetch, type OutboundFetch } from '../net/outbound.ts';
import { createPageExtractor, type PageExtractor } from './extract-pool.ts';
import { HostGate } from './fetch-page.ts';
import { type CrawlerSettings, defaultCrawlerSettings } from './settings.ts';

/** What the composition root may override (tests, benchmarks): settings, and the parts themselves. */
export interface CrawlerOverrides extends Partial<CrawlerSettings> {
  fetch?: OutboundFetch;
  gate?: HostGate;
  extractor?: PageExtractor;
}

/** The crawler's shared parts in one process: one fetch (keep-alive pools), one host gate, one pool. */
export interface CrawlerRuntime {
  settings: CrawlerSettings;
  fetch: OutboundFetch;
  gate: HostGate;
  extractor: PageExtractor;
}

/**
 * The crawler's parts of one process, built once by the composition root. `allowPrivate` is the
 * operator's KB_CRAWL_ALLOW_PRIVATE.
 */
export function createCrawlerRuntime(opts: {
  allowPrivate: boolean;
  publicUrl?: string | undefined;
  overrides?: CrawlerOverrides | undefined;
}): CrawlerRuntime {
  const { fetch, gate, extractor, ...overrides } = opts.overrides ?? {};
  const settings: CrawlerSettings = {
    ...defaultCrawlerSettings({ publicUrl: opts.publicUrl }),
    ...overrides,
  };
  return {
    settings,
    fetch:
      fetch ??
      createOutboundFetch({
        allowPrivate: opts.allowPrivate,
        userAgent: settings.userAgent,
        timeoutMs: settings.timeoutMs,
        maxRedirects: settings.maxRedirects,
        maxBytes: settings.maxPageBytes,
      }),
    gate: gate ?? new HostGate({ concurrency: settings.perHostConcurrency, minDelayMs: settings.minDelayMs }),
    extractor: extractor ?? createPageExtractor({ threads: settings.extractThreads }),
  };
}
