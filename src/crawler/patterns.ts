/**
 * The frontier's preferences: which queued URL is likely new content. Lower priority is fetched first:
 * shallower pages before deeper ones, sitemap entries before links at the same depth, a URL without a
 * query before one with (queries select variants, sort orders, filters and sessions far more often than
 * pages), and URLs whose pattern keeps producing duplicates pushed behind everything else.
 *
 * A URL's pattern is its shape: host, first path segment, number of segments and the names (not values)
 * of its query parameters, so `/products/blue-shirt?variant=7` and `/products/red-cap?variant=9` share
 * `//shop.example/products/*?variant` while the product pages themselves are `//shop.example/products/*`.
 */

/** Added to the priority of every queued URL of a pushed-back pattern. */
export const PUSH_BACK = 1_000_000;
/** A pattern is pushed back once at least this many of its pages collapsed... */
const PUSH_BACK_MIN_COLLAPSED = 3;
/** ...and they are at least this share of the pattern's pages fetched. */
const PUSH_BACK_SHARE = 0.5;

/** Outcomes that mean "this page added nothing": they count against the page's pattern. */
export const COLLAPSED_OUTCOMES: ReadonlySet<string> = new Set(['duplicate', 'near_duplicate', 'canonical']);

/** Priority of `url` found at `depth` (from a sitemap or from a link), before any push-back. */
export function basePriority(url: string, depth: number, found: { fromSitemap: boolean }): number {
  return 4 * depth + (found.fromSitemap ? 0 : 2) + (url.includes('?') ? 1 : 0);
}

/** The pattern of a canonical http(s) URL (see the module comment); '' for anything unparseable. */
export function urlPattern(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '';
  }
  const segments = u.pathname.split('/').filter((s) => s !== '');
  const path =
    segments.length === 0 ? '/' : `/${[segments[0], ...segments.slice(1).map(() => '*')].join('/')}`;
  const names = [...new Set([...u.searchParams.keys()])].sort();
  return `//${u.host}${path}${names.length > 0 ? `?${names.join('&')}` : ''}`;
}

/** Whether a pattern with these counts is pushed back. */
export function isPushedBack(fetched: number, collapsed: number): boolean {
  return collapsed >= PUSH_BACK_MIN_COLLAPSED && collapsed >= PUSH_BACK_SHARE * fetched;
}
