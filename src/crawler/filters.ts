/**
 * Admission of discovered URLs into a crawl: a pure decision with a reason for every refusal, so a job
 * can show why a page was not crawled.
 */
import { RE2JS } from 're2js';
import { AppError } from '../lib/errors.ts';
import { canonicalizeUrl, sameSite, urlKey } from './url.ts';

/** Bounds on user-supplied patterns: they run against every discovered URL. */
export const MAX_PATH_PATTERNS = 100;
export const MAX_PATH_PATTERN_LENGTH = 1000;

/** A compiled path pattern: true when it matches somewhere in the path (like `RegExp.prototype.test`). */
export interface PathPattern {
  test(path: string): boolean;
}

/** Compiled `includePaths` / `excludePaths`, matched against a URL's path. */
export interface PathFilters {
  include: readonly PathPattern[];
  exclude: readonly PathPattern[];
}

/**
 * Compiles the crawl's path patterns. An invalid, too long or too numerous pattern list is an
 * `invalid_request` AppError naming the field and the pattern.
 *
 * Patterns are callers' input run against every discovered URL in a shared worker, so they are compiled
 * with RE2 (re2js, linear time): no pattern can backtrack catastrophically and stall the crawler. RE2
 * syntax is the common one (classes, groups, alternation, anchors, quantifiers); lookarounds and
 * backreferences are refused as invalid.
 */
export function compilePathFilters(
  includePaths: readonly string[] = [],
  excludePaths: readonly string[] = [],
): PathFilters {
  return {
    include: compileAll('includePaths', includePaths),
    exclude: compileAll('excludePaths', excludePaths),
  };
}

function compileAll(field: string, patterns: readonly string[]): PathPattern[] {
  if (patterns.length > MAX_PATH_PATTERNS) {
    throw new AppError('invalid_request', `${field} accepts at most ${MAX_PATH_PATTERNS} patterns`, {
      field,
    });
  }
  return patterns.map((pattern) => {
    if (pattern.length > MAX_PATH_PATTERN_LENGTH) {
      throw new AppError(
        'invalid_request',
        `${field} pattern is longer than ${MAX_PATH_PATTERN_LENGTH} characters`,
        { field, pattern: `${pattern.slice(0, 80)}...` },
      );
    }
    try {
      return RE2JS.compile(pattern);
    } catch (err) {
      const why = (err instanceof Error ? err.message : String(err)).replace(/^error parsing regexp: /, '');
      throw new AppError(
        'invalid_request',
        `${field} pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${why}`,
        {
          field,
          pattern,
        },
      );
    }
  });
}

/** Why a URL was not admitted. */
type RefusalReason =
  | 'excluded'
  | 'not_included'
  | 'robots'
  | 'external'
  | 'depth'
  | 'budget'
  | 'not_html'
  | 'duplicate';

type AdmitResult = { ok: true } | { ok: false; reason: RefusalReason };

/** Everything {@link admit} looks at; the caller owns the state, admit only reads it. */
export interface AdmitContext {
  /** The crawl's start URL: decides what "external" means. */
  startUrl: string;
  filters: PathFilters;
  allowExternalLinks: boolean;
  /** Link depth of the candidate (start URL 0, its links 1, ...). */
  depth: number;
  /** No limit when absent. */
  maxDepth?: number;
  /** Pages admitted so far, and the crawl's page budget. */
  admitted: number;
  limit: number;
  /** True when the candidate's {@link urlKey} is already in the frontier. */
  isDuplicate?: (key: string) => boolean;
  /** robots.txt verdict for the candidate's host; absent means allowed. */
  robotsAllows?: (url: string) => boolean;
  /** Response content type, when known (after a fetch). */
  contentType?: string;
}

// Extensions that never hold an HTML page (or a PDF, which is extracted: pdf.ts); refused before any
// request is spent on them.
const NON_HTML_EXTENSION =
  /\.(?:png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?|css|js|mjs|map|json|xml|rss|atom|txt|csv|tsv|zip|gz|tgz|bz2|xz|7z|rar|tar|exe|dmg|msi|deb|rpm|apk|iso|bin|woff2?|ttf|otf|eot|mp3|mp4|m4a|m4v|wav|ogg|oga|webm|mov|avi|mkv|flac|docx?|xlsx?|pptx?|odt|ods|odp|epub|wasm)$/i;

/** True for content types that hold an HTML page. */
export function isHtmlContentType(contentType: string): boolean {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'text/html' || type === 'application/xhtml+xml';
}

/**
 * Decides whether a discovered URL enters the crawl. Checks, in order: duplicate, external, not HTML (by
 * extension, or by content type when given), excluded (excludes win over includes), not included, depth,
 * robots, budget - so the reason recorded is the most specific one and the budget only counts URLs that
 * would otherwise have been crawled. A URL that is not http(s) counts as external.
 */
export function admit(url: string, ctx: AdmitContext): AdmitResult {
  const canonical = canonicalizeUrl(url);
  const key = canonical ? urlKey(canonical) : null;
  if (!canonical || !key) return { ok: false, reason: 'external' };
  if (ctx.isDuplicate?.(key)) return { ok: false, reason: 'duplicate' };
  if (!ctx.allowExternalLinks && !sameSite(canonical, ctx.startUrl)) return { ok: false, reason: 'external' };
  const path = new URL(canonical).pathname;
  if (NON_HTML_EXTENSION.test(path)) return { ok: false, reason: 'not_html' };
  if (ctx.contentType !== undefined && !isHtmlContentType(ctx.contentType))
    return { ok: false, reason: 'not_html' };
  if (ctx.filters.exclude.some((re) => re.test(path))) return { ok: false, reason: 'excluded' };
  if (ctx.filters.include.length > 0 && !ctx.filters.include.some((re) => re.test(path))) {
    return { ok: false, reason: 'not_included' };
  }
  if (ctx.maxDepth !== undefined && ctx.depth > ctx.maxDepth) return { ok: false, reason: 'depth' };
  if (ctx.robotsAllows && !ctx.robotsAllows(canonical)) return { ok: false, reason: 'robots' };
  if (ctx.admitted >= ctx.limit) return { ok: false, reason: 'budget' };
  return { ok: true };
}
