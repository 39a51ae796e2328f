/**
 * A fake Confluence Cloud site on loopback, speaking the vendor's protocol (vendor-apis/confluence.md):
 *
 * - `GET /wiki/rest/api/user/current` with Basic `email:api_token` (no credentials: the anonymous user);
 * - v2 under `/wiki/api/v2`: `spaces`, `spaces/{id}`, `pages`, `blogposts`, `spaces/{id}/pages|blogposts`,
 *   `pages/{id}`, `blogposts/{id}`, with the vendor's filters (`id`, `space-id`, `status` with its
 *   defaults, `title`, `sort`, `body-format`), `limit` clamped to 1..250, opaque cursors, and both a
 *   relative `_links.next` (`/wiki/api/v2/...`, relative to the site origin) and a `Link` header;
 * - errors in the v2 `errors[]` envelope; 429 with `Retry-After` and the `X-RateLimit-*` headers.
 *
 * Atlassian's API gateway (`https://api.atlassian.com/ex/confluence/{cloudId}`) runs as a second loopback
 * server over the same site ({@link FakeConfluenceSite.handleGateway}), as the vendor describes it
 * (support.atlassian.com "Scoped API Tokens in Confluence Cloud", "401 Unauthorized error when service
 * account accesses Jira or Confluence API"; developer.atlassian.com "base paths"):
 *
 * - `GET /_edge/tenant_info` on the site, without credentials, answers `{"cloudId": "..."}`;
 * - scoped API tokens and service-account tokens ({@link FakeConfluenceSite.addScopedToken}) are refused
 *   on the site with the same 401 as a wrong token (nothing in the answer says "use the gateway");
 * - the gateway serves the same API under `/ex/confluence/{cloudId}/wiki/...` to Basic
 *   `email:token` of a scoped token (a service account's e-mail is its `@serviceaccount.atlassian.com`
 *   address) and to `Bearer token` of a service-account token, checks each endpoint's scope
 *   (`read:space:confluence`, `read:page:confluence`, `read:confluence-user` for v1 `user/current`) and
 *   answers a missing one `401 {"code":401,"message":"Unauthorized; scope does not match"}`; its
 *   answers carry the site's links (a relative `_links.next` the client prefixes with the gateway path).
 *
 * What the gateway model does not know: how the real gateway answers a classic (unscoped) token (not
 * documented; here 401, which a client that tries the site first never meets), an unknown cloud id (here
 * 404), and the points-based quotas of gateway traffic (429s are injected per test as on the site).
 * Tokens never expire here; Atlassian's expire after at most a year, without refresh.
 *
 * A full page always names a next one (so a listing that ends exactly at the page size ends with an
 * empty page), as cursor APIs that do not look ahead do. Requests may carry a path prefix before `/wiki/`
 * (an operator's base-URL template such as `http://fake/{domain_name}`); the links the fake writes are
 * the vendor's, without it.
 *
 * The site ({@link FakeConfluenceSite}) holds spaces and content with statuses, version numbers, parents
 * and storage bodies; tests change it between syncs (edit, trash, archive, purge, restrict, move).
 *
 * Change notifications: Confluence Cloud lets no API-token client register a webhook (Cloud webhooks
 * belong to Connect and Forge apps; Data Center's `POST /rest/api/webhooks` with its `X-Hub-Signature`
 * is another product), so the fake answers no subscription endpoint. What it models is what a site admin
 * sets up instead: Automation rules ({@link FakeAutomationRule}) whose "Send web request" action posts the
 * body docs/sources/wiki.md gives, with the secret in a hidden header (or, for a signing relay, the
 * body's HMAC). Not modelled: which trigger fires for which change (the test says it, after the
 * change), the rule's retries and audit log, execution limits of the plan, and the exact rendering of
 * `{{now}}` (here ISO 8601 with a `+0000` offset, as Automation renders dates by default).
 * `confluenceBenchWorkspace` fills one with generated pages for the benchmark.
 */
import { createHmac } from 'node:crypto';
import {
  basicCredentials,
  bearerToken,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  startFakeServer,
} from './fake-server.ts';
import { type BenchWorkspace, type BenchWorkspaceFactory, benchText, spreadPick } from './workspace.ts';

export const CONFLUENCE_GOOD = { email: 'writer@acme.test', api_token: 'ATATT_fake_good_token_0123456789' };
/** A scoped API token of the same account, with the scopes a read-only sync needs. */
export const CONFLUENCE_SCOPED = {
  email: 'writer@acme.test',
  api_token: 'ATATT_fake_scoped_token_0123456789',
};
/** A service account's token (service accounts only have scoped tokens). */
export const CONFLUENCE_SERVICE_ACCOUNT = {
  email: 'kb-sync-a1b2c3@serviceaccount.atlassian.com',
  api_token: 'ATSTT_fake_service_account_token_0123456789',
};
/** The scopes a read-only sync of pages and blog posts needs from a scoped token. */
export const CONFLUENCE_READ_SCOPES = ['read:space:confluence', 'read:page:confluence'];
/** The site's cloud id, as `/_edge/tenant_info` answers it. */
export const CONFLUENCE_CLOUD_ID = 'c57406ca-3f0b-4a41-9e43-6e5d1c0b7a21';
/** The site the fake says it is (`_links.base`, web UI links). */
export const CONFLUENCE_SITE = 'https://acme.atlassian.net';
export const CONFLUENCE_WIKI_BASE = `${CONFLUENCE_SITE}/wiki`;

