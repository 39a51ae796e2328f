/**
 * The content sync of `storefront` (Shopify Admin GraphQL): the products a shopper can see, the
 * online-store pages, the blog articles and the shop policies, each a `public` markdown item.
 *
 * Which products are items: status ACTIVE and published, to the Online Store (`onlineStoreUrl` non-null:
 * active is not published) or to any other publication (a headless storefront's, say: Shopify answers
 * `onlineStoreUrl` null for every product of a store without the Online Store). The latter are asked
 * (`resourcePublicationsCount`, `read_publications`) only for active products without an online-store
 * URL; their item URL is `/products/{handle}` on the shop's primary domain, the path the Online Store and
 * Hydrogen storefronts both use. Archived, draft, unlisted and unpublished products are not items, and
 * leave when the connection holds them.
 *
 * 1. The shop (one query): currency and storefront domain, which every item's text or URL uses, and
 *    the policies (few, no pagination): each yielded when its token changed, the missing ones deleted.
 * 2. Products, streamed by `updatedAt` (sortKey UPDATED_AT: the cursor holds id and value, so the order
 *    is stable), 20 a page with their variants, a checkpoint after each page. A first pass (no cursor)
 *    and a reset ask for `status:active`; an incremental pass asks for everything updated at or after
 *    the newest `updatedAt` it handled (second precision, hence `>=`; the boundary second is re-listed
 *    and skipped by its token), whatever the status, so what was archived or drafted comes back and
 *    leaves.
 * 3. Deletions, incremental passes only, when something says they must be looked for
 *    ({@link idPassReason}): the shop query counts the active products published to the Online Store
 *    (`productsCount`); when that differs from the items the connection holds after step 2 (a deletion,
 *    an archive, an unpublish), a product failed last time, or the last id pass is older than
 *    `KB_STOREFRONT_ID_PASS_HOURS` (default 24: the backstop for what a count cannot see, e.g. an unpublish
 *    and a publish in one interval, or a headless product leaving its storefront), the pass asks
 *    `deletionEvents` since that time or the newest event seen, where the API version still answers it
 *    (deprecated), and runs the complete id pass: every active product's id, URL and edit time (250 a
 *    page, one point each). A held product that is not in it, or no longer published, is deleted; one
 *    whose token differs from the held one and that step 2 did not handle (published without an edit, or
 *    missed by the search index's lag) is fetched by id (`nodes`).
 * 4. Pages and articles: few, so each pass lists them all without bodies (id, handle, publication and
 *    edit time) and fetches the bodies of new or changed published ones by id; the complete listing
 *    tells what left (deleted, unpublished).
 *
 * Change tokens: `updatedAt` plus a digest of what an item shows that does not move `updatedAt` (the
 * product's publication, the shop's currency and domain, an article's blog, the rendering FORMAT), all
 * readable from the cheap listings, so comparing needs no bodies. An incremental pass asks the first
 * page of each listing (changed products, pages, articles) and the product count inside the shop query,
 * so an unchanged store of up to 100 pages and 50 articles costs that one query; once a day the deletion
 * events and the id pass too.
 *
 * A scope the token lacks (ACCESS_DENIED) costs the resources behind it: the policies without
 * `read_legal_policies`, the products without `read_products`, pages and articles without `read_content`,
 * products published only outside the Online Store without `read_publications`. Each is a failure naming
 * the scope (the job ends `incomplete`), nothing behind it is deleted, and the rest syncs.
 *
 * Requests go one at a time: Shopify's cost budget is per app and store, so parallel queries would only
 * drain it faster; a page of products already carries twenty documents.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isAppError } from '../../lib/errors.ts';
import { sourceName } from '../credential-check.ts';
import { isSourceHttpError, isTransientSourceError, SourcePermissionError } from '../http.ts';
import { knownById } from '../toolkit/known.ts';
import {
  deleteUnlisted,
  FailureRun,
  type FailureRunOptions,
  type ListedRecord,
  listingPass,
  type ReadOutcome,
} from '../toolkit/listing-pass.ts';
import type { ConnectorContext, KnownDocument, SourceDocument, SyncEvent, SyncOptions } from '../types.ts';
import {
  type ClientTuning,
  CONTENT_NODES_BATCH,
  PRODUCT_NODES_BATCH,
  ShopifyAccessDenied,
  ShopifyClient,
  ShopifyQueryError,
  STOREFRONT_SOURCE,
  type StorefrontCredentials,
} from './client.ts';
import {
  articleUrl,
  pageUrl,
  renderArticle,
  renderPage,
  renderPolicy,
  renderProduct,
  type StoreFacts,
} from './render.ts';
import {
  type Article,
  type ArticleState,
  articleSchema,
  articleStateSchema,
  deletionEventSchema,
  type LooseConnection,
  type Page,
  type PageState,
  type Product,
  type ProductState,
  pageSchema,
  pageStateSchema,
  productPublicationsSchema,
  productSchema,
  productStateSchema,
  type Shop,
  type ShopPolicy,
  shopPolicySchema,
  type Variant,
} from './schemas.ts';

export const PRODUCTS_TABLE = 'storefront_products';
export const PAGES_TABLE = 'storefront_pages';
export const ARTICLES_TABLE = 'storefront_articles';
export const POLICIES_TABLE = 'storefront_policies';
type Table = typeof PRODUCTS_TABLE | typeof PAGES_TABLE | typeof ARTICLES_TABLE | typeof POLICIES_TABLE;

/** Bump when rendering or item fields change, so every item is read again once. */
const FORMAT = 1;

