/**
 * The Zendesk calls of the content sync (vendor-apis/zendesk.md): paths, query parameters,
 * authentication and pagination of the Help Center and Support APIs. What the answers mean for the sync
 * is sync.ts's business.
 */
import { z } from 'zod';
import type { AppError } from '../../lib/errors.ts';
import { joinUrl, pathSegment } from '../base-url.ts';
import { basicAuth, sourceRefusal } from '../credential-check.ts';
import { isSourceHttpError } from '../http.ts';
import { PaginationError, paginateCursor, paginateNextUrl } from '../toolkit/pagination.ts';
import type { ConnectorContext } from '../types.ts';
import {
  type ArticleExportPage,
  type ArticleListPage,
  articleExportPageSchema,
  articleListPageSchema,
  type Brand,
  brandsPageSchema,
  type Category,
  type Comment,
  categoriesPageSchema,
  commentsPageSchema,
  type HelpCenterLocales,
  helpCenterLocalesSchema,
  localeProbeSchema,
  translationsPageSchema,
  type Section,
  sectionsPageSchema,
  type TicketExportPage,
  ticketExportPageSchema,
} from './schemas.ts';

/** How the service names this source: type, product alias and label (one declaration, used by index.ts). */
export const SUPPORT_DESK_SOURCE = { type: 'support_desk', alias: 'zendesk', label: 'Zendesk' } as const;

export interface SupportDeskCredentials {
  /** The bare subdomain (`acme`). */
  subdomain: string;
  /** With `api_token`: API-token authentication. */
  email?: string;
  api_token?: string;
  /** An OAuth access token (the consent flow fills it); preferred over the API token when both are set. */
  access_token?: string;
  /** Also sync solved and closed tickets. Absent in credentials stored before the option existed: false. */
  include_tickets?: boolean;
  /**
   * Whose help centers sync: absent, only the subdomain's own; `all`, every brand's with a live help
   * center; a list, those brands' (by subdomain).
   */
  brands?: 'all' | string[];
}

type SupportDeskContext = Pick<
  ConnectorContext<SupportDeskCredentials>,
  'http' | 'signal' | 'baseUrl' | 'credentials'
>;

/**
 * `Bearer <access_token>` for an OAuth connection, else API-token authentication: Basic with the user
 * name `{email}/token` and the token as password.
 */
export function zendeskAuthHeader(creds: SupportDeskCredentials): string {
  if (creds.access_token) return `Bearer ${creds.access_token}`;
  return basicAuth(`${creds.email ?? ''}/token`, creds.api_token ?? '');
}

/** The credential values no message may carry. */
export function zendeskSecrets(creds: SupportDeskCredentials): string[] {
  return [creds.access_token, creds.api_token].filter((s): s is string => typeof s === 'string');
}

/**
 * What to do when Zendesk rejects an API token during a sync. Zendesk is retiring API tokens
 * (vendor-apis/zendesk.md, Corrections): tokens unused for 30 days are deactivated, and none is accepted
 * after 2027-04-30.
 */
export const ZENDESK_TOKEN_RETIRED_HINT =
  'Zendesk rejected the API token: it deactivates API tokens unused for 30 days and stops accepting all API tokens on 2027-04-30. ' +
  'Reconnect support_desk through OAuth (POST /api/connect/oauth/initiate with type support_desk and the subdomain), ' +
  'or create a new API token and create the connection again.';

/** What to do when Zendesk rejects an OAuth access token during a sync. */
export const ZENDESK_OAUTH_REVOKED_HINT =
  'The OAuth access was revoked or has expired: reconnect support_desk through OAuth ' +
  '(POST /api/connect/oauth/initiate with type support_desk and the subdomain).';

/**
 * A 401 or 403 during a sync: the account refuses these credentials (a deactivated or revoked token, a
 * user who lost the agent or admin role). An error naming the source and what to do, never a secret.
 */