const ACCOUNT_ID = '5b10ac8d82e05b22cc7d4ef5';
const MAX_LIMIT = 250;

export type FakeContentStatus = 'current' | 'archived' | 'trashed' | 'deleted' | 'draft' | 'historical';
const PAGE_STATUSES = ['current', 'archived', 'deleted', 'trashed'];
const BLOGPOST_STATUSES = ['current', 'deleted', 'trashed'];
const SINGLE_STATUSES = ['current', 'archived', 'trashed', 'deleted', 'historical', 'draft'];
const BODY_FORMATS = [
  'storage',
  'atlas_doc_format',
  'view',
  'export_view',
  'anonymous_export_view',
  'styled_view',
  'editor',
];

export interface FakeSpace {
  id: string;
  key: string;
  name: string;
  type: 'global' | 'personal' | 'collaboration' | 'knowledge_base';
  status: 'current' | 'archived';
  createdAt: string;
  homepageId: string | null;
}

export type FakeContentKind = 'page' | 'blogpost';

export interface FakeContent {
  id: string;
  kind: FakeContentKind;
  spaceId: string;
  /** Pages only. */
  parentId: string | null;
  title: string;
  status: FakeContentStatus;
  /** `version.number`: every edit adds one. */
  version: number;
  /** `version.createdAt`. */
  modifiedAt: string;
  createdAt: string;
  /** The storage body, or a generator called on each request (large workspaces stay small in memory). */
  storage: string | ((c: FakeContent) => string);
  /** Hidden from the account by page restrictions: left out of listings, 404 when asked for. */
  restricted: boolean;
  /** Fields that replace the vendor's in every answer about this content (a malformed record). */
  override?: Record<string, unknown>;
}

function errorsBody(status: number, code: string, title: string, detail: string | null = null) {
  return { errors: [{ status, code, title, detail }] };
}

/** A scoped API token (a user's, or a service account's), and the scopes it was created with. */
export interface FakeScopedToken {
  email: string;
  api_token: string;
  scopes: string[];
  /** Service-account tokens are also taken as `Bearer <token>` without the e-mail. */
  serviceAccount: boolean;
}

/** The gateway's own error envelope (not the v2 `errors[]` one). */
const gatewayError = (status: number, message: string): FakeReply => ({
  status,
  body: { code: status, message },
});

/** The scope the gateway wants for a path under `/wiki` (v2 per the OpenAPI `security`, v1 classic). */
function scopeFor(path: string): string | undefined {
  if (path === '/wiki/rest/api/user/current') return 'read:confluence-user';
  if (/^\/wiki\/api\/v2\/spaces\/[^/]+\/(pages|blogposts)\/?$/.test(path)) return 'read:page:confluence';
  if (path.startsWith('/wiki/api/v2/spaces')) return 'read:space:confluence';
  if (path.startsWith('/wiki/api/v2/pages') || path.startsWith('/wiki/api/v2/blogposts'))
    return 'read:page:confluence';
  return undefined;
}

const notFound = (): FakeReply => ({ status: 404, body: errorsBody(404, 'NOT_FOUND', 'Not Found') });
const badRequest = (detail: string): FakeReply => ({
  status: 400,
  body: errorsBody(400, 'INVALID_REQUEST_PARAMETER', 'Bad Request', detail),
});

/** Numeric ids in number order. */
function compareIds(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/** First index in sorted `ids` whose id is greater than `after`. */
function indexAfter(ids: readonly string[], after: string): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareIds(ids[mid]!, after) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Repeated and comma-separated values of a query parameter (the spec allows both). */
function multi(q: URLSearchParams, name: string): string[] {
  return q
    .getAll(name)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

interface CursorState {
  /** The sort the cursor was made for. */
  s: string;
  /** Keyset position (id order): the last id answered. */
  a?: string;
  /** Offset position (other orders). */
  o?: number;
}

function encodeCursor(c: CursorState): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(raw: string): CursorState | undefined {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as CursorState;
    return typeof c.s === 'string' ? c : undefined;
  } catch {
    return undefined;
  }
}

function slug(title: string): string {
  return title
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => encodeURIComponent(w))
    .join('+');
}

