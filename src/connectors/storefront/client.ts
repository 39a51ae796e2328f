/**
 * The Shopify Admin GraphQL calls of `storefront`: the endpoint (`/admin/api/{version}/graphql.json`, the
 * version from the connector's `apiVersion` setting), the access-token header, the queries and their
 * pagination, and Shopify's calculated query cost (its documented rate limit: a leaky bucket of cost points).
 *
 * Cost awareness lives here rather than in the shared HTTP client because it is GraphQL's own: every
 * answer reports the leaky bucket (`extensions.cost.throttleStatus`), and a query is refused with
 * THROTTLED on HTTP 200 when it would cost more than the bucket holds. So before each query the client
 * waits until the bucket, refilled at `restoreRate` since the last answer, holds what that kind of query
 * last asked for (`requestedQueryCost`); a THROTTLED answer that still comes is retried after the time
 * the bucket needs, a bounded number of times. 429 and 5xx are the HTTP client's (it retries them).
 * The time spent waiting on the budget is counted ({@link ShopifyClient.costWaitMs}).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { AppError } from '../../lib/errors.ts';
import { joinUrl, pathSegment } from '../base-url.ts';
import { redactSecrets, sourceName, sourceRefusal } from '../credential-check.ts';
import { SourceHttpError, SourcePermissionError, vendorErrorText } from '../http.ts';
import { paginateCursor } from '../toolkit/pagination.ts';
import type {
  ConnectorContext,
  JsonResponse,
  SourceHttpClient,
  SourceRequestOptions,
  SourceResponse,
} from '../types.ts';
import {
  ClientCredentialsTokens,
  fixedTokenOf,
  type ShopifyAuthCredentials,
  usesClientCredentials,
} from './auth.ts';
import {
  countSchema,
  envelopeSchema,
  type GraphqlError,
  type LooseConnection,
  looseConnectionSchema,
  type QueryCost,
  type Shop,
  shopSchema,
  type Variant,
  variantConnectionSchema,
} from './schemas.ts';

/** How the service names this source (one declaration, used by index.ts). */
export const STOREFRONT_SOURCE = { type: 'storefront', alias: 'shopify', label: 'Shopify' } as const;

/**
 * One of three ways in (auth.ts): a fixed `access_token` (also what an OAuth consent fills, with the
 * refresh fields the service adds beside it), or `client_id` + `client_secret` for the client credentials
 * grant.
 */
export interface StorefrontCredentials extends ShopifyAuthCredentials {
  /** The bare store name (`acme`), the leading label of `acme.myshopify.com`. */
  shop: string;
}

type StorefrontContext = Pick<
  ConnectorContext<StorefrontCredentials>,
  'http' | 'signal' | 'baseUrl' | 'credentials' | 'settings'
>;

/** Path of the Admin GraphQL endpoint of one API version. */
export function shopifyGraphqlPath(apiVersion: string): string {
  return `/admin/api/${pathSegment(apiVersion)}/graphql.json`;
}

export function shopifyHeaders(token: string): Record<string, string> {
  return { 'x-shopify-access-token': token };
}

/** What to do about a refused token (the credential check says the same). */
export const STOREFRONT_TOKEN_HINT =
  'Check source.access_token (an Admin API access token of this store): reinstall the app, or create the connection again with a new token, client credentials (source.client_id and source.client_secret) or OAuth consent.';

/** What each refusal of the whole store means, by HTTP status (shared with the credential check). */
export const STOREFRONT_REFUSAL_HINTS: { [status: number]: string; other: string } = {
  401: STOREFRONT_TOKEN_HINT,
  402: 'The store is frozen (unpaid); Shopify refuses API access until it is reactivated.',
  403: 'The token lacks the access scopes needed; grant read access to the app.',
  404: 'Check source.shop: no store answers there.',
  423: 'The store is locked; Shopify refuses API access.',
  other: STOREFRONT_TOKEN_HINT,
};

// ---------------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------------

/**
 * Variants read with their product. Products with more are completed by {@link ShopifyClient.moreVariants}
 * (Shopify allows 2,048 variants; most products have a handful, and a larger first would multiply every
 * page's requested cost).
 */
const VARIANTS_FIRST = 20;
/**
 * Products a page. Shopify's cost rule (§7: object 1, connection 2 + first × node) puts one product at
 * about 24 points (itself, its options, 20 variants), so a page asks ~482 of the 1,000 a single query may
 * cost and of the 2,000 a standard bucket holds: two pages can be in the bucket at once.
 */
