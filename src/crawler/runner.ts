/**
 * The crawl runner: works off one crawl job's frontier (frontier.ts) with a few pages in flight, turning
 * each fetched page into an item through the shared store step as it arrives.
 *
 * Order of work, which a resumed attempt repeats without redoing what was committed:
 * 1. robots.txt of the start site (a refused start address fails the job before any other request);
 * 2. the start page (its links get the budget first: a site's home page links are the best sample);
 * 3. the site's sitemaps (skipped when `maxDepth` is set: depth is measured in links);
 * 4. the rest of the frontier, shallowest first.
 *
 * Every page commit runs under the job's lease (a cancelled or taken-back job writes nothing) and under
 * the crawl job's row lock (admission and counters are exact under any concurrency).
 */
import type { Database, Queryable } from '../db/database.ts';
import {
  claimCrawlText,
  claimNextFrontierRow,
  countFrontierOutcomes,
  type FrontierRow,
  finishFrontierRow,
  getFrontierRow,
  insertFrontierRows,
  requeueInFlight,
} from '../db/repositories/crawl-frontier.ts';
import {
  type CrawlJobRecord,
  type CrawlOptions,
  getCrawlJobRecord,
  type LockedCrawlJob,
  lockCrawlJob,
  markSitemapsDone,
  saveCrawlJob,
} from '../db/repositories/crawl-jobs.ts';
import {
  deletePageMemory,
  getPageMemory,
  type PageMemory,
  savePageMemory,
} from '../db/repositories/crawl-pages.ts';
import { crawlSourceKey, removeDocument, storeDocument } from '../ingest/store.ts';
import { sha256Hex } from '../lib/crypto.ts';
import type { Logger } from '../lib/logger.ts';
import { createOutboundFetch, OutboundBlockedError, type OutboundFetch } from '../net/outbound.ts';
import type { ExtractedPage } from './extract.ts';
import { createPageExtractor, type PageExtractor } from './extract-pool.ts';
import {
  DEFAULT_RETRY_POLICY,
  fetchPage,
  type FetchPageResult,
  HostGate,
  type RetryPolicy,
} from './fetch-page.ts';
import { admit, compilePathFilters, type PathFilters } from './filters.ts';
import { admitUrls, type Candidate, noteOutcome, noteRefusals } from './frontier.ts';
import { fetchRobots, type RobotsRules } from './robots.ts';
import { discoverSitemaps } from './sitemaps.ts';
import { canonicalizeUrl, urlKey } from './url.ts';

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

