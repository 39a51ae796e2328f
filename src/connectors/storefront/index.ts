/**
 * `storefront`: a Shopify store, read through the Admin GraphQL API with an Admin API access token, which
 * comes one of three ways (auth.ts): a fixed token, the client credentials grant of the merchant's own
 * Dev Dashboard app, or OAuth consent. Its published products, online-store pages, blog articles and shop
 * policies sync as `public` items (`storefront_products`, `storefront_pages`, `storefront_articles`,
 * `storefront_policies`): see sync.ts.
 */
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { credentialCheck } from '../credential-check.ts';
import { normalizeTenantLabel, normalizeToken } from '../normalize.ts';
import type { Connector, ConnectorContext } from '../types.ts';
import {
  CLIENT_CREDENTIALS_HINT,
  ClientCredentialsTokens,
  shopifyOAuth,
  usesClientCredentials,
} from './auth.ts';
import {
  STOREFRONT_REFUSAL_HINTS,
  STOREFRONT_SOURCE,
  STOREFRONT_TOKEN_HINT,
  type StorefrontCredentials,
  shopifyGraphqlPath,
  shopifyHeaders,
} from './client.ts';
import {
  DEFAULT_ID_PASS_HOURS,
  type StorefrontCursor,
  storefrontCursorSchema,
  syncStorefront,
  syncStorefrontChanged,
} from './sync.ts';
import { storefrontWebhooks } from './webhooks.ts';

export { shopifyHeaders, type StorefrontCredentials };

/**
 * The Admin API version in every path, unless the operator sets KB_STOREFRONT_API_VERSION. Versions are
 * supported for at least 12 months and a retired one "falls forward"; content objects (pages, articles)
 * need 2024-10 or later.
 */
export const SHOPIFY_API_VERSION = '2026-10';

const storefrontInputSchema = z.strictObject({
  shop: z.string().min(1).describe('Store name: `acme` or `acme.myshopify.com`.'),
  access_token: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Admin API access token of the store (shpat_… of a legacy custom app), in place of client_id and client_secret; the OAuth consent flow fills it.',
    ),
  client_id: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Client ID of a Dev Dashboard app installed on your own store (with client_secret): the service gets its access tokens (valid about 24 hours) through the client credentials grant.',
    ),
  client_secret: z
    .string()
    .min(1)
    .optional()
    .describe('Client secret of that app (with client_id), stored encrypted.'),
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
    headers: (creds: StorefrontCredentials) => shopifyHeaders(creds.access_token ?? ''),
    json: { query: '{ shop { name } }' },
    schema: shopQuerySchema,
    hints: STOREFRONT_REFUSAL_HINTS,
    shapeHint: 'Check source.shop.',
    secrets: (creds) => [creds.access_token, creds.client_secret],
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
  oauth: shopifyOAuth,
  normalize(input) {
    const creds: StorefrontCredentials = { shop: normalizeTenantLabel('shop', input.shop, 'myshopify.com') };
    const clientCredentials = input.client_id !== undefined || input.client_secret !== undefined;
    if (input.access_token !== undefined && clientCredentials) {
      throw invalid(
        'access_token',
        'and source.client_id / source.client_secret are two ways in: give one of them, not both.',
      );
    }
    if (input.access_token !== undefined) {
      creds.access_token = normalizeToken('access_token', input.access_token);
    } else if (clientCredentials) {
      if (input.client_id === undefined) throw invalid('client_id', 'is required with source.client_secret.');
      if (input.client_secret === undefined)
        throw invalid('client_secret', 'is required with source.client_id.');
      creds.client_id = normalizeToken('client_id', input.client_id);
      creds.client_secret = normalizeToken('client_secret', input.client_secret);
    }
    // Neither: the OAuth consent supplies `access_token` (shopifyOAuth.needsConsent).
    return creds;
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
    idPassHours: {
      env: 'KB_STOREFRONT_ID_PASS_HOURS',
      default: DEFAULT_ID_PASS_HOURS,
      pattern: /^\d{1,5}$/,
      description:
        'the most hours an incremental storefront sync goes without listing every product id (whole hours; 0 lists on every sync), e.g. 24',
    },
  },
  validate: (ctx: ConnectorContext<StorefrontCredentials>) => validate(ctx),
  sync: syncStorefront,
  cursor: storefrontCursorSchema,
  webhooks: storefrontWebhooks,
  syncChanged: (ctx, changes) => syncStorefrontChanged(ctx, changes),
};

/** What to check when the store refuses the token. */
export { STOREFRONT_TOKEN_HINT };

function invalid(field: string, message: string): AppError {
  return new AppError('invalid_request', `source.${field} ${message}`, { field: `source.${field}` });
}

/**
 * The credential check: with client credentials, the grant first (a refusal names the id and secret),
 * then `{ shop { name } }` with the token it gave, as with a fixed token.
 */
async function validate(ctx: ConnectorContext<StorefrontCredentials>): Promise<void> {
  const check = checkFor(ctx.settings['apiVersion'] ?? SHOPIFY_API_VERSION);
  if (!usesClientCredentials(ctx.credentials)) return check(ctx);
  const tokens = new ClientCredentialsTokens({
    http: ctx.http,
    baseUrl: ctx.baseUrl,
    credentials: ctx.credentials,
  });
  const accessToken = await tokens.current();
  try {
    await check({ ...ctx, credentials: { ...ctx.credentials, access_token: accessToken } });
  } catch (err) {
    // A token just granted and refused at once: the app's installation lacks what the check needs.
    if (err instanceof AppError && err.code === 'source_auth_failed') {
      throw new AppError(
        err.code,
        `${err.message.replaceAll(accessToken, '[redacted]')} ${CLIENT_CREDENTIALS_HINT}`,
      );
    }
    throw err;
  }
}
