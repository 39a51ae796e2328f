/**
 * Pagination as async generators over a connector's `ctx.http` (guarded, retrying, byte-counting). A
 * connector declares how its source pages (which parameter carries the cursor, where the next URL is,
 * what ends the list) and iterates the pages; the loop, cancellation and the checks that keep a broken
 * or hostile source from looping forever live here, once.
 *
 * Four styles, after the vendors' documented protocols (each vendor's public API reference):
 * - {@link paginateCursor}: a cursor in the body, sent back as a parameter (Notion `next_cursor` /
 *   `start_cursor`, Zendesk `meta.after_cursor` / `page[after]`, Shopify GraphQL `pageInfo.endCursor` /
 *   `after`, GitBook `next.page` / `page`).
 * - {@link paginateLinkHeader}: the `Link: <…>; rel="next"` response header (Confluence v2, Shopify REST).
 * - {@link paginateNextUrl}: the next URL in the body (Confluence `_links.next`, Zendesk `next_page` and
 *   `links.next`).
 * - {@link paginateOffset}: `start`/`limit` parameters, ended by an empty or short page or a total
 *   (Confluence v1).
 *
 * Every style yields one parsed page at a time, with the continuation of the page after it (`next`, to
 * save in a checkpoint and pass back as `resume`), and checks between pages that:
 * - the source never repeats a continuation (cursor, URL or offset) it already gave in this pass, and
 *   never answers the same records twice in a row (a source that ignores the cursor or offset parameter);
 * - a next URL stays on the origin of the first request (the request headers carry the credentials);
 * - a page that says more pages follow names the next one.
 * A violation throws {@link PaginationError}, a `SourceHttpError` of kind `invalid_response`.
 *
 * An empty page that says more pages follow, with a new continuation, is followed, at most
 * `maxEmptyPages` (3) times in a row, then refused: sources that filter after paging (Notion search
 * drops results the integration may not read) can answer a page empty and still have more, so ending
 * there could lose documents, while an endless run of empty pages is a loop in disguise.
 *
 * Over 400 lines on purpose: the four styles share one walk (`walk`) and its loop guards; keeping them in
 * one file keeps every style under the same checks.
 */
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { redactUrl } from '../../net/redact-url.ts';
import { appendQuery, joinUrl } from '../base-url.ts';
import { SourceHttpError } from '../http.ts';
import LinkHeader from 'http-link-header';
import type { ConnectorContext, JsonResponse, Query, SourceRequestOptions } from '../types.ts';

/** The first page's request. Later pages change only the pagination parameter or the URL. */
interface PageRequest {
  /** Absolute URL of the first page (`joinUrl(ctx.baseUrl, path)`). */
  url: string;
  /** Default GET. The URL-following styles ({@link paginateLinkHeader}, {@link paginateNextUrl}) only GET. */
  method?: 'GET' | 'POST';
  query?: Query;
  headers?: Record<string, string>;
  /** JSON body of a POST (Notion search and query, GraphQL `{ query, variables }`). */
  json?: Record<string, unknown>;
  /** The largest page this listing may answer, when its pages can outgrow the client's default cap. */
  maxBytes?: number;
}

/** What every style needs to know about the pages. */
interface PageSpec<T> {
  request: PageRequest;
  /** The page's shape. A page that does not match throws `SourceHttpError` of kind `invalid_response`. */
  schema: z.ZodType<T>;
  /** The records of a page: counted (empty pages, offsets) and compared (a page answered twice). */
  items: (page: T) => readonly unknown[];
  /** Ends the pass after this page, whatever it says about more (a change feed's own end marker). */
  stopWhen?: (page: T) => boolean;
  /** Empty pages in a row that still announce more before the pass is refused. Default 3. */
  maxEmptyPages?: number;
}

/** One page of a pass. */
export interface Page<T, Continuation> {
  data: T;
  /**
   * What the following request will use (cursor, URL or offset); `null` after the last page. Save it
   * with the records of this page, and pass it as `resume` to go on after a restart.
   */
  next: Continuation | null;
}

/** The parts of a connector's context that pagination uses. */
export type PaginationContext = Pick<ConnectorContext<unknown>, 'http' | 'signal'>;

type PaginationFault =
  /** The source gave a cursor, URL or offset a second time. */
  | 'repeated'
  /** The source answered the same records as on the page before. */
  | 'same_page'
  /** A page said more follow but named no next one. */
  | 'no_continuation'
  /** Too many empty pages in a row that still said more follow. */
  | 'empty_pages'
  /** A next URL on another origin (or not http). */
  | 'foreign_url'
  /** The source answered another offset than the one asked. */
  | 'offset_ignored';