const PRODUCTS_FIRST = 20;
/** Listings of ids and change tokens only: the 250 maximum (one point a node). */
const STATES_FIRST = 250;
/** Articles carry their blog (one more object each). */
const ARTICLE_STATES_FIRST = 125;
/** Bodies fetched by id per request. */
export const PRODUCT_NODES_BATCH = 20;
export const CONTENT_NODES_BATCH = 25;

const VARIANT_FIELDS = 'id title sku price compareAtPrice availableForSale';
const PRODUCT_FIELDS = `id title handle status descriptionHtml vendor productType tags onlineStoreUrl updatedAt publishedAt options { name values } variants(first: ${VARIANTS_FIRST}) { nodes { ${VARIANT_FIELDS} } pageInfo { hasNextPage endCursor } }`;
const PAGE_STATE_FIELDS = 'id handle isPublished publishedAt updatedAt';
const ARTICLE_STATE_FIELDS = 'id handle isPublished publishedAt updatedAt blog { id title handle }';
const PAGE_INFO = 'pageInfo { hasNextPage endCursor }';

/**
 * What the shop query asks besides the shop's facts. An incremental pass asks everything an unchanged
 * store needs in this one query: the count, the first page of changed products and the first pages of
 * the page and article listings (their requested cost, some 700 points, stays under the 1,000 a query
 * may cost).
 */
export interface ShopQueryParts {
  /** The policies (needs `read_legal_policies`). */
  policies: boolean;
  /** Products matching this search (`productsCount`, no limit): an incremental pass's check of the id pass. */
  productsCount?: string | undefined;
  /** The first page of products matching this search, by `updatedAt`, as {@link ShopifyClient.products}. */
  changedProducts?: string | undefined;
  /** The first page of the page listing ({@link ShopifyClient.pageStates}). */
  pages?: boolean;
  /** The first page of the article listing ({@link ShopifyClient.articleStates}). */
  articles?: boolean;
}

/** Listing pages inside the shop query: smaller than the listings' own, to keep the query under its cap. */
const PROBE_PAGES_FIRST = 100;
const PROBE_ARTICLES_FIRST = 50;

/** What the shop query answered, each part present when asked. */
export interface ShopAnswer {
  shop: Shop;
  productsCount?: z.infer<typeof countSchema>;
  changedProducts?: LooseConnection;
  pages?: LooseConnection;
  articles?: LooseConnection;
}

function shopQuery(parts: ShopQueryParts): string {
  const policies = parts.policies ? ' shopPolicies { id type title body url createdAt updatedAt }' : '';
  const roots = [`shop { name currencyCode primaryDomain { url }${policies} }`];
  const variables: string[] = [];
  if (parts.productsCount !== undefined) {
    variables.push('$countQuery: String!');
    roots.push('productsCount(query: $countQuery, limit: null) { count precision }');
  }
  if (parts.changedProducts !== undefined) {
    variables.push('$changedQuery: String!');
    roots.push(
      `changedProducts: products(first: ${PRODUCTS_FIRST}, query: $changedQuery, sortKey: UPDATED_AT) { nodes { ${PRODUCT_FIELDS} } ${PAGE_INFO} }`,
    );
  }
  if (parts.pages) {
    roots.push(
      `pages(first: ${PROBE_PAGES_FIRST}, sortKey: ID) { nodes { ${PAGE_STATE_FIELDS} } ${PAGE_INFO} }`,
    );
  }
  if (parts.articles) {
    roots.push(
      `articles(first: ${PROBE_ARTICLES_FIRST}, sortKey: ID) { nodes { ${ARTICLE_STATE_FIELDS} } ${PAGE_INFO} }`,
    );
  }
  const declared = variables.length > 0 ? `(${variables.join(', ')})` : '';
  return `query StorefrontShop${declared} { ${roots.join(' ')} }`;
}

