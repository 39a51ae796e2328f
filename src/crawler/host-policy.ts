/**
 * The hosts one crawl run talks to: each host's robots.txt, fetched once per run (its Crawl-delay goes to
 * the host gate, which over Postgres shares it with every worker process), hosts whose address the
 * outbound policy refuses, and the gated fetch that robots.txt and sitemap requests share with pages.
 */
import { OutboundBlockedError, type OutboundFetch } from '../net/outbound.ts';
import { fetchRobots, type RobotsRules } from './robots.ts';
import type { CrawlerRuntime } from './runtime.ts';

export class HostPolicy {
  readonly #rt: CrawlerRuntime;
  readonly #signal: AbortSignal;
  /** robots.txt per host (`null`: the host's address is refused by the outbound policy). */
  readonly #robots = new Map<string, Promise<RobotsRules | null>>();
  /** The same, once loaded: admission under a transaction reads it without awaiting the network. */
  readonly #settled = new Map<string, RobotsRules | null>();

  /** Told of each robots.txt that could not be read (the crawl keeps a warning). */
  readonly #onUnreadable: ((rules: RobotsRules) => void) | undefined;

  constructor(
    runtime: CrawlerRuntime,
    signal: AbortSignal,
    opts: { onUnreadable?: (rules: RobotsRules) => void } = {},
  ) {
    this.#rt = runtime;
    this.#signal = signal;
    this.#onUnreadable = opts.onUnreadable;
  }

  /** robots.txt of a URL's host, fetched once per run; null when the host's address is refused. */
  robotsFor(url: string): Promise<RobotsRules | null> {
    const host = new URL(url).host;
    let p = this.#robots.get(host);
    if (!p) {
      p = fetchRobots(this.fetch, url, this.#rt.settings.userAgent, {
        signal: this.#signal,
        maxCrawlDelayMs: this.#rt.settings.maxCrawlDelayMs,
      }).then(
        async (rules) => {
          // Recorded before the run's first page request to the host, so other processes hold to it too;
          // a robots.txt read without one clears what an earlier read recorded (an unreachable one says
          // nothing: the host is not crawled at all).
          if (rules.source !== 'unreachable') await this.#rt.gate.setCrawlDelay(host, rules.crawlDelayMs);
          else this.#onUnreadable?.(rules);
          this.#settled.set(host, rules);
          return rules;
        },
        (err: unknown) => {
          if (err instanceof OutboundBlockedError) {
            this.#settled.set(host, null);
            return null;
          }
          this.#robots.delete(host);
          throw err;
        },
      );
      this.#robots.set(host, p);
    }
    return p;
  }

  /** The robots.txt already loaded for a URL's host; undefined when it was never needed. */
  loadedRobots(url: string): RobotsRules | null | undefined {
    return this.#settled.get(new URL(url).host);
  }

  /** Robots and sitemap requests wait their turn at the host gate like pages do. */
  readonly fetch: OutboundFetch = (url, init) =>
    this.#rt.gate.run(new URL(String(url)).host, () => this.#rt.fetch(url, init), init?.signal);
}
