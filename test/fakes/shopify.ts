/**
 * A fake Shopify store behind `POST /admin/api/{version}/graphql.json` with `X-Shopify-Access-Token` (as
 * Shopify's Admin GraphQL reference documents them): products with options and variants, online-store pages,
 * blogs and articles, shop policies and product deletion events, answered through a small GraphQL reader.
 *
 * The reader parses the selection set (fields, aliases, arguments, inline fragments, variables) but no
 * schema: each root field (`shop`, `products`, `productsCount`, `product`, `nodes`, `pages`,
 * `articles`, `deletionEvents`) resolves to plain objects, and the answer holds exactly the fields asked,
 * so a query asking for a field the fake does not model gets Shopify's `undefinedField` error. Connections take
 * `first` (at most 250), `after` (opaque base64 cursors holding the last id and sort value, as
 * Shopify's), `query` (search syntax: `status:`, `updated_at:`, `published_status:`, `occurred_at:` with
 * `>=`, `>`, `<=`, `<`) and `sortKey` (`ID`, `UPDATED_AT`).
 *
 * Cost (§7): every answer carries `extensions.cost`. The requested cost follows Shopify's rule (object 1,
 * connection 2 + first × node, scalars 0); the actual cost counts the objects answered. The bucket leaks
 * back at `restoreRate` per second of real time; a query asking more than the bucket holds is answered
 * THROTTLED (HTTP 200). A wrong token gets 401 with `errors` as a string; a token without access, or a
 * field whose scope is withheld ({@link FakeShopifyStore.deny}), gets ACCESS_DENIED: a root field answers
 * null beside the others, a nested one nulls the whole `data` (its non-null parents), as Shopify's captured
 * answer for `shop { shopPolicies }` without `read_legal_policies` does, with the field's `path`.
 *
 * Tokens (the app, {@link FakeShopifyApp}): `POST /admin/oauth/access_token` answers the client
 * credentials grant (form-encoded or JSON: `grant_type=client_credentials`, the app's id and secret) with
 * a token valid `clientCredentialsLifetimeSeconds` (86,399 as Shopify's, a test sets 2) and no refresh
 * token, refused with Shopify's `app_not_installed` / `shop_not_permitted` / `invalid_client`; the
 * authorization code grant (`GET /admin/oauth/authorize` redirects at once with `code`, `shop`, `state`,
 * `timestamp` and `hmac`; the exchange with `expiring: "1"` gives an expiring offline token with a
 * rotating refresh token, without it a token that never expires); and `grant_type=refresh_token`. An
 * expired or unknown token gets the 401 above. Expiry is read from {@link FakeShopifyStore.now}, a clock
 * the test moves. Not modelled: the `hmac` is not a real HMAC of the query, scopes granted are not
 * checked against scopes asked (denial is {@link FakeShopifyStore.deny}'s), a new client credentials
 * token does not revoke earlier ones (Shopify does not document either way), and a refresh token is
 * spent at once (the 2026-08 grace period, in which the old one works until the new pair is used, is not
 * modelled).
 *
 * Publications: a product is on the Online Store (`published`) and/or a headless storefront
 * (`headless`); `resourcePublicationsCount(onlyPublished: true)` counts them (it needs
 * `read_publications`, which `deny` can withhold); `onlineStoreUrl` is null off the Online Store.
 *
 * Webhooks (shopify.dev "Verify webhook deliveries"; GraphQL Admin `webhookSubscriptionCreate`,
 * `webhookSubscriptionDelete`, `WebhookSubscriptionInput.uri`, which replaced `callbackUrl` in 2025-10):
 * the mutations keep subscriptions per topic (`webhookTopics` lists those the API version has; another
 * is refused with a user error), and {@link FakeShopifyStore.emitWebhook} POSTs an event to every
 * subscription of its topic the way Shopify does: the REST body (`id`, `admin_graphql_api_id`; only `id`
 * for a delete) and `X-Shopify-Topic`, `X-Shopify-Hmac-Sha256` (base64 HMAC-SHA256 of the raw body with
 * the app's client secret), `X-Shopify-Shop-Domain`, `X-Shopify-Webhook-Id`, `X-Shopify-Event-Id`,
 * `X-Shopify-Triggered-At`, `X-Shopify-API-Version`. {@link FakeShopifyStore.webhookDelivery} builds one
 * delivery for a test to send (or tamper with) itself. Not modelled: Shopify's retries (a test resends).
 *
 * Edits stamp `updatedAt` with the store's clock (one second per change); publishing and unpublishing a
 * product do not, as the worst case a connector must handle. Product descriptions may be functions
 * (called per request), so the benchmark's 5,000 products cost the fake little memory.
 */
import { createHmac } from 'node:crypto';
import { type BenchWorkspace, type BenchWorkspaceFactory, benchText } from './workspace.ts';
import { type FakeReply, type FakeServer, type RecordedRequest, startFakeServer } from './fake-server.ts';

export const SHOPIFY_GOOD_TOKEN = 'shpat_fake_good_token_0123456789abcdef';
export const SHOPIFY_NO_ACCESS_TOKEN = 'shpat_fake_token_without_access_000000';
export const SHOPIFY_SHOP = 'acme-outdoor';
export const SHOPIFY_STOREFRONT = 'https://acme-outdoor.com';

const MAX_FIRST = 250;

// ---------------------------------------------------------------------------------------------------
// A small GraphQL reader
// ---------------------------------------------------------------------------------------------------

/** A GraphQL error the fake answers on HTTP 200. */
class FakeQueryError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

interface Selection {
  name: string;
  alias?: string;
  args: Record<string, unknown>;
  children?: Selection[];
  /** An inline fragment's type condition (`... on Product`). */
  on?: string;
}

function tokenize(src: string): string[] {
  const re = /\s*(\.\.\.|[A-Za-z_]\w*|[$!{}():[\]=,]|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)/y;
  const out: string[] = [];
  while (re.lastIndex < src.length) {
    const at = re.lastIndex;
    const m = re.exec(src);
    if (!m) {
      if (/^\s*$/.test(src.slice(at))) break;
      throw new FakeQueryError(`Parse error on "${src.slice(at, at + 20).trim()}"`, 'parseError');
    }
    if (m[1] !== ',') out.push(m[1]!);
  }
  return out;
}