function credentialsRefused(
  ctx: SupportDeskContext,
  status: number,
  vendorText: string | undefined,
): AppError {
  const authHint = ctx.credentials.access_token ? ZENDESK_OAUTH_REVOKED_HINT : ZENDESK_TOKEN_RETIRED_HINT;
  const hint =
    status === 403
      ? `The user may lack the role this needs (the Help Center export needs an agent or admin, the ticket export an admin). Otherwise: ${authHint}`
      : authHint;
  return sourceRefusal(
    SUPPORT_DESK_SOURCE,
    'refused the credentials during the sync',
    { status, vendorMessage: vendorText },
    hint,
    zendeskSecrets(ctx.credentials),
  );
}

function isRefusal(err: unknown): err is { status: number; vendorMessage: string | undefined } {
  return isSourceHttpError(err) && (err.status === 401 || err.status === 403);
}

/** An authorization refusal as {@link credentialsRefused}; any other error as it is. */
function named(ctx: SupportDeskContext, err: unknown): unknown {
  return isRefusal(err) ? credentialsRefused(ctx, err.status, err.vendorMessage) : err;
}

/** Runs a listing, turning an authorization refusal into {@link credentialsRefused}. */
async function* refusalsNamed<T>(ctx: SupportDeskContext, pages: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    yield* pages;
  } catch (err) {
    throw named(ctx, err);
  }
}

/** One request, turning an authorization refusal into {@link credentialsRefused}. */
async function refusalNamed<T>(ctx: SupportDeskContext, request: Promise<T>): Promise<T> {
  try {
    return await request;
  } catch (err) {
    throw named(ctx, err);
  }
}

function headers(ctx: SupportDeskContext): Record<string, string> {
  return { authorization: zendeskAuthHeader(ctx.credentials) };
}

/** The cursor-pagination maximum of the list endpoints (§3.1). */
const PAGE_SIZE = 100;

/** Pages of a cursor-paginated list (§3.1): `page[size]`, then `page[after]` = `meta.after_cursor`. */
async function* cursorList<
  T extends { meta: { has_more: boolean; after_cursor?: string | null | undefined } },
>(
  ctx: SupportDeskContext,
  path: string,
  schema: z.ZodType<T>,
  items: (page: T) => readonly unknown[],
  query: Record<string, string | number> = {},
): AsyncGenerator<T> {
  const pages = paginateCursor(ctx, {
    request: {
      url: joinUrl(ctx.baseUrl, path),
      query: { 'page[size]': PAGE_SIZE, ...query },
      headers: headers(ctx),
    },
    schema,
    items,
    cursor: {
      param: 'page[after]',
      next: (p) => p.meta.after_cursor,
      hasMore: (p) => p.meta.has_more,
    },
  });
  for await (const page of refusalsNamed(ctx, pages)) yield page.data;
}

/** Every Help Center category (in the default locale). */
export async function listCategories(ctx: SupportDeskContext): Promise<Category[]> {
  const out: Category[] = [];
  for await (const page of cursorList(
    ctx,
    '/api/v2/help_center/categories',
    categoriesPageSchema,
    (p) => p.categories,
  )) {
    out.push(...page.categories);
  }
  return out;
}

/** Every Help Center section (in the default locale), nested ones included. */
export async function listSections(ctx: SupportDeskContext): Promise<Section[]> {
  const out: Section[] = [];
  for await (const page of cursorList(
    ctx,
    '/api/v2/help_center/sections',
    sectionsPageSchema,
    (p) => p.sections,
  )) {
    out.push(...page.sections);
  }
  return out;
}

/** The articles path: the default locale's without a locale, else that locale's. */
function articlesPath(locale: string | undefined): string {
  return locale === undefined
    ? '/api/v2/help_center/articles'
    : `/api/v2/help_center/${pathSegment(locale)}/articles`;
}

/**
 * Every article the listing shows in `locale` (the default locale without one; drafts included, for
 * agents; archived articles and those without a translation in the locale are not listed), 100 a
 * request, records unparsed. `newestEditsFirst` orders them by their last edit in that locale, newest
 * first, so a reader may stop at the first one it already holds.
 */