/** Body batches failing in a row for transient reasons (after the client's retries) mean Shopify is down. */
const MAX_TRANSIENT_IN_A_ROW = 3;

/** The default of `KB_STOREFRONT_ID_PASS_HOURS`: the longest an incremental pass goes without an id pass. */
export const DEFAULT_ID_PASS_HOURS = '24';
const HOUR_MS = 3_600_000;

/** The products `productsCount` counts: the items published to the Online Store. */
const ONLINE_ITEMS_QUERY = 'status:active AND published_status:published';
/** Appended to the change token of a product published only outside the Online Store. */
const HEADLESS_MARK = '|headless';

/**
 * The checkpoint, in Shopify's own times (never this machine's clock).
 * - `productsUpdatedAt`: the newest product `updatedAt` a pass has handled; the next incremental pass
 *   lists products updated at or after it, and a retried reset goes on from it (what came before was
 *   stored by the same job, so the sweep keeps it).
 * - `deletionsAt`: the newest deletion event seen. Deletion events are asked from the later of the two:
 *   both are at or before the previous pass, and a store that deletes often but edits rarely would
 *   otherwise page through the same old events every sync.
 */
export const storefrontCursorSchema = z.object({
  productsUpdatedAt: z.string().optional(),
  deletionsAt: z.string().optional(),
  /**
   * When the last complete product id pass (or full listing) ended, epoch ms of this machine's clock
   * (only compared with it, for the id pass's interval). Absent: the next incremental pass runs one.
   */
  idPassAt: z.number().int().nonnegative().optional(),
  /** A product failed in the last pass: the next one runs the id pass, which reads it again. */
  productsFailed: z.boolean().optional(),
});
export type StorefrontCursor = z.infer<typeof storefrontCursorSchema>;

type Event = SyncEvent<StorefrontCursor>;

export interface StorefrontSyncTuning extends ClientTuning {
  /** Handed the pass's client once it exists (tests read its cost counters). */
  observe?: (client: ShopifyClient) => void;
}

/** What the whole pass shares. */
interface Pass {
  ctx: ConnectorContext<StorefrontCredentials>;
  client: ShopifyClient;
  full: boolean;
  /** What the connection holds, by table; empty in a full pass (the runner's sweep removes the rest). */
  known: Record<Table, Map<string, KnownDocument>>;
  store: StoreFacts;
  /** The store's active products published to the Online Store, when this pass counted them. */
  onlineCount: number | undefined;
  /** Active products without an online-store URL found published elsewhere in this pass. */
  publishedElsewhere: Set<string>;
  /** Set once `read_publications` was refused: such products cannot be told apart this pass. */
  publicationsDenied: boolean;
  /** Wall clock (epoch ms). */
  now: () => number;
}

export async function* syncStorefront(
  ctx: ConnectorContext<StorefrontCredentials>,
  opts: SyncOptions<StorefrontCursor>,
  tuning: StorefrontSyncTuning = {},
): AsyncGenerator<Event> {
  const client = new ShopifyClient(ctx, tuning);
  tuning.observe?.(client);
  const started = performance.now();
  try {
    yield* runPass(ctx, opts, client, tuning.clock ?? Date.now);
  } finally {
    // The benchmark reads costWaitMs: the share of a sync spent waiting on Shopify's cost budget.
    ctx.log.info(
      {
        costWaitMs: client.costWaitMs,
        syncMs: Math.round(performance.now() - started),
        queries: client.queries,
        throttledAnswers: client.throttledAnswers,
        actualQueryCost: client.actualCost,
        tokenGrants: client.tokenGrants,
      },
      'storefront sync: Shopify query cost',
    );
  }
}

async function* runPass(
  ctx: ConnectorContext<StorefrontCredentials>,
  opts: SyncOptions<StorefrontCursor>,
  client: ShopifyClient,
  now: () => number,
): AsyncGenerator<Event> {
  const full = opts.mode === 'full';
  const incremental = !full && opts.cursor?.productsUpdatedAt !== undefined;
  const { shop, onlineCount, firstPages, denied } = await readShop(
    client,
    incremental ? changedProductsQuery(opts.cursor!.productsUpdatedAt!) : undefined,
  );
  const known: Pass['known'] = {
    [PRODUCTS_TABLE]: new Map(),
    [PAGES_TABLE]: new Map(),
    [ARTICLES_TABLE]: new Map(),
    [POLICIES_TABLE]: new Map(),
  };
  if (!full) {
    for (const doc of (await knownById(opts.known, ctx.signal)).values()) {
      if (doc.table in known) known[doc.table as Table].set(doc.externalId, doc);
    }
  }
  const pass: Pass = {
    ctx,
    client,
    full,
    known,
    onlineCount,
    publishedElsewhere: new Set(),
    publicationsDenied: false,
    now,
    store: {
      currencyCode: shop.currencyCode,
      storefront: (shop.primaryDomain?.url ?? `https://${ctx.credentials.shop}.myshopify.com`).replace(
        /\/+$/,
        '',
      ),
    },
  };

  for (const [table, message] of denied)
    yield failure(table, undefined, message, { retryable: false, scopeDenied: true });
  if (shop.shopPolicies) yield* syncPolicies(pass, shop.shopPolicies);
  const cursor: StorefrontCursor = { ...opts.cursor };
  if (!denied.has(PRODUCTS_TABLE)) {
    yield* scoped(PRODUCTS_TABLE, syncProducts(pass, cursor, firstPages[PRODUCTS_TABLE]));
  }
  if (!denied.has(PAGES_TABLE)) {
    yield* scoped(PAGES_TABLE, syncContent(pass, PAGE_KIND, firstPages[PAGES_TABLE]));
  }
  if (!denied.has(ARTICLES_TABLE)) {
    yield* scoped(ARTICLES_TABLE, syncContent(pass, ARTICLE_KIND, firstPages[ARTICLES_TABLE]));
  }
  yield { kind: 'checkpoint', cursor: { ...cursor } };
}