/**
 * A source's pagination contradicts itself or would loop. A `SourceHttpError` of kind
 * `invalid_response`, so a sync reports it as the source answering badly.
 */
export class PaginationError extends SourceHttpError {
  readonly fault: PaginationFault;
  /** The page (1-based) whose answer was refused. */
  readonly page: number;

  constructor(fault: PaginationFault, what: string, at: { method: string; url: string; page: number }) {
    const url = redactUrl(at.url);
    super(`${at.method} ${url} (page ${at.page}) ${what}; pagination stopped`, {
      kind: 'invalid_response',
      url,
      attempts: 1,
    });
    this.name = 'PaginationError';
    this.fault = fault;
    this.page = at.page;
  }
}

// ---------------------------------------------------------------------------------------------------
// Cursor in the body
// ---------------------------------------------------------------------------------------------------

interface CursorPagination<T> extends PageSpec<T> {
  cursor: {
    /** The request parameter that carries the cursor: `start_cursor`, `page[after]`, `after`, `page`. */
    param: string;
    /**
     * Where it goes: the query string (default for GET), the top level of the JSON body (default for
     * POST), or the `variables` of a GraphQL body.
     */
    in?: 'query' | 'body' | 'variables';
    /** The next page's cursor; null, undefined or empty when the page names none. */
    next: (page: T) => string | null | undefined;
    /** Whether more pages follow, when the source says so apart from the cursor (`has_more`, `hasNextPage`). */
    hasMore?: (page: T) => boolean;
  };
  /** A cursor saved from an earlier pass: start there instead of at the first page. */
  resume?: string | null;
}

/** Pages whose body names the next page's cursor (Notion, Zendesk cursor pagination, Shopify GraphQL, GitBook). */
export async function* paginateCursor<T>(
  ctx: PaginationContext,
  spec: CursorPagination<T>,
): AsyncGenerator<Page<T, string>> {
  const method = spec.request.method ?? 'GET';
  const place = spec.cursor.in ?? (method === 'GET' ? 'query' : 'body');
  yield* walk<T, string>(ctx, spec, spec.resume ?? undefined, {
    method,
    send(cursor) {
      const { url, query, headers, json } = spec.request;
      const opts: SourceRequestOptions = { ...(headers ? { headers } : {}) };
      if (cursor !== undefined && place === 'query') opts.query = { ...query, [spec.cursor.param]: cursor };
      else if (query) opts.query = query;
      if (cursor !== undefined && place === 'body') opts.json = { ...json, [spec.cursor.param]: cursor };
      else if (cursor !== undefined && place === 'variables') {
        const variables = (json?.variables ?? {}) as Record<string, unknown>;
        opts.json = { ...json, variables: { ...variables, [spec.cursor.param]: cursor } };
      } else if (json) opts.json = json;
      return { url, opts };
    },
    next(res, fail) {
      const cursor = spec.cursor.next(res.data) || undefined;
      const more = spec.cursor.hasMore ? spec.cursor.hasMore(res.data) : cursor !== undefined;
      if (!more) return null;
      if (cursor === undefined) throw fail('no_continuation', 'says more pages follow but names no cursor');
      return cursor;
    },
    key: (cursor) => cursor,
    what: 'a cursor',
  });
}

// ---------------------------------------------------------------------------------------------------
// Next URL: Link header or body
// ---------------------------------------------------------------------------------------------------

interface UrlFollowing<T> extends PageSpec<T> {
  /**
   * Base of path-absolute next URLs (`/wiki/api/v2/pages?cursor=…`), with its path prefix kept: pass
   * `ctx.baseUrl` where the source writes its links relative to the site (Confluence). Without it a
   * relative URL resolves against the URL of the page that named it, as in a browser.
   */
  base?: string;
  /** A URL saved from an earlier pass: start there instead of at the first page. */
  resume?: string | null;
}

interface LinkHeaderPagination<T> extends UrlFollowing<T> {
  /** The link relation to follow. Default `next`. */
  rel?: string;
}

