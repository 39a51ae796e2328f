/**
 * Shopify Admin GraphQL response shapes (as Shopify's Admin GraphQL reference documents them), with the
 * vendor's field names. Objects are open (`z.object`) so fields Shopify adds pass; what the reference marks
 * nullable is so here. Listings keep their nodes unparsed: one node of the wrong shape is that document's
 * failure, not the listing's.
 */
import { z } from 'zod';

/** `extensions.cost` of every answer (§7): the bucket is charged `requestedQueryCost` up front. */
const queryCostSchema = z.object({
  requestedQueryCost: z.number(),
  /** Null on a THROTTLED answer (nothing ran). */
  actualQueryCost: z.number().nullish(),
  throttleStatus: z.object({
    maximumAvailable: z.number(),
    currentlyAvailable: z.number(),
    restoreRate: z.number(),
  }),
});
export type QueryCost = z.infer<typeof queryCostSchema>;

const graphqlErrorSchema = z.object({
  message: z.string(),
  path: z.array(z.union([z.string(), z.number()])).optional(),
  extensions: z.object({ code: z.string().optional(), requiredAccess: z.string().optional() }).optional(),
});
export type GraphqlError = z.infer<typeof graphqlErrorSchema>;

/**
 * The envelope (§3). `errors` is an array of GraphQL errors on HTTP 200 (THROTTLED, ACCESS_DENIED,
 * validation), and a plain string in the REST-style answers (§9).
 */
export const envelopeSchema = z.object({
  data: z.unknown().optional(),
  errors: z.union([z.string(), z.array(graphqlErrorSchema)]).optional(),
  extensions: z.object({ cost: queryCostSchema.optional() }).optional(),
});

const pageInfoSchema = z.object({
  hasNextPage: z.boolean(),
  endCursor: z.string().nullish(),
});

/** A Relay connection read through `nodes`, its nodes left for the caller to parse one by one. */
export const looseConnectionSchema = z.object({
  nodes: z.array(z.unknown()),
  pageInfo: pageInfoSchema,
});
export type LooseConnection = z.infer<typeof looseConnectionSchema>;

// ---------------------------------------------------------------------------------------------------
// Products (§5.1)
// ---------------------------------------------------------------------------------------------------

/** `ProductVariant`: `price` and `compareAtPrice` are `Money` (a decimal string). */
const variantSchema = z.object({
  id: z.string(),
  title: z.string(),
  sku: z.string().nullish(),
  price: z.string(),
  compareAtPrice: z.string().nullish(),
  availableForSale: z.boolean(),
});
export type Variant = z.infer<typeof variantSchema>;

export const variantConnectionSchema = z.object({
  nodes: z.array(variantSchema),
  pageInfo: pageInfoSchema,
});

/** `ProductOption`: `values` are the option's value names. */
const productOptionSchema = z.object({
  name: z.string(),
  values: z.array(z.string()),
});

/** `status`: ACTIVE, ARCHIVED, DRAFT, and UNLISTED from 2025-10 (Corrections). */
export const productSchema = z.object({
  id: z.string(),
  title: z.string(),
  handle: z.string(),
  status: z.string(),
  descriptionHtml: z.string(),
  vendor: z.string(),
  productType: z.string(),
  tags: z.array(z.string()),
  /** Null when the product is not published to the Online Store sales channel. */
  onlineStoreUrl: z.string().nullable(),
  updatedAt: z.string(),
  publishedAt: z.string().nullish(),
  options: z.array(productOptionSchema),
  variants: variantConnectionSchema,
});
export type Product = z.infer<typeof productSchema>;

/** What the id pass reads of every product: enough to tell eligibility and the change token. */
export const productStateSchema = z.object({
  id: z.string(),
  status: z.string(),
  onlineStoreUrl: z.string().nullable(),
  updatedAt: z.string(),
});
export type ProductState = z.infer<typeof productStateSchema>;

/** `DeletionEvent` (deprecated, §6): `subjectId` may be the numeric id rather than the gid. */
export const deletionEventSchema = z.object({
  occurredAt: z.string(),
  subjectId: z.string(),
  subjectType: z.string(),
});

// ---------------------------------------------------------------------------------------------------
// Pages, blogs and articles (§5.2, §5.3), shop policies (§5.4)
// ---------------------------------------------------------------------------------------------------

/** What the listing reads of every page; the body is fetched only for new or changed ones. */
export const pageStateSchema = z.object({
  id: z.string(),
  handle: z.string(),
  isPublished: z.boolean(),
  publishedAt: z.string().nullish(),
  updatedAt: z.string(),
});
export type PageState = z.infer<typeof pageStateSchema>;

/** `Page`: `body` is HTML. */
export const pageSchema = pageStateSchema.extend({
  title: z.string(),
  body: z.string(),
  createdAt: z.string().optional(),
});
export type Page = z.infer<typeof pageSchema>;

const blogRefSchema = z.object({ id: z.string(), title: z.string(), handle: z.string() });

export const articleStateSchema = z.object({
  id: z.string(),
  handle: z.string(),
  isPublished: z.boolean(),
  publishedAt: z.string().nullish(),
  updatedAt: z.string(),
  blog: blogRefSchema,
});
export type ArticleState = z.infer<typeof articleStateSchema>;

/** `Article`: `body` and `summary` are HTML; `author` is an `ArticleAuthor`. */
export const articleSchema = articleStateSchema.extend({
  title: z.string(),
  body: z.string(),
  summary: z.string().nullish(),
  tags: z.array(z.string()),
  author: z.object({ name: z.string() }).nullish(),
  createdAt: z.string().optional(),
});
export type Article = z.infer<typeof articleSchema>;

/** `ShopPolicy`: `type` is a `ShopPolicyType`; `body` is HTML. */
export const shopPolicySchema = z.object({
  id: z.string(),
  type: z.string(),
  title: z.string(),
  body: z.string(),
  url: z.string(),
  createdAt: z.string().optional(),
  updatedAt: z.string(),
});
export type ShopPolicy = z.infer<typeof shopPolicySchema>;

/** `shop`: what every item shares (currency, storefront domain) and the policies, each parsed apart. */
export const shopSchema = z.object({
  name: z.string(),
  currencyCode: z.string(),
  primaryDomain: z.object({ url: z.string() }).nullish(),
  /** Absent when the pass did not ask for them (the token lacks `read_legal_policies`). */
  shopPolicies: z.array(z.unknown()).optional(),
});
export type Shop = z.infer<typeof shopSchema>;

/** `Count` of the count fields (`productsCount`): `AT_LEAST` when a limit was reached. */
export const countSchema = z.object({ count: z.number().int().nonnegative(), precision: z.string() });

/** A product's publications (`Publishable.resourcePublicationsCount`, published ones only). */
export const productPublicationsSchema = z.object({
  id: z.string(),
  resourcePublicationsCount: countSchema.nullable(),
});