/** Products updated at or after `since` (second precision, so the boundary second again), any status. */
function changedProductsQuery(since: string): string {
  return `updated_at:>=${quoted(since)}`;
}

/** What the shop query brought: the shop, and in incremental passes the count and first listing pages. */
interface ShopRead {
  shop: Shop;
  onlineCount: number | undefined;
  /** First pages of the listings, by the table they fill. */
  firstPages: Partial<Record<Table, LooseConnection>>;
  /** Parts the token may not read: each a failure, and its phase is skipped. */
  denied: Map<Table, string>;
}

/** Which part of the shop query a refused field belongs to (the field's alias is the path's root). */
const PART_OF_PATH: Record<string, Table> = {
  shopPolicies: POLICIES_TABLE,
  productsCount: PRODUCTS_TABLE,
  changedProducts: PRODUCTS_TABLE,
  pages: PAGES_TABLE,
  articles: ARTICLES_TABLE,
};

/**
 * The shop query: with the policies and, in incremental passes, the product count and the first page of
 * each listing (so that an unchanged store costs this one query). A part the token may not read is left
 * out and the query asked again without it; its refusal comes back to be reported.
 */
async function readShop(client: ShopifyClient, changedSince: string | undefined): Promise<ShopRead> {
  const denied = new Map<Table, string>();
  for (;;) {
    const incremental = changedSince !== undefined;
    const asks = (table: Table) => incremental && !denied.has(table);
    try {
      const answer = await client.shop({
        policies: !denied.has(POLICIES_TABLE),
        productsCount: asks(PRODUCTS_TABLE) ? ONLINE_ITEMS_QUERY : undefined,
        changedProducts: asks(PRODUCTS_TABLE) ? changedSince : undefined,
        pages: asks(PAGES_TABLE),
        articles: asks(ARTICLES_TABLE),
      });
      const count = answer.productsCount;
      return {
        shop: answer.shop,
        onlineCount: count?.precision === 'EXACT' ? count.count : undefined,
        firstPages: {
          ...(answer.changedProducts ? { [PRODUCTS_TABLE]: answer.changedProducts } : {}),
          ...(answer.pages ? { [PAGES_TABLE]: answer.pages } : {}),
          ...(answer.articles ? { [ARTICLES_TABLE]: answer.articles } : {}),
        },
        denied,
      };
    } catch (err) {
      if (!(err instanceof ShopifyAccessDenied)) throw err;
      const table = err.path.map((p) => PART_OF_PATH[String(p)]).find((t) => t !== undefined);
      if (!table || denied.has(table)) throw err;
      denied.set(table, `${table.replace('storefront_', '')} could not be read: ${bare(err)}`);
    }
  }
}

/** A listing's pages: the first one when the shop query brought it, then the rest after its cursor. */
async function* listingPages(
  first: LooseConnection | undefined,
  rest: (after: string | undefined) => AsyncGenerator<LooseConnection>,
): AsyncGenerator<LooseConnection> {
  if (!first) {
    yield* rest(undefined);
    return;
  }
  yield first;
  if (first.pageInfo.hasNextPage && first.pageInfo.endCursor) yield* rest(first.pageInfo.endCursor);
}

/** An error's message without the source's name, for a failure that names it already. */
function bare(err: Error): string {
  const prefix = `${sourceName(STOREFRONT_SOURCE)} `;
  return err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
}

/** A phase whose first query the token may not make: its refusal is one failure, and the pass goes on. */
async function* scoped(table: Table, phase: AsyncGenerator<Event>): AsyncGenerator<Event> {
  try {
    yield* phase;
  } catch (err) {
    if (!(err instanceof ShopifyAccessDenied)) throw err;
    yield failure(table, undefined, `${table.replace('storefront_', '')} could not be read: ${bare(err)}`, {
      retryable: false,
      scopeDenied: true,
    });
  }
}

// ---------------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------------

/** `updatedAt` plus a digest of what else the item shows; see the file comment. */
function changeToken(updatedAt: string, ...parts: string[]): string {
  const digest = createHash('sha256')
    .update([String(FORMAT), ...parts].join('\u0000'))
    .digest('hex')
    .slice(0, 12);
  return `${updatedAt}|${digest}`;
}