/** The content of one Confluence Cloud site, and the v2 API over it. */
/**
 * An Automation rule of the site (Confluence Premium and Enterprise: support.atlassian.com "Triggers in
 * Confluence automation", "Actions in Confluence automation" and "Smart values in Confluence automation"):
 * page and blog post triggers whose "Send web request" action POSTs the custom data docs/sources/wiki.md
 * gives, with `{{content.type}}`, `{{content.id}}` and `{{now}}` filled in, and the hidden header holding
 * the connection's webhook secret.
 */
export interface FakeAutomationRule {
  url: string;
  /** The value of the rule's `X-KB-Webhook-Secret` header. */
  secret: string;
  /** What the admin typed as the body's `site`. */
  site: string;
  /**
   * Sign the body (`X-Hub-Signature: sha256=<hex HMAC>`, Data Center's scheme) instead of sending the secret:
   * what a relay in front of the service would do; Automation itself cannot.
   */
  sign?: boolean;
}

export interface FakeAutomationDelivery {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Posts what a rule sends; 0 when the endpoint could not be reached (Automation logs the failure). */
async function postAutomationRequest(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<number> {
  try {
    const res = await fetch(url, { method: 'POST', headers, body });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** `{{now}}` as Automation renders a date by default: `2026-11-28T08:00:00.123+0000`. */
function automationNow(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '+0000');
}

export class FakeConfluenceSite {
  readonly spaces = new Map<string, FakeSpace>();
  readonly contents = new Map<string, FakeContent>();
  /** The largest page any listing answers, whatever `limit` asks (the vendor's 250); tests lower it. */
  maxPageSize = MAX_LIMIT;
  /** Called with each API request before it is answered (a test cancels a sync from here). */
  onRequest: ((req: RecordedRequest) => void) | undefined;
  /** The classic (unscoped) token the site accepts; a test revokes it by changing these. */
  credentials = { ...CONFLUENCE_GOOD };
  /** Scoped and service-account tokens: only the gateway takes them; a test revokes one by removing it. */
  readonly scopedTokens: FakeScopedToken[] = [];
  /** `cloudId` of `/_edge/tenant_info`, and the one gateway paths must name. */
  cloudId = CONFLUENCE_CLOUD_ID;
  /** False: `/_edge/tenant_info` answers 404 (a host that is not an Atlassian site's front door). */
  tenantInfo = true;
  /** The site's Automation rules that send change notifications ({@link runAutomation}). */
  readonly automationRules: FakeAutomationRule[] = [];
  readonly automationDeliveries: FakeAutomationDelivery[] = [];
  /** How a rule's request travels (a test routes it into the app under test). */
  automationTransport: (url: string, headers: Record<string, string>, body: string) => Promise<number> =
    postAutomationRequest;
  #lastAutomationAt = 0;

  #nextSpaceId = 98_306;
  #nextContentId = 491_520;
  #clock = Date.parse('2024-05-01T08:00:00.000Z');
  /** Content ids of each kind in id order (new ids are always larger: appended). */
  readonly #ids: Record<FakeContentKind, string[]> = { page: [], blogpost: [] };

  #tick(): string {
    this.#clock += 60_000;
    return new Date(this.#clock).toISOString();
  }

  addSpace(key: string, name: string, opts: { type?: FakeSpace['type'] } = {}): FakeSpace {
    const space: FakeSpace = {
      id: String(this.#nextSpaceId++),
      key,
      name,
      type: opts.type ?? 'global',
      status: 'current',
      createdAt: this.#tick(),
      homepageId: null,
    };
    this.spaces.set(space.id, space);
    return space;
  }

  spaceByKey(key: string): FakeSpace {
    for (const s of this.spaces.values()) if (s.key === key) return s;
    throw new Error(`no space ${key}`);
  }

  addPage(opts: {
    space: string;
    title: string;
    storage?: FakeContent['storage'];
    parent?: string | null;
    status?: FakeContentStatus;
  }): FakeContent {
    const space = this.spaceByKey(opts.space);
    const page = this.#add('page', space, opts.title, opts.storage, opts.status);
    // Pages without a parent go under the space's home page, as the editor puts them; the first page is it.
    page.parentId = opts.parent === undefined ? space.homepageId : opts.parent;
    if (space.homepageId === null && opts.parent === undefined) space.homepageId = page.id;
    return page;
  }

  addBlogPost(opts: {
    space: string;
    title: string;
    storage?: FakeContent['storage'];
    status?: FakeContentStatus;
  }): FakeContent {
    return this.#add('blogpost', this.spaceByKey(opts.space), opts.title, opts.storage, opts.status);
  }

  #add(
    kind: FakeContentKind,
    space: FakeSpace,
    title: string,
    storage: FakeContent['storage'] | undefined,
    status: FakeContentStatus | undefined,
  ): FakeContent {
    const at = this.#tick();
    const content: FakeContent = {
      id: String(this.#nextContentId++),
      kind,
      spaceId: space.id,
      parentId: null,
      title,
      status: status ?? 'current',
      version: 1,
      modifiedAt: at,
      createdAt: at,
      storage: storage ?? `<p>${title}</p>`,
      restricted: false,
    };
    this.contents.set(content.id, content);
    this.#ids[kind].push(content.id);
    return content;
  }

  get(id: string): FakeContent {
    const c = this.contents.get(id);
    if (!c) throw new Error(`no content ${id}`);
    return c;
  }

  /** An edit: new body and/or title, and a new version. */
  edit(id: string, change: { storage?: string; title?: string } = {}): FakeContent {
    const c = this.get(id);
    if (change.title !== undefined) c.title = change.title;
    if (change.storage !== undefined) c.storage = change.storage;
    c.version += 1;
    c.modifiedAt = this.#tick();
    return c;
  }

  setStatus(id: string, status: FakeContentStatus): void {
    this.get(id).status = status;
  }

  /** Removed from the trash: gone for good (404). */
  purge(id: string): void {
    const c = this.get(id);
    this.contents.delete(id);
    const ids = this.#ids[c.kind];
    ids.splice(ids.indexOf(id), 1);
  }

  /** Page restrictions that leave the account out (or lift them). */
  restrict(id: string, restricted = true): void {
    this.get(id).restricted = restricted;
  }

  /**
   * Moves a page under another parent and/or into another space (under its home page unless a parent is
   * given), its descendants with it. As in Confluence, a move makes no new version.
   */
  move(id: string, to: { parent?: string | null; space?: string }): void {
    const page = this.get(id);
    if (to.parent !== undefined) page.parentId = to.parent;
    if (to.space !== undefined) {
      const target = this.spaceByKey(to.space);
      const spaceId = target.id;
      if (to.parent === undefined) page.parentId = target.homepageId;
      const moveTree = (c: FakeContent) => {
        c.spaceId = spaceId;
        for (const other of this.contents.values())
          if (other.parentId === c.id && other.kind === 'page') moveTree(other);
      };
      moveTree(page);
    }
  }

  archiveSpace(key: string): void {
    this.spaceByKey(key).status = 'archived';
  }

  storageOf(c: FakeContent): string {
    return typeof c.storage === 'function' ? c.storage(c) : c.storage;
  }

  webui(c: FakeContent): string {
    const key = this.spaces.get(c.spaceId)?.key ?? 'UNKNOWN';
    if (c.kind === 'page') return `/spaces/${key}/pages/${c.id}/${slug(c.title)}`;
    const day = c.createdAt.slice(0, 10).replace(/-/g, '/');
    return `/spaces/${key}/blog/${day}/${c.id}/${slug(c.title)}`;
  }

  /** The web URL a connector should store for `c`. */
  url(c: FakeContent): string {
    return `${CONFLUENCE_WIKI_BASE}${this.webui(c)}`;
  }

  /**
   * What every Automation rule sends when one of its triggers fires for `content` (`event`: the literal
   * the admin typed for that rule, e.g. `page_updated`, `page_trashed`). The test calls it after changing
   * the site, as Automation runs after the change. `at` replaces the rule's `{{now}}`.
   */
  async runAutomation(
    event: string,
    content: FakeContent,
    opts: { at?: string } = {},
  ): Promise<FakeAutomationDelivery[]> {
    // Each run renders its own `{{now}}`; two runs never share one here.
    this.#lastAutomationAt = Math.max(Date.now(), this.#lastAutomationAt + 1);
    const at = opts.at ?? automationNow(this.#lastAutomationAt);
    const out: FakeAutomationDelivery[] = [];
    for (const rule of this.automationRules) {
      const body = JSON.stringify({
        site: rule.site,
        contentType: content.kind,
        contentId: content.id,
        event,
        at,
      });
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (rule.sign) {
        headers['x-hub-signature'] = `sha256=${createHmac('sha256', rule.secret).update(body).digest('hex')}`;
      } else headers['x-kb-webhook-secret'] = rule.secret;
      const status = await this.automationTransport(rule.url, headers, body);
      const delivery = { status, headers, body };
      this.automationDeliveries.push(delivery);
      out.push(delivery);
    }
    return out;
  }

  /** A scoped token (a service account's when `serviceAccount`), with {@link CONFLUENCE_READ_SCOPES} by default. */
  addScopedToken(
    token: { email: string; api_token: string },
    opts: { scopes?: string[]; serviceAccount?: boolean } = {},
  ): FakeScopedToken {
    const scoped: FakeScopedToken = {
      ...token,
      scopes: opts.scopes ?? [...CONFLUENCE_READ_SCOPES],
      serviceAccount: opts.serviceAccount ?? false,
    };
    this.scopedTokens.push(scoped);
    return scoped;
  }

  // -------------------------------------------------------------------------------------------------
  // HTTP
  // -------------------------------------------------------------------------------------------------

  /** The site (`https://{site}.atlassian.net`): classic tokens only. */
  handle(req: RecordedRequest): FakeReply {
    this.onRequest?.(req);
    if (req.path.endsWith('/_edge/tenant_info')) {
      return this.tenantInfo ? { status: 200, body: { cloudId: this.cloudId } } : notFound();
    }
    const at = req.path.indexOf('/wiki/');
    const path = at >= 0 ? req.path.slice(at) : req.path;
    const isCurrentUser = path === '/wiki/rest/api/user/current';
    const creds = basicCredentials(req);
    if (!creds && isCurrentUser) {
      return {
        status: 200,
        body: { type: 'anonymous', displayName: 'Anonymous', _links: { base: CONFLUENCE_WIKI_BASE } },
      };
    }
    // A scoped token gets the same 401 as a wrong one here.
    if (!creds || creds.user !== this.credentials.email || creds.password !== this.credentials.api_token) {
      return { status: 401, body: errorsBody(401, 'UNAUTHORIZED', 'Unauthorized') };
    }
    return this.#answer(req, path);
  }

  /** The gateway (`https://api.atlassian.com/ex/confluence/{cloudId}`): scoped tokens, scope by scope. */
  handleGateway(req: RecordedRequest): FakeReply {
    this.onRequest?.(req);
    const m = /^\/ex\/confluence\/([^/]+)(\/wiki\/.*)$/.exec(req.path);
    if (!m) return gatewayError(404, 'Not Found');
    const [, cloudId, path] = m;
    const token = this.#gatewayToken(req);
    if (!token) return gatewayError(401, 'Unauthorized');
    if (cloudId !== this.cloudId) return gatewayError(404, 'Not Found');
    const scope = scopeFor(path!);
    if (scope === undefined) return notFound();
    if (!token.scopes.includes(scope)) return gatewayError(401, 'Unauthorized; scope does not match');
    return this.#answer(req, path!);
  }

  #gatewayToken(req: RecordedRequest): FakeScopedToken | undefined {
    const bearer = bearerToken(req);
    if (bearer !== undefined) {
      return this.scopedTokens.find((t) => t.serviceAccount && t.api_token === bearer);
    }
    const creds = basicCredentials(req);
    if (!creds) return undefined;
    return this.scopedTokens.find((t) => t.email === creds.user && t.api_token === creds.password);
  }

  /** The API's answer to an authenticated request for `path` (from `/wiki/` on). */
  #answer(req: RecordedRequest, path: string): FakeReply {
    if (req.method !== 'GET') {
      return { status: 405, body: errorsBody(405, 'METHOD_NOT_ALLOWED', 'Method Not Allowed') };
    }
    if (path === '/wiki/rest/api/user/current') return { status: 200, body: this.#currentUser() };

    const m = /^\/wiki\/api\/v2\/(spaces|pages|blogposts)(?:\/([^/]+))?(?:\/(pages|blogposts))?\/?$/.exec(
      path,
    );
    if (!m) return notFound();
    const [, collection, id, sub] = m;
    if (collection === 'spaces') {
      if (!id) return this.#listSpaces(req);
      const space = this.spaces.get(id);
      if (!space) return notFound();
      if (!sub) return { status: 200, body: this.#spaceJson(space) };
      return this.#listContent(req, sub === 'pages' ? 'page' : 'blogpost', path, space.id);
    }
    if (sub) return notFound();
    const kind: FakeContentKind = collection === 'pages' ? 'page' : 'blogpost';
    return id ? this.#single(req, kind, id) : this.#listContent(req, kind, path);
  }

  #currentUser() {
    return {
      type: 'known',
      accountId: ACCOUNT_ID,
      accountType: 'atlassian',
      email: this.credentials.email,
      publicName: 'Writer',
      displayName: 'Writer',
      _links: {
        base: CONFLUENCE_WIKI_BASE,
        self: `${CONFLUENCE_WIKI_BASE}/rest/api/user?accountId=${ACCOUNT_ID}`,
      },
    };
  }

  #limit(q: URLSearchParams): number | FakeReply {
    const raw = q.get('limit');
    const asked = raw === null ? 25 : Number(raw);
    if (!Number.isInteger(asked)) return badRequest(`limit must be an integer, was ${raw}`);
    return Math.min(Math.max(asked, 1), MAX_LIMIT, this.maxPageSize);
  }

  /** One page of `sorted` after the cursor, with `_links.next` and the `Link` header when it is full. */
  #page<T>(
    req: RecordedRequest,
    path: string,
    sort: string,
    keyset: { ids: readonly string[]; get: (id: string) => T | undefined } | { all: readonly T[] },
    matches: (item: T) => boolean,
    idOf: (item: T) => string,
    toJson: (item: T) => unknown,
  ): FakeReply {
    const limit = this.#limit(req.query);
    if (typeof limit !== 'number') return limit;
    const rawCursor = req.query.get('cursor');
    const cursor = rawCursor === null ? undefined : decodeCursor(rawCursor);
    if (rawCursor !== null && (!cursor || cursor.s !== sort)) return badRequest('Invalid cursor');
    const out: T[] = [];
    let nextCursor: CursorState | undefined;
    if ('ids' in keyset) {
      const start = cursor?.a === undefined ? 0 : indexAfter(keyset.ids, cursor.a);
      for (let i = start; i < keyset.ids.length && out.length < limit; i++) {
        const item = keyset.get(keyset.ids[i]!);
        if (item !== undefined && matches(item)) out.push(item);
      }
      if (out.length === limit) nextCursor = { s: sort, a: idOf(out[out.length - 1]!) };
    } else {
      const all = keyset.all.filter(matches);
      const offset = cursor?.o ?? 0;
      out.push(...all.slice(offset, offset + limit));
      if (out.length === limit) nextCursor = { s: sort, o: offset + limit };
    }
    const headers: Record<string, string> = {};
    const links: Record<string, string> = { base: CONFLUENCE_WIKI_BASE };
    if (nextCursor) {
      const params = new URLSearchParams();
      for (const [k, v] of req.query) if (k !== 'cursor') params.append(k, v);
      params.append('cursor', encodeCursor(nextCursor));
      links['next'] = `${path}?${params.toString()}`;
      headers['link'] = `<${links['next']}>; rel="next", <${CONFLUENCE_WIKI_BASE}>; rel="base"`;
    }
    return { status: 200, headers, body: { results: out.map(toJson), _links: links } };
  }

  #listSpaces(req: RecordedRequest): FakeReply {
    const q = req.query;
    const statuses = multi(q, 'status');
    if (statuses.some((s) => s !== 'current' && s !== 'archived')) return badRequest('Invalid status');
    const ids = multi(q, 'ids');
    const keys = multi(q, 'keys');
    const types = multi(q, 'type');
    const sort = q.get('sort') ?? 'id';
    const sorters: Record<string, (a: FakeSpace, b: FakeSpace) => number> = {
      id: (a, b) => compareIds(a.id, b.id),
      key: (a, b) => a.key.localeCompare(b.key),
      name: (a, b) => a.name.localeCompare(b.name),
    };
    const sorter = sorters[sort.replace(/^-/, '')];
    if (!sorter) return badRequest(`Invalid sort ${sort}`);
    const all = [...this.spaces.values()].sort(sort.startsWith('-') ? (a, b) => sorter(b, a) : sorter);
    return this.#page(
      req,
      '/wiki/api/v2/spaces',
      sort,
      { all },
      (s) =>
        (statuses.length === 0 || statuses.includes(s.status)) &&
        (ids.length === 0 || ids.includes(s.id)) &&
        (keys.length === 0 || keys.includes(s.key)) &&
        (types.length === 0 || types.includes(s.type)),
      (s) => s.id,
      (s) => this.#spaceJson(s),
    );
  }