const QUERIES = {
  shop: shopQuery({ policies: true }),
  products: `query StorefrontProducts($first: Int!, $cursor: String, $query: String) { products(first: $first, after: $cursor, query: $query, sortKey: UPDATED_AT) { nodes { ${PRODUCT_FIELDS} } ${PAGE_INFO} } }`,
  productStates: `query StorefrontProductStates($first: Int!, $cursor: String, $query: String) { products(first: $first, after: $cursor, query: $query, sortKey: ID) { nodes { id status onlineStoreUrl updatedAt } ${PAGE_INFO} } }`,
  productNodes: `query StorefrontProductNodes($ids: [ID!]!) { nodes(ids: $ids) { __typename ... on Product { ${PRODUCT_FIELDS} } } }`,
  productPublications: `query StorefrontProductPublications($ids: [ID!]!) { nodes(ids: $ids) { __typename ... on Product { id resourcePublicationsCount(onlyPublished: true) { count precision } } } }`,
  variants: `query StorefrontVariants($id: ID!, $first: Int!, $cursor: String) { product(id: $id) { variants(first: $first, after: $cursor) { nodes { ${VARIANT_FIELDS} } ${PAGE_INFO} } } }`,
  deletionEvents: `query StorefrontDeletions($first: Int!, $cursor: String, $query: String) { deletionEvents(first: $first, after: $cursor, subjectTypes: [PRODUCT], query: $query) { nodes { occurredAt subjectId subjectType } ${PAGE_INFO} } }`,
  pageStates: `query StorefrontPageStates($first: Int!, $cursor: String) { pages(first: $first, after: $cursor, sortKey: ID) { nodes { ${PAGE_STATE_FIELDS} } ${PAGE_INFO} } }`,
  pageNodes: `query StorefrontPageNodes($ids: [ID!]!) { nodes(ids: $ids) { __typename ... on Page { ${PAGE_STATE_FIELDS} title body createdAt } } }`,
  articleStates: `query StorefrontArticleStates($first: Int!, $cursor: String) { articles(first: $first, after: $cursor, sortKey: ID) { nodes { ${ARTICLE_STATE_FIELDS} } ${PAGE_INFO} } }`,
  articleNodes: `query StorefrontArticleNodes($ids: [ID!]!) { nodes(ids: $ids) { __typename ... on Article { ${ARTICLE_STATE_FIELDS} title body summary tags author { name } createdAt } } }`,
} as const;

type QueryKind = keyof typeof QUERIES;

/** Shopify's cost rule for a connection (§7). */
const connectionCost = (first: number, nodeCost: number) => 2 + first * nodeCost;
/** One product as the listing reads it: itself, its options, its variants connection. */
const PRODUCT_COST = 1 + 1 + connectionCost(VARIANTS_FIRST, 1);

/**
 * What a query of each kind is expected to ask before Shopify has answered one (afterwards the last
 * `requestedQueryCost` of that kind is used). Node batches scale with their size.
 */
function estimate(kind: QueryKind, nodes = 0): number {
  switch (kind) {
    case 'shop':
      // The incremental pass's shop query with its listing pages; the learned cost takes over after.
      return 12 + connectionCost(PRODUCTS_FIRST, PRODUCT_COST) + connectionCost(PROBE_PAGES_FIRST, 1);
    case 'products':
      return connectionCost(PRODUCTS_FIRST, PRODUCT_COST);
    case 'productNodes':
      return nodes * PRODUCT_COST;
    case 'productPublications':
      return nodes * 2;
    case 'variants':
      return 1 + connectionCost(STATES_FIRST, 1);
    case 'articleStates':
      return connectionCost(ARTICLE_STATES_FIRST, 2);
    case 'pageNodes':
      return nodes;
    case 'articleNodes':
      return nodes * 3;
    default:
      return connectionCost(STATES_FIRST, 1);
  }
}

/** Which access scope each kind of query needs (§2), for the hint of an ACCESS_DENIED answer. */
const SCOPES: Record<QueryKind, string> = {
  shop: 'read_legal_policies',
  products: 'read_products',
  productStates: 'read_products',
  productNodes: 'read_products',
  productPublications: 'read_publications',
  variants: 'read_products',
  deletionEvents: 'read_products',
  pageStates: 'read_content (or read_online_store_pages)',
  pageNodes: 'read_content (or read_online_store_pages)',
  articleStates: 'read_content (or read_online_store_pages)',
  articleNodes: 'read_content (or read_online_store_pages)',
};

/** THROTTLED answers in a row for one query before the sync gives up. */
const MAX_THROTTLED_RETRIES = 5;
/** The wait after a THROTTLED answer that reports no bucket. */
const THROTTLED_FALLBACK_MS = 1_000;

/** A GraphQL answer with errors (other than THROTTLED), e.g. a field this version lacks. */
export class ShopifyQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShopifyQueryError';
  }
}