/** What the composition root may override (tests, benchmarks): settings, and the parts themselves. */
export interface CrawlerOverrides extends Partial<CrawlerSettings> {
  fetch?: OutboundFetch;
  gate?: HostGate;
  extractor?: PageExtractor;
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
  const settings: CrawlerSettings = { ...defaultCrawlerSettings({ publicUrl: opts.publicUrl }), ...overrides };
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

/** What the runner needs besides the job id; the job engine provides the lease, signal and log. */
export interface CrawlRunDeps {
  db: Database;
  crawler: CrawlerRuntime;
  /** Wakes the indexer after pages were stored or removed. */
  itemsChanged?: () => void;
  /** Transaction that first checks this worker still holds the job; default a plain transaction. */
  withLease?: <T>(fn: (tx: Queryable) => Promise<T>) => Promise<T>;
  log?: Logger;
}

/**
 * The crawl cannot be done at all (start URL refused, unreachable, disallowed): the job fails with this
 * message, which is shown to the API caller (no secrets, no query strings).
 */
export class CrawlFailure extends Error {
  override name = 'CrawlFailure';
}

/** Longer URLs are refused (`too_long`): they are traps (ever-growing queries) more often than pages. */
export const MAX_URL_LENGTH = 2048;

/** Page outcomes that mean "the page is in the knowledge base". */
const STORED_OUTCOMES = ['created', 'updated', 'unchanged'];
/** Refusals of discovered links not worth recording: the URL is already in the crawl. */
const SILENT_REASONS = new Set(['duplicate']);

/**
 * Runs (or resumes) one crawl job to its end. Resolves when the frontier is worked off; throws a
 * {@link CrawlFailure} when the crawl cannot be done at all (start URL refused or unreachable), and the
 * signal's reason when it aborts (cancel, shutdown, lost lease).
 */
export async function runCrawlJob(
  deps: CrawlRunDeps,
  crawlJobId: string,
  signal: AbortSignal,
): Promise<void> {
  const job = await getCrawlJobRecord(deps.db, crawlJobId);
  if (!job) throw new CrawlFailure('The crawl job no longer exists.');
  await new CrawlRun(deps, job, signal).run();
}

class CrawlRun {
  readonly #db: Database;
  readonly #itemsChanged: (() => void) | undefined;
  readonly #rt: CrawlerRuntime;
  readonly #job: CrawlJobRecord;
  readonly #options: CrawlOptions;
  readonly #filters: PathFilters;
  readonly #signal: AbortSignal;
  readonly #lease: <T>(fn: (tx: Queryable) => Promise<T>) => Promise<T>;
  readonly #log: Logger | undefined;
  readonly #startUrl: string;
  readonly #startKey: string;
  readonly #tags: string[];
  /** robots.txt per host (`null`: the host's address is refused by the outbound policy). */
  readonly #robots = new Map<string, Promise<RobotsRules | null>>();
  /** Keys refused this run: a link on every page is counted once. */
  readonly #refusedKeys = new Set<string>();
  /** Keys known to be in the frontier (a cache; the database decides). */
  readonly #known = new Set<string>();
  /** Admitted so far, as of the last commit (a cache, for skipping robots look-ups once the budget is spent). */
  #admittedSoFar = 0;

  constructor(deps: CrawlRunDeps, job: CrawlJobRecord, signal: AbortSignal) {
    this.#itemsChanged = deps.itemsChanged;
    this.#db = deps.db;
    this.#rt = deps.crawler;
    this.#job = job;
    this.#options = job.options;
    this.#filters = compilePathFilters(job.options.includePaths, job.options.excludePaths);
    this.#signal = signal;
    this.#lease = deps.withLease ?? ((fn) => this.#db.transaction(fn));
    this.#log = deps.log;
    const start = canonicalizeUrl(job.url);
    const key = start ? urlKey(start) : null;
    if (!start || !key) throw new CrawlFailure(`The start URL ${job.url} is not an http(s) URL.`);
    this.#startUrl = start;
    this.#startKey = key;
    this.#tags = [...new Set(job.options.tags ?? [])];
  }