class Reader {
  #i = 0;
  readonly tokens: string[];
  readonly variables: Record<string, unknown>;
  constructor(tokens: string[], variables: Record<string, unknown>) {
    this.tokens = tokens;
    this.variables = variables;
  }
  peek(): string | undefined {
    return this.tokens[this.#i];
  }
  next(): string {
    const t = this.tokens[this.#i++];
    if (t === undefined) throw new FakeQueryError('Parse error: unexpected end of query', 'parseError');
    return t;
  }
  expect(t: string): void {
    const got = this.next();
    if (got !== t) throw new FakeQueryError(`Parse error: expected ${t}, got ${got}`, 'parseError');
  }
  name(): string {
    const t = this.next();
    if (!/^[A-Za-z_]/.test(t))
      throw new FakeQueryError(`Parse error: expected a name, got ${t}`, 'parseError');
    return t;
  }
}

function parseDocument(text: string, variables: Record<string, unknown>): Selection[] {
  const r = new Reader(tokenize(text), variables);
  if (r.peek() === 'query' || r.peek() === 'mutation') {
    r.next();
    if (r.peek() !== '(' && r.peek() !== '{') r.name();
    if (r.peek() === '(') {
      // Variable definitions: their values arrive in `variables`.
      let depth = 0;
      do {
        const t = r.next();
        if (t === '(') depth++;
        if (t === ')') depth--;
      } while (depth > 0);
    }
  }
  const selections = parseSelectionSet(r);
  if (r.peek() !== undefined) {
    throw new FakeQueryError('Parse error: one operation and no fragments, please', 'parseError');
  }
  return selections;
}

function parseSelectionSet(r: Reader): Selection[] {
  r.expect('{');
  const out: Selection[] = [];
  while (r.peek() !== '}') {
    if (r.peek() === '...') {
      r.next();
      r.expect('on');
      const on = r.name();
      out.push({ name: '', on, args: {}, children: parseSelectionSet(r) });
      continue;
    }
    let name = r.name();
    let alias: string | undefined;
    if (r.peek() === ':') {
      r.next();
      alias = name;
      name = r.name();
    }
    const args: Record<string, unknown> = {};
    if (r.peek() === '(') {
      r.next();
      while (r.peek() !== ')') {
        const arg = r.name();
        r.expect(':');
        args[arg] = parseValue(r);
      }
      r.next();
    }
    const children = r.peek() === '{' ? parseSelectionSet(r) : undefined;
    out.push({ name, ...(alias ? { alias } : {}), args, ...(children ? { children } : {}) });
  }
  r.next();
  return out;
}

function parseValue(r: Reader): unknown {
  const t = r.next();
  if (t === '$') return r.variables[r.name()] ?? null;
  if (t === '[') {
    const list: unknown[] = [];
    while (r.peek() !== ']') list.push(parseValue(r));
    r.next();
    return list;
  }
  if (t.startsWith('"')) return JSON.parse(t);
  if (/^-?\d/.test(t)) return Number(t);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t === 'null') return null;
  return t;
}

/** Fields of a resolved object: values, or functions of the field's arguments. */
type Resolved = { __typename: string; [field: string]: unknown };

function project(obj: Resolved, selections: Selection[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of selections) {
    if (s.on !== undefined) {
      if (obj.__typename === s.on) Object.assign(out, project(obj, s.children ?? []));
      continue;
    }
    const key = s.alias ?? s.name;
    if (s.name === '__typename') {
      out[key] = obj.__typename;
      continue;
    }
    if (!(s.name in obj)) {
      throw new FakeQueryError(
        `Field '${s.name}' doesn't exist on type '${obj.__typename}'`,
        'undefinedField',
      );
    }
    let value = obj[s.name];
    if (typeof value === 'function') value = (value as (args: Record<string, unknown>) => unknown)(s.args);
    out[key] = s.children ? shape(value, s.children) : value;
  }
  return out;
}

function shape(value: unknown, children: Selection[]): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((v) => shape(v, children));
  return project(value as Resolved, children);
}

/** Shopify's requested cost: object 1, connection 2 + first × node, scalars and pageInfo 0. */
function requestedCost(selections: readonly Selection[]): number {
  let total = 0;
  for (const s of selections) {
    if (s.on !== undefined) {
      total += requestedCost(s.children ?? []);
      continue;
    }
    if (!s.children || s.name === 'pageInfo') continue;
    const first = typeof s.args['first'] === 'number' ? s.args['first'] : undefined;
    const ids = Array.isArray(s.args['ids']) ? s.args['ids'] : undefined;
    if (first !== undefined) {
      const nodes = s.children.find((c) => c.name === 'nodes' || c.name === 'edges');
      total += 2 + first * (nodes ? 1 + requestedCost(nodes.children ?? []) : 1);
    } else if (ids) {
      const plain = s.children.filter((c) => c.on === undefined);
      const fragments = s.children
        .filter((c) => c.on !== undefined)
        .map((c) => requestedCost(c.children ?? []));
      total += ids.length * (1 + requestedCost(plain) + Math.max(0, ...fragments));
    } else {
      total += 1 + requestedCost(s.children);
    }
  }
  return total;
}

/** What an answer actually cost: one point per object answered, two per connection. */
function actualCost(value: unknown): number {
  if (Array.isArray(value)) return value.reduce<number>((sum, v) => sum + actualCost(v), 0);
  if (!value || typeof value !== 'object') return 0;
  let cost = 'nodes' in value && 'pageInfo' in value ? 2 : 1;
  for (const [key, v] of Object.entries(value)) if (key !== 'pageInfo') cost += actualCost(v);
  return cost;
}

// ---------------------------------------------------------------------------------------------------
// Search syntax, cursors and connections
// ---------------------------------------------------------------------------------------------------

interface Term {
  field: string;
  op: '=' | '>=' | '>' | '<=' | '<';
  value: string;
}

