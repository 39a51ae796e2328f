/**
 * Admission of one crawl run: turning discovered URLs into frontier rows within the frontier's bound
 * (settings.ts `crawlBounds`), with a reason for every refusal (too long, refused host, robots.txt, scope,
 * depth, budget...), and a priority (patterns.ts: depth, sitemap, push-back). Robots look-ups happen
 * before the transaction ({@link Admission.candidates}: they are network requests); the decisions and
 * inserts happen under the crawl job's row lock ({@link Admission.admit}), so the bound is exact.
 */
import type { Queryable } from '../db/database.ts';
import { insertFrontierRows } from '../db/repositories/crawl-frontier.ts';
import type { LockedCrawlJob } from '../db/repositories/crawl-jobs.ts';
import { admit, type PathFilters } from './filters.ts';
import { admitUrls, type Candidate, noteRefusals } from './frontier.ts';
import type { HostPolicy } from './host-policy.ts';
import { basePriority, urlPattern } from './patterns.ts';
import type { RobotsRules } from './robots.ts';
import { crawlBounds } from './settings.ts';
import { canonicalizeUrl, urlKey } from './url.ts';

/** Longer URLs are refused (`too_long`): they are traps (ever-growing queries) more often than pages. */
const MAX_URL_LENGTH = 2048;

/** Refusals of discovered links not worth recording: the URL is already in the crawl. */
const SILENT_REASONS = new Set(['duplicate']);

/** Where a crawl may go: its start URL (canonical, and its key), path filters and link options. */
export interface CrawlScope {
  startUrl: string;
  startKey: string;
  filters: PathFilters;
  allowExternalLinks: boolean;
  /** Link depth from the start URL; undefined: no depth limit. */
  maxDepth: number | undefined;
}

/** Discovered URLs whose canonical form a run keeps (see `Admission.#canonical`). */
const CANONICAL_CACHE_SIZE = 20_000;

export class Admission {
  readonly #jobId: string;
  /** URLs the frontier holds at most. */
  readonly #limit: number;
  readonly #scope: CrawlScope;
  readonly #hosts: HostPolicy;
  /** Keys refused this run: a link on every page is counted once. */
  readonly #refusedKeys = new Set<string>();
  /** Keys known to be in the frontier (a cache; the database decides). */
  readonly #known = new Set<string>();
  /**
   * Discovered URL → its canonical form, key and pattern (null: not an http(s) URL), for this run: a
   * site's navigation repeats the same links on every page (~200 a page on fastapi-docs), and parsing
   * each again was the crawl thread's largest cost of our own. Bounded; emptied when full.
   */
  readonly #canonical = new Map<string, { url: string; key: string; pattern: string } | null>();
  /**
   * Canonical URL → its host and the refusal that depends on nothing but the URL and the run's scope
   * (external, not HTML, excluded, not included; null when none), for this run: the fastapi release notes
   * alone link 4,000 pages of another site, each parsed some ten times over by the checks. Bounded.
   */
  readonly #scoped = new Map<string, { host: string; refusal: string | null }>();
  /** Admitted so far, as of the last commit (a cache, for skipping robots look-ups once the budget is spent). */
  #admittedSoFar = 0;

  constructor(job: { id: string; limit: number }, scope: CrawlScope, hosts: HostPolicy) {
    this.#jobId = job.id;
    this.#limit = crawlBounds(job.limit).frontierLimit;
    this.#scope = scope;
    this.#hosts = hosts;
  }

  /** Whether the key is known to be in the frontier (false means "ask the database"). */
  isKnown(key: string): boolean {
    return this.#known.has(key);
  }

  markKnown(key: string): void {
    this.#known.add(key);
  }

  /** The frontier's fill as of a commit: `locked.admitted` once that commit's transaction is done. */
  committed(locked: LockedCrawlJob): void {
    this.#admittedSoFar = locked.admitted;
  }

