/**
 * The crawler's shared parts in one process, built once by the composition root and handed to every
 * crawl run: the settings, one outbound fetch (keep-alive pools), one host gate (per-host concurrency and
 * delay across all crawls; over Postgres, across all worker processes too) and one extraction pool.
 */
import type { Database } from '../db/database.ts';
import { createOutboundFetch, type OutboundFetch } from '../net/outbound.ts';
import { createPageExtractor, type PageExtractor } from './extract-pool.ts';
import { HostGate } from './fetch-page.ts';
import { DatabaseHostSlots } from './host-slots.ts';
import { type CrawlerSettings, defaultCrawlerSettings } from './settings.ts';

/** What the composition root may override (tests, benchmarks): settings, and the parts themselves. */
export interface CrawlerOverrides extends Partial<CrawlerSettings> {
  fetch?: OutboundFetch;
  gate?: HostGate;
  extractor?: PageExtractor;
  /**
   * Where the per-host limits hold: `database` (the default over Postgres) across every worker process on
   * it, `process` in this process alone (always so in the embedded service, which is one process).
   */
  hostSlots?: 'database' | 'process';
  /**
   * How long a database slot outlives a process killed while holding it. Default 10 s; a live process
   * renews its slots' leases every third of it, however long the request.
   */
  hostSlotLeaseMs?: number;
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
  /** The service's database: over Postgres it holds the per-host limits shared by worker processes. */
  db?: Database | undefined;
  overrides?: CrawlerOverrides | undefined;
}): CrawlerRuntime {
  const { fetch, gate, extractor, hostSlots, hostSlotLeaseMs, ...overrides } = opts.overrides ?? {};
  const settings: CrawlerSettings = {
    ...defaultCrawlerSettings({ publicUrl: opts.publicUrl }),
    ...overrides,
  };
  const limits = {
    concurrency: settings.perHostConcurrency,
    minDelayMs: settings.minDelayMs,
    maxBackoffMs: settings.maxCrawlDelayMs,
  };
  const shared =
    opts.db?.kind === 'postgres' && hostSlots !== 'process'
      ? new DatabaseHostSlots(opts.db, { leaseMs: hostSlotLeaseMs ?? 10_000 })
      : undefined;
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
    gate: gate ?? new HostGate({ ...limits, ...(shared ? { shared } : {}) }),
    extractor: extractor ?? createPageExtractor({ threads: settings.extractThreads }),
  };
}
