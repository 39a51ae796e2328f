/**
 * How `storefront` gets its Admin API access token, the three ways Shopify issues one today:
 *
 * - A fixed `access_token` (a legacy custom app's `shpat_` token; none can be created since 2026-01-01,
 *   existing ones keep working). Sent as is.
 * - `client_id` + `client_secret` of a Dev Dashboard app installed on the merchant's own store: the client
 *   credentials grant, `POST https://{shop}.myshopify.com/admin/oauth/access_token` with a form body
 *   (`grant_type=client_credentials`), answering a token valid `expires_in` seconds (about 24 hours) and no
 *   refresh token. {@link ClientCredentialsTokens} asks for one when the sync starts, again shortly before
 *   it runs out and again when Shopify answers 401 (the shared HTTP client asks it, as it asks a
 *   connection's OAuth tokens); nothing is stored, since the id and secret can always get a new one. Shopify refuses the grant for apps of another organization (`shop_not_permitted`) and
 *   for apps not installed on the store (`app_not_installed`).
 * - OAuth consent (authorization code grant) for an app installed on other merchants' stores:
 *   {@link shopifyOAuth}, which the generic consent routes drive. Each store is its own authorization
 *   server, so the initiate body names the `shop`. The exchange asks for an expiring offline token
 *   (`expiring: 1`: an hour, with a 90-day refresh token that rotates), which Shopify requires of public
 *   apps; the sync job refreshes it through {@link OAuthSteps.refresh} before its expiry and on a 401,
 *   as often as the sync lasts (the HTTP client swaps the `X-Shopify-Access-Token` it carries).
 */
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { joinUrl } from '../base-url.ts';
import { redactSecrets, sourceName, sourceRefusal } from '../credential-check.ts';
import { isSourceHttpError } from '../http.ts';
import { normalizeTenantLabel } from '../normalize.ts';
import { expiryOf, requestTokens } from '../oauth-token.ts';
import type { AccessTokens, OAuthSteps, OAuthTokens, SourceHttpClient, SourceResponse } from '../types.ts';

/** What the sync reads: products, pages and articles, policies, and where each product is published. */
export const SHOPIFY_OAUTH_SCOPES = 'read_products,read_content,read_legal_policies,read_publications';

/** The token endpoint of every grant, on the store's own origin. */
export const SHOPIFY_TOKEN_PATH = '/admin/oauth/access_token';

const SOURCE = { type: 'storefront', label: 'Shopify' } as const;

/** What the three ways in need (a subset of the stored credentials). */
export interface ShopifyAuthCredentials {
  shop: string;
  access_token?: string | undefined;
  client_id?: string | undefined;
  client_secret?: string | undefined;
}

/** Whether these credentials get their token through the client credentials grant. */
export function usesClientCredentials(creds: ShopifyAuthCredentials): boolean {
  return !creds.access_token && Boolean(creds.client_id && creds.client_secret);
}

const tokenSchema = z.object({
  access_token: z.string().min(1),
  scope: z.string().optional(),
  expires_in: z.number().nullish(),
  refresh_token: z.string().min(1).nullish(),
  refresh_token_expires_in: z.number().nullish(),
});

/** What to do when Shopify refuses the client credentials grant. */
export const CLIENT_CREDENTIALS_HINT =
  "Check source.client_id and source.client_secret (the app's settings in the Dev Dashboard) and that the app is installed on this store. The client credentials grant works only for an app of the store's own organization; for another merchant's store, connect through OAuth (POST /api/connect/oauth/initiate with type storefront and the shop).";