  /**
   * Inserts the start URL (on the first attempt, under the lock): admitted when the path filters take it,
   * else fetched for its links only.
   */
  async admitStart(tx: Queryable, locked: LockedCrawlJob, robots: RobotsRules): Promise<void> {
    const { startUrl, startKey, filters } = this.#scope;
    const verdict = admit(startUrl, {
      startUrl,
      filters,
      allowExternalLinks: true,
      depth: 0,
      admitted: locked.admitted,
      limit: this.#limit,
      robotsAllows: (u) => robots.isAllowed(u),
    });
    const base = { key: startKey, url: startUrl, depth: 0, priority: 0, pattern: urlPattern(startUrl) };
    if (verdict.ok) {
      await insertFrontierRows(tx, this.#jobId, [{ ...base, admitted: true, state: 'queued' }]);
      locked.admitted++;
    } else if (verdict.reason === 'robots') {
      // Kept as a finished row so a resumed attempt does not count the refusal twice.
      await insertFrontierRows(tx, this.#jobId, [
        { ...base, admitted: false, state: 'done', outcome: 'robots' },
      ]);
      noteRefusals(locked, [{ url: startUrl, reason: 'robots' }]);
    } else {
      await insertFrontierRows(tx, this.#jobId, [{ ...base, admitted: false, state: 'queued' }]);
      noteRefusals(locked, [{ url: startUrl, reason: verdict.reason }]);
    }
  }

  /**
   * Turns discovered URLs into candidates at `depth` (from a sitemap or from links), and loads robots.txt
   * for the hosts of those that could still be admitted (outside any transaction: robots.txt is a network
   * request).
   */
  async candidates(
    urls: readonly string[],
    depth: number,
    opts: { fromSitemap?: boolean } = {},
  ): Promise<Candidate[]> {
    const out: Candidate[] = [];
    const hosts = new Map<string, string>();
    for (const u of urls) {
      const known = this.#canonicalOf(u);
      if (!known) continue;
      const { url, key, pattern } = known;
      out.push({
        url,
        key,
        depth,
        priority: basePriority(url, depth, { fromSitemap: opts.fromSitemap ?? false }),
        pattern,
      });
      if (this.#known.has(key) || this.#refusedKeys.has(key)) continue;
      if (this.#admittedSoFar >= this.#limit) continue;
      const { host, refusal } = this.#scopeOf(url);
      const { maxDepth } = this.#scope;
      if (refusal === null && (maxDepth === undefined || depth <= maxDepth) && !hosts.has(host))
        hosts.set(host, url);
    }
    await Promise.all([...hosts.values()].map((u) => this.#hosts.robotsFor(u)));
    return out;
  }

  #canonicalOf(u: string): { url: string; key: string; pattern: string } | null {
    let found = this.#canonical.get(u);
    if (found === undefined) {
      const url = canonicalizeUrl(u);
      const key = url ? urlKey(url) : null;
      found = url && key ? { url, key, pattern: urlPattern(url) } : null;
      if (this.#canonical.size >= CANONICAL_CACHE_SIZE) this.#canonical.clear();
      this.#canonical.set(u, found);
    }
    return found;
  }

  #scopeOf(url: string): { host: string; refusal: string | null } {
    let found = this.#scoped.get(url);
    if (found === undefined) {
      const verdict = admit(url, {
        startUrl: this.#scope.startUrl,
        filters: this.#scope.filters,
        allowExternalLinks: this.#scope.allowExternalLinks,
        depth: 0,
        admitted: 0,
        limit: 1,
      });
      found = { host: new URL(url).host, refusal: verdict.ok ? null : verdict.reason };
      if (this.#scoped.size >= CANONICAL_CACHE_SIZE) this.#scoped.clear();
      this.#scoped.set(url, found);
    }
    return found;
  }

  /** Admits candidates under the lock and records refusals once per URL per run. */
  async admit(tx: Queryable, locked: LockedCrawlJob, candidates: readonly Candidate[]): Promise<void> {
    if (candidates.length === 0) return;
    const fresh = candidates.filter((c) => !this.#known.has(c.key));
    const { admitted, refused } = await admitUrls(tx, this.#jobId, locked, this.#limit, fresh, (c, state) => {
      if (c.url.length > MAX_URL_LENGTH) return { ok: false, reason: 'too_long' };
      const robots = this.#hosts.loadedRobots(c.url);
      if (robots === null) return { ok: false, reason: 'blocked' };
      // The scope's refusal, known already, unless a duplicate (admit's first check) says more.
      const refusal = state.isDuplicate(c.key) ? null : this.#scopeOf(c.url).refusal;
      if (refusal !== null) return { ok: false, reason: refusal };
      return admit(c.url, {
        startUrl: this.#scope.startUrl,
        filters: this.#scope.filters,
        allowExternalLinks: this.#scope.allowExternalLinks,
        depth: c.depth,
        ...(this.#scope.maxDepth !== undefined ? { maxDepth: this.#scope.maxDepth } : {}),
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
}