  #spaceJson(s: FakeSpace) {
    return {
      id: s.id,
      key: s.key,
      name: s.name,
      type: s.type,
      status: s.status,
      authorId: ACCOUNT_ID,
      createdAt: s.createdAt,
      homepageId: s.homepageId,
      currentActiveAlias: s.key,
      icon: null,
      _links: { webui: `/spaces/${s.key}` },
    };
  }

  #listContent(req: RecordedRequest, kind: FakeContentKind, path: string, inSpace?: string): FakeReply {
    const q = req.query;
    const allowed = kind === 'page' ? PAGE_STATUSES : BLOGPOST_STATUSES;
    const statuses = multi(q, 'status');
    if (statuses.some((s) => !allowed.includes(s))) return badRequest('Invalid status');
    // The vendor's defaults: current and archived pages; current blog posts.
    const wanted = statuses.length > 0 ? statuses : kind === 'page' ? ['current', 'archived'] : ['current'];
    const ids = multi(q, 'id');
    if (ids.length > MAX_LIMIT) return badRequest('Too many ids');
    const spaceIds = inSpace ? [inSpace] : multi(q, 'space-id');
    const title = q.get('title');
    const rootsOnly = inSpace !== undefined && q.get('depth') === 'root';
    const bodyFormat = q.get('body-format');
    if (bodyFormat !== null && bodyFormat !== 'storage' && bodyFormat !== 'atlas_doc_format') {
      return badRequest('Invalid body-format');
    }
    const sort = q.get('sort') ?? 'id';
    const matches = (c: FakeContent) =>
      c.kind === kind &&
      !c.restricted &&
      wanted.includes(c.status) &&
      (spaceIds.length === 0 || spaceIds.includes(c.spaceId)) &&
      (ids.length === 0 || ids.includes(c.id)) &&
      (title === null || c.title === title) &&
      (!rootsOnly || c.parentId === null);
    const toJson = (c: FakeContent) => this.#contentJson(c, bodyFormat, false);
    if (sort === 'id') {
      const keyset = ids.length > 0 ? [...new Set(ids)].sort(compareIds) : this.#ids[kind];
      return this.#page(
        req,
        path,
        sort,
        { ids: keyset, get: (id) => this.contents.get(id) },
        matches,
        (c) => c.id,
        toJson,
      );
    }
    const sorters: Record<string, (a: FakeContent, b: FakeContent) => number> = {
      id: (a, b) => compareIds(a.id, b.id),
      'created-date': (a, b) => a.createdAt.localeCompare(b.createdAt) || compareIds(a.id, b.id),
      'modified-date': (a, b) => a.modifiedAt.localeCompare(b.modifiedAt) || compareIds(a.id, b.id),
      title: (a, b) => a.title.localeCompare(b.title) || compareIds(a.id, b.id),
    };
    const sorter = sorters[sort.replace(/^-/, '')];
    if (!sorter || (kind === 'blogpost' && sort.includes('title'))) return badRequest(`Invalid sort ${sort}`);
    const all = this.#ids[kind]
      .map((id) => this.contents.get(id)!)
      .sort(sort.startsWith('-') ? (a, b) => sorter(b, a) : sorter);
    return this.#page(req, path, sort, { all }, matches, (c) => c.id, toJson);
  }

  #single(req: RecordedRequest, kind: FakeContentKind, id: string): FakeReply {
    const c = this.contents.get(id);
    if (!c || c.kind !== kind || c.restricted) return notFound();
    const statuses = multi(req.query, 'status');
    if (statuses.some((s) => !SINGLE_STATUSES.includes(s))) return badRequest('Invalid status');
    const wanted = statuses.length > 0 ? statuses : ['current', 'archived'];
    if (!wanted.includes(c.status)) return notFound();
    const bodyFormat = req.query.get('body-format');
    if (bodyFormat !== null && !BODY_FORMATS.includes(bodyFormat)) return badRequest('Invalid body-format');
    return { status: 200, body: this.#contentJson(c, bodyFormat, true) };
  }

  #contentJson(c: FakeContent, bodyFormat: string | null, single: boolean): Record<string, unknown> {
    const version = {
      createdAt: c.modifiedAt,
      message: '',
      number: c.version,
      minorEdit: false,
      authorId: ACCOUNT_ID,
    };
    const body: Record<string, unknown> = {};
    if (bodyFormat === 'atlas_doc_format') {
      const text = this.storageOf(c)
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim();
      const adf = {
        type: 'doc',
        version: 1,
        content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
      };
      body[bodyFormat] = { representation: bodyFormat, value: JSON.stringify(adf) };
    } else if (bodyFormat !== null) {
      body[bodyFormat] = { representation: bodyFormat, value: this.storageOf(c) };
    }
    const links: Record<string, string> = {
      webui: this.webui(c),
      editui: `/pages/resumedraft.action?draftId=${c.id}`,
      tinyui: `/x/${Buffer.from(c.id).toString('base64url').slice(0, 6)}`,
    };
    if (single) links['base'] = CONFLUENCE_WIKI_BASE;
    const common = {
      id: c.id,
      status: c.status,
      title: c.title,
      spaceId: c.spaceId,
    };
    const json: Record<string, unknown> =
      c.kind === 'page'
        ? {
            ...common,
            parentId: c.parentId,
            parentType: c.parentId ? 'page' : null,
            position: 0,
            authorId: ACCOUNT_ID,
            ownerId: ACCOUNT_ID,
            lastOwnerId: null,
            subtype: null,
            createdAt: c.createdAt,
            version,
            body,
            _links: links,
          }
        : { ...common, authorId: ACCOUNT_ID, createdAt: c.createdAt, version, body, _links: links };
    return { ...json, ...c.override };
  }
}

