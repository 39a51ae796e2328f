/**
 * One crawl run: works off a crawl job's frontier with a few pages in flight, turning each fetched page
 * into an item through the shared store step as it arrives.
 *
 * Order of work, which a resumed attempt repeats without redoing what was committed:
 * 1. robots.txt of the start site (a refused start address fails the job before any other request);
 * 2. the start page (its links get the budget first: a site's home page links are the best sample);
 * 3. the site's sitemaps (skipped when `maxDepth` is set: depth is measured in links);
 * 4. the rest of the frontier by priority (patterns.ts: shallower first, sitemap entries before links,
 *    URL patterns that keep producing duplicates pushed back), until `limit` distinct pages are stored,
 *    the fetch cap is reached or nothing is left; URLs still queued then are swept as `budget`.
 *
 * Every page commit runs under the job's lease (a cancelled or taken-back job writes nothing) and under
 * the crawl job's row lock (admission and counters are exact under any concurrency). The parts of a run:
 * admission.ts (links into the frontier), host-policy.ts (robots.txt per host), redirects.ts (fetching a
 * URL hop by hop), pages.ts (what a final response does to the items: near-duplicates, canonical, budget),
 * messages.ts (why a crawl failed).
 */
import type { Database, Queryable } from '../db/database.ts';
import {
  type ClaimLease,
  claimNextFrontierRow,
  countFrontierOutcomes,
  type FrontierRow,
  finishFrontierRow,
  getFrontierRow,
  notePatternPage,
  raiseQueuedPriority,
  requeueInFlight,
  shiftPatternPriority,
  sweepQueued,
} from '../db/repositories/crawl-frontier.ts';
import {
  type CrawlJobRecord,
  getCrawlJobRecord,
  type LockedCrawlJob,
  lockCrawlJob,
  lockCrawlJobUnderLease,
  markSitemapsDone,
  saveCrawlJob,
} from '../db/repositories/crawl-jobs.ts';
import { getPageMemory } from '../db/repositories/crawl-pages.ts';
import { addJobWarnings, type NewJobWarning } from '../db/repositories/job-warnings.ts';
import { crawlSourceKey } from '../ingest/hash-skip.ts';
import type { Logger } from '../lib/logger.ts';
import { Admission, type CrawlScope } from './admission.ts';
import { compilePathFilters } from './filters.ts';
import { noteOutcome, noteRefusals, REFUSAL_SAMPLE_SIZE, STORED_OUTCOMES } from './frontier.ts';
import type { HostPace } from './fetch-page.ts';
import { HostPolicy } from './host-policy.ts';
import {
  crawlJobMissing,
  displayUrl,
  startAddressRefused,
  startPageFailure,
  startUrlNotHttp,
} from './messages.ts';
import { type CommitResult, PageSettler } from './pages.ts';
import { COLLAPSED_OUTCOMES, isPushedBack, PUSH_BACK, urlPattern } from './patterns.ts';
import { fetchFollowingRedirects, type RedirectContext } from './redirects.ts';
import type { RobotsRules } from './robots.ts';
import type { CrawlerRuntime } from './runtime.ts';
import { paceFor } from './settings.ts';
import { discoverSitemaps } from './sitemaps.ts';
import { canonicalizeUrl, sameSite, urlKey } from './url.ts';
import { redirectRefused, robotsUnreadable, sitemapOtherHost, sitemapUnreadable } from './warnings.ts';

/** What the runner needs besides the job id; the job engine provides the lease, signal and log. */
export interface CrawlRunDeps {
  db: Database;
  crawler: CrawlerRuntime;
  /** Wakes the indexer after pages were stored or removed. */
  itemsChanged?: () => void;
  /** Transaction that first checks this worker still holds the job; default a plain transaction. */
  withLease?: <T>(fn: (tx: Queryable) => Promise<T>) => Promise<T>;
  /** The job's lease as the run's own statements check it (see {@link RunLease}). */
  lease?: RunLease;
  log?: Logger;
}

/**
 * The job engine's lease, for the statements that check it themselves: each claim of a frontier URL (one
 * statement outside any transaction, claimNextFrontierRow) and each commit of pages (its lock of the
 * crawl job, lockCrawlJobUnderLease, in a `transaction` taken in turn with the job's other writes to its
 * row: JobContext.leaseTransaction). `lost` is the error to throw when it no longer holds. Without a
 * lease (tests of the run alone), claims check nothing and commits go through `withLease`.
 */