function failure(
  table: Table,
  id: string | undefined,
  message: string,
  { retryable, scopeDenied = false }: { retryable: boolean; scopeDenied?: boolean },
): Event {
  const text = `${sourceName(STOREFRONT_SOURCE)} ${message}`;
  return {
    kind: 'failure',
    ...(id === undefined ? {} : { externalId: id }),
    table,
    // A scope the app lacks is a permission the merchant can grant (the job warns `permission_missing`).
    error: scopeDenied ? new SourcePermissionError(text) : new Error(text),
    retryable,
  };
}

function shapeFailure(table: Table, noun: string, raw: unknown, error: z.ZodError): Event {
  const id = idOf(raw);
  return failure(
    table,
    id,
    `${noun}${id ? ` ${id}` : ''} came in an unexpected shape: ${z.prettifyError(error).replace(/\s+/g, ' ')}`,
    { retryable: false },
  );
}

function idOf(raw: unknown): string | undefined {
  if (raw && typeof raw === 'object' && 'id' in raw) {
    const id = (raw as { id: unknown }).id;
    if (typeof id === 'string' && id !== '') return id;
  }
  return undefined;
}

/** The later of two ISO times (Shopify's are all UTC `Z` with second precision). */
function later(a: string | undefined, b: string): string {
  if (a === undefined) return b;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** A query value for Shopify search syntax: the time quoted, any quote in it dropped. */
function quoted(time: string): string {
  return `'${time.replace(/['"\\]/g, '')}'`;
}

/** Whether an error is one document's (a failure) rather than the whole store's (thrown). */
function isDocumentError(ctx: Pass['ctx'], err: unknown): boolean {
  if (ctx.signal.aborted || isAppError(err)) return false;
  return err instanceof ShopifyQueryError || err instanceof ShopifyAccessDenied || isSourceHttpError(err);
}

/**
 * Fetches `ids` by batch and hands each answer (null where Shopify has no such node) to `handle`. A
 * batch that fails is a failure of each of its ids; transient failures in a row end the sync.
 */
async function* inBatches(
  pass: Pass,
  table: Table,
  noun: string,
  ids: readonly string[],
  size: number,
  fetch: (batch: readonly string[]) => Promise<unknown[]>,
  handle: (id: string, node: unknown) => AsyncGenerator<Event>,
): AsyncGenerator<Event> {
  const run = new FailureRun(failureRun(noun));
  for (let i = 0; i < ids.length; i += size) {
    const outcome = await readBatch(pass, table, noun, ids.slice(i, i + size), fetch, handle);
    yield* outcome.events;
    run.record(outcome.transient, { failed: outcome.failed === true });
  }
}

/** Batch requests failing in a row for transient reasons; a batch refused for good neither counts nor resets. */
function failureRun(noun: string): FailureRunOptions {
  return {
    max: MAX_TRANSIENT_IN_A_ROW,
    source: sourceName(STOREFRONT_SOURCE),
    what: `${noun} requests`,
    permanentFailureResets: false,
  };
}

/** One batch by id: each answer handed to `handle`, or a failure of each id when the request fails. */
async function readBatch(
  pass: Pass,
  table: Table,
  noun: string,
  batch: readonly string[],
  fetch: (batch: readonly string[]) => Promise<unknown[]>,
  handle: (id: string, node: unknown) => AsyncGenerator<Event>,
): Promise<ReadOutcome<StorefrontCursor>> {
  let nodes: unknown[];
  try {
    nodes = await fetch(batch);
  } catch (err) {
    if (!isDocumentError(pass.ctx, err)) throw err;
    const retryable = isTransientSourceError(err);
    const message = err instanceof Error ? err.message : String(err);
    return {
      events: batch.map((id) =>
        failure(table, id, `${noun} ${id} could not be read: ${message}`, { retryable }),
      ),
      ...(retryable ? { transient: new Error(message) } : {}),
      failed: true,
    };
  }
  const events: Event[] = [];
  for (const [index, id] of batch.entries()) {
    for await (const event of handle(id, nodes[index] ?? null)) events.push(event);
  }
  return { events };
}

// ---------------------------------------------------------------------------------------------------
// Policies
// ---------------------------------------------------------------------------------------------------

async function* syncPolicies(pass: Pass, raws: readonly unknown[]): AsyncGenerator<Event> {
  const known = pass.known[POLICIES_TABLE];
  const present = new Set<string>();
  let complete = true;
  for (const raw of raws) {
    const parsed = shopPolicySchema.safeParse(raw);
    if (!parsed.success) {
      const type = (raw as { type?: unknown } | null)?.type;
      if (typeof type === 'string' && type) present.add(type);
      else complete = false;
      yield failure(
        POLICIES_TABLE,
        typeof type === 'string' && type ? type : undefined,
        `shop policy came in an unexpected shape: ${z.prettifyError(parsed.error).replace(/\s+/g, ' ')}`,
        { retryable: false },
      );
      continue;
    }
    const policy = parsed.data;
    // Shopify lists policy types the merchant never wrote, with an empty body.
    if (!policy.body.trim()) continue;
    present.add(policy.type);
    const version = changeToken(policy.updatedAt, policy.title, policy.url, policy.body);
    if (!pass.full && known.get(policy.type)?.version === version) continue;
    yield { kind: 'document', doc: policyDocument(policy, version) };
  }
  if (!complete) return;
  yield* deleteUnlisted({ signal: pass.ctx.signal, known, present });
}

function policyDocument(policy: ShopPolicy, version: string): SourceDocument {
  return {
    externalId: policy.type,
    title: policy.title,
    url: policy.url,
    markdown: renderPolicy(policy),
    updatedAt: policy.updatedAt,
    visibility: 'public',
    tags: ['storefront'],
    table: POLICIES_TABLE,
    version,
  };
}

// ---------------------------------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------------------------------

const onOnlineStore = (p: Pick<ProductState, 'onlineStoreUrl'>) =>
  typeof p.onlineStoreUrl === 'string' && p.onlineStoreUrl !== '';

/** An active product without an online-store URL: published elsewhere, or not at all (ask). */
const isCandidate = (p: Pick<ProductState, 'status' | 'onlineStoreUrl'>) =>
  p.status === 'ACTIVE' && !onOnlineStore(p);

function isListed(pass: Pass, p: Pick<ProductState, 'id' | 'status' | 'onlineStoreUrl'>): boolean {
  return p.status === 'ACTIVE' && (onOnlineStore(p) || pass.publishedElsewhere.has(p.id));
}

function productToken(pass: Pass, p: ProductState): string {
  const token = changeToken(p.updatedAt, p.status, p.onlineStoreUrl ?? '', pass.store.currencyCode);
  return onOnlineStore(p) ? token : `${token}${HEADLESS_MARK}`;
}

/**
 * Asks which of these active products without an online-store URL are published elsewhere, adding them
 * to {@link Pass.publishedElsewhere}. Without `read_publications` it reports that once and marks them
 * failed (held ones stay; new ones wait for the scope).
 */
async function* checkPublications(
  pass: Pass,
  ledger: ProductLedger,
  ids: readonly string[],
): AsyncGenerator<Event> {
  for (let i = 0; i < ids.length && !pass.publicationsDenied; i += STATE_BATCH) {
    const batch = ids.slice(i, i + STATE_BATCH);
    let nodes: unknown[];
    try {
      nodes = await pass.client.productPublications(batch);
    } catch (err) {
      if (!(err instanceof ShopifyAccessDenied)) throw err;
      pass.publicationsDenied = true;
      yield failure(
        PRODUCTS_TABLE,
        undefined,
        `active products not on the Online Store could not be checked for other publications (headless storefronts): ${bare(err)}`,
        { retryable: false, scopeDenied: true },
      );
      break;
    }
    for (const node of nodes) {
      const parsed = productPublicationsSchema.safeParse(node);
      if (parsed.success && (parsed.data.resourcePublicationsCount?.count ?? 0) > 0) {
        pass.publishedElsewhere.add(parsed.data.id);
      }
    }
  }
  if (pass.publicationsDenied) {
    for (const id of ids) if (!pass.publishedElsewhere.has(id)) ledger.failed.add(id);
  }
}

/** Products asked for their publications per request (`nodes` takes up to 250 ids; two points each). */
const STATE_BATCH = 250;

/** What the product phase has done with each id so far. */
interface ProductLedger {
  /** Yielded as a document, deleted or failed in this pass: the id pass leaves them alone. */
  handled: Set<string>;
  /** Yielded as a document in this pass (held now, even if the connection did not hold it before). */
  yielded: Set<string>;
  /** The change token of each yielded document. */
  yieldedVersions: Map<string, string>;
  deleted: Set<string>;
  failed: Set<string>;
}

async function* syncProducts(
  pass: Pass,
  cursor: StorefrontCursor,
  first: LooseConnection | undefined,
): AsyncGenerator<Event> {
  const since = cursor.productsUpdatedAt;
  const incremental = !pass.full && since !== undefined;
  const ledger = newLedger();
  const filters = [
    ...(incremental ? [] : ['status:active']),
    ...(since === undefined ? [] : [changedProductsQuery(since)]),
  ];
  // A listing of every active product (no cursor) is itself the id pass.
  const listed = new Set<string>();
  let listingComplete = since === undefined;

  const filter = filters.join(' AND ');
  const pages = listingPages(incremental ? first : undefined, (after) => pass.client.products(filter, after));
  for await (const page of pages) {
    const products: Product[] = [];
    for (const raw of page.nodes) {
      const parsed = productSchema.safeParse(raw);
      if (parsed.success) {
        products.push(parsed.data);
        continue;
      }
      const id = idOf(raw);
      if (id === undefined) listingComplete = false;
      else {
        listed.add(id);
        ledger.handled.add(id);
        ledger.failed.add(id);
      }
      yield shapeFailure(PRODUCTS_TABLE, 'product', raw, parsed.error);
    }
    // The boundary second is listed again every pass: an active product of it that is not held was
    // asked last pass (no edit since; a publication changed without one is the id pass's to find).
    const seenBefore = (p: Product) =>
      incremental && p.updatedAt === since && !pass.known[PRODUCTS_TABLE].has(p.id) && isCandidate(p);
    yield* checkPublications(
      pass,
      ledger,
      products.filter((p) => isCandidate(p) && !seenBefore(p)).map((p) => p.id),
    );
    for (const product of products) {
      cursor.productsUpdatedAt = later(cursor.productsUpdatedAt, product.updatedAt);
      if (seenBefore(product)) continue;
      if (isListed(pass, product)) listed.add(product.id);
      if (ledger.failed.has(product.id)) {
        ledger.handled.add(product.id);
        continue;
      }
      yield* productEvents(pass, ledger, product);
    }
    yield { kind: 'checkpoint', cursor: { ...cursor } };
  }

  if (pass.full || !incremental) {
    if (listingComplete) cursor.idPassAt = pass.now();
    markFailed(cursor, ledger.failed.size > 0 || !listingComplete);
    if (pass.full || !listingComplete) return;
  } else {
    const reason = idPassReason(pass, ledger, cursor);
    markFailed(cursor, ledger.failed.size > 0);
    if (!reason) return;
    // Why this sync lists every product id: an operator's first question about its cost.
    pass.ctx.log.info({ reason }, 'storefront: listing every active product id');
    yield* deletionEvents(pass, ledger, cursor, later(cursor.deletionsAt, since!));
    const published = yield* productIdPass(pass, ledger);
    markFailed(cursor, ledger.failed.size > 0 || !published);
    if (!published) return;
    cursor.idPassAt = pass.now();
    listed.clear();
    for (const id of published) listed.add(id);
  }
  yield* deleteUnlistedProducts(pass, ledger, listed);
}

function newLedger(): ProductLedger {
  return {
    handled: new Set(),
    yielded: new Set(),
    yieldedVersions: new Map(),
    deleted: new Set(),
    failed: new Set(),
  };
}

/** Held products (and those yielded this pass) that a complete listing did not list are gone. */
function deleteUnlistedProducts(pass: Pass, ledger: ProductLedger, listed: Set<string>): Generator<Event> {
  return deleteUnlisted({
    signal: pass.ctx.signal,
    known: pass.known[PRODUCTS_TABLE],
    present: listed,
    settled: (id) => ledger.deleted.has(id) || ledger.failed.has(id),
    yieldedEarlier: [...ledger.yielded].map((id) => ({ id, table: PRODUCTS_TABLE })),
    onDeleted: (id) => ledger.deleted.add(id),
  });
}

function markFailed(cursor: StorefrontCursor, failed: boolean): void {
  if (failed) cursor.productsFailed = true;
  else delete cursor.productsFailed;
}

/**
 * Why this incremental pass must run the id pass, or undefined when the count proves it need not: the
 * items held on the Online Store after this pass's changes must be exactly as many as the store's active
 * products published there. A deletion, an archive or an unpublish lowers the count; a product created
 * or published with an edit is in this pass's listing and held now. A change between the count and the
 * listing makes them differ for one pass: an id pass that was not needed, never a deletion missed.
 */
function idPassReason(pass: Pass, ledger: ProductLedger, cursor: StorefrontCursor): string | undefined {
  if (cursor.idPassAt === undefined) return 'no id pass yet';
  if (cursor.productsFailed) return 'a product failed in the last pass';
  if (ledger.failed.size > 0) return 'a product failed in this pass';
  if (pass.onlineCount === undefined) return 'no exact product count';
  const versions = new Map<string, string | null | undefined>();
  for (const [id, doc] of pass.known[PRODUCTS_TABLE]) versions.set(id, doc.version);
  for (const [id, version] of ledger.yieldedVersions) versions.set(id, version);
  for (const id of ledger.deleted) versions.delete(id);
  let held = 0;
  for (const version of versions.values()) if (!version?.endsWith(HEADLESS_MARK)) held++;
  if (held !== pass.onlineCount) {
    return `the store counts ${pass.onlineCount} products on the Online Store, the connection holds ${held}`;
  }
  const maxAgeMs = Number(pass.ctx.settings['idPassHours'] ?? DEFAULT_ID_PASS_HOURS) * HOUR_MS;
  if (pass.now() - cursor.idPassAt >= maxAgeMs) return 'the last id pass is older than its interval';
  return undefined;
}

/** One listed or fetched product: a document when it is new or changed, a deletion when it left. */
async function* productEvents(pass: Pass, ledger: ProductLedger, product: Product): AsyncGenerator<Event> {
  const id = product.id;
  ledger.handled.add(id);
  const held = pass.known[PRODUCTS_TABLE].has(id) || ledger.yielded.has(id);
  if (!isListed(pass, product)) {
    if (held && !ledger.deleted.has(id)) {
      ledger.deleted.add(id);
      ledger.yielded.delete(id);
      ledger.yieldedVersions.delete(id);
      yield { kind: 'deleted', externalId: id, table: PRODUCTS_TABLE };
    }
    return;
  }
  const version = productToken(pass, product);
  if (!pass.full && pass.known[PRODUCTS_TABLE].get(id)?.version === version) return;
  let variants: Variant[] = product.variants.nodes;
  const more = product.variants.pageInfo;
  if (more.hasNextPage && more.endCursor) {
    try {
      variants = [...variants, ...(await pass.client.moreVariants(id, more.endCursor))];
    } catch (err) {
      if (!isDocumentError(pass.ctx, err)) throw err;
      ledger.failed.add(id);
      const message = err instanceof Error ? err.message : String(err);
      yield failure(
        PRODUCTS_TABLE,
        id,
        `product ${id} (${JSON.stringify(product.title)}): its variants could not be read: ${message}`,
        { retryable: isTransientSourceError(err) },
      );
      return;
    }
  }
  ledger.yielded.add(id);
  ledger.yieldedVersions.set(id, version);
  ledger.deleted.delete(id);
  yield { kind: 'document', doc: productDocument(pass.store, product, variants, version) };
}

function productDocument(
  store: StoreFacts,
  product: Product,
  variants: readonly Variant[],
  version: string,
): SourceDocument {
  const tags = ['storefront', product.vendor, product.productType, ...product.tags]
    .map((t) => t.trim())
    .filter(Boolean);
  return {
    externalId: product.id,
    title: product.title,
    url: product.onlineStoreUrl || `${store.storefront}/products/${encodeURIComponent(product.handle)}`,
    markdown: renderProduct(product, variants, store),
    updatedAt: product.updatedAt,
    visibility: 'public',
    tags: [...new Set(tags)],
    table: PRODUCTS_TABLE,
    version,
  };
}

/** `gid://shopify/Product/123` for a deletion event's subject, whichever form it came in. */
function productGid(subjectId: string): string {
  return /^\d+$/.test(subjectId) ? `gid://shopify/Product/${subjectId}` : subjectId;
}

/**
 * Shopify's own deletion signal, where the API version still answers it (deprecated: any error of the
 * query itself is logged and the id pass decides alone).
 */
async function* deletionEvents(
  pass: Pass,
  ledger: ProductLedger,
  cursor: StorefrontCursor,
  since: string,
): AsyncGenerator<Event> {
  const known = pass.known[PRODUCTS_TABLE];
  try {
    for await (const page of pass.client.deletionEvents(`occurred_at:>=${quoted(since)}`)) {
      for (const raw of page.nodes) {
        const parsed = deletionEventSchema.safeParse(raw);
        if (!parsed.success) continue;
        cursor.deletionsAt = later(cursor.deletionsAt, parsed.data.occurredAt);
        if (parsed.data.subjectType !== 'PRODUCT') continue;
        const id = productGid(parsed.data.subjectId);
        if (!known.has(id) || ledger.handled.has(id)) continue;
        ledger.handled.add(id);
        ledger.deleted.add(id);
        yield { kind: 'deleted', externalId: id, table: PRODUCTS_TABLE };
      }
    }
  } catch (err) {
    const queryError = err instanceof ShopifyQueryError || err instanceof ShopifyAccessDenied;
    if (!queryError && !(isSourceHttpError(err) && err.kind === 'invalid_response')) throw err;
    pass.ctx.log.warn(
      { error: err.message },
      'storefront: deletionEvents did not answer (deprecated); the id pass finds deletions alone',
    );
  }
}

/**
 * Every active product's id, URL and edit time. Fetches by id the published ones whose token differs
 * from what the connection holds and that the listing did not handle. Returns the published ids, or
 * undefined when a node could not be identified (then nothing may be deleted).
 */
async function* productIdPass(
  pass: Pass,
  ledger: ProductLedger,
): AsyncGenerator<Event, Set<string> | undefined> {
  const known = pass.known[PRODUCTS_TABLE];
  const published = new Set<string>();
  const stale: string[] = [];
  const states: ProductState[] = [];
  let complete = true;
  for await (const page of pass.client.productStates('status:active')) {
    for (const raw of page.nodes) {
      const parsed = productStateSchema.safeParse(raw);
      if (!parsed.success) {
        const id = idOf(raw);
        if (id === undefined) complete = false;
        else published.add(id);
        if (id === undefined || !ledger.handled.has(id)) {
          yield shapeFailure(PRODUCTS_TABLE, 'product', raw, parsed.error);
          if (id !== undefined) ledger.failed.add(id);
        }
        continue;
      }
      states.push(parsed.data);
    }
  }
  yield* checkPublications(
    pass,
    ledger,
    states.filter((s) => isCandidate(s) && !ledger.handled.has(s.id)).map((s) => s.id),
  );
  for (const state of states) {
    if (!isListed(pass, state)) {
      // Held, and its publications could not be read: kept as it is.
      if (ledger.failed.has(state.id)) published.add(state.id);
      continue;
    }
    published.add(state.id);
    if (ledger.handled.has(state.id)) continue;
    if (known.get(state.id)?.version !== productToken(pass, state)) stale.push(state.id);
  }
  yield* inBatches(
    pass,
    PRODUCTS_TABLE,
    'product',
    stale,
    PRODUCT_NODES_BATCH,
    (batch) => pass.client.productNodes(batch),
    async function* (id, node) {
      if (node === null) {
        // Listed moments ago: deleted since, most likely. The next id pass settles it.
        ledger.failed.add(id);
        yield failure(PRODUCTS_TABLE, id, `product ${id} was listed but answers null (deleted since?)`, {
          retryable: false,
        });
        return;
      }
      const parsed = productSchema.safeParse(node);
      if (!parsed.success) {
        ledger.failed.add(id);
        yield shapeFailure(PRODUCTS_TABLE, 'product', node, parsed.error);
        return;
      }
      if (!isListed(pass, parsed.data)) published.delete(id);
      yield* productEvents(pass, ledger, parsed.data);
    },
  );
  return complete ? published : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Pages and articles
// ---------------------------------------------------------------------------------------------------

/** How pages and articles differ: their queries, shapes, tokens and items. */
interface ContentKind<S extends PageState | ArticleState, D extends S> {
  table: Table;
  noun: string;
  states: (client: ShopifyClient, after: string | undefined) => AsyncGenerator<LooseConnection>;
  nodes: (client: ShopifyClient, ids: readonly string[]) => Promise<unknown[]>;
  stateSchema: z.ZodType<S>;
  schema: z.ZodType<D>;
  token: (state: S, store: StoreFacts) => string;
  document: (item: D, store: StoreFacts, version: string) => SourceDocument;
}

const PAGE_KIND: ContentKind<PageState, Page> = {
  table: PAGES_TABLE,
  noun: 'page',
  states: (client, after) => client.pageStates(after),
  nodes: (client, ids) => client.pageNodes(ids),
  stateSchema: pageStateSchema,
  schema: pageSchema,
  token: (s, store) => changeToken(s.updatedAt, s.handle, store.storefront),
  document: (page, store, version) => ({
    externalId: page.id,
    title: page.title,
    url: pageUrl(store, page.handle),
    markdown: renderPage(page, store),
    updatedAt: page.updatedAt,
    visibility: 'public',
    tags: ['storefront'],
    table: PAGES_TABLE,
    version,
  }),
};

const ARTICLE_KIND: ContentKind<ArticleState, Article> = {
  table: ARTICLES_TABLE,
  noun: 'article',
  states: (client, after) => client.articleStates(after),
  nodes: (client, ids) => client.articleNodes(ids),
  stateSchema: articleStateSchema,
  schema: articleSchema,
  token: (s, store) =>
    changeToken(s.updatedAt, s.handle, s.blog.id, s.blog.title, s.blog.handle, store.storefront),
  document: (article, store, version) => ({
    externalId: article.id,
    title: article.title,
    url: articleUrl(store, article.blog.handle, article.handle),
    markdown: renderArticle(article, store),
    updatedAt: article.updatedAt,
    visibility: 'public',
    tags: [
      ...new Set(['storefront', article.blog.title, ...article.tags].map((t) => t.trim()).filter(Boolean)),
    ],
    table: ARTICLES_TABLE,
    version,
  }),
};

/** Visible on the storefront: published, and not scheduled for later. */
function isVisible(s: { isPublished: boolean; publishedAt?: string | null | undefined }): boolean {
  return s.isPublished && (!s.publishedAt || Date.parse(s.publishedAt) <= Date.now());
}

async function* syncContent<S extends PageState | ArticleState, D extends S>(
  pass: Pass,
  kind: ContentKind<S, D>,
  first: LooseConnection | undefined,
): AsyncGenerator<Event> {
  const failed = new Set<string>();
  yield* listingPass<S, StorefrontCursor>({
    signal: pass.ctx.signal,
    known: pass.full ? undefined : pass.known[kind.table],
    list: () => contentListing(pass, kind, first),
    token: (state) => kind.token(state, pass.store),
    read: async (states) => {
      const left: string[] = [];
      const outcome = await readBatch(
        pass,
        kind.table,
        kind.noun,
        states.map((s) => s.id),
        (batch) => kind.nodes(pass.client, batch),
        (id, node) => contentEvents(pass, kind, id, node, { failed, left }),
      );
      return { ...outcome, left };
    },
    batchSize: CONTENT_NODES_BATCH,
    failures: failureRun(kind.noun),
    settled: (id) => failed.has(id),
  });
}

/** Every page (or article) without its body: the visible ones are items. */
async function* contentListing<S extends PageState | ArticleState, D extends S>(
  pass: Pass,
  kind: ContentKind<S, D>,
  first: LooseConnection | undefined,
): AsyncGenerator<ListedRecord<S, StorefrontCursor>> {
  for await (const page of listingPages(first, (after) => kind.states(pass.client, after))) {
    for (const raw of page.nodes) {
      const parsed = kind.stateSchema.safeParse(raw);
      if (!parsed.success) {
        yield {
          kind: 'unreadable',
          id: idOf(raw),
          events: [shapeFailure(kind.table, kind.noun, raw, parsed.error)],
        };
        continue;
      }
      const state = parsed.data;
      if (isVisible(state)) yield { kind: 'item', id: state.id, entry: state };
      else yield { kind: 'not_item', id: state.id };
    }
  }
}

/** A page's (or article's) body as its document, or why not. */
async function* contentEvents<S extends PageState | ArticleState, D extends S>(
  pass: Pass,
  kind: ContentKind<S, D>,
  id: string,
  node: unknown,
  seen: { failed: Set<string>; left: string[] },
): AsyncGenerator<Event> {
  if (node === null) {
    seen.failed.add(id);
    yield failure(kind.table, id, `${kind.noun} ${id} was listed but answers null (deleted since?)`, {
      retryable: false,
    });
    return;
  }
  const parsed = kind.schema.safeParse(node);
  if (!parsed.success) {
    seen.failed.add(id);
    yield shapeFailure(kind.table, kind.noun, node, parsed.error);
    return;
  }
  const item = parsed.data;
  if (!isVisible(item)) {
    seen.left.push(id);
    return;
  }
  yield { kind: 'document', doc: kind.document(item, pass.store, kind.token(item, pass.store)) };
}