/** Shopify's OAuth errors read `{"error": "...", "error_description": "..."}`. */
function oauthErrorText(res: SourceResponse): string | undefined {
  let body: unknown;
  try {
    body = res.json();
  } catch {
    const text = res.text().trim();
    return text && !text.startsWith('<') ? text.slice(0, 300) : undefined;
  }
  if (!body || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  const parts = [b['error'], b['error_description'], b['errors']].filter(
    (p): p is string => typeof p === 'string' && p !== '',
  );
  return parts.length > 0 ? parts.join(': ').slice(0, 300) : undefined;
}

/** A token granted by the client credentials grant, with when it stops working (epoch ms, or null). */
export interface GrantedToken {
  accessToken: string;
  expiresAt: number | null;
}

/**
 * One client credentials exchange. A refusal (4xx) is `source_auth_failed` with Shopify's words and what
 * to check; an endpoint that cannot be reached or answers without a token is `source_unreachable`. The
 * secret never appears in a message.
 */
export async function requestClientCredentialsToken(
  http: SourceHttpClient,
  baseUrl: string,
  creds: ShopifyAuthCredentials,
  now: number,
): Promise<GrantedToken> {
  const secrets = [creds.client_secret];
  let res: SourceResponse;
  try {
    res = await http.request('POST', joinUrl(baseUrl, SHOPIFY_TOKEN_PATH), {
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: creds.client_id ?? '',
        client_secret: creds.client_secret ?? '',
      }).toString(),
    });
  } catch (err) {
    const detail =
      isSourceHttpError(err) || err instanceof Error ? redactSecrets(err.message, secrets) : 'network error';
    throw new AppError(
      'source_unreachable',
      `${sourceName(SOURCE)}: the token endpoint could not be reached (${detail}); try again later.`,
    );
  }
  if (res.status >= 400 && res.status < 500) {
    throw sourceRefusal(
      SOURCE,
      'refused the client credentials grant',
      { status: res.status, vendorMessage: oauthErrorText(res) },
      CLIENT_CREDENTIALS_HINT,
      secrets,
    );
  }
  let body: unknown;
  try {
    body = res.status >= 200 && res.status < 300 ? res.json() : undefined;
  } catch {
    body = undefined;
  }
  const parsed = tokenSchema.safeParse(body);
  if (!parsed.success) {
    throw new AppError(
      'source_unreachable',
      `${sourceName(SOURCE)}: the token endpoint answered HTTP ${res.status} without a token; try again later.`,
    );
  }
  return { accessToken: parsed.data.access_token, expiresAt: expiryOf(parsed.data.expires_in, now) };
}

/** Renew a granted token when less than this share of its life is left (at most five minutes before). */
const RENEW_SHARE = 0.1;
const RENEW_MARGIN_MAX_MS = 5 * 60_000;

/**
 * The tokens of the client credentials grant for one sync or credential check, as the shared HTTP client
 * keeps them ({@link AccessTokens}): a token on first use, a new one when the old is close to its
 * announced expiry, and a new one after a 401; concurrent callers share one exchange. Nothing is stored:
 * the id and secret can always get a new token.
 */
export class ClientCredentialsTokens implements AccessTokens {
  readonly #http: SourceHttpClient;
  readonly #baseUrl: string;
  readonly #creds: ShopifyAuthCredentials;
  readonly #now: () => number;
  readonly #issued = new Set<string>();
  #granted: { token: GrantedToken; renewAt: number } | undefined;
  #pending: Promise<string> | undefined;
  #grants = 0;

  constructor(opts: {
    http: SourceHttpClient;
    baseUrl: string;
    credentials: ShopifyAuthCredentials;
    /** Epoch ms (tests move it). */
    now?: () => number;
  }) {
    this.#http = opts.http;
    this.#baseUrl = opts.baseUrl;
    this.#creds = opts.credentials;
    this.#now = opts.now ?? Date.now;
  }

  /** Client credentials exchanges made so far. */
  get grants(): number {
    return this.#grants;
  }

  /** Every token this grant gave, and the secret, for scrubbing messages. */
  secrets(): string[] {
    return [this.#creds.client_secret, ...this.#issued].filter(
      (s): s is string => typeof s === 'string' && s !== '',
    );
  }

  owns(token: string): boolean {
    return this.#issued.has(token);
  }