export function listArticles(
  ctx: SupportDeskContext,
  opts: { locale?: string; newestEditsFirst?: boolean } = {},
): AsyncGenerator<ArticleListPage> {
  const order: Record<string, string> = opts.newestEditsFirst
    ? { sort_by: 'edited_at', sort_order: 'desc' }
    : {};
  return cursorList(ctx, articlesPath(opts.locale), articleListPageSchema, (p) => p.articles, order);
}

/** The help center's enabled languages and its default one (one request). */
export function helpCenterLocales(ctx: SupportDeskContext): Promise<HelpCenterLocales> {
  return refusalNamed(
    ctx,
    ctx.http.getJson(joinUrl(ctx.baseUrl, '/api/v2/help_center/locales'), helpCenterLocalesSchema, {
      headers: headers(ctx),
    }),
  );
}

/** What one request tells about a locale's articles: how many the list shows, and the newest edit. */
export interface LocaleProbe {
  count: number;
  /** `edited_at|id` of the most recently edited article in the locale; undefined when it has none. */
  newest: string | undefined;
}

/**
 * One request per locale: the offset list's `count` (§3.2) on a one-article page ordered by the last edit
 * in that locale, newest first. A new, removed or edited translation changes one or the other.
 */
export async function probeLocale(ctx: SupportDeskContext, locale: string): Promise<LocaleProbe> {
  const page = await refusalNamed(
    ctx,
    ctx.http.getJson(joinUrl(ctx.baseUrl, articlesPath(locale)), localeProbeSchema, {
      headers: headers(ctx),
      query: { per_page: 1, sort_by: 'edited_at', sort_order: 'desc' },
    }),
  );
  const first = page.articles[0] as { id?: unknown; edited_at?: unknown } | undefined;
  const newest =
    first && typeof first.edited_at === 'string' ? `${first.edited_at}|${String(first.id)}` : undefined;
  return { count: page.count, newest };
}

/** Every translation of one article (the default language's included), records unparsed. */
export async function articleTranslations(ctx: SupportDeskContext, articleId: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const page of cursorList(
    ctx,
    `/api/v2/help_center/articles/${pathSegment(articleId)}/translations`,
    translationsPageSchema,
    (p) => p.translations,
  )) {
    out.push(...page.translations);
  }
  return out;
}

/** Every brand the credentials may see (admins see all; other agents their own). */
export async function listBrands(ctx: SupportDeskContext): Promise<Brand[]> {
  const out: Brand[] = [];
  for await (const page of cursorList(ctx, '/api/v2/brands', brandsPageSchema, (p) => p.brands)) {
    out.push(...page.brands);
  }
  return out;
}

/**
 * The API base of another brand's help center: the connection's base with its subdomain replaced, where
 * the base names it (the host's first label, `https://acme.zendesk.com`, or a path segment of an
 * operator's template, `http://proxy/acme`). Undefined when the base does not name the subdomain (an
 * operator's template without `{subdomain}`): such a base cannot reach another brand.
 */
export function brandBaseUrl(baseUrl: string, subdomain: string, brand: string): string | undefined {
  if (brand === subdomain) return baseUrl;
  const url = new URL(baseUrl);
  const labels = url.hostname.split('.');
  if (labels.length > 2 && labels[0] === subdomain) {
    url.hostname = [brand, ...labels.slice(1)].join('.');
    return url.origin + url.pathname.replace(/\/+$/, '');
  }
  const segments = url.pathname.split('/');
  const at = segments.indexOf(subdomain);
  if (at < 0) return undefined;
  segments[at] = brand;
  return url.origin + segments.join('/').replace(/\/+$/, '');
}

/** What one request tells about the default language's articles. */
export interface ArticlesProbe {
  /** How many the list shows (drafts included; archived and deleted ones not). */
  count: number;
  /** `updated_at|id` of the most recently updated article; undefined when there is none. */
  newest: string | undefined;
}

