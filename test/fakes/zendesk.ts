/**
 * A fake Zendesk account on loopback, speaking the vendor's protocol (vendor-apis/zendesk.md):
 *
 * - `GET /api/v2/users/me[.json]` with API-token Basic auth (`{email}/token:{api_token}`) or an OAuth
 *   Bearer token. Wrong credentials: 401 `{"error":"Couldn't authenticate you"}`; no credentials at all:
 *   200 with the anonymous user (`id: null`), as Zendesk does; every other path then answers 401.
 * - Help Center (§4): `categories`, `sections`, `articles` (optionally under a locale), cursor
 *   pagination (`page[size]` ≤ 100, `page[after]`, `meta.has_more` / `after_cursor`, `links.next`) or
 *   offset pagination without `page[size]`; `articles/{id}`. Articles sort by `sort_by` `edited_at` or
 *   `updated_at` (`sort_order` `asc`/`desc`; id order otherwise).
 * - Languages (translations reference): `GET /api/v2/help_center/locales` (`locales`, `default_locale`);
 *   `GET /api/v2/help_center/{locale}/articles` lists, for another language than the default, the
 *   articles with a translation in it, displayed in it (title, body, draft, `html_url` under
 *   `/hc/{locale}/`, `edited_at` = the translation's last update); without a locale, or with the default,
 *   the default language's. `GET /api/v2/help_center/articles/{id}/translations` lists every translation,
 *   the default one included. A locale the help center has not enabled answers 404 (the reference does
 *   not say what a language's list answers once it is disabled; the connector reads the languages again
 *   on a 404 and on any change of the language's count, so either answer is caught).
 * - Brands: `GET /api/v2/brands` (cursor or offset) lists this account as the default brand and the
 *   brands added with {@link FakeZendeskAccount.addBrand}, each with `subdomain`, `brand_url`,
 *   `has_help_center`, `help_center_state`, `active`, `is_deleted`. A brand's help center answers under
 *   its subdomain as the base URL's path prefix (`http://fake/{subdomain}/api/v2/...`), with its own
 *   content, export and links on `https://{subdomain}.zendesk.com`; a `disabled` one answers 404.
 * - The incremental article export (§4.3): `start_time` inclusive, pages in update-time order of
 *   {@link FakeZendeskAccount.articleExportPageSize} articles, `end_time` = the last article's update
 *   second and `next_page` = the same URL with that start time, so pages overlap on their boundary second.
 *   The last page ends as {@link FakeZendeskAccount.exportEnding} says: `next_page` equal to the request
 *   (`self`, after one more request that re-reads the boundary second) or `null` (the Corrections).
 *   Drafts are exported (`draft: true`); archived and deleted articles are not (§6 documents no marker).
 * - The cursor-based incremental ticket export (§5.1): `start_time` or `cursor` (never both),
 *   `after_cursor` / `after_url`, `end_of_stream`, deleted tickets with `status: "deleted"`; ticket
 *   comments (§5.2) public and internal, cursor-paginated, with `include=users`.
 * - 429 with `Retry-After` and 503 through the shared fake-server helpers.
 * - Event webhooks (developer.zendesk.com "Webhooks API" /api-reference/webhooks/webhooks-api/webhooks/,
 *   "Anatomy of a webhook request" /documentation/webhooks/anatomy-of-a-webhook-request/, "Verifying
 *   webhook authenticity" /documentation/webhooks/verifying/, "Article events"
 *   /api-reference/webhooks/event-types/article-events/): `POST /api/v2/webhooks` `{"webhook": {name,
 *   endpoint, http_method, request_format, status, subscriptions, custom_headers?}}` answers 201 with the
 *   webhook and its id; `GET /api/v2/webhooks/{id}/signing_secret` answers `{"signing_secret":
 *   {"algorithm": "sha256", "secret"}}`; `DELETE /api/v2/webhooks/{id}` answers 204 (404 once gone).
 *   {@link FakeZendeskAccount.sendArticleEvent} POSTs an article event to every active webhook subscribed
 *   to its type, as Zendesk does: the JSON event (`type`, `account_id`, `id`, `time`,
 *   `zendesk_event_version`, `subject: "zen:article:{id}"`, `detail: {brand_id, id}` as strings, `event`)
 *   with `x-zendesk-account-id`, `x-zendesk-webhook-id`, `x-zendesk-webhook-invocation-id`,
 *   `x-zendesk-webhook-signature` (base64 HMAC-SHA256 of timestamp + body, keyed with the secret) and
 *   `x-zendesk-webhook-signature-timestamp` (ISO 8601 to the second), plus the webhook's custom headers.
 *   A non-2xx answer is retried `retries` times (same event id, signed again), when the test asks.
 *
 * Not modeled: whether a translation's edit moves its article's `updated_at` is not documented; here it
 * does not (the harder case: only the language's own list shows it). Categories and sections answer in
 * the default language whatever the locale; the export answers in the default language only; brands are
 * told apart by the path prefix, not the `Host` header; host mappings are absent.
 *
 * Links the fake writes name the vendor's host (`https://acme.zendesk.com`), as Zendesk's do, whatever
 * address the request came to; requests may carry a path prefix before `/api/v2/` (an operator's
 * base-URL template such as `http://fake/{subdomain}`). Tests change the account between syncs (edit,
 * move, restrict, archive, draft back, delete; solve, reopen, delete tickets, add comments and notes).
 * `zendeskBenchWorkspace` fills one with generated articles for the benchmark.
 */
import { createHmac, randomBytes } from 'node:crypto';
import {
  basicCredentials,
  bearerToken,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  startFakeServer,
} from './fake-server.ts';
import { type BenchWorkspace, type BenchWorkspaceFactory, benchText, spreadPick } from './workspace.ts';

export const ZENDESK_GOOD = { email: 'agent@acme.test', api_token: 'zd_fake_good_token_0123456789' };
/** An OAuth access token the fake accepts (Bearer). */
export const ZENDESK_GOOD_ACCESS_TOKEN = 'zd_oauth_fake_access_token_9876543210';
/** The account's own origin, as the links in its answers name it. */
export const ZENDESK_ORIGIN = 'https://acme.zendesk.com';

const RATE_HEADERS = { 'x-rate-limit': '700', 'x-rate-limit-remaining': '699' };
const LOCALE = 'en-us';
/** The authenticated agent (an admin), author of agents' comments unless a test names another. */
export const ZENDESK_AGENT_ID = 360786799676;
const AGENT_ID = ZENDESK_AGENT_ID;

export interface FakeCategory {
  id: number;
  name: string;
  description: string;
  position: number;
  created_at: number;
  updated_at: number;
}

export interface FakeSection {
  id: number;
  category_id: number;
  parent_section_id: number | null;
  name: string;
  description: string;
  position: number;
  created_at: number;
  updated_at: number;
}

