/**
 * Fetching one frontier URL with its redirects followed here, one hop at a time, so that each target is
 * judged (scope, robots.txt, already in the crawl) before it is requested; the outbound fetch follows
 * none itself. The caller commits what comes out: the final response, or why the hops stopped.
 */
import type { FrontierRow } from '../db/repositories/crawl-frontier.ts';
import type { PageMemory } from '../db/repositories/crawl-pages.ts';
import type { CrawlScope } from './admission.ts';
import { fetchPage, type FetchPageResult } from './fetch-page.ts';
import { admit } from './filters.ts';
import type { HostPolicy } from './host-policy.ts';
import { displayUrl } from './messages.ts';
import type { CrawlerRuntime } from './runtime.ts';
import { canonicalizeUrl, urlKey } from './url.ts';

/** A response that is not a redirect. */
export type FinalResponse = Exclude<FetchPageResult, { kind: 'redirect' }>;

/**
 * `landed`: the final response, and where it landed (`url`, `key`: the row's own when not redirected).
 * `stopped`: a redirect was not followed; the row ends with `outcome` and `detail`, and `refusal` is
 * counted in the crawl's refusal summary; `target` (when usable) and `reason` (an admission reason, or
 * why the hops failed) are for the crawl's warning.
 */
type HopsResult =
  | { kind: 'landed'; response: FinalResponse; url: string; key: string }
  | {
      kind: 'stopped';
      outcome: string;
      detail: string;
      refusal: { url: string; reason: string };
      target: string | null;
      reason: string;
    };

export interface RedirectContext {
  runtime: CrawlerRuntime;
  scope: CrawlScope;
  hosts: HostPolicy;
  /** Whether the crawl already has a row for this key (that row fetches it). */
  inCrawl: (key: string) => Promise<boolean>;
}

/**
 * Fetches the row's URL, following redirects that pass the rules. `memory` (the previous crawl's
 * validators) makes the first request conditional. Never throws but for an abort (cancel, shutdown, lost
 * lease).
 */
export async function fetchFollowingRedirects(
  ctx: RedirectContext,
  row: FrontierRow,
  memory: PageMemory | null,
  signal: AbortSignal,
): Promise<HopsResult> {
  const { settings } = ctx.runtime;
  let url = row.url;
  let key = row.urlKey;
  const visited = new Set([url]);
  for (let hop = 0; ; hop++) {
    const response = await fetchPage(ctx.runtime.fetch, url, {
      gate: ctx.runtime.gate,
      signal,
      retry: settings.retry,
      maxBytes: settings.maxPageBytes,
      followRedirects: false,
      // Validators describe the row's own URL, not a redirect target.
      ...(hop === 0 && memory?.etag ? { etag: memory.etag } : {}),
      ...(hop === 0 && memory?.lastModified ? { lastModified: memory.lastModified } : {}),
    });
    if (response.kind !== 'redirect') return { kind: 'landed', response, url, key };

    const target = canonicalizeUrl(response.location);
    const targetKey = target ? urlKey(target) : null;
    const failed = (detail: string): HopsResult => ({
      kind: 'stopped',
      outcome: 'failed',
      detail,
      refusal: { url: row.url, reason: 'failed' },
      target,
      reason: detail,
    });
    if (!target || !targetKey) return failed(`redirect to an unusable location from ${displayUrl(url)}`);
    if (visited.has(target)) return failed('redirect loop');
    if (hop >= settings.maxRedirects) return failed(`more than ${settings.maxRedirects} redirects`);
    const verdict = await judgeRedirect(ctx, row, target);
    if (!verdict.ok) {
      return {
        kind: 'stopped',
        outcome: verdict.reason,
        detail: `redirected to ${displayUrl(target)}`,
        refusal: { url: target, reason: verdict.reason },
        target,
        reason: verdict.reason,
      };
    }
    // A target the crawl already has is fetched (or was) under its own row.
    if (targetKey !== row.urlKey && (await ctx.inCrawl(targetKey))) {
      return {
        kind: 'stopped',
        outcome: 'duplicate',
        detail: `redirected to ${displayUrl(target)}`,
        refusal: { url: row.url, reason: 'duplicate' },
        target,
        reason: 'duplicate',
      };
    }
    visited.add(target);
    url = target;
    key = targetKey;
  }
}

/** A redirect's target must pass the rules a discovered link would (but the budget: this row has its slot). */
async function judgeRedirect(
  ctx: RedirectContext,
  row: FrontierRow,
  target: string,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const { scope } = ctx;
  const verdict = admit(target, {
    startUrl: scope.startUrl,
    filters: row.admitted ? scope.filters : { include: [], exclude: [] },
    // The start URL may move to another host (http → https, a new domain); its links are judged as usual.
    allowExternalLinks: scope.allowExternalLinks || row.urlKey === scope.startKey,
    depth: row.depth,
    admitted: 0,
    limit: 1,
  });
  if (!verdict.ok) return verdict;
  // Only a target in scope costs a robots.txt request to its host.
  const robots = await ctx.hosts.robotsFor(target);
  if (robots === null) return { ok: false, reason: 'blocked' };
  return robots.isAllowed(target) ? { ok: true } : { ok: false, reason: 'robots' };
}