export interface RunLease extends ClaimLease {
  lost: () => Error;
  transaction: <T>(fn: (tx: Queryable) => Promise<T>) => Promise<T>;
}

/**
 * The runtime as one crawl sees it: the same parts, its host gate held to the crawl's own pace on each
 * host (what it asked for within the operator's bounds there, else the host's default).
 */
function pacedRuntime(runtime: CrawlerRuntime, job: CrawlJobRecord): CrawlerRuntime {
  const requested = { maxConcurrency: job.options.maxConcurrency, delayMs: job.options.delayMs };
  const paces = new Map<string, HostPace>();
  const paceOf = (host: string): HostPace => {
    let pace = paces.get(host);
    if (!pace) {
      pace = paceFor(new URL(`http://${host}`).hostname, requested, runtime.settings);
      paces.set(host, pace);
    }
    return pace;
  };
  return { ...runtime, gate: runtime.gate.withPace(paceOf) };
}

/** Outcomes after which the organization's items changed (stored, or an item of an earlier crawl removed). */
const ITEM_CHANGING_OUTCOMES = new Set([...STORED_OUTCOMES, 'removed', 'noindex', ...COLLAPSED_OUTCOMES]);

/** Most pages written by one commit: bounds how long one transaction holds the crawl job's lock. */
const MAX_COMMIT_GROUP = 16;

interface QueuedCommit {
  row: FrontierRow;
  outcome: string;
  detail: string | null;
  work: (tx: Queryable, locked: LockedCrawlJob) => Promise<unknown>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Runs (or resumes) one crawl job to its end. Resolves when the frontier is worked off; throws a
 * `CrawlFailure` (messages.ts) when the crawl cannot be done at all (start URL refused or unreachable),
 * and the signal's reason when it aborts (cancel, shutdown, lost lease).
 */
export async function runCrawlJob(
  deps: CrawlRunDeps,
  crawlJobId: string,
  signal: AbortSignal,
): Promise<void> {
  const job = await getCrawlJobRecord(deps.db, crawlJobId);
  if (!job) throw crawlJobMissing();
  await new CrawlRun(deps, job, signal).run();
}

class CrawlRun {
  readonly #db: Database;
  readonly #itemsChanged: (() => void) | undefined;
  readonly #rt: CrawlerRuntime;
  readonly #job: CrawlJobRecord;
  readonly #signal: AbortSignal;
  readonly #lease: <T>(fn: (tx: Queryable) => Promise<T>) => Promise<T>;
  readonly #runLease: RunLease | undefined;
  readonly #log: Logger | undefined;
  readonly #scope: CrawlScope;
  readonly #tags: string[];
  readonly #hosts: HostPolicy;
  readonly #admission: Admission;
  readonly #redirects: RedirectContext;
  readonly #pages: PageSettler;
  /** Finished pages waiting for the next group commit (see #commit). */
  readonly #commitQueue: QueuedCommit[] = [];
  #committing = false;
  /** Warnings not yet written: they go with the next commit of pages, or at the end of the run. */
  #warnings: NewJobWarning[] = [];