export interface FakeArticle {
  id: number;
  section_id: number;
  title: string;
  /** HTML, or a generator called on each answer (large accounts stay small in memory). */
  body: string | ((a: FakeArticle) => string);
  draft: boolean;
  /** Archived (the UI's soft delete): gone from the lists and the export, restorable. */
  archived: boolean;
  /** Deleted for good. */
  deleted: boolean;
  user_segment_id: number | null;
  label_names: string[];
  position: number;
  author_id: number;
  /** Epoch seconds. */
  created_at: number;
  /** Any change. */
  updated_at: number;
  /** Title or body changes only. */
  edited_at: number;
  /** Edits so far (generated bodies read it). */
  revision: number;
  /** Fields that replace the vendor's in every answer about this article (a malformed record). */
  override?: Record<string, unknown>;
  /** Its other languages than the default, by locale. */
  translations: Map<string, FakeTranslation>;
}

/** One article's text in another language than the default. */
export interface FakeTranslation {
  id: number;
  locale: string;
  title: string;
  body: string;
  draft: boolean;
  created_at: number;
  updated_at: number;
}

export interface FakeBrand {
  id: number;
  name: string;
  subdomain: string;
  /** `enabled`, `disabled` or `restricted`. */
  help_center_state: 'enabled' | 'disabled' | 'restricted';
  active: boolean;
  is_deleted: boolean;
  /** The brand's own help center. */
  account: FakeZendeskAccount;
}

export interface FakeComment {
  id: number;
  author_id: number;
  /** False: an internal note. */
  public: boolean;
  /** The comment as HTML (`html_body`); `body` / `plain_body` are its text. */
  html: string;
  created_at: number;
  attachments?: Array<{
    id: number;
    file_name: string;
    content_url: string;
    content_type: string;
    size: number;
  }>;
}

export type FakeTicketStatus = 'new' | 'open' | 'pending' | 'hold' | 'solved' | 'closed' | 'deleted';

export interface FakeTicket {
  id: number;
  subject: string;
  status: FakeTicketStatus;
  priority: string | null;
  tags: string[];
  requester_id: number;
  assignee_id: number | null;
  created_at: number;
  updated_at: number;
  comments: FakeComment[];
  override?: Record<string, unknown>;
}

/** A webhook created through the Webhooks API. */
export interface FakeWebhook {
  id: string;
  name: string;
  endpoint: string;
  status: 'active' | 'inactive';
  subscriptions: string[];
  custom_headers: Record<string, string>;
  /** The signing secret Zendesk issues (`GET /api/v2/webhooks/{id}/signing_secret`). */
  secret: string;
}

/** One request a webhook sent (each retry is another). */
export interface FakeWebhookDelivery {
  webhookId: string;
  eventId: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The article event types the fake sends (`zen:event-type:article.<kind>`). */
export type FakeArticleEventKind = 'published' | 'unpublished' | 'vote_created' | 'comment_created';

interface Position {
  t: number;
  id: number;
}

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function slug(title: string): string {
  return (
    title
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60) || 'article'
  );
}

