/**
 * `storefront`: a Shopify store, read through the Admin GraphQL API with an Admin API access token. Its
 * published products, online-store pages, blog articles and shop policies sync as `public` items
 * (`storefront_products`, `storefront_pages`, `storefront_articles`, `storefront_policies`): see sync.ts.
 */
import { z } from 'zod';
import { credentialCheck } from '../credential-check.ts';
import { normalizeTenantLabel, normalizeToken } from '../normalize.ts';
import type { Connector, ConnectorContext } from '../types.ts';
import {
  STOREFRONT_REFUSAL_HINTS,
  STOREFRONT_SOURCE,
  STOREFRONT_TOKEN_HINT,
  type StorefrontCredentials,
  shopifyGraphqlPath,
  shopifyHeaders,
} from './client.ts';
import { type StorefrontCursor, storefrontCursorSchema, syncStorefront } from './sync.ts';

export { shopifyHeaders, type StorefrontCredentials };

/**
 * The Admin API version in every path, unless the operator sets KB_STOREFRONT_API_VERSION. Versions are
 * supported for at least 12 months and a retired one "falls forward"; content objects (pages, articles)
 * need 2024-10 or later.
 */
export const SHOPIFY_API_VERSION = '2026-10';

const storefrontInputSchema = z.strictObject({
  shop: z.string().min(1).describe('Store name: `acme` or `acme.myshopify.com`.'),
  access_token: z.string().min(1).describe('Admin API access token of the store (shpat_…).'),
});
type StorefrontInput = z.infer<typeof storefrontInputSchema>;

const shopQuerySchema = z.object({
  data: z
    .object({ shop: z.object({ name: z.string() }).nullable() })
    .nullable()
    .optional(),
  errors: z
    .array(
      z.object({ message: z.string(), extensions: z.object({ code: z.string().optional() }).optional() }),
    )
    .optional(),
});

const SOURCE = STOREFRONT_SOURCE;

/** The credential check of one API version (the setting's value arrives with the context). */
function checkFor(apiVersion: string) {
  return credentialCheck({
    source: SOURCE,
    method: 'POST',
    path: shopifyGraphqlPath(apiVersion),
    headers: (creds: StorefrontCredentials) => shopifyHeaders(creds),
    json: { query: '{ shop { name } }' },
    schema: shopQuerySchema,
    hints: STOREFRONT_REFUSAL_HINTS,
    shapeHint: 'Check source.shop.',
    secrets: (creds) => [creds.access_token],
    // GraphQL reports missing access with HTTP 200 and `errors` (code ACCESS_DENIED).
    notAccepted: (body) => {
      const firstError = body.errors?.[0];
      if (firstError) {
        const code = firstError.extensions?.code;
        return `${code ? `${code}: ` : ''}${firstError.message}`.slice(0, 300);
      }
      return body.data?.shop ? undefined : 'no shop in the answer';
    },
  });
}

/**
 * No `requestsPerSecond`: the GraphQL Admin API limits calculated query cost, not requests (§7), and
 * the client paces itself by the cost budget each answer reports.
 */
export const storefrontConnector: Connector<StorefrontCredentials, StorefrontCursor, StorefrontInput> = {
  ...SOURCE,
  credentials: storefrontInputSchema,
  normalize(input) {
    return {
      shop: normalizeTenantLabel('shop', input.shop, 'myshopify.com'),
      access_token: normalizeToken('access_token', input.access_token),
    };
  },
  defaultBaseUrl: 'https://{shop}.myshopify.com',
  baseUrlSetting: 'KB_STOREFRONT_BASE_URL',
  settings: {
    apiVersion: {
      env: 'KB_STOREFRONT_API_VERSION',
      default: SHOPIFY_API_VERSION,
      pattern: /^(?:\d{4}-(?:01|04|07|10)|unstable)$/,
      description: `a Shopify Admin API version: YYYY-MM of a quarterly release (01, 04, 07 or 10), e.g. ${SHOPIFY_API_VERSION}, or unstable`,
    },
  },
  validate: (ctx: ConnectorContext<StorefrontCredentials>) =>
    checkFor(ctx.settings['apiVersion'] ?? SHOPIFY_API_VERSION)(ctx),
  sync: syncStorefront,
  cursor: storefrontCursorSchema,
};

/** What to check when the store refuses the token. */
export { STOREFRONT_TOKEN_HINT };