/**
 * One request: the offset-paginated list's `count` (§3.2) on a one-article page ordered by `updated_at`,
 * newest first. The export finds articles by the same `updated_at`, so an article it would show new or
 * changed moves `newest`, and an archive or a deletion lowers `count`.
 */
export async function probeArticles(ctx: SupportDeskContext): Promise<ArticlesProbe> {
  const page = await refusalNamed(
    ctx,
    ctx.http.getJson(joinUrl(ctx.baseUrl, '/api/v2/help_center/articles'), localeProbeSchema, {
      headers: headers(ctx),
      query: { per_page: 1, sort_by: 'updated_at', sort_order: 'desc' },
    }),
  );
  const first = page.articles[0] as { id?: unknown; updated_at?: unknown } | undefined;
  const newest =
    first && typeof first.updated_at === 'string' ? `${first.updated_at}|${String(first.id)}` : undefined;
  return { count: page.count, newest };
}

const ARTICLE_EXPORT_PATH = '/api/v2/help_center/incremental/articles';

/** The export's page size (§4.3): a page this full that ends on its own start time may hide more. */
export const ARTICLE_EXPORT_PAGE_SIZE = 1000;

/**
 * The largest export page read: 1,000 articles with their bodies, which the export's page size does not
 * let us shrink, average 128 KiB each before a page is refused (a typical help-centre article is 5-20 KiB
 * of HTML). Above the client's default 32 MiB: a page of long articles must not fail the whole sync, and
 * the bound still keeps one page's parse to a few hundred MiB.
 */
const ARTICLE_EXPORT_MAX_BYTES = 128 * 1024 * 1024;

/** One page of the incremental article export, with the start time it was asked for. */
interface ArticleExportStep {
  page: ArticleExportPage;
  /** The `start_time` of this page's request. */
  requested: number;
  /**
   * Where the next sync goes on: the page's `end_time` (inclusive, so the boundary second is read again),
   * or `requested` for an empty page.
   */
  endTime: number;
}

/**
 * The incremental article export from `startTime` (epoch seconds, inclusive) to its end. It ends on an
 * empty page, on `next_page: null`, or on a next page equal to the request (the Corrections: the last
 * page may say either).
 *
 * `next_page` is "the same URL with `start_time` = `end_time`" (§4.3), so the next request is built from
 * `end_time` on our own base URL rather than followed: Zendesk writes its own host there, which is not the
 * host we call behind an operator's proxy, and a rebuilt URL compares exactly with the one requested,
 * whatever form (`.json` or not) Zendesk writes it in.
 */
export async function* exportArticles(
  ctx: SupportDeskContext,
  startTime: number,
): AsyncGenerator<ArticleExportStep> {
  const at = (t: number) => joinUrl(ctx.baseUrl, ARTICLE_EXPORT_PATH, { start_time: t });
  const pages = paginateNextUrl(ctx, {
    request: { url: at(startTime), headers: headers(ctx), maxBytes: ARTICLE_EXPORT_MAX_BYTES },
    schema: articleExportPageSchema,
    items: (p) => p.articles,
    stopWhen: (p) => p.articles.length === 0,
    next: (p) => {
      const end = endTimeOf(p);
      return p.next_page == null || end === undefined ? undefined : at(end);
    },
    onRepeat: 'end',
  });
  let requested = startTime;
  for await (const { data, next } of refusalsNamed(ctx, pages)) {
    const end = data.articles.length > 0 ? endTimeOf(data) : undefined;
    yield { page: data, requested, endTime: end !== undefined && end > requested ? end : requested };
    if (next === null) return;
    requested = Number(new URL(next).searchParams.get('start_time'));
  }
}

/** `end_time`, else the `start_time` of `next_page` (the same value, §4.3). */
function endTimeOf(page: ArticleExportPage): number | undefined {
  if (typeof page.end_time === 'number') return page.end_time;
  if (!page.next_page) return undefined;
  try {
    const raw = new URL(page.next_page).searchParams.get('start_time');
    return raw !== null && /^\d+$/.test(raw) ? Number(raw) : undefined;
  } catch {
    return undefined;
  }
}

