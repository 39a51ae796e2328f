/**
 * What a crawl tells the API caller when it cannot be done at all: {@link CrawlFailure} and its texts.
 * The job fails with the message as written here, so it names what happened and what a person can do,
 * and carries no secrets: URLs are shown without query or credentials ({@link displayUrl}).
 */
import type { RobotsRules } from './robots.ts';
import { redactUrl } from '../net/redact-url.ts';

/**
 * The crawl cannot be done at all (start URL refused, unreachable, disallowed): the job fails with this
 * message, which is shown to the API caller (no secrets, no query strings).
 */
export class CrawlFailure extends Error {
  override name = 'CrawlFailure';
}

/** A URL for messages and logs: no query (it may carry tokens), no credentials (the one redactor). */
export function displayUrl(url: string): string {
  return redactUrl(url, 'the URL');
}

export function crawlJobMissing(): CrawlFailure {
  return new CrawlFailure('The crawl job no longer exists.');
}

export function startUrlNotHttp(url: string): CrawlFailure {
  return new CrawlFailure(`The start URL ${url} is not an http(s) URL.`);
}

/** The start URL's own address is refused by the outbound policy (checked before any other request). */
export function startAddressRefused(startUrl: string): CrawlFailure {
  return new CrawlFailure(
    `Refused to crawl ${displayUrl(startUrl)}: its address is private, loopback, link-local or otherwise ` +
      'not public. An operator can allow such targets with KB_CRAWL_ALLOW_PRIVATE=true.',
  );
}

/**
 * Why a crawl that stored nothing failed, from its start page's frontier outcome; null for outcomes that
 * are no failure of the crawl (the start page was a duplicate, empty, noindex...).
 */
export function startPageFailure(
  startUrl: string,
  start: { outcome: string | null; detail: string | null },
  robots: RobotsRules,
): CrawlFailure | null {
  const url = displayUrl(startUrl);
  switch (start.outcome) {
    case 'robots':
      return new CrawlFailure(
        robots.source === 'unreachable'
          ? `robots.txt of ${url} could not be fetched, so the site is treated as disallowed (RFC 9309); try again later.`
          : `robots.txt of ${url} disallows it for our user agent; nothing was crawled.`,
      );
    case 'blocked':
      return new CrawlFailure(
        `Refused to crawl ${url}: ${start.detail ?? 'it leads to a non-public address'}. ` +
          'An operator can allow private targets with KB_CRAWL_ALLOW_PRIVATE=true.',
      );
    case 'failed':
      return new CrawlFailure(`Could not fetch the start URL ${url}: ${start.detail ?? 'request failed'}.`);
    case 'gone':
    case 'removed':
      return new CrawlFailure(
        `The start URL ${url} answered ${start.detail ?? 'not found'}; nothing was crawled.`,
      );
    case 'not_html':
      return new CrawlFailure(
        `The start URL ${url} is not an HTML page (${start.detail ?? 'unknown type'}).`,
      );
    default:
      return null;
  }
}
