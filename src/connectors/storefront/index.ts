/** `storefront`: a Shopify store, read through the Admin GraphQL API with an Admin API access token. */
import { z } from 'zod';
import { credentialCheck } from '../credential-check.ts';
import { normalizeTenantLabel, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';

/**
 * The Admin API version in every path. Versions are supported for at least 12 months and a retired one
 * "falls forward"; content objects (pages, articles) need 2024-10 or later.
 */
export const SHOPIFY_API_VERSION = '2026-10';

export const storefrontInputSchema = z.strictObject({
  shop: z.string().min(1).describe('Store name: `acme` or `acme.myshopify.com`.'),
  access_token: z.string().min(1).describe('Admin API access token of the store (shpat_…).'),
});
export type StorefrontInput = z.infer<typeof storefrontInputSchema>;
export interface StorefrontCredentials {
  /** The bare store name (`acme`), the leading label of `acme.myshopify.com`. */
  shop: string;
  access_token: string;
}

/** Path of the Admin GraphQL endpoint. */
export function shopifyGraphqlPath(): string {
  return `/admin/api/${SHOPIFY_API_VERSION}/graphql.json`;
}

export function shopifyHeaders(creds: StorefrontCredentials): Record<string, string> {
  return { 'x-shopify-access-token': creds.access_token };
}

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

const SOURCE = { type: 'storefront', alias: 'shopify', label: 'Shopify' } as const;

const tokenHint = 'Check source.access_token (an Admin API access token of this store).';

export const storefrontConnector: Connector<StorefrontCredentials, unknown, StorefrontInput> = {
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
  validate: credentialCheck({
    source: SOURCE,
    method: 'POST',
    path: shopifyGraphqlPath(),
    headers: (creds: StorefrontCredentials) => shopifyHeaders(creds),
    json: { query: '{ shop { name } }' },
    schema: shopQuerySchema,
    hints: {
      401: tokenHint,
      402: 'The store is frozen (unpaid); Shopify refuses API access until it is reactivated.',
      403: 'The token lacks the access scopes needed; grant read access to the app.',
      404: 'Check source.shop: no store answers there.',
      423: 'The store is locked; Shopify refuses API access.',
      other: tokenHint,
    },
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
  }),
  cursor: z.unknown(),
};