  async current(): Promise<string> {
    const granted = this.#granted;
    if (granted && this.#now() < granted.renewAt) return granted.token.accessToken;
    return this.#grant();
  }

  async refresh(rejected: string): Promise<string> {
    // Another request renewed since `rejected` was sent: its token is the one to use.
    if (this.#granted?.token.accessToken === rejected) this.#granted = undefined;
    return this.current();
  }

  #grant(): Promise<string> {
    this.#pending ??= (async () => {
      try {
        const asked = this.#now();
        const token = await requestClientCredentialsToken(this.#http, this.#baseUrl, this.#creds, asked);
        this.#grants++;
        this.#issued.add(token.accessToken);
        const life = token.expiresAt === null ? Number.POSITIVE_INFINITY : token.expiresAt - asked;
        const margin = Math.min(RENEW_MARGIN_MAX_MS, life * RENEW_SHARE);
        this.#granted = { token, renewAt: (token.expiresAt ?? Number.POSITIVE_INFINITY) - margin };
        return token.accessToken;
      } finally {
        this.#pending = undefined;
      }
    })();
    return this.#pending;
  }
}

/** The fixed token of these credentials (given, or filled by an OAuth consent); none is an error. */
export function fixedTokenOf(creds: ShopifyAuthCredentials): string {
  if (creds.access_token) return creds.access_token;
  throw new AppError(
    'oauth_required',
    `${sourceName(SOURCE)} has no access token: give source.access_token, or source.client_id and source.client_secret, or connect through OAuth.`,
  );
}

function tokensOf(token: z.infer<typeof tokenSchema>, shop: string | null, now?: number): OAuthTokens {
  return {
    accessToken: token.access_token,
    accountName: shop,
    refreshToken: token.refresh_token ?? null,
    expiresAt: expiryOf(token.expires_in, now),
    refreshExpiresAt: expiryOf(token.refresh_token_expires_in, now),
  };
}

/** The store an authorization server URL names (`https://acme.myshopify.com` → `acme`), for the account. */
function shopOf(baseUrl: string): string | null {
  const host = new URL(baseUrl).hostname;
  return host.endsWith('.myshopify.com') ? host.slice(0, -'.myshopify.com'.length) : null;
}

/**
 * Shopify's authorization code grant for apps installed on other merchants' stores. The authorize URL and
 * the token endpoint live on the store (`https://{shop}.myshopify.com/admin/oauth/...`). The callback also
 * carries `shop`, `hmac` and `timestamp`; the signed single-use `state` of the generic routes is what ties
 * it to the consent, and the code is worth nothing without the client secret.
 */
export const shopifyOAuth: OAuthSteps = {
  settings: {
    clientId: 'KB_STOREFRONT_CLIENT_ID',
    clientSecret: 'KB_STOREFRONT_CLIENT_SECRET',
    baseUrl: 'KB_STOREFRONT_OAUTH_BASE_URL',
  },
  defaultBaseUrl: 'https://{shop}.myshopify.com',
  tenant: {
    field: 'shop',
    normalize: (value) => normalizeTenantLabel('shop', value, 'myshopify.com'),
  },
  tokenField: 'access_token',
  // A fixed token or the client credentials are ways in of their own: no consent needed then.
  needsConsent: (creds) => !creds['access_token'] && !(creds['client_id'] && creds['client_secret']),
  authorizeUrl(app, { redirectUri, state }) {
    return joinUrl(app.baseUrl, '/admin/oauth/authorize', {
      client_id: app.clientId,
      scope: SHOPIFY_OAUTH_SCOPES,
      redirect_uri: redirectUri,
      state,
    });
  },
  async exchangeCode(http, app, { code }) {
    const token = await requestTokens(http, {
      label: 'Shopify',
      grant: 'authorization code',
      url: joinUrl(app.baseUrl, SHOPIFY_TOKEN_PATH),
      json: { client_id: app.clientId, client_secret: app.clientSecret, code, expiring: '1' },
      schema: tokenSchema,
      secrets: [code, app.clientSecret],
    });
    return tokensOf(token, shopOf(app.baseUrl));
  },
  async refresh(http, app, { refreshToken, now }) {
    const token = await requestTokens(http, {
      label: 'Shopify',
      grant: 'refresh token',
      url: joinUrl(app.baseUrl, SHOPIFY_TOKEN_PATH),
      json: {
        client_id: app.clientId,
        client_secret: app.clientSecret,
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
      },
      schema: tokenSchema,
      secrets: [refreshToken, app.clientSecret],
    });
    // Each refresh rotates the refresh token; an answer without one keeps the old.
    return {
      ...tokensOf(token, shopOf(app.baseUrl), now),
      refreshToken: token.refresh_token ?? refreshToken,
    };
  },
};