function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function decodeCursor<T>(raw: string): T | undefined {
  try {
    return JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

const comparePosition = (a: Position, b: Position) => a.t - b.t || a.id - b.id;

/** First index of `sorted` whose position is after `p` (or at or after it, when `inclusive`). */
function firstAfter<T>(
  sorted: readonly T[],
  pos: (x: T) => Position,
  p: Position,
  inclusive: boolean,
): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = comparePosition(pos(sorted[mid]!), p);
    if (c < 0 || (c === 0 && !inclusive)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function plainText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|h\d)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const error = (status: number, name: string, description?: string): FakeReply => ({
  status,
  headers: RATE_HEADERS,
  body: description === undefined ? { error: name } : { error: name, description },
});
const notFound = () => error(404, 'RecordNotFound', 'Not found');
const badRequest = (description: string) => error(400, 'InvalidPaginationParameter', description);
/** A webhook request over HTTP; an endpoint that cannot be reached is Zendesk's failed invocation (0). */
async function postWebhook(endpoint: string, headers: Record<string, string>, body: string): Promise<number> {
  try {
    const res = await fetch(endpoint, { method: 'POST', headers, body });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** The Webhooks API's error shape (`errors[]` with `code`, `title`). */
const webhookError = (status: number, code: string, title: string): FakeReply => ({
  status,
  headers: RATE_HEADERS,
  body: { errors: [{ code, title }] },
});

/** The account's content, changed by tests between syncs. Times are epoch seconds of its own clock. */
export class FakeZendeskAccount {
  credentials = {
    email: ZENDESK_GOOD.email,
    api_token: ZENDESK_GOOD.api_token,
    access_token: ZENDESK_GOOD_ACCESS_TOKEN,
  };
  /**
   * Set by an attached authorization server (zendesk-oauth.ts): it decides which Bearer tokens are good,
   * and a refused one answers OAuth's 401 `invalid_token` instead of the API-token refusal.
   */
  bearerTokens: { accepts(token: string): boolean } | undefined;
  /** The source's "now": every change without an explicit time happens one second later than the last. */
  clock = 1_720_000_000;
  readonly categories = new Map<number, FakeCategory>();
  readonly sections = new Map<number, FakeSection>();
  readonly articles = new Map<number, FakeArticle>();
  readonly tickets = new Map<number, FakeTicket>();
  /** User names by id (sideloaded with comments). */
  readonly users = new Map<number, string>([[AGENT_ID, 'Avery Agent']]);
  articleExportPageSize = 1000;
  ticketExportPageSize = 1000;
  /** How the article export's last page says so: `next_page` equal to the request, or null. */
  exportEnding: 'self' | 'null' = 'self';
  /** This help center's subdomain, and the origin its links name. */
  subdomain = 'acme';
  origin = ZENDESK_ORIGIN;
  /** The default brand's help center state (this account's own). */
  helpCenterState: FakeBrand['help_center_state'] = 'enabled';
  /** The help center's enabled languages, the default first unless a test reorders them. */
  locales: string[] = [LOCALE];
  defaultLocale = LOCALE;
  /** Other brands of the account, each with its own help center. */
  readonly brands: FakeBrand[] = [];
  /**
   * Called with every request before it is answered (authenticated or not); a reply it returns is sent
   * instead of the normal answer (a 500 on one ticket's comments, say).
   */
  onRequest?: (req: RecordedRequest) => FakeReply | undefined;
  /** The account's number, as its webhooks name it (`account_id`, `x-zendesk-account-id`). */
  accountId = 10_168_721;
  /** Webhooks created through the Webhooks API, by id. */
  readonly webhooks = new Map<string, FakeWebhook>();
  /** Every request the webhooks sent, in order. */
  readonly webhookDeliveries: FakeWebhookDelivery[] = [];
  /** The user may not manage webhooks (an agent without the permission): the Webhooks API answers 403. */
  webhooksForbidden = false;
  /**
   * How a webhook request reaches its endpoint: a real POST by default; a test of the app in process
   * hands it to the app instead. Answers the HTTP status (0: unreachable).
   */
  webhookTransport: (endpoint: string, headers: Record<string, string>, body: string) => Promise<number> =
    postWebhook;
  #webhookCount = 0;
  #eventCount = 0;

  #nextId = 360_000_100_000;
  #articleOrder: FakeArticle[] | undefined;
  #ticketOrder: FakeTicket[] | undefined;

  /** A new id, or `id` when a test needs a particular one (an article and a ticket both 7). */
  #id(id?: number): number {
    if (id !== undefined) return id;
    this.#nextId += 1;
    return this.#nextId;
  }

  /** The next second of the account's clock, or `at` (several changes in one second). */
  tick(at?: number): number {
    if (at !== undefined) {
      this.clock = Math.max(this.clock, at);
      return at;
    }
    this.clock += 1;
    return this.clock;
  }

  addCategory(name: string, opts: { id?: number } = {}): FakeCategory {
    const t = this.tick();
    const c: FakeCategory = {
      id: this.#id(opts.id),
      name,
      description: '',
      position: this.categories.size,
      created_at: t,
      updated_at: t,
    };
    this.categories.set(c.id, c);
    return c;
  }

  addSection(
    category: FakeCategory,
    name: string,
    opts: { id?: number; parent?: FakeSection } = {},
  ): FakeSection {
    const t = this.tick();
    const s: FakeSection = {
      id: this.#id(opts.id),
      category_id: category.id,
      parent_section_id: opts.parent?.id ?? null,
      name,
      description: '',
      position: this.sections.size,
      created_at: t,
      updated_at: t,
    };
    this.sections.set(s.id, s);
    return s;
  }

  renameSection(section: FakeSection, name: string): void {
    section.name = name;
    section.updated_at = this.tick();
  }

  renameCategory(category: FakeCategory, name: string): void {
    category.name = name;
    category.updated_at = this.tick();
  }

  addArticle(opts: {
    section: FakeSection;
    title: string;
    body?: string | ((a: FakeArticle) => string);
    draft?: boolean;
    user_segment_id?: number | null;
    label_names?: string[];
    id?: number;
    at?: number;
  }): FakeArticle {
    const t = this.tick(opts.at);
    const a: FakeArticle = {
      id: this.#id(opts.id),
      section_id: opts.section.id,
      title: opts.title,
      body: opts.body ?? `<p>${opts.title}.</p>`,
      draft: opts.draft ?? false,
      archived: false,
      deleted: false,
      user_segment_id: opts.user_segment_id ?? null,
      label_names: opts.label_names ?? [],
      position: this.articles.size,
      author_id: AGENT_ID,
      created_at: t,
      updated_at: t,
      edited_at: t,
      revision: 1,
      translations: new Map(),
    };
    this.articles.set(a.id, a);
    this.#articleOrder = undefined;
    return a;
  }

  article(id: number): FakeArticle {
    const a = this.articles.get(id);
    if (!a) throw new Error(`no article ${id}`);
    return a;
  }

  #touchArticle(a: FakeArticle, at: number | undefined, edited: boolean): void {
    a.updated_at = this.tick(at);
    if (edited) {
      a.edited_at = a.updated_at;
      a.revision += 1;
    }
    this.#articleOrder = undefined;
  }

  /** A new title and/or body (a body-less edit still makes a new revision of a generated body). */
  editArticle(id: number, change: { title?: string; body?: string; at?: number } = {}): FakeArticle {
    const a = this.article(id);
    if (change.title !== undefined) a.title = change.title;
    if (change.body !== undefined) a.body = change.body;
    this.#touchArticle(a, change.at, true);
    return a;
  }

  /** Another section: the article's metadata changes (`updated_at`), not its content (`edited_at`). */
  moveArticle(id: number, section: FakeSection, at?: number): void {
    const a = this.article(id);
    a.section_id = section.id;
    this.#touchArticle(a, at, false);
  }

  /** Visible to one user segment only (null: everyone again). */
  restrictArticle(id: number, segment: number | null, at?: number): void {
    const a = this.article(id);
    a.user_segment_id = segment;
    this.#touchArticle(a, at, false);
  }

  setLabels(id: number, labels: string[], at?: number): void {
    const a = this.article(id);
    a.label_names = labels;
    this.#touchArticle(a, at, false);
  }

  /** Back to draft (unpublished). */
  draftArticle(id: number, at?: number): void {
    const a = this.article(id);
    a.draft = true;
    this.#touchArticle(a, at, false);
  }

  publishArticle(id: number, at?: number): void {
    const a = this.article(id);
    a.draft = false;
    this.#touchArticle(a, at, false);
  }

  archiveArticle(id: number, at?: number): void {
    const a = this.article(id);
    a.archived = true;
    this.#touchArticle(a, at, false);
  }

  /** Out of the archive: listed and exported again (its update time moves; its creation time does not). */
  restoreArticle(id: number, at?: number): void {
    const a = this.article(id);
    a.archived = false;
    this.#touchArticle(a, at, false);
  }

  deleteArticle(id: number): void {
    const a = this.article(id);
    a.deleted = true;
    this.#touchArticle(a, undefined, false);
  }

  /** Another language for the help center (its articles get translations with {@link addTranslation}). */
  enableLocale(locale: string): void {
    if (!this.locales.includes(locale)) this.locales.push(locale);
  }

  /** The language leaves the help center: its translations are no longer listed. */
  disableLocale(locale: string): void {
    this.locales = this.locales.filter((l) => l !== locale);
  }

  /**
   * A translation of an article. Its article's `updated_at` does not move (see the header): only the
   * language's own list (`edited_at`) and the article's translations show it.
   */
  addTranslation(
    id: number,
    locale: string,
    opts: { title: string; body?: string; draft?: boolean; at?: number },
  ): FakeTranslation {
    this.enableLocale(locale);
    const t = this.tick(opts.at);
    const translation: FakeTranslation = {
      id: this.#id(),
      locale,
      title: opts.title,
      body: opts.body ?? `<p>${opts.title}.</p>`,
      draft: opts.draft ?? false,
      created_at: t,
      updated_at: t,
    };
    this.article(id).translations.set(locale, translation);
    return translation;
  }

  translation(id: number, locale: string): FakeTranslation {
    const t = this.article(id).translations.get(locale);
    if (!t) throw new Error(`no ${locale} translation of article ${id}`);
    return t;
  }

  /** A new title, body or draft state of one translation; its own update time moves, not the article's. */
  editTranslation(
    id: number,
    locale: string,
    change: { title?: string; body?: string; draft?: boolean; at?: number },
  ): FakeTranslation {
    const t = this.translation(id, locale);
    if (change.title !== undefined) t.title = change.title;
    if (change.body !== undefined) t.body = change.body;
    if (change.draft !== undefined) t.draft = change.draft;
    t.updated_at = this.tick(change.at);
    return t;
  }

  deleteTranslation(id: number, locale: string): void {
    this.translation(id, locale);
    this.article(id).translations.delete(locale);
    this.tick();
  }

  /** Another brand with its own help center (an account of its own: add its content there). */
  addBrand(
    subdomain: string,
    opts: { name?: string; help_center_state?: FakeBrand['help_center_state']; active?: boolean } = {},
  ): FakeBrand {
    const account = new FakeZendeskAccount();
    account.subdomain = subdomain;
    account.origin = `https://${subdomain}.zendesk.com`;
    account.clock = this.clock;
    account.#nextId = this.#nextId + 1_000_000 * (this.brands.length + 1);
    const brand: FakeBrand = {
      id: this.#id(),
      name: opts.name ?? subdomain,
      subdomain,
      help_center_state: opts.help_center_state ?? 'enabled',
      active: opts.active ?? true,
      is_deleted: false,
      account,
    };
    this.brands.push(brand);
    return brand;
  }

  addUser(id: number, name: string): number {
    this.users.set(id, name);
    return id;
  }

  addTicket(opts: {
    subject: string;
    status?: FakeTicketStatus;
    tags?: string[];
    priority?: string | null;
    requester?: number;
    comments?: Array<{ author?: number; public?: boolean; html: string }>;
    id?: number;
    at?: number;
  }): FakeTicket {
    const t = this.tick(opts.at);
    const requester = opts.requester ?? this.addUser(this.#id(), 'Casey Customer');
    const ticket: FakeTicket = {
      id: this.#id(opts.id),
      subject: opts.subject,
      status: opts.status ?? 'solved',
      priority: opts.priority ?? 'normal',
      tags: opts.tags ?? [],
      requester_id: requester,
      assignee_id: AGENT_ID,
      created_at: t,
      updated_at: t,
      comments: [],
    };
    for (const c of opts.comments ?? [{ author: requester, html: `<p>${opts.subject}</p>` }]) {
      ticket.comments.push({
        id: this.#id(),
        author_id: c.author ?? requester,
        public: c.public ?? true,
        html: c.html,
        created_at: t,
      });
    }
    this.tickets.set(ticket.id, ticket);
    this.#ticketOrder = undefined;
    return ticket;
  }

  ticket(id: number): FakeTicket {
    const t = this.tickets.get(id);
    if (!t) throw new Error(`no ticket ${id}`);
    return t;
  }

  #touchTicket(t: FakeTicket, at?: number): void {
    t.updated_at = this.tick(at);
    this.#ticketOrder = undefined;
  }

  /** A public reply or (public: false) an internal note; the ticket's `updated_at` moves. */
  addComment(id: number, c: { author?: number; public?: boolean; html: string; at?: number }): FakeComment {
    const t = this.ticket(id);
    this.#touchTicket(t, c.at);
    const comment: FakeComment = {
      id: this.#id(),
      author_id: c.author ?? AGENT_ID,
      public: c.public ?? true,
      html: c.html,
      created_at: t.updated_at,
    };
    t.comments.push(comment);
    return comment;
  }

  setTicketStatus(id: number, status: FakeTicketStatus, at?: number): void {
    const t = this.ticket(id);
    t.status = status;
    this.#touchTicket(t, at);
  }

  // -------------------------------------------------------------------------------------------------
  // Answers
  // -------------------------------------------------------------------------------------------------

  htmlUrl(a: FakeArticle, locale?: string): string {
    const t = locale === undefined ? undefined : a.translations.get(locale);
    return `${this.origin}/hc/${t ? locale : this.defaultLocale}/articles/${a.id}-${slug(t ? t.title : a.title)}`;
  }

  /** The article as a list displays it: in `locale` (another language than the default) when given. */
  articleJson(a: FakeArticle, locale?: string): Record<string, unknown> {
    const t = locale === undefined ? undefined : a.translations.get(locale);
    const json = this.#defaultArticleJson(a);
    if (!t) return json;
    return {
      ...json,
      url: `${this.origin}/api/v2/help_center/${t.locale}/articles/${a.id}.json`,
      html_url: this.htmlUrl(a, t.locale),
      draft: t.draft,
      edited_at: iso(t.updated_at),
      name: t.title,
      title: t.title,
      locale: t.locale,
      body: t.body,
      ...a.override,
    };
  }

  /** One translation (`/articles/{id}/translations`); the default language's is built from the article. */
  translationJson(a: FakeArticle, t: FakeTranslation | undefined): Record<string, unknown> {
    const locale = t?.locale ?? this.defaultLocale;
    return {
      id: t?.id ?? a.id,
      url: `${this.origin}/api/v2/help_center/articles/${a.id}/translations/${locale}.json`,
      html_url: this.htmlUrl(a, t?.locale),
      source_id: a.id,
      source_type: 'Article',
      locale,
      title: t?.title ?? a.title,
      body: t ? t.body : typeof a.body === 'function' ? a.body(a) : a.body,
      outdated: false,
      draft: t?.draft ?? a.draft,
      created_at: iso(t?.created_at ?? a.created_at),
      updated_at: iso(t?.updated_at ?? a.edited_at),
      updated_by_id: AGENT_ID,
      created_by_id: AGENT_ID,
    };
  }

  brandJson(b: FakeBrand | undefined): Record<string, unknown> {
    const subdomain = b?.subdomain ?? this.subdomain;
    const id = b?.id ?? 360_000_123;
    return {
      id,
      url: `${this.origin}/api/v2/brands/${id}.json`,
      name: b?.name ?? 'Acme',
      brand_url: `https://${subdomain}.zendesk.com`,
      subdomain,
      host_mapping: null,
      has_help_center: (b?.help_center_state ?? this.helpCenterState) !== 'disabled',
      help_center_state: b?.help_center_state ?? this.helpCenterState,
      active: b?.active ?? true,
      default: b === undefined,
      is_deleted: b?.is_deleted ?? false,
      logo: null,
      ticket_form_ids: [],
      signature_template: '{{agent.signature}}',
      created_at: iso(1_600_000_000),
      updated_at: iso(1_600_000_000),
    };
  }

  #defaultArticleJson(a: FakeArticle): Record<string, unknown> {
    return {
      id: a.id,
      url: `${this.origin}/api/v2/help_center/${this.defaultLocale}/articles/${a.id}.json`,
      html_url: this.htmlUrl(a),
      author_id: a.author_id,
      comments_disabled: false,
      draft: a.draft,
      promoted: false,
      position: a.position,
      vote_sum: 0,
      vote_count: 0,
      section_id: a.section_id,
      created_at: iso(a.created_at),
      updated_at: iso(a.updated_at),
      edited_at: iso(a.edited_at),
      name: a.title,
      title: a.title,
      source_locale: this.defaultLocale,
      locale: this.defaultLocale,
      outdated: false,
      outdated_locales: [],
      user_segment_id: a.user_segment_id,
      user_segment_ids: a.user_segment_id === null ? [] : [a.user_segment_id],
      permission_group_id: 360_000_333_444,
      content_tag_ids: [],
      label_names: a.label_names,
      body: typeof a.body === 'function' ? a.body(a) : a.body,
      ...a.override,
    };
  }

  categoryJson(c: FakeCategory): Record<string, unknown> {
    return {
      id: c.id,
      url: `${ZENDESK_ORIGIN}/api/v2/help_center/${LOCALE}/categories/${c.id}.json`,
      html_url: `${ZENDESK_ORIGIN}/hc/${LOCALE}/categories/${c.id}-${slug(c.name)}`,
      position: c.position,
      created_at: iso(c.created_at),
      updated_at: iso(c.updated_at),
      name: c.name,
      description: c.description,
      locale: LOCALE,
      source_locale: LOCALE,
      outdated: false,
    };
  }

  sectionJson(s: FakeSection): Record<string, unknown> {
    return {
      id: s.id,
      url: `${ZENDESK_ORIGIN}/api/v2/help_center/${LOCALE}/sections/${s.id}.json`,
      html_url: `${ZENDESK_ORIGIN}/hc/${LOCALE}/sections/${s.id}-${slug(s.name)}`,
      category_id: s.category_id,
      position: s.position,
      sorting: 'manual',
      created_at: iso(s.created_at),
      updated_at: iso(s.updated_at),
      name: s.name,
      description: s.description,
      locale: LOCALE,
      source_locale: LOCALE,
      outdated: false,
      parent_section_id: s.parent_section_id,
      theme_template: 'section_page',
    };
  }

  ticketJson(t: FakeTicket): Record<string, unknown> {
    const first = t.comments[0];
    return {
      id: t.id,
      url: `${ZENDESK_ORIGIN}/api/v2/tickets/${t.id}.json`,
      external_id: null,
      created_at: iso(t.created_at),
      updated_at: iso(t.updated_at),
      generated_timestamp: t.updated_at,
      type: 'question',
      subject: t.subject,
      raw_subject: t.subject,
      // The first comment, whether it is public or not: a consumer must never render it.
      description: first ? plainText(first.html) : '',
      priority: t.priority,
      status: t.status,
      requester_id: t.requester_id,
      submitter_id: t.requester_id,
      assignee_id: t.assignee_id,
      organization_id: null,
      group_id: 360_000_777_000,
      brand_id: 360_000_123,
      tags: t.tags,
      custom_fields: [],
      via: { channel: 'web' },
      has_incidents: false,
      due_at: null,
      collaborator_ids: [],
      follower_ids: [],
      ...t.override,
    };
  }

  commentJson(c: FakeComment): Record<string, unknown> {
    const text = plainText(c.html);
    return {
      id: c.id,
      type: 'Comment',
      author_id: c.author_id,
      public: c.public,
      body: text,
      html_body: `<div class="zd-comment" dir="auto">${c.html}</div>`,
      plain_body: text,
      attachments: c.attachments ?? [],
      audit_id: c.id + 1,
      via: { channel: 'web' },
      metadata: { system: {}, custom: {} },
      created_at: iso(c.created_at),
    };
  }

  /** Articles in export order (update time, then id), sorted again only after a change. */
  articlesByUpdate(): FakeArticle[] {
    this.#articleOrder ??= [...this.articles.values()].sort(
      (a, b) => a.updated_at - b.updated_at || a.id - b.id,
    );
    return this.#articleOrder;
  }

  ticketsByUpdate(): FakeTicket[] {
    this.#ticketOrder ??= [...this.tickets.values()].sort(
      (a, b) => a.updated_at - b.updated_at || a.id - b.id,
    );
    return this.#ticketOrder;
  }

  /** Held articles the lists show: published and draft, not archived or deleted. */
  listedArticles(): FakeArticle[] {
    return [...this.articles.values()].filter((a) => !a.archived && !a.deleted).sort((a, b) => a.id - b.id);
  }

  handle(req: RecordedRequest): FakeReply {
    const replaced = this.onRequest?.(req);
    if (replaced) return replaced;
    const at = req.path.indexOf('/api/v2/');
    if (at < 0) return notFound();
    const brand = this.#brandOf(req.path.slice(0, at));
    if (brand) {
      // The same account: its credentials, another help center.
      brand.account.credentials = this.credentials;
      brand.account.bearerTokens = this.bearerTokens;
      brand.account.helpCenterState = brand.help_center_state;
      return brand.account.handle(req);
    }
    const path = req.path.slice(at).replace(/\.json$/, '');
    const isMe = path === '/api/v2/users/me';
    const who = this.#authenticate(req);
    if (who === 'anonymous') {
      if (isMe) {
        return {
          status: 200,
          headers: RATE_HEADERS,
          body: {
            user: {
              id: null,
              url: null,
              name: 'Anonymous user',
              email: 'invalid@example.com',
              role: 'end-user',
            },
          },
        };
      }
      return error(401, "Couldn't authenticate you");
    }
    if (who === 'invalid_token') {
      return {
        status: 401,
        headers: {
          ...RATE_HEADERS,
          'www-authenticate':
            'Bearer realm="Zendesk::OAuth Bearer Token Authentication", error="invalid_token", error_description="The access token provided is expired, revoked, malformed or invalid for other reasons."',
        },
        body: {
          error: 'invalid_token',
          error_description:
            'The access token provided is expired, revoked, malformed or invalid for other reasons.',
        },
      };
    }
    if (who === 'refused') {
      return {
        status: 401,
        headers: { ...RATE_HEADERS, 'www-authenticate': 'Basic realm="Web Password"' },
        body: { error: "Couldn't authenticate you" },
      };
    }
    const webhooks = this.#webhooksApi(req, path);
    if (webhooks) return webhooks;
    if (req.method !== 'GET') return notFound();
    if (isMe) {
      return {
        status: 200,
        headers: RATE_HEADERS,
        body: {
          user: {
            id: AGENT_ID,
            url: `${ZENDESK_ORIGIN}/api/v2/users/${AGENT_ID}.json`,
            name: 'Avery Agent',
            email: this.credentials.email,
            role: 'admin',
            active: true,
          },
        },
      };
    }
    const languages = this.#languagesAndBrands(req, path);
    if (languages) return languages;
    const hc =
      /^\/api\/v2\/help_center(?:\/([a-z]{2}(?:-[a-z]{2})?))?\/(categories|sections|articles)(?:\/(\d+))?$/.exec(
        path,
      );
    if (hc) {
      const [, locale, kind, id] = hc;
      if (locale !== undefined && !this.locales.includes(locale)) return notFound();
      if (id !== undefined) {
        if (kind !== 'articles') return notFound();
        const a = this.articles.get(Number(id));
        if (!a || a.archived || a.deleted) return notFound();
        return { status: 200, headers: RATE_HEADERS, body: { article: this.articleJson(a) } };
      }
      if (kind === 'categories') {
        const all = [...this.categories.values()].sort((a, b) => a.id - b.id);
        return this.#list(req, path, 'categories', all, (c) => this.categoryJson(c), 100);
      }
      if (kind === 'sections') {
        const all = [...this.sections.values()].sort((a, b) => a.id - b.id);
        return this.#list(req, path, 'sections', all, (s) => this.sectionJson(s), 100);
      }
      const other = locale !== undefined && locale !== this.defaultLocale ? locale : undefined;
      const listed = other
        ? this.listedArticles().filter((a) => a.translations.has(other))
        : this.listedArticles();
      return this.#list(req, path, 'articles', listed, (a) => this.articleJson(a, other), 30, {
        edited_at: (a) => (other ? a.translations.get(other)!.updated_at : a.edited_at),
        updated_at: (a) => a.updated_at,
      });
    }
    if (path === '/api/v2/help_center/incremental/articles') return this.#articleExport(req);
    if (path === '/api/v2/incremental/tickets/cursor') return this.#ticketExport(req);
    const comments = /^\/api\/v2\/tickets\/(\d+)\/comments$/.exec(path);
    if (comments) return this.#comments(req, path, Number(comments[1]));
    return notFound();
  }

  /** `POST /api/v2/webhooks`, `GET /api/v2/webhooks/{id}[/signing_secret]`, `DELETE /api/v2/webhooks/{id}`. */
  #webhooksApi(req: RecordedRequest, path: string): FakeReply | undefined {
    const m = /^\/api\/v2\/webhooks(?:\/([^/]+)(\/signing_secret)?)?$/.exec(path);
    if (!m) return undefined;
    if (this.webhooksForbidden) {
      return webhookError(403, 'Forbidden', 'You do not have access to this page.');
    }
    const [, id, secret] = m;
    if (id === undefined) {
      return req.method === 'POST'
        ? this.#createWebhook(req.body)
        : webhookError(405, 'MethodNotAllowed', '');
    }
    const hook = this.webhooks.get(decodeURIComponent(id));
    if (!hook) return webhookError(404, 'RecordNotFound', 'Webhook not found');
    if (req.method === 'DELETE' && !secret) {
      this.webhooks.delete(hook.id);
      return { status: 204 };
    }
    if (req.method !== 'GET') return webhookError(405, 'MethodNotAllowed', '');
    if (secret) {
      return { status: 200, body: { signing_secret: { algorithm: 'sha256', secret: hook.secret } } };
    }
    return { status: 200, body: { webhook: this.#webhookJson(hook) } };
  }

  #createWebhook(raw: string): FakeReply {
    let body: { webhook?: Record<string, unknown> };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      return webhookError(400, 'InvalidJSON', 'The request body is not JSON');
    }
    const w = body.webhook ?? {};
    for (const field of ['name', 'endpoint', 'http_method', 'request_format', 'status']) {
      if (typeof w[field] !== 'string' || w[field] === '') {
        return webhookError(400, 'InvalidValue', `${field} is required`);
      }
    }
    const subscriptions = Array.isArray(w['subscriptions']) ? (w['subscriptions'] as unknown[]) : [];
    if (subscriptions.length === 0 || !subscriptions.every((x) => typeof x === 'string')) {
      return webhookError(400, 'InvalidValue', 'subscriptions must name event types');
    }
    const events = subscriptions.some((x) => x !== 'conditional_ticket_events');
    if (events && (w['http_method'] !== 'POST' || w['request_format'] !== 'json')) {
      return webhookError(400, 'InvalidValue', 'A webhook subscribed to Zendesk events must POST json');
    }
    this.#webhookCount += 1;
    const hook: FakeWebhook = {
      id: `01HFAKEWEBHOOK${String(this.#webhookCount).padStart(12, '0')}`,
      name: w['name'] as string,
      endpoint: w['endpoint'] as string,
      status: w['status'] === 'inactive' ? 'inactive' : 'active',
      subscriptions: subscriptions as string[],
      custom_headers: { ...((w['custom_headers'] as Record<string, string> | undefined) ?? {}) },
      secret: randomBytes(32).toString('base64'),
    };
    this.webhooks.set(hook.id, hook);
    return { status: 201, body: { webhook: this.#webhookJson(hook) } };
  }

  #webhookJson(hook: FakeWebhook): Record<string, unknown> {
    return {
      id: hook.id,
      name: hook.name,
      status: hook.status,
      endpoint: hook.endpoint,
      http_method: 'POST',
      request_format: 'json',
      subscriptions: hook.subscriptions,
      custom_headers: hook.custom_headers,
      created_at: iso(1_700_000_000),
      created_by: String(AGENT_ID),
    };
  }

  /**
   * Sends `zen:event-type:article.<kind>` about an article (of `brand`'s help center when given) to every
   * active webhook subscribed to it, the way Zendesk does (see the header). `timestamp` replaces the
   * signed send time (ISO 8601, as Zendesk writes it); `eventId` an event's id (a test replaying one);
   * `retries` how often a non-2xx answer is sent again.
   */
  async sendArticleEvent(
    kind: FakeArticleEventKind,
    articleId: number,
    opts: { brand?: FakeBrand; locale?: string; timestamp?: string; eventId?: string; retries?: number } = {},
  ): Promise<FakeWebhookDelivery[]> {
    const type = `zen:event-type:article.${kind}`;
    const account = opts.brand?.account ?? this;
    const a = account.article(articleId);
    this.#eventCount += 1;
    const event = {
      account_id: this.accountId,
      detail: { brand_id: String(opts.brand?.id ?? 360_000_123), id: String(a.id) },
      event:
        kind === 'published' || kind === 'unpublished'
          ? {
              author_id: String(a.author_id),
              category_id: String(account.sections.get(a.section_id)?.category_id ?? 0),
              locale: opts.locale ?? account.defaultLocale,
              section_id: String(a.section_id),
              title: opts.locale ? account.translation(a.id, opts.locale).title : a.title,
            }
          : {},
      id: opts.eventId ?? `01HFAKEEVENT${String(this.#eventCount).padStart(14, '0')}`,
      subject: `zen:article:${a.id}`,
      time: new Date().toISOString(),
      type,
      zendesk_event_version: '2022-11-06',
    };
    const out: FakeWebhookDelivery[] = [];
    for (const hook of this.webhooks.values()) {
      if (hook.status !== 'active' || !hook.subscriptions.includes(type)) continue;
      for (let attempt = 0; attempt <= (opts.retries ?? 0); attempt++) {
        const delivery = await this.#deliver(hook, event, opts.timestamp);
        out.push(delivery);
        if (delivery.status >= 200 && delivery.status < 300) break;
      }
    }
    return out;
  }

  async #deliver(
    hook: FakeWebhook,
    event: { id: string },
    timestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  ): Promise<FakeWebhookDelivery> {
    const body = JSON.stringify(event);
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      ...hook.custom_headers,
      'x-zendesk-account-id': String(this.accountId),
      'x-zendesk-webhook-id': hook.id,
      'x-zendesk-webhook-invocation-id': String(this.webhookDeliveries.length + 8_350_205_582),
      'x-zendesk-webhook-signature': createHmac('sha256', hook.secret)
        .update(timestamp + body)
        .digest('base64'),
      'x-zendesk-webhook-signature-timestamp': timestamp,
    };
    const status = await this.webhookTransport(hook.endpoint, headers, body);
    const delivery = { webhookId: hook.id, eventId: event.id, status, headers, body };
    this.webhookDeliveries.push(delivery);
    return delivery;
  }

  /** The brand whose subdomain is the path prefix's last segment (`/support` of `/support/api/v2/...`). */
  #brandOf(prefix: string): FakeBrand | undefined {
    const last = prefix.split('/').filter(Boolean).pop();
    if (last === undefined || last === this.subdomain) return undefined;
    return this.brands.find((b) => b.subdomain === last);
  }

  /** The help center's languages, an article's translations, and the account's brands. */
  #languagesAndBrands(req: RecordedRequest, path: string): FakeReply | undefined {
    if (path.startsWith('/api/v2/help_center/') && this.helpCenterState === 'disabled') return notFound();
    if (path === '/api/v2/help_center/locales') {
      return {
        status: 200,
        headers: RATE_HEADERS,
        body: { locales: this.locales, default_locale: this.defaultLocale },
      };
    }
    if (path === '/api/v2/brands') {
      const all = [this.brandJson(undefined), ...this.brands.map((b) => this.brandJson(b))]
        .map((b) => b as Record<string, unknown> & { id: number })
        .sort((a, b) => a.id - b.id);
      return this.#list(req, path, 'brands', all, (b) => b, 100);
    }
    const translations =
      /^\/api\/v2\/help_center(?:\/[a-z]{2}(?:-[a-z]{2})?)?\/articles\/(\d+)\/translations$/.exec(path);
    if (!translations) return undefined;
    const a = this.articles.get(Number(translations[1]));
    if (!a || a.archived || a.deleted) return notFound();
    const all = [
      this.translationJson(a, undefined) as Record<string, unknown> & { id: number },
      ...[...a.translations.values()]
        .filter((t) => this.locales.includes(t.locale))
        .map((t) => this.translationJson(a, t) as Record<string, unknown> & { id: number }),
    ].sort((x, y) => x.id - y.id);
    return this.#list(req, path, 'translations', all, (t) => t, 100);
  }

  #authenticate(req: RecordedRequest): 'ok' | 'anonymous' | 'refused' | 'invalid_token' {
    const bearer = bearerToken(req);
    if (bearer !== undefined && this.bearerTokens) {
      return this.bearerTokens.accepts(bearer) ? 'ok' : 'invalid_token';
    }
    if (bearer !== undefined) return bearer === this.credentials.access_token ? 'ok' : 'refused';
    const basic = basicCredentials(req);
    if (!basic) return 'anonymous';
    return basic.user === `${this.credentials.email}/token` && basic.password === this.credentials.api_token
      ? 'ok'
      : 'refused';
  }

  /** A list answered with cursor pagination (`page[size]`) or, without it, offset pagination. */
  #list<T extends { id: number }>(
    req: RecordedRequest,
    path: string,
    key: string,
    all: readonly T[],
    json: (x: T) => Record<string, unknown>,
    defaultPerPage: number,
    sortKeys: Partial<Record<'edited_at' | 'updated_at', (x: T) => number>> = {},
  ): FakeReply {
    const q = req.query;
    const sortKey = sortKeys[q.get('sort_by') as 'edited_at' | 'updated_at'];
    if (sortKey) {
      const sign = q.get('sort_order') === 'desc' ? -1 : 1;
      all = [...all].sort((a, b) => sign * (sortKey(a) - sortKey(b) || a.id - b.id));
    }
    const url = (params: Record<string, string | number>) =>
      `${this.origin}${path}.json?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`;
    const size = q.get('page[size]');
    if (size === null) {
      const perPage = Math.min(
        100,
        Math.max(1, Number(q.get('per_page') ?? defaultPerPage) || defaultPerPage),
      );
      const page = Math.max(1, Number(q.get('page') ?? 1) || 1);
      if (page > 100) return badRequest('Offset pagination is limited to the first 10,000 records.');
      const items = all.slice((page - 1) * perPage, page * perPage);
      const pageCount = Math.max(1, Math.ceil(all.length / perPage));
      return {
        status: 200,
        headers: RATE_HEADERS,
        body: {
          [key]: items.map(json),
          page,
          per_page: perPage,
          page_count: pageCount,
          count: all.length,
          next_page: page < pageCount ? url({ page: page + 1, per_page: perPage }) : null,
          previous_page: page > 1 ? url({ page: page - 1, per_page: perPage }) : null,
          sort_by: 'position',
          sort_order: 'asc',
        },
      };
    }
    const n = Number(size);
    if (!Number.isInteger(n) || n < 1 || n > 100) return badRequest('page[size] must be between 1 and 100');
    let start = 0;
    const after = q.get('page[after]');
    if (after !== null) {
      const pos = decodeCursor<{ id?: number; i?: number }>(after);
      if (sortKey && typeof pos?.i === 'number') start = pos.i;
      else if (!sortKey && typeof pos?.id === 'number') {
        const afterId = pos.id;
        start = all.findIndex((x) => x.id > afterId);
        if (start < 0) start = all.length;
      } else return badRequest('page[after] is not a valid cursor');
    }
    const items = all.slice(start, start + n);
    const hasMore = start + n < all.length;
    // A sorted list's cursor is a position (the fake's: Zendesk's is opaque).
    const afterCursor =
      items.length === 0
        ? null
        : encodeCursor(sortKey ? { i: start + items.length } : { id: items[items.length - 1]!.id });
    const beforeCursor = items.length > 0 ? encodeCursor({ id: items[0]!.id, before: true }) : null;
    return {
      status: 200,
      headers: RATE_HEADERS,
      body: {
        [key]: items.map(json),
        meta: { has_more: hasMore, after_cursor: afterCursor, before_cursor: beforeCursor },
        links: {
          next: hasMore && afterCursor ? url({ 'page[size]': n, 'page[after]': afterCursor }) : null,
          prev: start > 0 && beforeCursor ? url({ 'page[size]': n, 'page[before]': beforeCursor }) : null,
        },
      },
    };
  }

  #articleExport(req: RecordedRequest): FakeReply {
    const raw = req.query.get('start_time');
    if (raw === null || !/^\d+$/.test(raw)) {
      return error(400, 'InvalidValue', 'start_time is required and must be a Unix epoch time in seconds');
    }
    const start = Number(raw);
    const url = (t: number) =>
      `${ZENDESK_ORIGIN}/api/v2/help_center/incremental/articles.json?start_time=${t}`;
    const order = this.articlesByUpdate();
    const page: FakeArticle[] = [];
    for (
      let i = firstAfter(order, (a) => ({ t: a.updated_at, id: a.id }), { t: start, id: -1 }, true);
      i < order.length && page.length < this.articleExportPageSize;
      i++
    ) {
      const a = order[i]!;
      if (!a.archived && !a.deleted) page.push(a);
    }
    const last = page[page.length - 1];
    const endTime = last ? last.updated_at : start;
    const full = page.length >= this.articleExportPageSize;
    const nextPage = full || this.exportEnding === 'self' ? url(endTime) : null;
    return {
      status: 200,
      headers: RATE_HEADERS,
      body: {
        articles: page.map((a) => this.articleJson(a)),
        count: page.length,
        next_page: nextPage,
        end_time: endTime,
      },
    };
  }

  #ticketExport(req: RecordedRequest): FakeReply {
    const q = req.query;
    const rawStart = q.get('start_time');
    const rawCursor = q.get('cursor');
    if ((rawStart === null) === (rawCursor === null)) {
      return error(400, 'InvalidValue', 'Give either start_time or cursor');
    }
    let from: Position;
    let inclusive: boolean;
    if (rawCursor !== null) {
      const pos = decodeCursor<Position>(rawCursor);
      if (!pos || typeof pos.t !== 'number' || typeof pos.id !== 'number') {
        return error(400, 'InvalidValue', 'cursor is invalid');
      }
      from = pos;
      inclusive = false;
    } else {
      if (!/^\d+$/.test(rawStart!)) return error(400, 'InvalidValue', 'start_time is invalid');
      from = { t: Number(rawStart), id: -1 };
      inclusive = true;
    }
    const perPage = Math.min(
      1000,
      Number(q.get('per_page') ?? this.ticketExportPageSize) || this.ticketExportPageSize,
    );
    const excludeDeleted = q.get('exclude_deleted') === 'true';
    const order = this.ticketsByUpdate();
    const page: FakeTicket[] = [];
    let i = firstAfter(order, (t) => ({ t: t.updated_at, id: t.id }), from, inclusive);
    for (; i < order.length && page.length < perPage; i++) {
      const t = order[i]!;
      if (!(excludeDeleted && t.status === 'deleted')) page.push(t);
    }
    let more = false;
    for (let j = i; j < order.length && !more; j++)
      more = !(excludeDeleted && order[j]!.status === 'deleted');
    const last = page[page.length - 1];
    const after = last
      ? { t: last.updated_at, id: last.id }
      : from.id < 0
        ? { t: from.t - 1, id: Number.MAX_SAFE_INTEGER }
        : from;
    const afterCursor = encodeCursor(after);
    return {
      status: 200,
      headers: {
        ...RATE_HEADERS,
        'ratelimit-limit': '10',
        'ratelimit-remaining': '9',
        'ratelimit-reset': '60',
      },
      body: {
        after_cursor: afterCursor,
        after_url: `${ZENDESK_ORIGIN}/api/v2/incremental/tickets/cursor.json?cursor=${afterCursor}`,
        before_cursor: null,
        before_url: null,
        end_of_stream: !more,
        tickets: page.map((t) => this.ticketJson(t)),
      },
    };
  }

  #comments(req: RecordedRequest, path: string, id: number): FakeReply {
    const t = this.tickets.get(id);
    if (!t || t.status === 'deleted') return notFound();
    const all = [...t.comments].sort((a, b) => a.created_at - b.created_at || a.id - b.id);
    const reply = this.#list(req, path, 'comments', all, (c) => this.commentJson(c), 100);
    if (reply.status === 200 && req.query.get('include') === 'users') {
      const body = reply.body as { comments: Array<{ author_id: number }> };
      const ids = [...new Set(body.comments.map((c) => c.author_id))];
      (reply.body as Record<string, unknown>)['users'] = ids.map((uid) => ({
        id: uid,
        url: `${ZENDESK_ORIGIN}/api/v2/users/${uid}.json`,
        name: this.users.get(uid) ?? 'Unknown user',
        role: uid === AGENT_ID ? 'admin' : 'end-user',
      }));
    }
    return reply;
  }
}

