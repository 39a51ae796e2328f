/**
 * Notion's OAuth consent (vendor-apis/notion.md 2.1-2.2): the authorize URL and the code exchange at
 * `POST /v1/oauth/token` (Basic client authentication, JSON body). The generic routes call these.
 * Notion may answer a `refresh_token`; a refresh at the same endpoint returns a new pair that replaces
 * both. No `expires_in` is given, so the job refreshes only when a call answers 401.
 */
import { z } from 'zod';
import { joinUrl } from '../base-url.ts';
import { basicAuth } from '../credential-check.ts';
import { expiryOf, requestTokens } from '../oauth-token.ts';
import type { OAuthSteps, OAuthTokens } from '../types.ts';

const tokenSchema = z.object({
  access_token: z.string().min(1),
  workspace_name: z.string().nullish(),
  refresh_token: z.string().min(1).nullish(),
  expires_in: z.number().nullish(),
});

function tokensOf(token: z.infer<typeof tokenSchema>, now = Date.now()): OAuthTokens {
  return {
    accessToken: token.access_token,
    accountName: token.workspace_name ?? null,
    refreshToken: token.refresh_token ?? null,
    expiresAt: expiryOf(token.expires_in, now),
  };
}

export const notionOAuth: OAuthSteps = {
  settings: {
    clientId: 'KB_NOTES_CLIENT_ID',
    clientSecret: 'KB_NOTES_CLIENT_SECRET',
    baseUrl: 'KB_NOTES_OAUTH_BASE_URL',
  },
  defaultBaseUrl: 'https://api.notion.com',
  tokenField: 'access_token',
  authorizeUrl(app, { redirectUri, state }) {
    return joinUrl(app.baseUrl, '/v1/oauth/authorize', {
      client_id: app.clientId,
      response_type: 'code',
      owner: 'user',
      redirect_uri: redirectUri,
      state,
    });
  },
  async exchangeCode(http, app, { code, redirectUri }) {
    const token = await requestTokens(http, {
      label: 'Notion',
      grant: 'authorization code',
      url: joinUrl(app.baseUrl, '/v1/oauth/token'),
      headers: { authorization: basicAuth(app.clientId, app.clientSecret) },
      json: { grant_type: 'authorization_code', code, redirect_uri: redirectUri },
      schema: tokenSchema,
      secrets: [code, app.clientSecret],
    });
    return tokensOf(token);
  },
  async refresh(http, app, { refreshToken, now }) {
    const token = await requestTokens(http, {
      label: 'Notion',
      grant: 'refresh token',
      url: joinUrl(app.baseUrl, '/v1/oauth/token'),
      headers: { authorization: basicAuth(app.clientId, app.clientSecret) },
      json: { grant_type: 'refresh_token', refresh_token: refreshToken },
      schema: tokenSchema,
      secrets: [refreshToken, app.clientSecret],
    });
    return { ...tokensOf(token, now), refreshToken: token.refresh_token ?? refreshToken };
  },
};