function parseSearch(query: unknown, allowed: readonly string[]): Term[] {
  if (query === null || query === undefined || query === '') return [];
  const text = String(query);
  const terms: Term[] = [];
  const rest = text.replace(
    /(\w+):(>=|<=|>|<)?('[^']*'|"[^"]*"|[^\s]+)/g,
    (_m, field: string, op, raw: string) => {
      if (!allowed.includes(field))
        throw new FakeQueryError(`The fake does not search by ${field}`, 'UNSUPPORTED');
      terms.push({ field, op: (op ?? '=') as Term['op'], value: raw.replace(/^['"]|['"]$/g, '') });
      return '';
    },
  );
  if (rest.replace(/\bAND\b/g, '').trim()) {
    throw new FakeQueryError(`The fake reads only field:value terms, not "${rest.trim()}"`, 'UNSUPPORTED');
  }
  return terms;
}

function compareTime(actual: number, term: Term): boolean {
  const wanted = Date.parse(term.value);
  if (Number.isNaN(wanted))
    throw new FakeQueryError(`Invalid date in ${term.field}: ${term.value}`, 'UNSUPPORTED');
  switch (term.op) {
    case '>=':
      return actual >= wanted;
    case '>':
      return actual > wanted;
    case '<=':
      return actual <= wanted;
    case '<':
      return actual < wanted;
    default:
      return actual === wanted;
  }
}

interface SortKey {
  value: number;
  id: number;
}

function encodeCursor(k: SortKey): string {
  return Buffer.from(JSON.stringify({ last_id: k.id, last_value: k.value })).toString('base64');
}

function decodeCursor(cursor: unknown): SortKey {
  try {
    const parsed = JSON.parse(Buffer.from(String(cursor), 'base64').toString('utf8')) as {
      last_id: number;
      last_value: number;
    };
    if (typeof parsed.last_id !== 'number' || typeof parsed.last_value !== 'number') throw new Error('shape');
    return { id: parsed.last_id, value: parsed.last_value };
  } catch {
    throw new FakeQueryError(`Invalid cursor for current pagination sort.`, 'BAD_REQUEST');
  }
}

const after = (a: SortKey, b: SortKey) => a.value > b.value || (a.value === b.value && a.id > b.id);

/** One page of `items` (already filtered and sorted by `key`) per `first` / `after`. */
function connection<T>(
  items: readonly T[],
  key: (item: T) => SortKey,
  toJson: (item: T) => Resolved,
  args: Record<string, unknown>,
): Resolved {
  const first = args['first'];
  if (typeof first !== 'number' || first < 1) {
    throw new FakeQueryError('you must provide one of first or last', 'BAD_REQUEST');
  }
  if (first > MAX_FIRST) {
    throw new FakeQueryError(`The first argument must not exceed ${MAX_FIRST} (got ${first})`, 'BAD_REQUEST');
  }
  let start = 0;
  if (args['after'] !== null && args['after'] !== undefined) {
    const cursor = decodeCursor(args['after']);
    start = items.findIndex((item) => after(key(item), cursor));
    if (start < 0) start = items.length;
  }
  const slice = items.slice(start, start + first);
  const last = slice.at(-1);
  return {
    __typename: 'Connection',
    nodes: slice.map(toJson),
    pageInfo: {
      __typename: 'PageInfo',
      hasNextPage: start + first < items.length,
      hasPreviousPage: start > 0,
      startCursor: slice[0] ? encodeCursor(key(slice[0])) : null,
      endCursor: last ? encodeCursor(key(last)) : null,
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------------------------------

export type ProductStatus = 'ACTIVE' | 'ARCHIVED' | 'DRAFT' | 'UNLISTED';

export interface FakeVariantSpec {
  title: string;
  sku?: string | null;
  /** `Money`: a decimal string. Null makes the variant malformed (the field is non-null). */
  price: string | null;
  compareAtPrice?: string | null;
  availableForSale?: boolean;
}

export interface FakeProductSpec {
  title: string;
  handle?: string;
  status?: ProductStatus;
  /** Published to the Online Store sales channel. Default true. */
  published?: boolean;
  /** Published to a headless storefront's publication (Hydrogen, a custom storefront). Default false. */
  headless?: boolean;
  descriptionHtml?: string | (() => string);
  vendor?: string;
  productType?: string;
  tags?: string[];
  options?: Array<{ name: string; values: string[] }>;
  variants?: FakeVariantSpec[];
}

export interface FakeProduct {
  id: string;
  n: number;
  title: string;
  handle: string;
  status: ProductStatus;
  published: boolean;
  headless: boolean;
  descriptionHtml: string | (() => string);
  vendor: string;
  productType: string;
  tags: string[];
  options: Array<{ name: string; values: string[] }>;
  variants: Array<FakeVariantSpec & { id: string }>;
  createdAt: number;
  updatedAt: number;
  publishedAt: number | null;
  /** Fields answered instead of the real ones (a malformed record). */
  override?: Record<string, unknown>;
}

export interface FakePage {
  id: string;
  n: number;
  title: string;
  handle: string;
  body: string;
  isPublished: boolean;
  createdAt: number;
  updatedAt: number;
  publishedAt: number | null;
}

export interface FakeBlog {
  id: string;
  n: number;
  title: string;
  handle: string;
}

export interface FakeArticle {
  id: string;
  n: number;
  blog: FakeBlog;
  title: string;
  handle: string;
  body: string;
  summary: string | null;
  tags: string[];
  author: string | null;
  isPublished: boolean;
  createdAt: number;
  updatedAt: number;
  publishedAt: number | null;
}

export interface FakePolicy {
  id: string;
  type: string;
  title: string;
  body: string;
  createdAt: number;
  updatedAt: number;
}

/** Shopify's leaky bucket of query cost points. */
export interface FakeBucket {
  maximumAvailable: number;
  restoreRate: number;
  currentlyAvailable: number;
  /** When `currentlyAvailable` was last brought up to date (ms, performance.now). */
  at: number;
}

const slug = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

const POLICY_TITLES: Record<string, string> = {
  REFUND_POLICY: 'Refund policy',
  PRIVACY_POLICY: 'Privacy policy',
  TERMS_OF_SERVICE: 'Terms of service',
  SHIPPING_POLICY: 'Shipping policy',
  CONTACT_INFORMATION: 'Contact information',
  LEGAL_NOTICE: 'Legal notice',
  SUBSCRIPTION_POLICY: 'Cancellation policy',
  TERMS_OF_SALE: 'Terms of sale',
};

/** The app whose tokens the store grants: a Dev Dashboard app with its client id and secret. */
export interface FakeShopifyApp {
  clientId: string;
  clientSecret: string;
  /** False: `app_not_installed`. */
  installed: boolean;
  /** False: the app belongs to another organization, so client credentials are `shop_not_permitted`. */
  sameOrganization: boolean;
}

export const SHOPIFY_CLIENT_ID = 'fake0a1b2c3d4e5f60718293a4b5c6d7e8f';
export const SHOPIFY_CLIENT_SECRET = 'shpss_fake_client_secret_0123456789ab';

/** The store behind the fake server; tests change it between syncs. */
export class FakeShopifyStore {
  token = SHOPIFY_GOOD_TOKEN;
  shopName = 'Acme Outdoor';
  shop = SHOPIFY_SHOP;
  currencyCode = 'USD';
  storefront = SHOPIFY_STOREFRONT;
  /** False: the API version no longer has `deletionEvents` (it is deprecated). */
  deletionEventsSupported = true;
  /** The largest requested cost of one query (`MAX_COST_EXCEEDED` above it). */
  maxQueryCost = 1000;
  readonly bucket: FakeBucket = {
    maximumAvailable: 2000,
    restoreRate: 100,
    currentlyAvailable: 2000,
    at: performance.now(),
  };
  /** Seconds the clock moves on each change. */
  clockStepMs = 1000;

  readonly products = new Map<string, FakeProduct>();
  readonly pages = new Map<string, FakePage>();
  readonly blogs = new Map<string, FakeBlog>();
  readonly articles = new Map<string, FakeArticle>();
  readonly policies = new Map<string, FakePolicy>();
  readonly deletionEvents: Array<{ occurredAt: number; legacyId: number; subjectType: 'PRODUCT' }> = [];

  /** Every GraphQL query answered or refused, in order, by its root fields. */
  readonly queries: Array<{ roots: string[]; variables: Record<string, unknown>; version: string }> = [];
  throttledAnswers = 0;
  /** Points charged (actual costs) in all. */
  costCharged = 0;
  /** Called before each query is answered (tests change the store mid-sync or abort). */
  onQuery?: (roots: string[], variables: Record<string, unknown>) => void;

  readonly app: FakeShopifyApp = {
    clientId: SHOPIFY_CLIENT_ID,
    clientSecret: SHOPIFY_CLIENT_SECRET,
    installed: true,
    sameOrganization: true,
  };
  /** Life of a client credentials token (Shopify's: 86,399 s). */
  clientCredentialsLifetimeSeconds = 86_399;
  /** Life of an expiring offline token of the authorization code grant (Shopify's: 3,600 s). */
  offlineLifetimeSeconds = 3_600;
  /** The clock of token expiry (epoch ms); tests replace it to let tokens run out. */
  now: () => number = Date.now;
  /** Tokens granted, by grant type, in order. */
  readonly grants: Array<{ grant: string; token: string }> = [];
  /** 401 answers to a granted token that had expired. */
  expiredAnswers = 0;
  readonly #tokens = new Map<string, { expiresAt: number | null }>();
  readonly #codes = new Set<string>();
  readonly #refreshTokens = new Set<string>();
  #grantSeq = 0;

  /** Webhook subscriptions made through the Admin API, by id. */
  readonly webhookSubscriptions = new Map<string, { topic: string; uri: string }>();
  /** The topics `webhookSubscriptionCreate` accepts (the API version's enum). */
  webhookTopics = new Set([
    'PRODUCTS_CREATE',
    'PRODUCTS_UPDATE',
    'PRODUCTS_DELETE',
    'PAGES_CREATE',
    'PAGES_UPDATE',
    'PAGES_DELETE',
    'ARTICLES_CREATE',
    'ARTICLES_UPDATE',
    'ARTICLES_DELETE',
  ]);
  #webhookSeq = 0;

  readonly #denied = new Map<string, string>();
  #clock = Date.parse('2024-05-01T08:00:00Z');
  #nextId = 8_123_456_789_000;
  #revision = 0;
  #sorted: { revision: number; key: string; list: FakeProduct[] } | undefined;

  /**
   * Fields answered ACCESS_DENIED for lack of `scope`, e.g. `deny('pages', 'read_content')` (a root
   * field) or `deny('shopPolicies', 'read_legal_policies')` (a nested one).
   */
  deny(field: string, scope: string): void {
    this.#denied.set(field, scope);
  }

  /** Grants access to a denied field again (the merchant approved the scope). */
  allow(field: string): void {
    this.#denied.delete(field);
  }

  /** The store's clock, moved by one step: the time of the change being made. */
  tick(): number {
    this.#clock += this.clockStepMs;
    this.#revision++;
    return this.#clock;
  }

  #id(): number {
    return this.#nextId++;
  }

  addProduct(spec: FakeProductSpec): FakeProduct {
    const n = this.#id();
    const at = this.tick();
    const published = spec.published ?? true;
    const p: FakeProduct = {
      id: `gid://shopify/Product/${n}`,
      n,
      title: spec.title,
      handle: spec.handle ?? slug(spec.title),
      status: spec.status ?? 'ACTIVE',
      published,
      headless: spec.headless ?? false,
      descriptionHtml: spec.descriptionHtml ?? '',
      vendor: spec.vendor ?? 'Acme',
      productType: spec.productType ?? '',
      tags: spec.tags ?? [],
      options: spec.options ?? [{ name: 'Title', values: ['Default Title'] }],
      variants: [],
      createdAt: at,
      updatedAt: at,
      publishedAt: published ? at : null,
    };
    p.variants = this.#variants(spec.variants ?? [{ title: 'Default Title', sku: null, price: '10.00' }]);
    this.products.set(p.id, p);
    return p;
  }

  #variants(specs: FakeVariantSpec[]): FakeProduct['variants'] {
    return specs.map((v) => ({ ...v, id: `gid://shopify/ProductVariant/${this.#id()}` }));
  }

  product(id: string): FakeProduct {
    const p = this.products.get(id);
    if (!p) throw new Error(`no product ${id}`);
    return p;
  }

  /** An edit in the admin: `updatedAt` moves. */
  editProduct(
    id: string,
    changes: Partial<Omit<FakeProductSpec, 'published' | 'status'>> & { override?: Record<string, unknown> },
  ): FakeProduct {
    const p = this.product(id);
    const { variants, ...rest } = changes;
    Object.assign(p, rest);
    if (variants) p.variants = this.#variants(variants);
    p.updatedAt = this.tick();
    return p;
  }

  /** Archive, draft, unlist or reactivate: `updatedAt` moves. */
  setStatus(id: string, status: ProductStatus): void {
    const p = this.product(id);
    p.status = status;
    p.updatedAt = this.tick();
  }

  /** Removes the product from the Online Store channel; `updatedAt` stays (the worst case). */
  unpublish(id: string): void {
    const p = this.product(id);
    p.published = false;
    p.publishedAt = null;
    this.#revision++;
  }

  publish(id: string): void {
    const p = this.product(id);
    p.published = true;
    p.publishedAt = this.#clock;
    this.#revision++;
  }

  /** Publishes to, or withdraws from, the headless storefront; `updatedAt` stays. */
  setHeadless(id: string, headless: boolean): void {
    this.product(id).headless = headless;
    this.#revision++;
  }

  deleteProduct(id: string): void {
    const p = this.product(id);
    this.products.delete(id);
    this.deletionEvents.push({ occurredAt: this.tick(), legacyId: p.n, subjectType: 'PRODUCT' });
  }

  addPage(spec: { title: string; body: string; handle?: string; isPublished?: boolean }): FakePage {
    const n = this.#id();
    const at = this.tick();
    const isPublished = spec.isPublished ?? true;
    const page: FakePage = {
      id: `gid://shopify/Page/${n}`,
      n,
      title: spec.title,
      handle: spec.handle ?? slug(spec.title),
      body: spec.body,
      isPublished,
      createdAt: at,
      updatedAt: at,
      publishedAt: isPublished ? at : null,
    };
    this.pages.set(page.id, page);
    return page;
  }

  editPage(
    id: string,
    changes: Partial<Pick<FakePage, 'title' | 'body' | 'handle' | 'isPublished'>>,
  ): FakePage {
    const page = this.pages.get(id);
    if (!page) throw new Error(`no page ${id}`);
    Object.assign(page, changes);
    page.updatedAt = this.tick();
    if (changes.isPublished !== undefined) page.publishedAt = changes.isPublished ? page.updatedAt : null;
    return page;
  }

  deletePage(id: string): void {
    this.pages.delete(id);
    this.tick();
  }

  addBlog(title: string, handle?: string): FakeBlog {
    const n = this.#id();
    const blog = { id: `gid://shopify/Blog/${n}`, n, title, handle: handle ?? slug(title) };
    this.blogs.set(blog.id, blog);
    this.tick();
    return blog;
  }

  /** Renames a blog: its articles' `updatedAt` stays. */
  renameBlog(id: string, title: string): void {
    const blog = this.blogs.get(id);
    if (!blog) throw new Error(`no blog ${id}`);
    blog.title = title;
    this.#revision++;
  }

  addArticle(spec: {
    blog: FakeBlog;
    title: string;
    body: string;
    handle?: string;
    summary?: string | null;
    tags?: string[];
    author?: string | null;
    isPublished?: boolean;
  }): FakeArticle {
    const n = this.#id();
    const at = this.tick();
    const isPublished = spec.isPublished ?? true;
    const article: FakeArticle = {
      id: `gid://shopify/Article/${n}`,
      n,
      blog: spec.blog,
      title: spec.title,
      handle: spec.handle ?? slug(spec.title),
      body: spec.body,
      summary: spec.summary ?? null,
      tags: spec.tags ?? [],
      author: spec.author === undefined ? 'Jamie Rivera' : spec.author,
      isPublished,
      createdAt: at,
      updatedAt: at,
      publishedAt: isPublished ? at : null,
    };
    this.articles.set(article.id, article);
    return article;
  }

  editArticle(
    id: string,
    changes: Partial<Pick<FakeArticle, 'title' | 'body' | 'tags' | 'isPublished' | 'summary'>>,
  ): FakeArticle {
    const article = this.articles.get(id);
    if (!article) throw new Error(`no article ${id}`);
    Object.assign(article, changes);
    article.updatedAt = this.tick();
    if (changes.isPublished !== undefined)
      article.publishedAt = changes.isPublished ? article.updatedAt : null;
    return article;
  }

  deleteArticle(id: string): void {
    this.articles.delete(id);
    this.tick();
  }

  /** Writes a policy (an empty body: the merchant never wrote it, Shopify still lists the type). */
  setPolicy(type: string, body: string, title = POLICY_TITLES[type] ?? type): FakePolicy {
    const at = this.tick();
    const existing = this.policies.get(type);
    const policy: FakePolicy = existing
      ? { ...existing, title, body, updatedAt: at }
      : { id: `gid://shopify/ShopPolicy/${this.#id()}`, type, title, body, createdAt: at, updatedAt: at };
    this.policies.set(type, policy);
    return policy;
  }

  // -------------------------------------------------------------------------------------------------
  // Answers
  // -------------------------------------------------------------------------------------------------

  #refill(): FakeBucket {
    const b = this.bucket;
    const now = performance.now();
    b.currentlyAvailable = Math.min(
      b.maximumAvailable,
      b.currentlyAvailable + ((now - b.at) / 1000) * b.restoreRate,
    );
    b.at = now;
    return b;
  }

  /** Sets what the bucket holds now (a test's "budget running low"). */
  drainBucket(to: number): void {
    this.#refill();
    this.bucket.currentlyAvailable = to;
  }

  #throttleStatus() {
    const b = this.bucket;
    return {
      maximumAvailable: b.maximumAvailable,
      currentlyAvailable: Math.floor(b.currentlyAvailable),
      restoreRate: b.restoreRate,
    };
  }

  answer(req: RecordedRequest): FakeReply {
    if (req.path === '/admin/oauth/access_token' && req.method === 'POST') return this.#tokenEndpoint(req);
    if (req.path === '/admin/oauth/authorize' && req.method === 'GET') return this.#authorize(req);
    const match = /\/admin\/api\/([^/]+)\/graphql\.json$/.exec(req.path);
    if (!match || req.method !== 'POST') return { status: 404, body: { errors: 'Not Found' } };
    const version = match[1]!;
    const headers = { 'x-shopify-api-version': version };
    const given = req.headers['x-shopify-access-token'];
    if (given !== this.token && given !== SHOPIFY_NO_ACCESS_TOKEN && !this.#grantedTokenWorks(given)) {
      return {
        status: 401,
        body: { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' },
      };
    }
    let body: { query?: unknown; variables?: unknown };
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      return { status: 400, body: { errors: 'Bad Request' } };
    }
    const variables = (body.variables && typeof body.variables === 'object' ? body.variables : {}) as Record<
      string,
      unknown
    >;
    const graphqlError = (e: FakeQueryError, extra: Record<string, unknown> = {}): FakeReply => ({
      status: 200,
      headers,
      body: { errors: [{ message: e.message, extensions: { code: e.code, ...extra } }] },
    });

    let selections: Selection[];
    try {
      selections = parseDocument(String(body.query ?? ''), variables);
    } catch (err) {
      if (err instanceof FakeQueryError) return graphqlError(err);
      throw err;
    }
    const roots = selections.map((s) => s.name);
    this.queries.push({ roots, variables, version });
    this.onQuery?.(roots, variables);

    const requested = requestedCost(selections);
    const bucket = this.#refill();
    if (requested > this.maxQueryCost) {
      return graphqlError(
        new FakeQueryError(
          `Query cost is ${requested}, which exceeds the single query max cost limit (${this.maxQueryCost}).`,
          'MAX_COST_EXCEEDED',
        ),
        { cost: requested, maxCost: this.maxQueryCost },
      );
    }
    const denied =
      given === SHOPIFY_NO_ACCESS_TOKEN && selections[0]
        ? [selections[0].name]
        : this.#deniedPath(selections);
    if (denied) {
      const field = denied.at(-1)!;
      const scope = this.#denied.get(field);
      const required = scope ? `\`${scope}\` access scope.` : undefined;
      return {
        status: 200,
        headers,
        body: {
          // A refused root field is null beside the others; a nested one nulls its non-null parents.
          data:
            denied.length === 1 ? Object.fromEntries(selections.map((s) => [s.alias ?? s.name, null])) : null,
          errors: [
            {
              message: `Access denied for ${field} field.${required ? ` Required access: ${required}` : ''}`,
              locations: [{ line: 1, column: 3 }],
              path: denied,
              extensions: {
                code: 'ACCESS_DENIED',
                documentation: 'https://shopify.dev/api/usage/access-scopes',
                ...(required ? { requiredAccess: required } : {}),
              },
            },
          ],
          extensions: {
            cost: {
              requestedQueryCost: requested,
              actualQueryCost: 1,
              throttleStatus: this.#throttleStatus(),
            },
          },
        },
      };
    }
    if (requested > bucket.currentlyAvailable) {
      this.throttledAnswers++;
      return {
        status: 200,
        headers,
        body: {
          errors: [
            {
              message: 'Throttled',
              extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
            },
          ],
          extensions: {
            cost: {
              requestedQueryCost: requested,
              actualQueryCost: null,
              throttleStatus: this.#throttleStatus(),
            },
          },
        },
      };
    }
    let data: Record<string, unknown>;
    try {
      data = project(this.#root(), selections);
    } catch (err) {
      if (err instanceof FakeQueryError) return graphqlError(err);
      throw err;
    }
    const actual = Math.max(1, actualCost(data) - 1);
    bucket.currentlyAvailable -= actual;
    this.costCharged += actual;
    return {
      status: 200,
      headers,
      body: {
        data,
        extensions: {
          cost: {
            requestedQueryCost: requested,
            actualQueryCost: actual,
            throttleStatus: this.#throttleStatus(),
          },
        },
      },
    };
  }

  /** The path of the first selected field whose scope is withheld (fragments add no path element). */
  #deniedPath(selections: readonly Selection[], at: readonly string[] = []): string[] | undefined {
    for (const s of selections) {
      const path = s.on === undefined ? [...at, s.alias ?? s.name] : [...at];
      if (s.on === undefined && this.#denied.has(s.name)) return path;
      const inner = s.children ? this.#deniedPath(s.children, path) : undefined;
      if (inner) return inner;
    }
    return undefined;
  }

  #grantedTokenWorks(given: string | string[] | undefined): boolean {
    if (typeof given !== 'string') return false;
    const granted = this.#tokens.get(given);
    if (!granted) return false;
    if (granted.expiresAt !== null && this.now() >= granted.expiresAt) {
      this.expiredAnswers++;
      return false;
    }
    return true;
  }

  #issue(grant: string, lifetimeSeconds: number | null): { token: string; expiresIn: number | null } {
    const token = `shpat_granted_${grant.replace(/\W/g, '')}_${++this.#grantSeq}_${Math.random().toString(36).slice(2, 10)}`;
    this.#tokens.set(token, {
      expiresAt: lifetimeSeconds === null ? null : this.now() + lifetimeSeconds * 1000,
    });
    this.grants.push({ grant, token });
    return { token, expiresIn: lifetimeSeconds };
  }

  /** Shopify's OAuth errors: `{"error", "error_description"}`. */
  #oauthError(status: number, error: string, description: string): FakeReply {
    return { status, body: { error, error_description: description } };
  }

  #tokenEndpoint(req: RecordedRequest): FakeReply {
    const form = String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
    let params: Record<string, string>;
    try {
      params = form
        ? Object.fromEntries(new URLSearchParams(req.body))
        : (JSON.parse(req.body) as Record<string, string>);
    } catch {
      return this.#oauthError(400, 'invalid_request', 'The request body could not be read.');
    }
    if (params['client_id'] !== this.app.clientId || params['client_secret'] !== this.app.clientSecret) {
      return this.#oauthError(400, 'invalid_client', 'Client authentication failed.');
    }
    if (!this.app.installed) {
      return this.#oauthError(400, 'app_not_installed', 'The application is not installed on this shop.');
    }
    const scope = 'read_products,read_content,read_legal_policies,read_publications';
    if (params['grant_type'] === 'client_credentials') {
      if (!this.app.sameOrganization) {
        return this.#oauthError(
          400,
          'shop_not_permitted',
          'Client credentials cannot be performed on this shop.',
        );
      }
      const { token, expiresIn } = this.#issue('client_credentials', this.clientCredentialsLifetimeSeconds);
      return { status: 200, body: { access_token: token, scope, expires_in: expiresIn } };
    }
    if (params['grant_type'] === 'refresh_token') {
      if (!this.#refreshTokens.delete(params['refresh_token'] ?? '')) {
        return this.#oauthError(400, 'invalid_grant', 'The refresh token is invalid, expired or revoked.');
      }
      return this.#offlineToken('refresh_token', scope);
    }
    if (params['grant_type'] === undefined && params['code'] !== undefined) {
      if (!this.#codes.delete(params['code'])) {
        return this.#oauthError(
          400,
          'invalid_request',
          'The authorization code was not found or was already used.',
        );
      }
      if (String(params['expiring']) === '1') return this.#offlineToken('authorization_code', scope);
      const { token } = this.#issue('authorization_code', null);
      return { status: 200, body: { access_token: token, scope } };
    }
    return this.#oauthError(400, 'unsupported_grant_type', 'The grant type is not supported.');
  }

  #offlineToken(grant: string, scope: string): FakeReply {
    const { token, expiresIn } = this.#issue(grant, this.offlineLifetimeSeconds);
    const refresh = `shprt_fake_${++this.#grantSeq}_${Math.random().toString(36).slice(2, 10)}`;
    this.#refreshTokens.add(refresh);
    return {
      status: 200,
      body: {
        access_token: token,
        scope,
        expires_in: expiresIn,
        refresh_token: refresh,
        refresh_token_expires_in: 7_776_000,
      },
    };
  }

  /** The merchant approves at once: back to `redirect_uri` with a code and Shopify's other parameters. */
  #authorize(req: RecordedRequest): FakeReply {
    if (req.query.get('client_id') !== this.app.clientId) {
      return { status: 400, body: 'Oauth error invalid_request: The client_id is not valid' };
    }
    const redirect = new URL(req.query.get('redirect_uri') ?? '');
    const code = `fake_code_${++this.#grantSeq}`;
    this.#codes.add(code);
    redirect.searchParams.set('code', code);
    redirect.searchParams.set('hmac', 'fakehmac');
    redirect.searchParams.set('shop', `${this.shop}.myshopify.com`);
    redirect.searchParams.set('state', req.query.get('state') ?? '');
    redirect.searchParams.set('timestamp', String(Math.floor(this.now() / 1000)));
    return { status: 302, headers: { location: redirect.toString() } };
  }

  #subscribe(args: Record<string, unknown>): Resolved {
    const topic = String(args['topic'] ?? '');
    const input = (args['webhookSubscription'] ?? {}) as { uri?: unknown };
    const payload = (subscription: Resolved | null, errors: Array<{ field: string[]; message: string }>) => ({
      __typename: 'WebhookSubscriptionCreatePayload',
      webhookSubscription: subscription,
      userErrors: errors.map((e) => ({ __typename: 'UserError', ...e })),
    });
    if (!this.webhookTopics.has(topic)) {
      return payload(null, [{ field: ['topic'], message: `Topic ${topic} is not supported` }]);
    }
    if (typeof input.uri !== 'string' || !/^https?:\/\//.test(input.uri)) {
      return payload(null, [{ field: ['webhookSubscription', 'uri'], message: 'Address is invalid' }]);
    }
    for (const sub of this.webhookSubscriptions.values()) {
      if (sub.topic === topic && sub.uri === input.uri) {
        return payload(null, [
          { field: ['webhookSubscription', 'uri'], message: 'Address for this topic has already been taken' },
        ]);
      }
    }
    const id = `gid://shopify/WebhookSubscription/${++this.#webhookSeq}`;
    this.webhookSubscriptions.set(id, { topic, uri: input.uri });
    return payload({ __typename: 'WebhookSubscription', id, topic, uri: input.uri }, []);
  }

  #unsubscribe(args: Record<string, unknown>): Resolved {
    const id = String(args['id'] ?? '');
    const existed = this.webhookSubscriptions.delete(id);
    return {
      __typename: 'WebhookSubscriptionDeletePayload',
      deletedWebhookSubscriptionId: existed ? id : null,
      userErrors: existed
        ? []
        : [{ __typename: 'UserError', field: ['id'], message: 'Webhook subscription does not exist' }],
    };
  }

  /**
   * One webhook delivery as Shopify sends it for `topic` (`products/update`) about the product, page or
   * article `gid`, signed with `secret` (default: the app's client secret). `eventId` defaults to a new one.
   */
  webhookDelivery(
    topic: string,
    gid: string,
    opts: { secret?: string; eventId?: string; webhookId?: string } = {},
  ): { headers: Record<string, string>; body: string } {
    const n = Number(gid.split('/').pop());
    const seq = ++this.#webhookSeq;
    const resource = this.products.get(gid) ?? this.pages.get(gid) ?? this.articles.get(gid);
    const body = topic.endsWith('/delete')
      ? { id: n }
      : {
          id: n,
          title: resource?.title ?? null,
          handle: resource?.handle ?? null,
          updated_at: resource ? new Date(resource.updatedAt).toISOString() : null,
          admin_graphql_api_id: gid,
        };
    const raw = JSON.stringify(body);
    const hmac = createHmac('sha256', opts.secret ?? this.app.clientSecret)
      .update(raw)
      .digest('base64');
    return {
      body: raw,
      headers: {
        'content-type': 'application/json',
        'x-shopify-topic': topic,
        'x-shopify-hmac-sha256': hmac,
        'x-shopify-shop-domain': `${this.shop}.myshopify.com`,
        'x-shopify-api-version': '2026-10',
        'x-shopify-webhook-id': opts.webhookId ?? `b54557e4-fake-${seq}`,
        'x-shopify-event-id': opts.eventId ?? `98880550-fake-${seq}`,
        'x-shopify-triggered-at': new Date(this.#clock).toISOString(),
      },
    };
  }

  /**
   * Sends `topic`'s event about `gid` to every subscription of the topic (as the app that subscribed:
   * signed with its client secret); resolves to the status each answered.
   */
  async emitWebhook(topic: string, gid: string, opts: { eventId?: string } = {}): Promise<number[]> {
    const enumName = topic.replace('/', '_').toUpperCase();
    const delivery = this.webhookDelivery(topic, gid, opts);
    const statuses: number[] = [];
    for (const sub of this.webhookSubscriptions.values()) {
      if (sub.topic !== enumName) continue;
      const res = await fetch(sub.uri, { method: 'POST', headers: delivery.headers, body: delivery.body });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    return statuses;
  }

  #root(): Resolved {
    const root: Resolved = {
      __typename: 'QueryRoot',
      shop: () => this.#shopJson(),
      products: (args: Record<string, unknown>) => this.#products(args),
      productsCount: (args: Record<string, unknown>) => this.#productsCount(args),
      product: (args: Record<string, unknown>) => {
        const p = this.products.get(String(args['id']));
        return p ? this.#productJson(p) : null;
      },
      nodes: (args: Record<string, unknown>) => {
        const ids = Array.isArray(args['ids']) ? (args['ids'] as unknown[]) : [];
        if (ids.length > MAX_FIRST) throw new FakeQueryError('Too many ids (250 at most)', 'BAD_REQUEST');
        return ids.map((id) => this.#node(String(id)));
      },
      pages: (args: Record<string, unknown>) => this.#pages(args),
      articles: (args: Record<string, unknown>) => this.#articles(args),
      webhookSubscriptionCreate: (args: Record<string, unknown>) => this.#subscribe(args),
      webhookSubscriptionDelete: (args: Record<string, unknown>) => this.#unsubscribe(args),
    };
    if (this.deletionEventsSupported)
      root['deletionEvents'] = (args: Record<string, unknown>) => this.#deletions(args);
    return root;
  }

  #node(id: string): Resolved | null {
    const product = this.products.get(id);
    if (product) return this.#productJson(product);
    const page = this.pages.get(id);
    if (page) return this.#pageJson(page);
    const article = this.articles.get(id);
    if (article) return this.#articleJson(article);
    return null;
  }

  #shopJson(): Resolved {
    return {
      __typename: 'Shop',
      id: 'gid://shopify/Shop/60356788311',
      name: this.shopName,
      myshopifyDomain: `${this.shop}.myshopify.com`,
      currencyCode: this.currencyCode,
      primaryDomain: {
        __typename: 'Domain',
        id: 'gid://shopify/Domain/38722076759',
        url: this.storefront,
        host: new URL(this.storefront).host,
      },
      shopPolicies: [...this.policies.values()].map((p) => ({
        __typename: 'ShopPolicy',
        id: p.id,
        type: p.type,
        title: p.title,
        body: p.body,
        url: `https://${this.shop}.myshopify.com/policies/${slug(p.title)}`,
        createdAt: iso(p.createdAt),
        updatedAt: iso(p.updatedAt),
      })),
    };
  }

  #sortedProducts(sortKey: string): FakeProduct[] {
    const cached = this.#sorted;
    if (
      cached &&
      cached.revision === this.#revision &&
      cached.key === sortKey &&
      cached.list.length === this.products.size
    ) {
      return cached.list;
    }
    const list = [...this.products.values()].sort((a, b) =>
      sortKey === 'UPDATED_AT' ? a.updatedAt - b.updatedAt || a.n - b.n : a.n - b.n,
    );
    this.#sorted = { revision: this.#revision, key: sortKey, list };
    return list;
  }

  /** Products matching a search (`status:`, `updated_at:`, `published_status:` of the Online Store). */
  #matching(query: unknown, sortKey: string): FakeProduct[] {
    const terms = parseSearch(query, ['status', 'updated_at', 'published_status']);
    const matches = (p: FakeProduct) =>
      terms.every((t) => {
        if (t.field === 'status') return p.status === t.value.toUpperCase();
        if (t.field === 'updated_at') return compareTime(p.updatedAt, t);
        return (t.value === 'published') === (p.published && p.status === 'ACTIVE');
      });
    const list = this.#sortedProducts(sortKey);
    return terms.length === 0 ? list : list.filter(matches);
  }

  /** `productsCount(query:, limit:)`: 10,000 at most unless `limit: null`. */
  #productsCount(args: Record<string, unknown>): Resolved {
    const count = this.#matching(args['query'], 'ID').length;
    const limit = 'limit' in args ? (args['limit'] as number | null) : 10_000;
    const capped = limit !== null && count > limit;
    return { __typename: 'Count', count: capped ? limit : count, precision: capped ? 'AT_LEAST' : 'EXACT' };
  }

  #products(args: Record<string, unknown>): Resolved {
    const sortKey = String(args['sortKey'] ?? 'ID');
    if (!['ID', 'UPDATED_AT'].includes(sortKey))
      throw new FakeQueryError(`The fake sorts by ID or UPDATED_AT`, 'UNSUPPORTED');
    const items = this.#matching(args['query'], sortKey);
    return connection(
      items,
      (p) => ({ value: sortKey === 'UPDATED_AT' ? p.updatedAt : p.n, id: p.n }),
      (p) => this.#productJson(p),
      args,
    );
  }

  #productJson(p: FakeProduct): Resolved {
    const onlineStoreUrl =
      p.status === 'ACTIVE' && p.published ? `${this.storefront}/products/${p.handle}` : null;
    const variants = p.variants.map((v, i) => ({
      __typename: 'ProductVariant',
      id: v.id,
      title: v.title,
      sku: v.sku ?? null,
      price: v.price,
      compareAtPrice: v.compareAtPrice ?? null,
      availableForSale: v.availableForSale ?? true,
      position: i + 1,
      n: i,
    }));
    return {
      __typename: 'Product',
      id: p.id,
      legacyResourceId: String(p.n),
      title: p.title,
      handle: p.handle,
      status: p.status,
      descriptionHtml: typeof p.descriptionHtml === 'function' ? p.descriptionHtml() : p.descriptionHtml,
      description: () =>
        stripTags(typeof p.descriptionHtml === 'function' ? p.descriptionHtml() : p.descriptionHtml),
      vendor: p.vendor,
      productType: p.productType,
      tags: p.tags,
      onlineStoreUrl,
      resourcePublicationsCount: (args: Record<string, unknown>) => {
        if (args['onlyPublished'] === false)
          throw new FakeQueryError('The fake counts published ones', 'UNSUPPORTED');
        const count = (p.published ? 1 : 0) + (p.headless ? 1 : 0);
        return { __typename: 'Count', count, precision: 'EXACT' };
      },
      createdAt: iso(p.createdAt),
      updatedAt: iso(p.updatedAt),
      publishedAt: p.publishedAt === null ? null : iso(p.publishedAt),
      options: p.options.map((o, i) => ({
        __typename: 'ProductOption',
        id: `gid://shopify/ProductOption/${p.n * 10 + i}`,
        name: o.name,
        position: i + 1,
        values: o.values,
      })),
      variants: (args: Record<string, unknown>) =>
        connection(
          variants,
          (v) => ({ value: v.n, id: v.n }),
          (v) => v,
          args,
        ),
      ...p.override,
    };
  }

  #pages(args: Record<string, unknown>): Resolved {
    return this.#publishedConnection([...this.pages.values()], args, (page) => this.#pageJson(page));
  }

  /** Pages and articles alike: filtered by `updated_at` and `published_status`, sorted, paged. */
  #publishedConnection<T extends { updatedAt: number; n: number; isPublished: boolean }>(
    all: T[],
    args: Record<string, unknown>,
    json: (item: T) => Resolved,
  ): Resolved {
    const terms = parseSearch(args['query'], ['updated_at', 'published_status']);
    const sortKey = String(args['sortKey'] ?? 'ID');
    const items = all
      .filter((item) =>
        terms.every((t) =>
          t.field === 'updated_at'
            ? compareTime(item.updatedAt, t)
            : (t.value === 'published') === item.isPublished,
        ),
      )
      .sort((a, b) => (sortKey === 'UPDATED_AT' ? a.updatedAt - b.updatedAt || a.n - b.n : a.n - b.n));
    return connection(
      items,
      (item) => ({ value: sortKey === 'UPDATED_AT' ? item.updatedAt : item.n, id: item.n }),
      json,
      args,
    );
  }

  #pageJson(page: FakePage): Resolved {
    return {
      __typename: 'Page',
      id: page.id,
      title: page.title,
      handle: page.handle,
      body: page.body,
      bodySummary: stripTags(page.body).slice(0, 150),
      isPublished: page.isPublished,
      publishedAt: page.publishedAt === null ? null : iso(page.publishedAt),
      templateSuffix: null,
      createdAt: iso(page.createdAt),
      updatedAt: iso(page.updatedAt),
    };
  }

  #articles(args: Record<string, unknown>): Resolved {
    return this.#publishedConnection([...this.articles.values()], args, (a) => this.#articleJson(a));
  }

  #articleJson(a: FakeArticle): Resolved {
    return {
      __typename: 'Article',
      id: a.id,
      title: a.title,
      handle: a.handle,
      body: a.body,
      summary: a.summary,
      tags: a.tags,
      isPublished: a.isPublished,
      publishedAt: a.publishedAt === null ? null : iso(a.publishedAt),
      createdAt: iso(a.createdAt),
      updatedAt: iso(a.updatedAt),
      templateSuffix: null,
      author: a.author === null ? null : { __typename: 'ArticleAuthor', name: a.author },
      blog: { __typename: 'Blog', id: a.blog.id, title: a.blog.title, handle: a.blog.handle },
      image: null,
    };
  }

  #deletions(args: Record<string, unknown>): Resolved {
    const terms = parseSearch(args['query'], ['occurred_at']);
    const types = Array.isArray(args['subjectTypes']) ? (args['subjectTypes'] as string[]) : undefined;
    const items = this.deletionEvents
      .map((e, i) => ({ ...e, i }))
      .filter(
        (e) => (!types || types.includes(e.subjectType)) && terms.every((t) => compareTime(e.occurredAt, t)),
      );
    return connection(
      items,
      (e) => ({ value: e.i, id: e.i }),
      (e) => ({
        __typename: 'DeletionEvent',
        occurredAt: iso(e.occurredAt),
        subjectId: String(e.legacyId),
        subjectType: e.subjectType,
      }),
      args,
    );
  }
}