export type FakeZendesk = FakeServer & { account: FakeZendeskAccount };

/**
 * Starts the fake. `account` holds the content (an empty one by default); `email` / `api_token` replace
 * the credentials it accepts.
 */
export async function startFakeZendesk(
  opts: { email?: string; api_token?: string; account?: FakeZendeskAccount } = {},
): Promise<FakeZendesk> {
  const account = opts.account ?? new FakeZendeskAccount();
  if (opts.email !== undefined) account.credentials.email = opts.email;
  if (opts.api_token !== undefined) account.credentials.api_token = opts.api_token;
  const server = await startFakeServer((req) => account.handle(req), {
    // Zendesk's 429 body is not reliably JSON; the contract is the status and Retry-After.
    rateLimitReply: (seconds) => ({
      status: 429,
      headers: { ...RATE_HEADERS, 'x-rate-limit-remaining': '0', 'retry-after': String(seconds) },
      body: 'Rate limit exceeded',
    }),
    unavailableReply: () => ({ status: 503, headers: { 'retry-after': '0' }, body: 'Maintenance' }),
  });
  return Object.assign(server, { account });
}

// ---------------------------------------------------------------------------------------------------
// Benchmark workspace
// ---------------------------------------------------------------------------------------------------

const WORDS = (
  'account password reset invoice refund billing plan upgrade seat license login sso domain ' +
  'email notification webhook api token export import report dashboard widget ticket macro trigger ' +
  'automation schedule holiday agent group routing priority escalation satisfaction survey language ' +
  'mobile app browser cache cookie privacy security audit integration sandbox migration'
).split(' ');