/** The site's server, with the gateway's beside it (`gateway.url` is what KB_ATLASSIAN_API_BASE_URL names). */
export type FakeConfluence = FakeServer & { site: FakeConfluenceSite; gateway: FakeServer };

/** Starts a fake site (an empty one unless `site` is given); `email` / `api_token` set what it accepts. */
export async function startFakeConfluence(
  opts: { email?: string; api_token?: string; site?: FakeConfluenceSite } = {},
): Promise<FakeConfluence> {
  const site = opts.site ?? new FakeConfluenceSite();
  if (opts.email !== undefined) site.credentials.email = opts.email;
  if (opts.api_token !== undefined) site.credentials.api_token = opts.api_token;
  const server = await startFakeServer((req) => site.handle(req), serverOptions());
  const gateway = await startFakeServer((req) => site.handleGateway(req), serverOptions());
  const closeSite = server.close;
  return Object.assign(server, {
    site,
    gateway,
    close: async () => {
      await Promise.all([closeSite(), gateway.close()]);
    },
  });
}

function serverOptions() {
  return {
    rateLimitReply: (seconds: number): FakeReply => ({
      status: 429,
      headers: {
        'retry-after': String(seconds),
        'x-ratelimit-limit': '100',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': `${new Date(Date.now() + seconds * 1000).toISOString().slice(0, 16)}Z`,
        'x-ratelimit-nearlimit': 'true',
        'ratelimit-reason': 'confluence-burst-based',
      },
      body: errorsBody(429, 'TOO_MANY_REQUESTS', 'Too Many Requests'),
    }),
    unavailableReply: (): FakeReply => ({
      status: 503,
      body: errorsBody(503, 'SERVICE_UNAVAILABLE', 'Service Unavailable'),
    }),
  };
}