/**
 * ACCESS_DENIED: the token lacks the access scope a field needs. Costs the resources behind that field
 * only: the sync reports it as a failure naming the scope and goes on with the rest. A permission error
 * (the job warns `permission_missing`), otherwise handled as a query error.
 */
export class ShopifyAccessDenied extends SourcePermissionError {
  /** The scope Shopify names, or the one this kind of query needs. */
  readonly scope: string;
  /** The field refused (`["shop", "shopPolicies"]`), when Shopify says. */
  readonly path: readonly (string | number)[];
  constructor(message: string, scope: string, path: readonly (string | number)[]) {
    super(message);
    this.name = 'ShopifyAccessDenied';
    this.scope = scope;
    this.path = path;
  }
}

export interface ClientTuning {
  /** Waits `ms` for the budget, rejecting when `signal` fires. Default: a real timer. */
  wait?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Clock of the budget model (ms). Default: `performance.now`. */
  now?: () => number;
  /** Wall clock (epoch ms) of token expiry and the id pass's interval. Default: `Date.now`. */
  clock?: () => number;
}

interface Bucket {
  available: number;
  maximum: number;
  restoreRate: number;
  /** When `available` was read (ms, {@link ClientTuning.now}). */
  at: number;
}

export class ShopifyClient {
  readonly #ctx: StorefrontContext;
  readonly #url: string;
  /** The client credentials grant's tokens; undefined for a fixed or OAuth token (the job's to keep). */
  readonly #granted: ClientCredentialsTokens | undefined;
  readonly #wait: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #now: () => number;
  #bucket: Bucket | undefined;
  readonly #asked = new Map<QueryKind, number>();
  #costWaitMs = 0;
  #throttled = 0;
  #queries = 0;
  #actualCost = 0;

  constructor(ctx: StorefrontContext, tuning: ClientTuning = {}) {
    const version = ctx.settings['apiVersion'];
    if (!version) throw new Error(`${sourceName(STOREFRONT_SOURCE)}: no Admin API version setting`);
    this.#ctx = ctx;
    this.#url = joinUrl(ctx.baseUrl, shopifyGraphqlPath(version));
    this.#granted = usesClientCredentials(ctx.credentials)
      ? new ClientCredentialsTokens({
          http: ctx.http,
          baseUrl: ctx.baseUrl,
          credentials: ctx.credentials,
          ...(tuning.clock ? { now: tuning.clock } : {}),
        })
      : undefined;
    this.#wait = tuning.wait ?? (async (ms, signal) => void (await sleep(ms, undefined, { signal })));
    this.#now = tuning.now ?? (() => performance.now());
  }

  /** Milliseconds spent waiting on the cost budget (before queries and after THROTTLED answers). */
  get costWaitMs(): number {
    return this.#costWaitMs;
  }
  /** THROTTLED answers received (each retried). */
  get throttledAnswers(): number {
    return this.#throttled;
  }
  /** GraphQL queries sent (THROTTLED ones included; the HTTP client's own retries not). */
  get queries(): number {
    return this.#queries;
  }
  /** Sum of the `actualQueryCost` Shopify charged. */
  get actualCost(): number {
    return this.#actualCost;
  }
  /** Tokens obtained through the client credentials grant in this pass. */
  get tokenGrants(): number {
    return this.#granted?.grants ?? 0;
  }

