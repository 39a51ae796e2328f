/**
 * The Confluence Cloud calls of the content sync: paths, query parameters, authentication and pagination
 * of the v2 API (`/wiki/api/v2`), on the host the connection's token works on (route.ts). What the answers
 * mean for the sync is sync.ts's business.
 */
import type { z } from 'zod';
import type { AppError } from '../../lib/errors.ts';
import { joinUrl, pathSegment } from '../base-url.ts';
import { basicAuth, sourceRefusal } from '../credential-check.ts';
import { isSourceHttpError, SourceHttpError, vendorErrorText } from '../http.ts';
import { paginateNextUrl } from '../toolkit/pagination.ts';
import { apiBaseUrl, refusalHint, type WikiContext, WIKI_SOURCE } from './route.ts';
import { type ContentListPage, contentListPageSchema, type Space, spacesPageSchema } from './schemas.ts';

export { WIKI_SOURCE, type WikiCredentials } from './route.ts';

/** The two kinds of content the sync reads, by their v2 path segment. */
export type ContentKind = 'pages' | 'blogposts';

const API = '/wiki/api/v2';
/** The v2 maximum: a listing without bodies is small, so the fewest requests win. */
const LIST_LIMIT = 250;

function headers(ctx: WikiContext): Record<string, string> {
  return { authorization: basicAuth(ctx.credentials.email, ctx.credentials.api_token) };
}

/**
 * A 401 or 403 on a listing means the whole site refuses this account (expired or revoked token, lost
 * scope, removed user): an error that names the source and the fix for this kind of token, never
 * carrying the token.
 */
function credentialsRefused(ctx: WikiContext, status: number, vendorText: string | undefined): AppError {
  return sourceRefusal(
    WIKI_SOURCE,
    'refused the credentials during the sync',
    { status, vendorMessage: vendorText },
    refusalHint(ctx.credentials, status, vendorText),
    [ctx.credentials.api_token],
  );
}

/** Runs a listing, turning an authorization refusal into {@link credentialsRefused}. */
async function* refusalsNamed<T>(ctx: WikiContext, pages: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    yield* pages;
  } catch (err) {
    if (isSourceHttpError(err) && (err.status === 401 || err.status === 403)) {
      throw credentialsRefused(ctx, err.status, err.vendorMessage);
    }
    throw err;
  }
}

/**
 * The pages of the listing at `path`. The body's `_links.next` is followed (the `Link` header carries the same
 * URL; the body is the one the schema checks), joined to the base URL we call rather than to
 * `_links.base`, which already ends in `/wiki`: behind the gateway that keeps its `/ex/confluence/{cloudId}`.
 */
function listing<T extends { _links?: { next?: string | undefined } | undefined; results: unknown[] }>(
  ctx: WikiContext,
  path: string,
  query: Record<string, string | number>,
  schema: z.ZodType<T>,
): AsyncGenerator<T> {
  const base = apiBaseUrl(ctx);
  const pages = paginateNextUrl(ctx, {
    request: { url: joinUrl(base, `${API}${path}`), query, headers: headers(ctx) },
    schema,
    items: (p) => p.results,
    next: (p) => p._links?.next,
    base,
  });
  return refusalsNamed(
    ctx,
    (async function* () {
      for await (const page of pages) yield page.data;
    })(),
  );
}

/** The spaces the account can read that are not archived, a listing page at a time. */
export async function* listCurrentSpaces(ctx: WikiContext): AsyncGenerator<Space[]> {
  const pages = listing(
    ctx,
    '/spaces',
    { status: 'current', sort: 'id', limit: LIST_LIMIT },
    spacesPageSchema,
  );
  for await (const page of pages) yield page.results;
}

/**
 * Every current page (or blog post) the account can read, without bodies, in id order: sorting by id
 * keeps the cursor stable while people edit (a modified-date order would move edited pages across it).
 * Archived, trashed, deleted and draft content is left out by asking for `status=current` (pages
 * otherwise default to current plus archived).
 */
export function listCurrentContent(ctx: WikiContext, kind: ContentKind): AsyncGenerator<ContentListPage> {
  return listing(
    ctx,
    `/${kind}`,
    { status: 'current', sort: 'id', limit: LIST_LIMIT },
    contentListPageSchema,
  );
}

/** What `GET /{kind}/{id}?body-format=storage` answered. */
type ContentFetch =
  | { found: true; body: unknown }
  /** 404: purged, or restricted from this account since it was listed. */
  | { found: false };

/**
 * One page or blog post with its storage body (without a body when `withBody` is false: what a parent's
 * title needs). A 404 is an answer (the caller decides what it means); 401/403 refuse the whole sync;
 * other failures throw `SourceHttpError` after the client's retries.
 */
export function fetchContent(
  ctx: WikiContext,
  kind: ContentKind,
  id: string,
  opts: { withBody: boolean } = { withBody: true },
): Promise<ContentFetch> {
  return fetchOne(ctx, `/${kind}/${pathSegment(id)}`, opts.withBody ? { 'body-format': 'storage' } : {});
}

/** One space (`GET /spaces/{id}`): its key, name and status. A 404 is an answer, as for content. */
export function fetchSpace(ctx: WikiContext, id: string): Promise<ContentFetch> {
  return fetchOne(ctx, `/spaces/${pathSegment(id)}`, {});
}

async function fetchOne(
  ctx: WikiContext,
  path: string,
  query: Record<string, string>,
): Promise<ContentFetch> {
  const url = joinUrl(apiBaseUrl(ctx), `${API}${path}`, query);
  const res = await ctx.http.request('GET', url, { headers: headers(ctx) });
  if (res.status === 404) return { found: false };
  if (res.status === 401 || res.status === 403) {
    throw credentialsRefused(ctx, res.status, vendorErrorText(res.text()));
  }
  if (res.status < 200 || res.status > 299) {
    const vendorMessage = vendorErrorText(res.text());
    throw new SourceHttpError(
      `GET ${API}${path} answered HTTP ${res.status}${vendorMessage ? `: ${vendorMessage}` : ''}`,
      { kind: 'status', status: res.status, url: `${API}${path}`, attempts: 1, vendorMessage },
    );
  }
  return { found: true, body: res.json() };
}
