/**
 * What a crawl tells the person about problems that did not fail it but that they can act on, kept on the
 * job (src/db/repositories/job-warnings.ts): each names the URL and says what it cost and what to do.
 * URLs are shown as messages.ts shows them (no query, no credentials).
 */
import type { NewJobWarning } from '../db/repositories/job-warnings.ts';
import { displayUrl } from './messages.ts';
import type { RobotsRules } from './robots.ts';

export function sitemapUnreadable(url: string, why: string): NewJobWarning {
  const shown = displayUrl(url);
  return {
    code: 'sitemap_unreadable',
    subject: shown,
    message: `The sitemap ${shown} could not be read (${why}); the pages it lists were reached only through links. Check that the sitemap is served at that address.`,
  };
}

/**
 * A sitemap lists pages of another host than the crawl's (a sitemap generated for another address of
 * the site, such as a production domain): they are ignored, not counted as refused links.
 */
export function sitemapOtherHost(host: string, startUrl: string, urls: number): NewJobWarning {
  const startHost = new URL(startUrl).host;
  return {
    code: 'sitemap_other_host',
    subject: host,
    count: urls,
    message: `The site's sitemaps list ${urls} URL${urls === 1 ? '' : 's'} on ${host}, not on ${startHost}; they were ignored. A sitemap written for another address of the site? Crawl from that address, or allow external links to follow them.`,
  };
}

/** robots.txt could not be read: as RFC 9309 asks, nothing on its host is crawled. */
export function robotsUnreadable(rules: RobotsRules): NewJobWarning {
  const shown = displayUrl(rules.url);
  const host = new URL(rules.url).host;
  return {
    code: 'robots_unreadable',
    subject: shown,
    message: `robots.txt at ${shown} could not be read (${rules.problem ?? 'no answer'}), so nothing on ${host} was crawled (RFC 9309 treats the site as disallowed). Crawl again once the site answers.`,
  };
}

/** Why a redirect target was not followed, in words (the reasons of filters.ts `admit` and redirects.ts). */
const REDIRECT_REASONS: Record<string, string> = {
  external: 'it is on another site and external links are not followed (allowExternalLinks)',
  robots: "the target site's robots.txt disallows it",
  blocked: 'its address is not public (an operator can allow it with KB_CRAWL_ALLOW_PRIVATE=true)',
  excluded: 'excludePaths excludes it',
  not_included: 'includePaths does not include it',
  depth: 'it is deeper than maxDepth',
  not_html: 'it is not an HTML page',
};

/** A redirect the crawl did not follow: `reason` an admission reason, or the failure's own text. */
export function redirectRefused(from: string, to: string | null, reason: string): NewJobWarning {
  const shown = displayUrl(from);
  const why = REDIRECT_REASONS[reason] ?? reason;
  return {
    code: 'redirect_refused',
    subject: shown,
    message: to
      ? `${shown} redirects to ${displayUrl(to)}, which was not followed: ${why}.`
      : `The redirect from ${shown} was not followed: ${why}.`,
  };
}

function size(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${+(bytes / (1024 * 1024)).toFixed(1)} MiB`
    : `${Math.round(bytes / 1024)} KiB`;
}

/** A page over the size cap: an HTML page is cut there, a PDF skipped. */
export function pageTooLarge(url: string, maxBytes: number, opts: { skipped: boolean }): NewJobWarning {
  const shown = displayUrl(url);
  return {
    code: 'page_too_large',
    subject: shown,
    message: opts.skipped
      ? `${shown} is larger than the ${size(maxBytes)} page size cap; it was skipped.`
      : `${shown} is larger than the ${size(maxBytes)} page size cap; only its first ${size(maxBytes)} were kept.`,
  };
}

/** A crawl asked to render JavaScript and no browser could be had: its pages are fetched plainly. */
export function renderUnavailable(reason: string): NewJobWarning {
  return {
    code: 'render_unavailable',
    subject: 'browser',
    message: `Pages were not rendered (${reason}); they were fetched and stored as their HTML arrived, so content a script builds is missing. An operator can install Chromium or set KB_CRAWL_BROWSER to its path.`,
  };
}

/** One page could not be rendered: its fetched HTML was used. */
export function renderFailed(url: string, why: string): NewJobWarning {
  const shown = displayUrl(url);
  return {
    code: 'render_failed',
    subject: shown,
    message: `${shown} could not be rendered (${why}); its HTML as fetched was stored instead.`,
  };
}

/** A rendered page asked for addresses the outbound checks refuse; it was rendered without them. */
export function renderBlocked(url: string, blocked: string[]): NewJobWarning {
  const shown = displayUrl(url);
  const first = displayUrl(blocked[0]!);
  const more = blocked.length > 1 ? ` and ${blocked.length - 1} more` : '';
  return {
    code: 'render_blocked',
    subject: shown,
    count: blocked.length,
    message: `${shown} asked for ${first}${more}, refused: not a public address (an operator can allow private addresses with KB_CRAWL_ALLOW_PRIVATE=true). It was rendered without them.`,
  };
}