/** A few KB of Help Center HTML with the usual mix: headings, text, lists, code, a table, a note, an image. */
export function generatedArticleBody(n: number, revision: number): string {
  const w = benchText(WORDS, n, revision).words;
  const para = () => `<p>${w(26)}. ${w(20)}.</p>`;
  return [
    `<h2>About item ${n}</h2>`,
    para(),
    para(),
    `<div class="callout"><p><strong>Note:</strong> ${w(16)}.</p></div>`,
    `<h3>Steps</h3><ol><li>${w(9)}</li><li>${w(11)}<ul><li>${w(7)}</li><li>${w(6)}</li></ul></li><li>${w(10)}</li></ol>`,
    `<pre><code class="language-bash">curl https://acme.zendesk.com/api/v2/items/${n}.json \\\n  -u agent@acme.test/token:$TOKEN\necho "${w(4)}"</code></pre>`,
    para(),
    `<table><thead><tr><th>Setting</th><th>Value</th></tr></thead><tbody>${[1, 2, 3, 4]
      .map((i) => `<tr><td>${w(2)} ${i}</td><td>${w(5)}</td></tr>`)
      .join('')}</tbody></table>`,
    `<p><img src="/hc/article_attachments/${n}/screen.png" alt="Screenshot of item ${n}"></p>`,
    `<p>See <a href="/hc/en-us/articles/${Math.max(1, n - 1)}">item ${Math.max(1, n - 1)}</a> and ${w(12)}.</p>`,
    para(),
    `<p>Revision ${revision} of item ${n}.</p>`,
  ].join('\n');
}