/** Pages linked by the `Link` response header (RFC 8288): Confluence v2, Shopify REST. */
export async function* paginateLinkHeader<T>(
  ctx: PaginationContext,
  spec: LinkHeaderPagination<T>,
): AsyncGenerator<Page<T, string>> {
  const rel = (spec.rel ?? 'next').toLowerCase();
  yield* followUrls(ctx, spec, 'error', (res, fail) => {
    const header = res.headers.get('link');
    if (!header) return undefined;
    let links: LinkHeader.Reference[];
    try {
      links = LinkHeader.parse(header).rel(rel);
    } catch {
      // Ending here would pass for a complete listing (and a deletion pass after it would remove what
      // was never read), so an unreadable header stops the pass instead.
      throw fail('no_continuation', 'sent a Link header that does not parse');
    }
    return links[0]?.uri;
  });
}

interface NextUrlPagination<T> extends UrlFollowing<T> {
  /** The next page's URL from the body; null, undefined or empty on the last page. */
  next: (page: T) => string | null | undefined;
  /**
   * A next URL this pass already requested: an error (default), or the end of the list, where the
   * source documents it so (Zendesk's incremental export answers its last page with its own URL).
   */
  onRepeat?: 'error' | 'end';
}

/** Pages whose body names the next page's URL (Confluence `_links.next`, Zendesk `next_page` / `links.next`). */
export async function* paginateNextUrl<T>(
  ctx: PaginationContext,
  spec: NextUrlPagination<T>,
): AsyncGenerator<Page<T, string>> {
  yield* followUrls(ctx, spec, spec.onRepeat ?? 'error', (res) => spec.next(res.data) || undefined);
}

async function* followUrls<T>(
  ctx: PaginationContext,
  spec: UrlFollowing<T>,
  onRepeat: 'error' | 'end',
  nextOf: (res: JsonResponse<T>, fail: Fail) => string | undefined,
): AsyncGenerator<Page<T, string>> {
  const { headers } = spec.request;
  const first = new URL(spec.request.url);
  if (spec.request.query) appendQuery(first, spec.request.query);
  const origin = first.origin;
  yield* walk<T, string>(ctx, spec, spec.resume ?? undefined, {
    method: 'GET',
    firstKey: first.href,
    onRepeat,
    send(url) {
      // A followed URL is used as given: it carries every parameter of the page it names.
      return { url: url ?? first.href, opts: headers ? { headers } : {} };
    },
    next(res, fail) {
      const raw = nextOf(res, fail);
      if (raw === undefined) return null;
      let next: URL;
      try {
        next =
          spec.base && raw.startsWith('/') && !raw.startsWith('//')
            ? new URL(joinUrl(spec.base, raw))
            : new URL(raw, res.url);
      } catch {
        throw fail('no_continuation', 'names a next page whose URL does not parse');
      }
      if (next.origin !== origin) {
        throw fail(
          'foreign_url',
          `names a next page on another origin (${redactUrl(next)}); the request's credentials are not sent there`,
        );
      }
      return next.href;
    },
    key: (url) => url,
    what: 'a next URL',
    checkResume(url, fail) {
      if (new URL(url).origin !== origin) throw fail('foreign_url', 'was asked to resume on another origin');
    },
  });
}

// ---------------------------------------------------------------------------------------------------
// Offset
// ---------------------------------------------------------------------------------------------------

export interface OffsetPagination<T> extends PageSpec<T> {
  offset: {
    /** The offset parameter: `start`, `offset`. */
    param: string;
    /** The page-size parameter: `limit`. */
    limitParam: string;
    limit: number;
    /** Default: the query string for GET, the JSON body for POST. */
    in?: 'query' | 'body';
    /** The first offset. Default 0. */
    first?: number;
    /** Records in all, where the source says (`totalSize`): the pass ends once they are read. */
    total?: (page: T) => number | undefined;
    /**
     * The page size the source applied, where it says (Confluence v1 `limit`, lower than asked when it
     * caps expanded bodies): a page shorter than it is the last. Default: the `limit` asked for.
     */
    servedLimit?: (page: T) => number | undefined;
    /** The offset the source says it answered (Confluence v1 `start`): another one is refused. */
    servedOffset?: (page: T) => number | undefined;
  };
  /** An offset saved from an earlier pass: start there. */
  resume?: number | null;
}

/**
 * Pages by offset and limit. The next offset is this one plus the records received; the pass ends on an
 * empty page, a page shorter than the limit, or once `total` records are read. A page exactly at the
 * limit is followed by one more request, which answers empty.
 */
