/**
 * Zendesk's OAuth consent (vendor-apis/zendesk.md §2 and its Corrections): API tokens are being retired
 * (none new after 2026-10-27, none accepted after 2027-04-30), so a support-desk connection can be made
 * by consent instead. Every account is its own authorization server (`https://{subdomain}.zendesk.com`),
 * so the initiate body names the subdomain. The token endpoint takes a JSON body with the client's id and
 * secret; access tokens may expire (`expires_in`, 30 minutes for clients made since 2026) and then come
 * with a refresh token (30 days, `refresh_token_expires_in`) that rotates: each refresh voids the old pair.
 * The job trades it before the access token runs out, on a 401, and on a schedule for idle connections.
 */
import { z } from 'zod';
import { joinUrl } from '../base-url.ts';
import { normalizeTenantLabel } from '../normalize.ts';
import { expiryOf, requestTokens } from '../oauth-token.ts';
import type { OAuthSteps, OAuthTokens } from '../types.ts';

/** Help Center content (`hc:read`) and tickets (`read`): all a sync reads, nothing it could write. */
export const ZENDESK_OAUTH_SCOPES = 'hc:read read';

/**
 * Creating and deleting the connection's webhook (webhooks.ts `subscribe`) needs write access to webhooks
 * and to nothing else: asked for only when the service will subscribe (it has a public URL).
 */
export const ZENDESK_WEBHOOK_SCOPE = 'webhooks:write';

/** The scopes a consent asks for: the sync's, plus the webhook scope when the service subscribes. */
export function zendeskScopes(opts: { receivesChanges?: boolean | undefined }): string {
  return opts.receivesChanges ? `${ZENDESK_OAUTH_SCOPES} ${ZENDESK_WEBHOOK_SCOPE}` : ZENDESK_OAUTH_SCOPES;
}

const tokenSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  scope: z.string().optional(),
  refresh_token: z.string().min(1).nullish(),
  expires_in: z.number().nullish(),
  refresh_token_expires_in: z.number().nullish(),
});

function tokensOf(
  token: z.infer<typeof tokenSchema>,
  accountName: string | null,
  now = Date.now(),
): OAuthTokens {
  return {
    accessToken: token.access_token,
    accountName,
    refreshToken: token.refresh_token ?? null,
    expiresAt: expiryOf(token.expires_in, now),
    refreshExpiresAt: expiryOf(token.refresh_token_expires_in, now),
  };
}

/** The subdomain an authorization server URL names (`https://acme.zendesk.com` → `acme`), for the account name. */
function subdomainOf(baseUrl: string): string | null {
  const host = new URL(baseUrl).hostname;
  return host.endsWith('.zendesk.com') ? host.slice(0, -'.zendesk.com'.length) : null;
}

export const zendeskOAuth: OAuthSteps = {
  settings: {
    clientId: 'KB_SUPPORT_DESK_CLIENT_ID',
    clientSecret: 'KB_SUPPORT_DESK_CLIENT_SECRET',
    baseUrl: 'KB_SUPPORT_DESK_OAUTH_BASE_URL',
  },
  defaultBaseUrl: 'https://{subdomain}.zendesk.com',
  tenant: {
    field: 'subdomain',
    normalize: (value) => normalizeTenantLabel('subdomain', value, 'zendesk.com'),
  },
  tokenField: 'access_token',
  // The seed's e-mail + API token still work while Zendesk accepts them: no consent needed then.
  needsConsent: (creds) => !creds['access_token'] && !creds['api_token'],
  authorizeUrl(app, { redirectUri, state, receivesChanges }) {
    return joinUrl(app.baseUrl, '/oauth/authorizations/new', {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: redirectUri,
      scope: zendeskScopes({ receivesChanges }),
      state,
    });
  },
  async exchangeCode(http, app, { code, redirectUri, receivesChanges }) {
    const token = await requestTokens(http, {
      label: 'Zendesk',
      grant: 'authorization code',
      url: joinUrl(app.baseUrl, '/oauth/tokens'),
      json: {
        grant_type: 'authorization_code',
        code,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: redirectUri,
        scope: zendeskScopes({ receivesChanges }),
      },
      schema: tokenSchema,
      secrets: [code, app.clientSecret],
    });
    return tokensOf(token, subdomainOf(app.baseUrl));
  },
  async refresh(http, app, { refreshToken, now }) {
    const token = await requestTokens(http, {
      label: 'Zendesk',
      grant: 'refresh token',
      url: joinUrl(app.baseUrl, '/oauth/tokens'),
      json: {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: app.clientId,
        client_secret: app.clientSecret,
      },
      schema: tokenSchema,
      secrets: [refreshToken, app.clientSecret],
    });
    // Zendesk rotates refresh tokens; if it ever answers without one, the old one is still the one to keep.
    return {
      ...tokensOf(token, subdomainOf(app.baseUrl), now),
      refreshToken: token.refresh_token ?? refreshToken,
    };
  },
};