  constructor(deps: CrawlRunDeps, job: CrawlJobRecord, signal: AbortSignal) {
    this.#itemsChanged = deps.itemsChanged;
    this.#db = deps.db;
    this.#rt = pacedRuntime(deps.crawler, job);
    this.#job = job;
    this.#signal = signal;
    this.#lease = deps.withLease ?? ((fn) => this.#db.transaction(fn));
    this.#runLease = deps.lease;
    this.#log = deps.log;
    const filters = compilePathFilters(job.options.includePaths, job.options.excludePaths);
    const start = canonicalizeUrl(job.url);
    const key = start ? urlKey(start) : null;
    if (!start || !key) throw startUrlNotHttp(job.url);
    this.#scope = {
      startUrl: start,
      startKey: key,
      filters,
      allowExternalLinks: job.options.allowExternalLinks,
      maxDepth: job.options.maxDepth,
    };
    this.#tags = [...new Set(job.options.tags ?? [])];
    this.#hosts = new HostPolicy(this.#rt, signal, {
      onUnreadable: (rules) => this.#warn(robotsUnreadable(rules)),
    });
    this.#admission = new Admission(job, this.#scope, this.#hosts);
    this.#redirects = {
      runtime: this.#rt,
      scope: this.#scope,
      hosts: this.#hosts,
      inCrawl: async (k) =>
        this.#admission.isKnown(k) || (await getFrontierRow(this.#db, this.#job.id, k)) !== null,
    };
    this.#pages = new PageSettler({
      job,
      startKey: key,
      tags: this.#tags,
      runtime: this.#rt,
      signal,
      admission: this.#admission,
      commit: (row, outcome, detail, work) => this.#commit(row, outcome, detail, work),
      warn: (w) => this.#warn(w),
    });
  }

  /** Runs the crawl; its warnings are written even when it fails (not when it is cancelled or taken back). */
  async run(): Promise<void> {
    try {
      await this.#runSteps();
    } catch (err) {
      if (!this.#signal.aborted) await this.#flushWarnings().catch(() => {});
      throw err;
    }
    await this.#flushWarnings();
  }

  #warn(warning: NewJobWarning): void {
    this.#warnings.push(warning);
  }

  /** Writes the warnings not written with a commit of pages. */
  async #flushWarnings(): Promise<void> {
    if (this.#warnings.length === 0) return;
    const warnings = this.#warnings.splice(0);
    await this.#lease((tx) => addJobWarnings(tx, this.#job.jobId, warnings));
  }

  async #runSteps(): Promise<void> {
    const id = this.#job.id;
    await this.#lease((tx) => requeueInFlight(tx, id));

    // robots.txt first: when the start address is refused, nothing else is requested.
    const startRobots = await this.#hosts.robotsFor(this.#scope.startUrl);
    if (startRobots === null) throw startAddressRefused(this.#scope.startUrl);

    await this.#seedStart(startRobots);
    const startRow = await this.#claim({ key: this.#scope.startKey });
    if (startRow) await this.#process(startRow);

    if (!this.#job.sitemapsDone && this.#job.options.maxDepth === undefined)
      await this.#readSitemaps(startRobots);

    await this.#drain();
    await this.#sweep();
    await this.#checkOutcome(startRobots);
  }

  /** The limit or the fetch cap ended the crawl: what is still queued is counted as refused for the budget. */
  async #sweep(): Promise<void> {
    await this.#lease(async (tx) => {
      const locked = await lockCrawlJob(tx, this.#job.id);
      const swept = await sweepQueued(tx, this.#job.id, REFUSAL_SAMPLE_SIZE);
      if (swept.count === 0) return;
      locked.settled += swept.admitted;
      const entry = locked.refused['budget'] ?? { count: 0, sample: [] };
      entry.count += swept.count;
      for (const url of swept.sample)
        if (entry.sample.length < REFUSAL_SAMPLE_SIZE && !entry.sample.includes(url)) entry.sample.push(url);
      locked.refused['budget'] = entry;
      await saveCrawlJob(tx, this.#job.id, locked);
    });
  }

  /** Inserts the start URL on the first attempt (a resumed attempt finds its row). */
  async #seedStart(robots: RobotsRules): Promise<void> {
    const id = this.#job.id;
    await this.#lease(async (tx) => {
      if (await getFrontierRow(tx, id, this.#scope.startKey)) return;
      const locked = await lockCrawlJob(tx, id);
      await this.#admission.admitStart(tx, locked, robots);
      await saveCrawlJob(tx, id, locked);
      this.#admission.committed(locked);
    });
    this.#admission.markKnown(this.#scope.startKey);
  }

  async #readSitemaps(robots: RobotsRules): Promise<void> {
    const found = await discoverSitemaps(this.#hosts.fetch, {
      siteUrl: this.#scope.startUrl,
      listed: robots.sitemaps,
      maxUrls: this.#rt.settings.maxSitemapUrls,
      signal: this.#signal,
      robotsAllows: (u) => robots.isAllowed(u),
    });
    const warnings: NewJobWarning[] = [];
    for (const e of found.errors) {
      this.#log?.warn({ sitemap: displayUrl(e.url), err: e.message }, 'sitemap not read');
      warnings.push(sitemapUnreadable(e.url, e.message));
    }
    const { urls, otherHosts } = this.#sitemapUrlsOfSite(found.entries.map((e) => e.url));
    for (const [host, n] of otherHosts) warnings.push(sitemapOtherHost(host, this.#scope.startUrl, n));
    const candidates = await this.#admission.candidates(urls, 1, { fromSitemap: true });
    await this.#lease(async (tx) => {
      await addJobWarnings(tx, this.#job.jobId, warnings);
      const locked = await lockCrawlJob(tx, this.#job.id);
      await this.#admission.admit(tx, locked, candidates);
      // Pages the start page linked to are queued already; listed in a sitemap, they move up too.
      await raiseQueuedPriority(tx, this.#job.id, candidates, PUSH_BACK);
      await markSitemapsDone(tx, this.#job.id);
      await saveCrawlJob(tx, this.#job.id, locked);
    });
  }

  /**
   * A sitemap may list only pages of its own site (sitemaps.org); one listing another host's pages was
   * written for another address of the site (a production domain, another port). Unless the crawl follows
   * external links, those URLs are left out and counted per host for a warning, not refused one by one
   * as `external` links.
   */
  #sitemapUrlsOfSite(all: string[]): { urls: string[]; otherHosts: Map<string, number> } {
    const otherHosts = new Map<string, number>();
    if (this.#scope.allowExternalLinks) return { urls: all, otherHosts };
    const urls: string[] = [];
    for (const u of all) {
      if (sameSite(u, this.#scope.startUrl)) {
        urls.push(u);
        continue;
      }
      const host = new URL(u).host;
      otherHosts.set(host, (otherHosts.get(host) ?? 0) + 1);
    }
    return { urls, otherHosts };
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
    // Claims are one statement each and made one at a time, each counting the pages claimed before it
    // as in flight (they may each store a page: none is claimed that the page limit could not take).
    let claimTurn: Promise<unknown> = Promise.resolve();
    const claimNext = (): Promise<FrontierRow | null> => {
      const turn = claimTurn.then(async () => {
        const row = await this.#claim({ inFlight });
        if (row) inFlight++;
        return row;
      });
      claimTurn = turn.catch(() => {});
      return turn;
    };
    const worker = async () => {
      while (!inner.signal.aborted) {
        const row = await claimNext();
        if (!row) {
          if (inFlight === 0) {
            // Rows still `fetching` now are none of this run's: a claim raced a lease being taken back.
            if ((await this.#lease((tx) => requeueInFlight(tx, this.#job.id))) > 0) continue;
            return;
          }
          await new Promise<void>((resolve) => {
            const prev = changed;
            changed = () => {
              prev?.();
              resolve();
            };
          });
          continue;
        }
        try {
          await this.#process(row, inner.signal);
        } finally {
          inFlight--;
          notify();
        }
      }
    };
    // A fast pace on the start host needs pages enough in flight to keep its slots busy: a page spends
    // most of its time in extraction and commit, not on the host.
    const startPace = this.#rt.gate.paceOf(new URL(this.#scope.startUrl).host);
    const width = Math.max(1, this.#rt.settings.pageConcurrency, 2 * startPace.concurrency);
    try {
      await Promise.all(
        Array.from({ length: width }, () =>
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

  /** Claims a frontier URL (claimNextFrontierRow); throws the lease's error when it no longer holds. */
  async #claim(opts: { key?: string; inFlight?: number }): Promise<FrontierRow | null> {
    const lease = this.#runLease;
    const claimed = await claimNextFrontierRow(this.#db, this.#job.id, {
      ...opts,
      ...(lease ? { lease } : {}),
    });
    if (!claimed.leaseHeld) throw lease!.lost();
    return claimed.row;
  }

  /** Fetches one frontier URL (redirects followed hop by hop, redirects.ts) and commits what it yielded. */
  async #process(row: FrontierRow, signal: AbortSignal = this.#signal): Promise<void> {
    const memory = row.admitted
      ? await getPageMemory(this.#db, this.#job.organizationId, crawlSourceKey(row.urlKey), this.#tags)
      : null;
    const hops = await fetchFollowingRedirects(this.#redirects, row, memory, signal);
    if (hops.kind === 'landed') return this.#pages.settle(row, hops.response, hops.url, hops.key, memory);
    // A redirect to a URL the crawl fetches under its own row costs nothing; any other stop costs a page.
    if (hops.outcome !== 'duplicate') this.#warn(redirectRefused(row.url, hops.target, hops.reason));
    return this.#commit(row, hops.outcome, hops.detail, async (tx, locked) => {
      await this.#pages.dropRedirected(tx, row);
      noteRefusals(locked, [hops.refusal]);
    });
  }

  /**
   * Commits a finished page: `work` runs under the lease and the crawl job's lock and may return the
   * outcome (else `outcome`) and detail; the frontier row is marked done, the counters move and the
   * row's URL pattern is counted (pushed back or forward when its verdict changes) in the same commit.
   *
   * Pages that finish while a commit is being written are written together in the next one (a group
   * commit, up to {@link MAX_COMMIT_GROUP} pages): one transaction, one lease check, one lock and one save
   * of the crawl job's counters for all of them, each page's work in turn seeing the ones before it (two
   * identical pages in one group still collapse). On PGlite a transaction holds the whole database, and
   * these four were a fifth of a page's statements. A group that fails fails each of its pages, as one
   * page failing failed the crawl attempt before (a retry resumes from the last commit).
   */
  #commit(
    row: FrontierRow,
    outcome: string,
    detail: string | null,
    work: (tx: Queryable, locked: LockedCrawlJob) => Promise<unknown>,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#commitQueue.push({ row, outcome, detail, work, resolve, reject });
      if (!this.#committing) void this.#writeCommits();
    });
  }

  /** Writes queued page commits, a group at a time, until none is left. */
  async #writeCommits(): Promise<void> {
    this.#committing = true;
    try {
      while (this.#commitQueue.length > 0) {
        const group = this.#commitQueue.splice(0, MAX_COMMIT_GROUP);
        // Warnings noted so far go with this commit (written with their pages, or put back if it fails).
        const warnings = this.#warnings.splice(0);
        let changed = false;
        try {
          await this.#commitTransaction(async (tx, locked) => {
            changed = false;
            await addJobWarnings(tx, this.#job.jobId, warnings);
            for (const page of group) {
              const returned = await page.work(tx, locked);
              const result = returned as CommitResult | undefined;
              const final = typeof result === 'string' ? result : (result?.outcome ?? page.outcome);
              const finalDetail = typeof result === 'object' ? result.detail : page.detail;
              if (page.row.admitted) await this.#finishCounted(tx, page.row, final, finalDetail);
              else await finishFrontierRow(tx, this.#job.id, page.row.urlKey, final, finalDetail);
              // The fetch is counted here, with its page (claims only read the counters). At most the cap:
              // an attempt before this rule counted its fetches in flight when claimed.
              locked.fetched = Math.min(locked.fetchLimit, locked.fetched + 1);
              noteOutcome(locked, final, { admitted: page.row.admitted });
              if (ITEM_CHANGING_OUTCOMES.has(final)) changed = true;
            }
            await saveCrawlJob(tx, this.#job.id, locked);
            this.#admission.committed(locked);
          });
        } catch (err) {
          this.#warnings.unshift(...warnings);
          for (const page of group) page.reject(err);
          continue;
        }
        for (const page of group) page.resolve();
        if (changed) this.#itemsChanged?.();
      }
    } finally {
      this.#committing = false;
    }
  }

  /**
   * A transaction under the lease with the crawl job's row locked: with the run's own lease, the lock and
   * the lease check are one statement (lockCrawlJobUnderLease), else `withLease` checks it first.
   */
  #commitTransaction(fn: (tx: Queryable, locked: LockedCrawlJob) => Promise<void>): Promise<void> {
    const lease = this.#runLease;
    if (!lease) return this.#lease(async (tx) => fn(tx, await lockCrawlJob(tx, this.#job.id)));
    return lease.transaction(async (tx) => {
      const locked = await lockCrawlJobUnderLease(tx, this.#job.id, lease);
      if (!locked) throw lease.lost();
      await fn(tx, locked);
    });
  }

  /**
   * Marks an admitted page's row done and counts it for its URL pattern (one statement); a pattern whose
   * pages keep collapsing is pushed back.
   */
  async #finishCounted(
    tx: Queryable,
    row: FrontierRow,
    outcome: string,
    detail: string | null,
  ): Promise<void> {
    const pattern = row.pattern || urlPattern(row.url);
    const collapsed = COLLAPSED_OUTCOMES.has(outcome);
    const finish = { key: row.urlKey, outcome, detail };
    const verdict = await notePatternPage(tx, this.#job.id, { pattern, collapsed, finish }, isPushedBack);
    if (verdict.changed)
      await shiftPatternPriority(tx, this.#job.id, pattern, verdict.pushedBack ? PUSH_BACK : -PUSH_BACK);
  }

  /** Fails the job when the start page could not be crawled and nothing else was stored. */
  async #checkOutcome(robots: RobotsRules): Promise<void> {
    const start = await getFrontierRow(this.#db, this.#job.id, this.#scope.startKey);
    const stored = await countFrontierOutcomes(this.#db, this.#job.id, [...STORED_OUTCOMES]);
    if (stored > 0 || !start) return;
    const failure = startPageFailure(this.#scope.startUrl, start, robots);
    if (failure) throw failure;
  }
}
