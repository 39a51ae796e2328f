/**
 * URL identity for the crawler. Two forms:
 * - the canonical URL ({@link canonicalizeUrl}): what is fetched and stored as an item's `source_url`;
 * - the key ({@link urlKey}): what decides "already seen", merging variants that serve the same page
 *   (`/x/`, `/x`, `/x/index.html`; `http:` and `https:`).
 */

const DIRECTORY_INDEX = /\/index\.html?$/i;

/**
 * Canonical absolute URL: fragment and credentials dropped, scheme and host lower-cased, default port
 * dropped, empty path made `/`, an empty `?` removed. The query is kept byte for byte (its order can be
 * meaningful). Returns null for anything that is not an absolute (or `base`-relative) http(s) URL.
 */
export function canonicalizeUrl(input: string | URL, base?: string | URL): string | null {
  let url: URL;
  try {
    url = new URL(String(input).trim(), base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (!url.hostname) return null;
  // The WHATWG parser already lower-cases scheme and host, drops default ports and turns an empty path
  // into '/'; what remains is what it keeps on purpose.
  url.hash = '';
  url.username = '';
  url.password = '';
  // An empty query (`/x?`) reads as '' but stays in href until cleared.
  if (url.search === '') url.search = '';
  return url.href;
}

/**
 * Dedupe key of a URL: canonical form without the scheme, with a trailing `index.html` and a trailing
 * slash removed. Returns null when the URL is not http(s).
 */
export function urlKey(input: string | URL): string | null {
  const canonical = canonicalizeUrl(input);
  if (!canonical) return null;
  const url = new URL(canonical);
  let path = url.pathname.replace(DIRECTORY_INDEX, '/');
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return `//${url.host}${path}${url.search}`;
}

/** Host with a leading `www.` removed: `www.example.com` and `example.com` are one site. */
function siteHost(url: URL): string {
  return url.host.startsWith('www.') ? url.host.slice(4) : url.host;
}

/**
 * True when both URLs are on the same site: same host and port (ignoring a leading `www.` and the
 * scheme). Unparseable URLs are never the same site.
 */
export function sameSite(a: string | URL, b: string | URL): boolean {
  try {
    return siteHost(new URL(String(a))) === siteHost(new URL(String(b)));
  } catch {
    return false;
  }
}

const NON_NAVIGABLE = /^(?:javascript|mailto|tel|data|blob|about|ftp|file|sms):/i;

/**
 * Resolves a link found on a page (`href` as written) against the page URL (or its `<base href>`) to a
 * canonical absolute URL. Returns null for fragment-only links, non-http schemes and malformed hrefs.
 */
export function resolveLink(href: string, base: string | URL): string | null {
  const trimmed = href.trim();
  if (trimmed === '' || trimmed.startsWith('#') || NON_NAVIGABLE.test(trimmed)) return null;
  return canonicalizeUrl(trimmed, base);
}