  /**
   * The shop: currency, storefront domain and, as asked, the policies (no pagination: §5.4) and a product
   * count. Throws {@link ShopifyAccessDenied} naming the refused part.
   */
  async shop(parts: ShopQueryParts): Promise<ShopAnswer> {
    const schema = z.object({
      shop: shopSchema,
      productsCount: countSchema.optional(),
      changedProducts: looseConnectionSchema.optional(),
      pages: looseConnectionSchema.optional(),
      articles: looseConnectionSchema.optional(),
    });
    const variables = {
      ...(parts.productsCount === undefined ? {} : { countQuery: parts.productsCount }),
      ...(parts.changedProducts === undefined ? {} : { changedQuery: parts.changedProducts }),
    };
    const data = await this.#exchange(
      'shop',
      { query: shopQuery(parts), variables },
      schema,
      estimate('shop'),
    );
    const { shop, productsCount, changedProducts, pages, articles } = data.data;
    return {
      shop,
      ...(productsCount ? { productsCount } : {}),
      ...(changedProducts ? { changedProducts } : {}),
      ...(pages ? { pages } : {}),
      ...(articles ? { articles } : {}),
    };
  }

  /** How many publications each product is published to (null where Shopify has no such product). */
  productPublications(ids: readonly string[]): Promise<unknown[]> {
    return this.#nodes('productPublications', ids);
  }

  /**
   * Products matching `query` (Shopify search syntax) by `updatedAt`, oldest first, with their variants;
   * Shopify's cursor holds the last id and value, so the order is stable while products change.
   */
  products(query: string | undefined, after?: string): AsyncGenerator<LooseConnection> {
    return this.#listing('products', 'products', { first: PRODUCTS_FIRST, query: query ?? null }, after);
  }

  /** Every product matching `query` with only its id, status, storefront URL and edit time, by id. */
  productStates(query: string): AsyncGenerator<LooseConnection> {
    return this.#listing('productStates', 'products', { first: STATES_FIRST, query });
  }

  /** Products by id, with the listing's fields; null where Shopify has none. */
  productNodes(ids: readonly string[]): Promise<unknown[]> {
    return this.#nodes('productNodes', ids);
  }

  /** The variants of a product after the listing's first {@link VARIANTS_FIRST}. */
  async moreVariants(productId: string, after: string): Promise<Variant[]> {
    const schema = z.object({ product: z.object({ variants: variantConnectionSchema }).nullable() });
    const out: Variant[] = [];
    const pages = paginateCursor(this.#paging('variants'), {
      request: this.#request('variants', { id: productId, first: STATES_FIRST }),
      schema,
      items: (d) => d.product?.variants.nodes ?? [],
      cursor: {
        param: 'cursor',
        in: 'variables',
        next: (d) => d.product?.variants.pageInfo.endCursor,
        hasMore: (d) => d.product?.variants.pageInfo.hasNextPage ?? false,
      },
      resume: after,
    });
    for await (const page of pages) {
      if (!page.data.product) throw new ShopifyQueryError(`product ${productId} is gone`);
      out.push(...page.data.product.variants.nodes);
    }
    return out;
  }

  /**
   * Product deletion events matching `query` (`occurred_at:>='…'`). Deprecated (Corrections): throws
   * {@link ShopifyQueryError} where the version no longer answers it.
   */
  deletionEvents(query: string): AsyncGenerator<LooseConnection> {
    return this.#listing('deletionEvents', 'deletionEvents', { first: STATES_FIRST, query });
  }

  /** Every online-store page with its publication state and edit time (no body). */
  pageStates(after?: string): AsyncGenerator<LooseConnection> {
    return this.#listing('pageStates', 'pages', { first: STATES_FIRST }, after);
  }

  pageNodes(ids: readonly string[]): Promise<unknown[]> {
    return this.#nodes('pageNodes', ids);
  }

  /** Every blog article with its publication state, edit time and blog (no body). */
  articleStates(after?: string): AsyncGenerator<LooseConnection> {
    return this.#listing('articleStates', 'articles', { first: ARTICLE_STATES_FIRST }, after);
  }

  articleNodes(ids: readonly string[]): Promise<unknown[]> {
    return this.#nodes('articleNodes', ids);
  }

  // -------------------------------------------------------------------------------------------------

  async *#listing(
    kind: QueryKind,
    root: string,
    variables: Record<string, unknown>,
    after?: string,
  ): AsyncGenerator<LooseConnection> {
    const schema = z.object({ [root]: looseConnectionSchema });
    const connection = (d: Record<string, LooseConnection>) => d[root]!;
    const pages = paginateCursor(this.#paging(kind), {
      request: this.#request(kind, variables),
      schema,
      items: (d) => connection(d).nodes,
      cursor: {
        param: 'cursor',
        in: 'variables',
        next: (d) => connection(d).pageInfo.endCursor,
        hasMore: (d) => connection(d).pageInfo.hasNextPage,
      },
      ...(after === undefined ? {} : { resume: after }),
    });
    for await (const page of pages) yield connection(page.data);
  }

  async #nodes(kind: QueryKind, ids: readonly string[]): Promise<unknown[]> {
    const schema = z.object({ nodes: z.array(z.unknown()) });
    const data = await this.#query(kind, { ids }, schema, estimate(kind, ids.length));
    return data.nodes;
  }

  #request(kind: QueryKind, variables: Record<string, unknown>) {
    return {
      url: this.#url,
      method: 'POST' as const,
      json: { query: QUERIES[kind], variables },
    };
  }

  async #query<T>(
    kind: QueryKind,
    variables: Record<string, unknown>,
    schema: z.ZodType<T>,
    expected: number,
  ): Promise<T> {
    const { json } = this.#request(kind, variables);
    return (await this.#exchange(kind, json, schema, expected)).data;
  }

  /**
   * What pagination sends its pages through: the HTTP client with the cost budget and GraphQL's own
   * error channel (errors on HTTP 200) put in the path of `requestJson`, which is all `paginateCursor`
   * calls. Everything else is the HTTP client's.
   */
  #paging(kind: QueryKind): { http: SourceHttpClient; signal: AbortSignal } {
    const http = this.#ctx.http;
    const exchange = <T>(schema: z.ZodType<T>, opts: SourceRequestOptions | undefined) =>
      this.#exchange(kind, opts?.json, schema, estimate(kind));
    return {
      signal: this.#ctx.signal,
      http: {
        request: (method, url, opts) => http.request(method, url, opts),
        requestJson: (_method, _url, schema, opts) => exchange(schema, opts),
        getJson: (url, schema, opts) => http.getJson(url, schema, opts),
        postJson: (url, body, schema, opts) => http.postJson(url, body, schema, opts),
        get bytesReceived() {
          return http.bytesReceived;
        },
        get requestCount() {
          return http.requestCount;
        },
      },
    };
  }

  /** One GraphQL query: budget, send, read the cost, retry THROTTLED, refuse errors, parse `data`. */
  async #exchange<T>(
    kind: QueryKind,
    body: unknown,
    schema: z.ZodType<T>,
    expected: number,
  ): Promise<JsonResponse<T>> {
    for (let throttled = 0; ; ) {
      await this.#awaitBudget(kind, expected);
      const res = await this.#send(body);
      if (res.status < 200 || res.status > 299) throw this.#statusError(kind, res.status, res.text());
      const envelope = envelopeSchema.safeParse(res.json());
      if (!envelope.success) {
        throw this.#invalid(kind, res.status, 'an answer that is not a GraphQL envelope');
      }
      const { data, errors, extensions } = envelope.data;
      const cost = extensions?.cost;
      if (cost) this.#record(kind, cost);
      if (typeof errors === 'string') {
        throw new ShopifyQueryError(`${this.#what(kind)} answered: ${errors.slice(0, 300)}`);
      }
      if (errors && errors.length > 0) {
        if (errors.some((e) => e.extensions?.code === 'THROTTLED')) {
          this.#throttled++;
          if (++throttled > MAX_THROTTLED_RETRIES) {
            throw new Error(
              `${this.#what(kind)} answered THROTTLED ${throttled} times in a row; Shopify's cost budget did not recover`,
            );
          }
          await this.#spend(throttleWaitMs(cost));
          continue;
        }
        const denied = errors.find((e) => e.extensions?.code === 'ACCESS_DENIED');
        if (denied) throw this.#accessDenied(kind, denied, errors.length);
        throw new ShopifyQueryError(
          `${this.#what(kind)} answered with errors: ${errors
            .map((e) => `${e.extensions?.code ? `${e.extensions.code}: ` : ''}${e.message}`)
            .join('; ')
            .slice(0, 400)}`,
        );
      }
      const parsed = schema.safeParse(data);
      if (!parsed.success) {
        throw this.#invalid(
          kind,
          res.status,
          `data of an unexpected shape: ${z.prettifyError(parsed.error).replace(/\s+/g, ' ')}`,
        );
      }
      return { data: parsed.data, status: res.status, headers: res.headers, url: res.url };
    }
  }

  /**
   * Sends one query. The token is kept current by the HTTP client, the same way for every source: the
   * client credentials grant's tokens given with the request, an OAuth connection's by the sync job
   * (before the announced expiry, and once more after a 401).
   */
  async #send(body: unknown): Promise<SourceResponse> {
    const granted = this.#granted;
    const token = granted ? await granted.current() : fixedTokenOf(this.#ctx.credentials);
    this.#queries++;
    return this.#ctx.http.request('POST', this.#url, {
      headers: shopifyHeaders(token),
      json: body,
      ...(granted ? { accessTokens: granted } : {}),
    });
  }

  /** Token values no message may carry. */
  #secrets(): string[] {
    const creds = this.#ctx.credentials;
    return [creds.access_token ?? '', creds.client_secret ?? '', ...(this.#granted?.secrets() ?? [])].filter(
      Boolean,
    );
  }

  /** Waits until the bucket, as last reported and refilled since, holds what this query will ask. */
  async #awaitBudget(kind: QueryKind, expected: number): Promise<void> {
    const b = this.#bucket;
    if (!b) return;
    const needed = Math.min(this.#asked.get(kind) ?? expected, b.maximum);
    const available = this.#available(b);
    if (available >= needed || b.restoreRate <= 0) return;
    await this.#spend(Math.ceil(((needed - available) / b.restoreRate) * 1000));
  }

  /** The bucket as last reported, refilled at its restore rate since. */
  #available(b: Bucket): number {
    return Math.min(b.maximum, b.available + ((this.#now() - b.at) / 1000) * b.restoreRate);
  }

  /**
   * Waits `ms` for the budget. The bucket model is credited with what the wait restored, whether or not
   * the clock saw it pass (a test's wait that does not sleep), so one shortfall is waited out once.
   */
  async #spend(ms: number): Promise<void> {
    this.#ctx.signal.throwIfAborted();
    this.#costWaitMs += ms;
    const b = this.#bucket;
    const before = b ? this.#available(b) : 0;
    await this.#wait(ms, this.#ctx.signal);
    if (b && this.#bucket === b) {
      const restored = Math.min(b.maximum, before + (ms / 1000) * b.restoreRate);
      this.#bucket = { ...b, available: Math.max(this.#available(b), restored), at: this.#now() };
    }
  }

  #record(kind: QueryKind, cost: QueryCost): void {
    const t = cost.throttleStatus;
    this.#bucket = {
      available: t.currentlyAvailable,
      maximum: t.maximumAvailable,
      restoreRate: t.restoreRate,
      at: this.#now(),
    };
    this.#asked.set(kind, cost.requestedQueryCost);
    this.#actualCost += cost.actualQueryCost ?? 0;
  }

  #what(kind: QueryKind): string {
    return `${sourceName(STOREFRONT_SOURCE)} query ${/^query (\w+)/.exec(QUERIES[kind])?.[1] ?? kind}`;
  }

  #statusError(kind: QueryKind, status: number, text: string): AppError | SourceHttpError {
    const vendorMessage = vendorErrorText(text);
    const hint = STOREFRONT_REFUSAL_HINTS[status];
    if (hint) {
      return sourceRefusal(
        STOREFRONT_SOURCE,
        'refused the sync',
        { status, vendorMessage },
        hint,
        this.#secrets(),
      );
    }
    return new SourceHttpError(
      `${this.#what(kind)} answered HTTP ${status}${vendorMessage ? `: ${vendorMessage}` : ''}`,
      { kind: 'status', status, url: this.#url, attempts: 1, vendorMessage },
    );
  }

  #invalid(kind: QueryKind, status: number, what: string): SourceHttpError {
    return new SourceHttpError(`${this.#what(kind)} answered ${what}`, {
      kind: 'invalid_response',
      status,
      url: this.#url,
      attempts: 1,
    });
  }

  /** ACCESS_DENIED: the app lacks a scope; name it as Shopify does, if it does. */
  #accessDenied(kind: QueryKind, error: GraphqlError, errorCount: number): ShopifyAccessDenied {
    const said = error.extensions?.requiredAccess ?? error.message;
    const named = /(?:Required access:\s*)?`([a-z_]+)`/i.exec(said)?.[1];
    const scope = named ?? SCOPES[kind];
    const more = errorCount > 1 ? ` (and ${errorCount - 1} more error${errorCount > 2 ? 's' : ''})` : '';
    return new ShopifyAccessDenied(
      `${this.#what(kind)} was denied (ACCESS_DENIED: ${redactSecrets(error.message, this.#secrets()).slice(0, 300)})${more}. Grant the app the ${scope} access scope (reinstall it or update its scopes), then sync again.`,
      scope,
      error.path ?? [],
    );
  }
}

/** §7: wait `(requestedQueryCost - currentlyAvailable) / restoreRate` seconds, then retry. */
function throttleWaitMs(cost: QueryCost | undefined): number {
  if (!cost || cost.throttleStatus.restoreRate <= 0) return THROTTLED_FALLBACK_MS;
  const t = cost.throttleStatus;
  return Math.max(1, Math.ceil(((cost.requestedQueryCost - t.currentlyAvailable) / t.restoreRate) * 1000));
}