// ---------------------------------------------------------------------------------------------------
// Benchmark workspace
// ---------------------------------------------------------------------------------------------------

const WORDS = (
  'deploy service cluster latency budget incident runbook owner review schema migration backup ' +
  'restore quota token gateway cache index search ranking replica shard failover alert dashboard ' +
  'metric trace rollout canary feature flag release branch merge pipeline artifact container image ' +
  'network policy secret rotation audit compliance onboarding checklist customer invoice refund'
).split(' ');

/** A few KB of storage format with the usual mix: headings, text, lists, a code macro, a table, a panel. */
export function generatedStorage(n: number, version: number, spaceKey: string): string {
  const w = benchText(WORDS, n, version).words;
  const para = () => `<p>${w(28)}. ${w(22)}.</p>`;
  return [
    `<h2>Overview of item ${n}</h2>`,
    para(),
    para(),
    `<ac:structured-macro ac:name="info" ac:schema-version="1"><ac:rich-text-body><p>${w(18)}.</p></ac:rich-text-body></ac:structured-macro>`,
    `<h3>Steps</h3><ol><li>${w(9)}</li><li>${w(11)}<ul><li>${w(7)}</li><li>${w(6)}</li></ul></li><li>${w(10)}</li></ol>`,
    `<ac:structured-macro ac:name="code" ac:schema-version="1"><ac:parameter ac:name="language">bash</ac:parameter><ac:plain-text-body><![CDATA[kubectl rollout status deploy/item-${n} --timeout=${60 + (n % 120)}s\necho "${w(4)}"]]></ac:plain-text-body></ac:structured-macro>`,
    para(),
    `<table><tbody><tr><th><p>Field</p></th><th><p>Value</p></th></tr>${[1, 2, 3, 4]
      .map((i) => `<tr><td><p>${w(2)} ${i}</p></td><td><p>${w(5)}</p></td></tr>`)
      .join('')}</tbody></table>`,
    `<p>See <ac:link><ri:page ri:content-title="Item ${Math.max(1, n - 1)}" ri:space-key="${spaceKey}"/></ac:link> and ${w(12)}.</p>`,
    `<ac:task-list><ac:task><ac:task-id>1</ac:task-id><ac:task-status>complete</ac:task-status><ac:task-body>${w(6)}</ac:task-body></ac:task><ac:task><ac:task-id>2</ac:task-id><ac:task-status>incomplete</ac:task-status><ac:task-body>${w(5)}</ac:task-body></ac:task></ac:task-list>`,
    para(),
    `<p>Revision ${version} of item ${n}.</p>`,
  ].join('');
}