  async run(): Promise<void> {
    const id = this.#job.id;
    await this.#lease((tx) => requeueInFlight(tx, id));

    // robots.txt first: when the start address is refused, nothing else is requested.
    const startRobots = await this.#robotsFor(this.#startUrl);
    if (startRobots === null) {
      throw new CrawlFailure(
        `Refused to crawl ${displayUrl(this.#startUrl)}: its address is private, loopback, link-local or otherwise ` +
          'not public. An operator can allow such targets with KB_CRAWL_ALLOW_PRIVATE=true.',
      );
    }

    await this.#seedStart(startRobots);
    const startRow = await this.#lease((tx) => claimNextFrontierRow(tx, id, this.#startKey));
    if (startRow) await this.#process(startRow);

    if (!this.#job.sitemapsDone && this.#options.maxDepth === undefined)
      await this.#readSitemaps(startRobots);

    await this.#drain();
    await this.#checkOutcome(startRobots);
  }

  /** Inserts the start URL on the first attempt: admitted when the path filters take it, else links only. */
  async #seedStart(robots: RobotsRules): Promise<void> {
    const id = this.#job.id;
    await this.#lease(async (tx) => {
      if (await getFrontierRow(tx, id, this.#startKey)) return;
      const locked = await lockCrawlJob(tx, id);
      const verdict = admit(this.#startUrl, {
        startUrl: this.#startUrl,
        filters: this.#filters,
        allowExternalLinks: true,
        depth: 0,
        admitted: locked.total,
        limit: locked.limit,
        robotsAllows: (u) => robots.isAllowed(u),
      });
      const base = { key: this.#startKey, url: this.#startUrl, depth: 0 };
      if (verdict.ok) {
        await insertFrontierRows(tx, id, [{ ...base, admitted: true, state: 'queued' }]);
        locked.total++;
      } else if (verdict.reason === 'robots') {
        // Kept as a finished row so a resumed attempt does not count the refusal twice.
        await insertFrontierRows(tx, id, [{ ...base, admitted: false, state: 'done', outcome: 'robots' }]);
        noteRefusals(locked, [{ url: this.#startUrl, reason: 'robots' }]);
      } else {
        await insertFrontierRows(tx, id, [{ ...base, admitted: false, state: 'queued' }]);
        noteRefusals(locked, [{ url: this.#startUrl, reason: verdict.reason }]);
      }
      await saveCrawlJob(tx, id, locked);
      this.#admittedSoFar = locked.total;
    });
    this.#known.add(this.#startKey);
  }

  async #readSitemaps(robots: RobotsRules): Promise<void> {
    const found = await discoverSitemaps(this.#gatedFetch, {
      siteUrl: this.#startUrl,
      listed: robots.sitemaps,
      maxUrls: this.#rt.settings.maxSitemapUrls,
      signal: this.#signal,
      robotsAllows: (u) => robots.isAllowed(u),
    });
    for (const e of found.errors)
      this.#log?.warn({ sitemap: displayUrl(e.url), err: e.message }, 'sitemap not read');
    const candidates = await this.#candidates(
      found.entries.map((e) => e.url),
      1,
    );
    await this.#lease(async (tx) => {
      const locked = await lockCrawlJob(tx, this.#job.id);
      await this.#admit(tx, locked, candidates);
      await markSitemapsDone(tx, this.#job.id);
      await saveCrawlJob(tx, this.#job.id, locked);
    });
  }

  /** Works off the frontier with `pageConcurrency` pages in flight until nothing is queued or in flight. */
  async #drain(): Promise<void> {
    const inner = new AbortController();
    const onAbort = () => inner.abort(this.#signal.reason);
    this.#signal.addEventListener('abort', onAbort, { once: true });
    let inFlight = 0;
    let changed: (() => void) | null = null;
    let failure: { err: unknown } | null = null;
    const notify = () => {
      changed?.();
      changed = null;
    };
    const worker = async () => {
      while (!inner.signal.aborted) {
        const row = await this.#lease((tx) => claimNextFrontierRow(tx, this.#job.id));
        if (!row) {
          if (inFlight === 0) return;
          await new Promise<void>((resolve) => {
            const prev = changed;
            changed = () => {
              prev?.();
              resolve();
            };
          });
          continue;
        }
        inFlight++;
        try {
          await this.#process(row, inner.signal);
        } finally {
          inFlight--;
          notify();
        }
      }
    };
    try {
      await Promise.all(
        Array.from({ length: Math.max(1, this.#rt.settings.pageConcurrency) }, () =>
          worker().catch((err: unknown) => {
            failure ??= { err };
            inner.abort(err);
            notify();
          }),
        ),
      );
    } finally {
      this.#signal.removeEventListener('abort', onAbort);
    }
    this.#signal.throwIfAborted();
    if (failure) throw (failure as { err: unknown }).err;
  }

  /**
   * Fetches one frontier URL and commits what it yielded. Redirects are followed here, one hop at a
   * time, so each target is judged (robots.txt, scope, already in the crawl) before it is requested.
   */
  async #process(row: FrontierRow, signal: AbortSignal = this.#signal): Promise<void> {
    const org = this.#job.organizationId;
    const memory = row.admitted
      ? await getPageMemory(this.#db, org, crawlSourceKey(row.urlKey), this.#tags)
      : null;
    let url = row.url;
    let key = row.urlKey;
    const visited = new Set([url]);
    for (let hop = 0; ; hop++) {
      // Never throws but for an abort (cancel, shutdown, lost lease).
      const result = await fetchPage(this.#rt.fetch, url, {
        gate: this.#rt.gate,
        signal,
        retry: this.#rt.settings.retry,
        maxBytes: this.#rt.settings.maxPageBytes,
        followRedirects: false,
        // Validators describe the row's own URL, not a redirect target.
        ...(hop === 0 && memory?.etag ? { etag: memory.etag } : {}),
        ...(hop === 0 && memory?.lastModified ? { lastModified: memory.lastModified } : {}),
      });
      if (result.kind !== 'redirect') return this.#settle(row, result, url, key, memory);

      const target = canonicalizeUrl(result.location);
      const targetKey = target ? urlKey(target) : null;
      const end = (outcome: string, detail: string, refusal: { url: string; reason: string }) =>
        this.#commit(row, outcome, detail, async (tx, locked) => {
          await this.#dropRedirected(tx, row);
          noteRefusals(locked, [refusal]);
        });
      if (!target || !targetKey) {
        return end('failed', `redirect to an unusable location from ${displayUrl(url)}`, {
          url: row.url,
          reason: 'failed',
        });
      }
      if (visited.has(target)) return end('failed', 'redirect loop', { url: row.url, reason: 'failed' });
      if (hop >= this.#rt.settings.maxRedirects) {
        return end('failed', `more than ${this.#rt.settings.maxRedirects} redirects`, {
          url: row.url,
          reason: 'failed',
        });
      }
      const verdict = await this.#judgeRedirect(row, target);
      if (!verdict.ok) {
        return end(verdict.reason, `redirected to ${displayUrl(target)}`, {
          url: target,
          reason: verdict.reason,
        });
      }
      // A target the crawl already has is fetched (or was) under its own row.
      if (
        targetKey !== row.urlKey &&
        (this.#known.has(targetKey) || (await getFrontierRow(this.#db, this.#job.id, targetKey)))
      ) {
        return end('duplicate', `redirected to ${displayUrl(target)}`, { url: row.url, reason: 'duplicate' });
      }
      visited.add(target);
      url = target;
      key = targetKey;
    }
  }

  /** A redirect's target must pass the rules a discovered link would (but the budget: this row has its slot). */
  async #judgeRedirect(
    row: FrontierRow,
    target: string,
  ): Promise<{ ok: true } | { ok: false; reason: string }> {
    const scope = admit(target, {
      startUrl: this.#startUrl,
      filters: row.admitted ? this.#filters : { include: [], exclude: [] },
      // The start URL may move to another host (http → https, a new domain); its links are judged as usual.
      allowExternalLinks: this.#options.allowExternalLinks || row.urlKey === this.#startKey,
      depth: row.depth,
      admitted: 0,
      limit: 1,
    });
    if (!scope.ok) return scope;
    // Only a target in scope costs a robots.txt request to its host.
    const robots = await this.#robotsFor(target);
    if (robots === null) return { ok: false, reason: 'blocked' };
    return robots.isAllowed(target) ? { ok: true } : { ok: false, reason: 'robots' };
  }

  /** A URL that now redirects elsewhere is no page of its own any more: its item from an earlier crawl goes. */
  async #dropRedirected(tx: Queryable, row: FrontierRow): Promise<void> {
    if (!row.admitted) return;
    const key = crawlSourceKey(row.urlKey);
    await deletePageMemory(tx, this.#job.organizationId, key);
    await removeDocument(tx, this.#job.organizationId, key);
  }

  /** Commits the final response of a row (after redirects: `url` / `key` are where it landed). */
  async #settle(
    row: FrontierRow,
    result: Exclude<FetchPageResult, { kind: 'redirect' }>,
    url: string,
    key: string,
    memory: PageMemory | null,
  ): Promise<void> {
    const org = this.#job.organizationId;
    const redirected = key !== row.urlKey;
    const sourceKey = crawlSourceKey(key);
    switch (result.kind) {
      case 'ok':
        return this.#processPage(row, result, url, key);
      case 'not_modified': {
        // Unchanged since the last crawl: the item stays; its remembered links keep discovery going.
        const links = await this.#candidates(memory?.links ?? [], row.depth + 1);
        return this.#commit(row, 'unchanged', null, async (tx, locked) => {
          if (memory) await claimCrawlText(tx, this.#job.id, memory.textHash, row.urlKey);
          await this.#admit(tx, locked, links);
        });
      }
      case 'gone':
        return this.#commit(row, 'gone', `HTTP ${result.status}`, async (tx) => {
          if (!row.admitted) return 'gone';
          if (redirected) await this.#dropRedirected(tx, row);
          await deletePageMemory(tx, org, sourceKey);
          return (await removeDocument(tx, org, sourceKey)) ? 'removed' : 'gone';
        });
      case 'skipped':
        return this.#commit(row, 'not_html', result.contentType || null, async (tx, locked) => {
          if (redirected) await this.#dropRedirected(tx, row);
          noteRefusals(locked, [{ url, reason: 'not_html' }]);
        });
      case 'failed': {
        const outcome = result.blocked ? 'blocked' : 'failed';
        return this.#commit(row, outcome, result.message, async (_tx, locked) => {
          noteRefusals(locked, [{ url, reason: outcome }]);
        });
      }
    }
  }

  async #processPage(
    row: FrontierRow,
    res: Extract<FetchPageResult, { kind: 'ok' }>,
    finalUrl: string,
    finalKey: string,
  ): Promise<void> {
    const org = this.#job.organizationId;
    const redirected = finalKey !== row.urlKey;
    let page: ExtractedPage;
    try {
      page = await this.#rt.extractor.extract(res.html, finalUrl, this.#signal);
    } catch (err) {
      this.#signal.throwIfAborted();
      const message = `extraction failed: ${err instanceof Error ? err.message : String(err)}`;
      return this.#commit(row, 'failed', message, async (_tx, locked) => {
        noteRefusals(locked, [{ url: finalUrl, reason: 'failed' }]);
      });
    }
    const links = await this.#candidates(page.links, row.depth + 1);
    const markdown = page.markdown.trim();
    const textHash = sha256Hex(markdown.replace(/\s+/g, ' '));
    const sourceKey = crawlSourceKey(finalKey);
    const detail = res.truncated ? `truncated at ${this.#rt.settings.maxPageBytes} bytes` : null;

    return this.#commit(row, 'created', detail, async (tx, locked) => {
      await this.#admit(tx, locked, links);
      if (redirected) {
        await this.#dropRedirected(tx, row);
        // The target's key is taken by this fetch; if another row took it meanwhile, that row has the page.
        const taken = await insertFrontierRows(tx, this.#job.id, [
          {
            key: finalKey,
            url: finalUrl,
            depth: row.depth,
            admitted: false,
            state: 'done',
            outcome: 'redirect_target',
          },
        ]);
        this.#known.add(finalKey);
        if (taken.length === 0) {
          noteRefusals(locked, [{ url: row.url, reason: 'duplicate' }]);
          return 'duplicate';
        }
      }
      if (!row.admitted) return 'links_only';
      if (res.noindex || page.noindex) {
        noteRefusals(locked, [{ url: finalUrl, reason: 'noindex' }]);
        await deletePageMemory(tx, org, sourceKey);
        await removeDocument(tx, org, sourceKey);
        return 'noindex';
      }
      if (markdown === '') {
        noteRefusals(locked, [{ url: finalUrl, reason: 'empty' }]);
        return 'empty';
      }
      if (!(await claimCrawlText(tx, this.#job.id, textHash, finalKey))) {
        noteRefusals(locked, [{ url: finalUrl, reason: 'duplicate' }]);
        return 'duplicate';
      }
      const lift = row.urlKey === this.#startKey || finalKey === this.#startKey;
      const stored = await storeDocument(
        tx,
        org,
        {
          sourceType: 'crawl',
          sourceTableName: 'crawled_pages',
          sourceKey,
          title: page.title || finalUrl,
          markdown,
          url: finalUrl,
          visibility: 'public',
          tags: this.#tags,
          crawlJobId: this.#job.id,
        },
        // A new crawl of a URL brings back its item if the user had deleted it; other pages stay deleted.
        { respectTombstones: !lift },
      );
      if (stored.outcome === 'tombstoned') return 'tombstoned';
      await savePageMemory(tx, org, sourceKey, {
        etag: res.etag ?? null,
        lastModified: res.lastModified ?? null,
        textHash,
        links: page.links,
      });
      return stored.outcome;
    });
  }

  /**
   * Commits a finished page: `work` runs under the lease and the crawl job's lock and may return the
   * outcome (else `outcome`); the frontier row is marked done and the counters move in the same commit.
   */
  async #commit(
    row: FrontierRow,
    outcome: string,
    detail: string | null,
    work: (tx: Queryable, locked: LockedCrawlJob) => Promise<unknown>,
  ): Promise<void> {
    let final = outcome;
    await this.#lease(async (tx) => {
      const locked = await lockCrawlJob(tx, this.#job.id);
      const returned = await work(tx, locked);
      final = typeof returned === 'string' ? returned : outcome;
      await finishFrontierRow(tx, this.#job.id, row.urlKey, final, detail);
      noteOutcome(locked, final, row.admitted);
      await saveCrawlJob(tx, this.#job.id, locked);
      this.#admittedSoFar = locked.total;
    });
    if (STORED_OUTCOMES.includes(final) || final === 'removed' || final === 'noindex')
      this.#itemsChanged?.();
  }

  /**
   * Turns discovered URLs into candidates at `depth`, and loads robots.txt for the hosts of those that
   * could still be admitted (outside any transaction: robots.txt is a network request).
   */
  async #candidates(urls: readonly string[], depth: number): Promise<Candidate[]> {
    const out: Candidate[] = [];
    const hosts = new Map<string, string>();
    for (const u of urls) {
      const url = canonicalizeUrl(u);
      const key = url ? urlKey(url) : null;
      if (!url || !key) continue;
      out.push({ url, key, depth });
      if (this.#known.has(key) || this.#refusedKeys.has(key)) continue;
      if (this.#admittedSoFar >= this.#job.limit) continue;
      const pre = admit(url, {
        startUrl: this.#startUrl,
        filters: this.#filters,
        allowExternalLinks: this.#options.allowExternalLinks,
        depth,
        ...(this.#options.maxDepth !== undefined ? { maxDepth: this.#options.maxDepth } : {}),
        admitted: 0,
        limit: 1,
      });
      const host = new URL(url).host;
      if (pre.ok && !hosts.has(host)) hosts.set(host, url);
    }
    await Promise.all([...hosts.values()].map((u) => this.#robotsFor(u)));
    return out;
  }

  /** Admits candidates under the lock and records refusals once per URL per run. */
  async #admit(tx: Queryable, locked: LockedCrawlJob, candidates: readonly Candidate[]): Promise<void> {
    if (candidates.length === 0) return;
    const fresh = candidates.filter((c) => !this.#known.has(c.key));
    const { admitted, refused } = await admitUrls(tx, this.#job.id, locked, fresh, (c, state) => {
      if (c.url.length > MAX_URL_LENGTH) return { ok: false, reason: 'too_long' };
      const robots = this.#cachedRobots(c.url);
      if (robots === null) return { ok: false, reason: 'blocked' };
      return admit(c.url, {
        startUrl: this.#startUrl,
        filters: this.#filters,
        allowExternalLinks: this.#options.allowExternalLinks,
        depth: c.depth,
        ...(this.#options.maxDepth !== undefined ? { maxDepth: this.#options.maxDepth } : {}),
        admitted: state.admitted,
        limit: state.limit,
        isDuplicate: state.isDuplicate,
        // Hosts whose robots.txt was not loaded are hosts the candidate check ruled out already.
        robotsAllows: (u) => robots?.isAllowed(u) ?? true,
      });
    });
    for (const c of admitted) this.#known.add(c.key);
    const keyOf = new Map(fresh.map((c) => [c.url, c.key]));
    const toNote: Array<{ url: string; reason: string }> = [];
    for (const r of refused) {
      const key = keyOf.get(r.url)!;
      if (SILENT_REASONS.has(r.reason)) {
        this.#known.add(key);
        continue;
      }
      if (this.#refusedKeys.has(key)) continue;
      this.#refusedKeys.add(key);
      toNote.push(r);
    }
    noteRefusals(locked, toNote);
  }

  /** robots.txt of a URL's host, fetched once per run; null when the host's address is refused. */
  #robotsFor(url: string): Promise<RobotsRules | null> {
    const host = new URL(url).host;
    let p = this.#robots.get(host);
    if (!p) {
      p = fetchRobots(this.#gatedFetch, url, this.#rt.settings.userAgent, {
        signal: this.#signal,
        maxCrawlDelayMs: this.#rt.settings.maxCrawlDelayMs,
      }).then(
        (rules) => {
          if (rules.crawlDelayMs !== undefined) this.#rt.gate.setCrawlDelay(host, rules.crawlDelayMs);
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

  readonly #settled = new Map<string, RobotsRules | null>();

  /** The robots.txt already loaded for a URL's host; undefined when it was never needed. */
  #cachedRobots(url: string): RobotsRules | null | undefined {
    return this.#settled.get(new URL(url).host);
  }

  /** Robots and sitemap requests wait their turn at the host gate like pages do. */
  readonly #gatedFetch: OutboundFetch = (url, init) =>
    this.#rt.gate.run(new URL(String(url)).host, () => this.#rt.fetch(url, init), init?.signal);

  /** Fails the job when the start page could not be crawled and nothing else was stored. */
  async #checkOutcome(robots: RobotsRules): Promise<void> {
    const start = await getFrontierRow(this.#db, this.#job.id, this.#startKey);
    const stored = await countFrontierOutcomes(this.#db, this.#job.id, STORED_OUTCOMES);
    if (stored > 0 || !start) return;
    const url = displayUrl(this.#startUrl);
    switch (start.outcome) {
      case 'robots':
        throw new CrawlFailure(
          robots.source === 'unreachable'
            ? `robots.txt of ${url} could not be fetched, so the site is treated as disallowed (RFC 9309); try again later.`
            : `robots.txt of ${url} disallows it for our user agent; nothing was crawled.`,
        );
      case 'blocked':
        throw new CrawlFailure(
          `Refused to crawl ${url}: ${start.detail ?? 'it leads to a non-public address'}. ` +
            'An operator can allow private targets with KB_CRAWL_ALLOW_PRIVATE=true.',
        );
      case 'failed':
        throw new CrawlFailure(`Could not fetch the start URL ${url}: ${start.detail ?? 'request failed'}.`);
      case 'gone':
      case 'removed':
        throw new CrawlFailure(
          `The start URL ${url} answered ${start.detail ?? 'not found'}; nothing was crawled.`,
        );
      case 'not_html':
        throw new CrawlFailure(`The start URL ${url} is not an HTML page (${start.detail ?? 'unknown type'}).`);
      default:
    }
  }
}

/** A URL for messages and logs: no query (it may carry tokens), no credentials. */
function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'the URL';
  }
}

export type { CrawlOptions };