export async function* paginateOffset<T>(
  ctx: PaginationContext,
  spec: OffsetPagination<T>,
): AsyncGenerator<Page<T, number>> {
  const method = spec.request.method ?? 'GET';
  const o = spec.offset;
  const place = o.in ?? (method === 'GET' ? 'query' : 'body');
  const first = o.first ?? 0;
  yield* walk<T, number>(ctx, spec, spec.resume ?? undefined, {
    method,
    send(offset) {
      const { url, query, headers, json } = spec.request;
      const paging = { [o.param]: offset ?? first, [o.limitParam]: o.limit };
      const opts: SourceRequestOptions = { ...(headers ? { headers } : {}) };
      if (place === 'query') opts.query = { ...query, ...paging };
      else if (query) opts.query = query;
      if (place === 'body') opts.json = { ...json, ...paging };
      else if (json) opts.json = json;
      return { url, opts };
    },
    next(res, fail, offset) {
      const asked = offset ?? first;
      const served = o.servedOffset?.(res.data);
      if (served !== undefined && served !== asked) {
        throw fail('offset_ignored', `answered ${o.param}=${served} when asked for ${o.param}=${asked}`);
      }
      const count = spec.items(res.data).length;
      if (count === 0) return null;
      const reached = asked + count;
      const total = o.total?.(res.data);
      if (total !== undefined && reached >= total) return null;
      if (count < (o.servedLimit?.(res.data) ?? o.limit)) return null;
      return reached;
    },
    key: (offset) => String(offset),
    firstKey: String(first),
    what: 'an offset',
  });
}

// ---------------------------------------------------------------------------------------------------
// The loop
// ---------------------------------------------------------------------------------------------------

type Fail = (fault: PaginationFault, what: string) => PaginationError;

/** How one style requests a page and reads the continuation from it. */
interface Style<T, C> {
  method: string;
  /** The request for continuation `c` (undefined: the first page). */
  send(c: C | undefined): { url: string; opts: SourceRequestOptions };
  /** The continuation after this page, or null when it is the last. */
  next(res: JsonResponse<T>, fail: Fail, c: C | undefined): C | null;
  /** Identity of a continuation, for the repeat check. */
  key(c: C): string;
  /** The first request's identity, where it can come back as a continuation (a URL). */
  firstKey?: string;
  /** What a repeated continuation means. Default: an error. */
  onRepeat?: 'error' | 'end';
  /** For messages: `a cursor`, `a next URL`. */
  what: string;
  /** Refuses a resume value that must not be requested. */
  checkResume?(c: C, fail: Fail): void;
}

async function* walk<T, C>(
  ctx: PaginationContext,
  spec: PageSpec<T>,
  resume: C | undefined,
  style: Style<T, C>,
): AsyncGenerator<Page<T, C>> {
  const maxEmptyPages = spec.maxEmptyPages ?? 3;
  const seen = new Set<string>();
  let current = resume;
  let emptyInARow = 0;
  let previousDigest: string | undefined;
  for (let index = 1; ; index++) {
    ctx.signal.throwIfAborted();
    const { url, opts } = style.send(current);
    const fail: Fail = (fault, what) =>
      new PaginationError(fault, what, { method: style.method, url, page: index });
    if (index === 1) {
      if (current !== undefined) style.checkResume?.(current, fail);
      const firstKey = current === undefined ? style.firstKey : style.key(current);
      if (firstKey !== undefined) seen.add(firstKey);
    }
    const maxBytes = spec.request.maxBytes;
    const res = await ctx.http.requestJson(
      style.method,
      url,
      spec.schema,
      maxBytes ? { ...opts, maxBytes } : opts,
    );
    let next = spec.stopWhen?.(res.data) ? null : style.next(res, fail, current);
    if (next !== null) {
      const key = style.key(next);
      if (seen.has(key)) {
        if (style.onRepeat !== 'end') {
          throw fail('repeated', `named ${style.what} this pass had already followed`);
        }
        next = null;
      } else {
        seen.add(key);
      }
    }
    if (next !== null) {
      const items = spec.items(res.data);
      if (items.length === 0) {
        if (++emptyInARow > maxEmptyPages) {
          throw fail(
            'empty_pages',
            `answered ${emptyInARow} empty pages in a row that each said more follow`,
          );
        }
      } else {
        emptyInARow = 0;
        const digest = createHash('sha256').update(JSON.stringify(items)).digest('base64');
        if (digest === previousDigest) {
          throw fail(
            'same_page',
            'answered the same records as the page before: it ignores the pagination parameter',
          );
        }
        previousDigest = digest;
      }
    }
    yield { data: res.data, next };
    if (next === null) return;
    current = next;
  }
}