function stripTags(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

// ---------------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------------

export interface FakeShopify extends FakeServer {
  store: FakeShopifyStore;
}

export async function startFakeShopify(
  opts: { token?: string; shopName?: string; store?: FakeShopifyStore } = {},
): Promise<FakeShopify> {
  const store = opts.store ?? new FakeShopifyStore();
  if (opts.token) store.token = opts.token;
  if (opts.shopName) store.shopName = opts.shopName;
  const server = await startFakeServer((req) => store.answer(req), {
    rateLimitReply: (seconds) => ({
      status: 429,
      headers: { 'retry-after': `${seconds}.0` },
      body: {
        errors:
          'Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.',
      },
    }),
  });
  return Object.assign(server, { store });
}

/** A THROTTLED answer as Shopify sends it (§7's capture), for `failNext`. */
export function throttledReply(requested = 70, available = 66, restoreRate = 50): FakeReply {
  return {
    status: 200,
    body: {
      errors: [
        {
          message: 'Throttled',
          extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
        },
      ],
      extensions: {
        cost: {
          requestedQueryCost: requested,
          actualQueryCost: null,
          throttleStatus: { maximumAvailable: 1000, currentlyAvailable: available, restoreRate },
        },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Benchmark workspace
// ---------------------------------------------------------------------------------------------------

const WORDS = (
  'trail summit ridge canyon alpine river forest meadow harbor coastal desert glacier valley lake ' +
  'durable breathable waterproof insulated lightweight packable reflective seamless recycled merino ' +
  'fleece nylon canvas leather rubber mesh cotton wool zipper pocket strap buckle sole lining hood ' +
  'comfort support warmth grip traction stride layer pack shell base mid weekend everyday travel'
).split(' ');
const VENDORS = ['Acme', 'Northwind', 'Ridgeline', 'Cascade Supply', 'Tern & Co', 'Basecamp Goods'];
const TYPES = ['Jackets', 'Shoes', 'Backpacks', 'Tents', 'Base layers', 'Accessories'];
const COLORS = ['Red', 'Blue', 'Forest', 'Sand', 'Black', 'Ochre'];

/** A product description of a few KB (paragraphs, a list, a spec table), from its number and edit. */
export function benchProductHtml(n: number, edit: number): string {
  const text = benchText(WORDS, n, edit);
  const { word, sentence } = text;
  const paragraph = (sentences: number) => `<p>${text.paragraph(sentences)}</p>`;
  return [
    paragraph(5),
    edit ? `<p>Revised in edit ${edit}.</p>` : '',
    `<h3>Why you will like the ${word()} ${word()}</h3>`,
    paragraph(6),
    `<ul>${Array.from({ length: 5 }, () => `<li>${sentence(7)}</li>`).join('')}</ul>`,
    '<h3>Specifications</h3>',
    `<table><thead><tr><th>Spec</th><th>Value</th></tr></thead><tbody>${Array.from(
      { length: 5 },
      (_, i) => `<tr><td>${word()}</td><td>${(n % 97) + i * 3} ${word()}</td></tr>`,
    ).join('')}</tbody></table>`,
    '<h3>Care</h3>',
    paragraph(4),
  ].join('\n');
}

/** The cost bucket of the benchmark's store: a standard plan's (§7: 2,000 points, 100 a second). */
export const SHOPIFY_BENCH_BUCKET = { maximumAvailable: 2000, restoreRate: 100 };

/**
 * `documents` published products with three variants each and generated descriptions; `edit(count)`
 * changes the price and the text of that many products (their `updatedAt` moves).
 */
export const shopifyBenchWorkspace: BenchWorkspaceFactory = {
  type: 'storefront',
  label: 'Shopify',
  baseUrlSetting: 'KB_STOREFRONT_BASE_URL',
  async start(documents: number): Promise<BenchWorkspace> {
    const store = new FakeShopifyStore();
    Object.assign(store.bucket, {
      ...SHOPIFY_BENCH_BUCKET,
      currentlyAvailable: SHOPIFY_BENCH_BUCKET.maximumAvailable,
      at: performance.now(),
    });
    store.setPolicy(
      'REFUND_POLICY',
      '<p>You have 30 days after receiving your item to request a return.</p>',
    );
    const edits = new Map<string, number>();
    const ids: string[] = [];
    const variantsOf = (n: number, edit: number): FakeVariantSpec[] =>
      ['S', 'M', 'L'].map((size, i) => ({
        title: `${size} / ${COLORS[n % COLORS.length]}`,
        sku: `BN-${n}-${size}`,
        price: `${(20 + (n % 180) + i * 5 + edit).toFixed(2)}`,
        availableForSale: (n + i) % 7 !== 0,
      }));
    for (let n = 0; n < documents; n++) {
      const product = store.addProduct({
        title: `${WORDS[n % WORDS.length]![0]!.toUpperCase()}${WORDS[n % WORDS.length]!.slice(1)} ${TYPES[n % TYPES.length]!.replace(/s$/, '')} ${n}`,
        handle: `bench-product-${n}`,
        vendor: VENDORS[n % VENDORS.length]!,
        productType: TYPES[n % TYPES.length]!,
        tags: [WORDS[(n * 3) % WORDS.length]!, WORDS[(n * 5 + 1) % WORDS.length]!],
        options: [
          { name: 'Size', values: ['S', 'M', 'L'] },
          { name: 'Color', values: [COLORS[n % COLORS.length]!] },
        ],
        variants: variantsOf(n, 0),
        descriptionHtml: () => benchProductHtml(n, edits.get(ids[n]!) ?? 0),
      });
      ids.push(product.id);
    }
    const fake = await startFakeShopify({ store });
    let nextEdit = 0;
    return {
      url: fake.url,
      requests: fake.requests,
      close: () => fake.close(),
      source: { type: 'storefront', shop: SHOPIFY_SHOP, access_token: SHOPIFY_GOOD_TOKEN },
      edit(count: number): string[] {
        const changed: string[] = [];
        for (let i = 0; i < Math.min(count, documents); i++) {
          const n = nextEdit++ % documents;
          const id = ids[n]!;
          const edit = (edits.get(id) ?? 0) + 1;
          edits.set(id, edit);
          store.editProduct(id, { variants: variantsOf(n, edit) });
          changed.push(id);
        }
        return changed;
      },
    };
  },
};