const TICKET_EXPORT_PATH = '/api/v2/incremental/tickets/cursor.json';

/** Where the ticket export starts: a saved `after_cursor`, or a time (epoch seconds) for a first pass. */
export type TicketExportFrom = { cursor: string } | { startTime: number };

/**
 * The cursor-based incremental ticket export (§5.1), deleted tickets included, until `end_of_stream`.
 * The first request of a pass from a time names `start_time` and every later one only `cursor`;
 * `paginateCursor` sends the same parameters throughout, so that first page is asked here and the
 * toolkit goes on from its `after_cursor` (its checks apply from there: a repeated cursor throws).
 */
export async function* exportTickets(
  ctx: SupportDeskContext,
  from: TicketExportFrom,
): AsyncGenerator<TicketExportPage> {
  const url = joinUrl(ctx.baseUrl, TICKET_EXPORT_PATH);
  let resume: string;
  if ('startTime' in from) {
    const first = await refusalNamed(
      ctx,
      ctx.http.getJson(url, ticketExportPageSchema, {
        headers: headers(ctx),
        query: { start_time: from.startTime },
      }),
    );
    yield first;
    if (first.end_of_stream) return;
    if (!first.after_cursor) {
      // What paginateCursor refuses on later pages: ending here would silently skip the rest.
      throw new PaginationError('no_continuation', 'says more tickets follow but names no after_cursor', {
        method: 'GET',
        url,
        page: 1,
      });
    }
    resume = first.after_cursor;
  } else {
    resume = from.cursor;
  }
  const pages = paginateCursor(ctx, {
    request: { url, headers: headers(ctx) },
    schema: ticketExportPageSchema,
    items: (p) => p.tickets,
    cursor: { param: 'cursor', next: (p) => p.after_cursor, hasMore: (p) => !p.end_of_stream },
    resume,
  });
  for await (const page of refusalsNamed(ctx, pages)) yield page.data;
}

/** A ticket's comments in the order Zendesk gives them, with the names of the users it sideloaded. */
interface TicketComments {
  comments: Comment[];
  userNames: Map<number, string>;
}

/**
 * Every comment of one ticket, internal notes included (the caller leaves them out), with
 * `include=users` so authors get names at no extra request. Throws `SourceHttpError` (404 when the
 * ticket is gone); 401/403 refuse the whole sync.
 */
export async function ticketComments(ctx: SupportDeskContext, ticketId: string): Promise<TicketComments> {
  const out: TicketComments = { comments: [], userNames: new Map() };
  const pages = cursorList(
    ctx,
    `/api/v2/tickets/${pathSegment(ticketId)}/comments.json`,
    commentsPageSchema,
    (p) => p.comments,
    { include: 'users' },
  );
  for await (const page of pages) {
    out.comments.push(...page.comments);
    for (const u of page.users ?? []) if (u.name) out.userNames.set(u.id, u.name);
  }
  return out;
}

const shownArticleSchema = z.object({ article: z.unknown() });

/**
 * One article (`GET /api/v2/help_center/articles/{id}`, §4.2), the record unparsed, or undefined when
 * this help center answers 404 (archived, deleted, or another brand's). A 401 refuses the credentials;
 * any other failure (a 403 on a restricted article) throws `SourceHttpError`, for the caller to make it
 * that article's failure.
 */
export async function showArticle(ctx: SupportDeskContext, articleId: string): Promise<unknown> {
  try {
    const shown = await ctx.http.getJson(
      joinUrl(ctx.baseUrl, `/api/v2/help_center/articles/${pathSegment(articleId)}`),
      shownArticleSchema,
      { headers: headers(ctx) },
    );
    return shown.article;
  } catch (err) {
    if (isSourceHttpError(err) && err.status === 404) return undefined;
    if (isSourceHttpError(err) && err.status === 401) throw named(ctx, err);
    throw err;
  }
}