const BENCH_SPACES = 5;

/** `documents` pages and blog posts (one in ten) across five spaces, each page under an earlier one. */
export const confluenceBenchWorkspace: BenchWorkspaceFactory = {
  type: 'wiki',
  label: 'Confluence',
  baseUrlSetting: 'KB_WIKI_BASE_URL',
  async start(documents: number): Promise<BenchWorkspace> {
    const site = new FakeConfluenceSite();
    const spaces = Array.from({ length: BENCH_SPACES }, (_, i) =>
      site.addSpace(`SP${i + 1}`, `Space ${i + 1}`),
    );
    const ids: string[] = [];
    const pagesBySpace = spaces.map(() => [] as string[]);
    for (let n = 1; n <= documents; n++) {
      const s = n % BENCH_SPACES;
      const space = spaces[s]!;
      const storage = (c: FakeContent) => generatedStorage(n, c.version, space.key);
      let c: FakeContent;
      if (n % 10 === 0) {
        c = site.addBlogPost({ space: space.key, title: `Item ${n}`, storage });
      } else {
        const siblings = pagesBySpace[s]!;
        const parent = siblings.length > 0 ? siblings[Math.floor(siblings.length / 3)]! : null;
        c = site.addPage({ space: space.key, title: `Item ${n}`, storage, parent });
        siblings.push(c.id);
      }
      ids.push(c.id);
    }
    const server = await startFakeConfluence({ site });
    let round = 0;
    return {
      url: server.url,
      requests: server.requests,
      close: () => server.close(),
      source: { type: 'wiki', domain_name: 'acme', ...CONFLUENCE_GOOD },
      edit(count: number): string[] {
        const picked = spreadPick(ids, count, round++);
        for (const id of picked) site.edit(id);
        return picked;
      },
    };
  },
};