const BENCH_CATEGORIES = 4;
const BENCH_SECTIONS_PER_CATEGORY = 3;

/** `documents` published articles across four categories of three sections each. */
export const zendeskBenchWorkspace: BenchWorkspaceFactory = {
  type: 'support_desk',
  label: 'Zendesk',
  baseUrlSetting: 'KB_SUPPORT_DESK_BASE_URL',
  async start(documents: number): Promise<BenchWorkspace> {
    const account = new FakeZendeskAccount();
    const sections: FakeSection[] = [];
    for (let c = 1; c <= BENCH_CATEGORIES; c++) {
      const category = account.addCategory(`Category ${c}`);
      for (let s = 1; s <= BENCH_SECTIONS_PER_CATEGORY; s++) {
        sections.push(account.addSection(category, `Section ${c}.${s}`));
      }
    }
    const ids: number[] = [];
    for (let n = 1; n <= documents; n++) {
      const a = account.addArticle({
        section: sections[n % sections.length]!,
        title: `Item ${n}`,
        body: (x) => generatedArticleBody(n, x.revision),
        label_names: [`label-${n % 7}`],
        user_segment_id: n % 5 === 0 ? 360_000_555_000 : null,
      });
      ids.push(a.id);
    }
    const server = await startFakeZendesk({ account });
    let round = 0;
    return {
      url: server.url,
      requests: server.requests,
      close: () => server.close(),
      source: { type: 'support_desk', subdomain: 'acme', ...ZENDESK_GOOD },
      edit(count: number): string[] {
        const picked = spreadPick(ids, count, round++);
        for (const id of picked) account.editArticle(id);
        return picked.map(String);
      },
    };
  },
};
