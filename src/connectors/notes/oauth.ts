/**
 * Notion's OAuth consent (vendor-apis/notion.md 2.1-2.2): the authorize URL and the code exchange at
 * `POST /v1/oauth/token` (Basic client authentication, JSON body). The generic routes call these.
 */
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { joinUrl } from '../base-url.ts';
import { basicAuth, redactSecrets } from '../credential-check.ts';
import { isSourceHttpError, vendorErrorText } from '../http.ts';
import type { OAuthSteps, SourceResponse } from '../types.ts';

const tokenSchema = z.object({
  access_token: z.string().min(1),
  workspace_name: z.string().nullish(),
});

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
    const url = joinUrl(app.baseUrl, '/v1/oauth/token');
    const secrets = [code, app.clientSecret];
    let res: SourceResponse;
    try {
      res = await http.request('POST', url, {
        headers: { authorization: basicAuth(app.clientId, app.clientSecret) },
        json: { grant_type: 'authorization_code', code, redirect_uri: redirectUri },
      });
    } catch (err) {
      const detail =
        isSourceHttpError(err) || err instanceof Error ? redactSecrets(err.message, secrets) : 'network error';
      throw new AppError(
        'source_unreachable',
        `Notion's token endpoint could not be reached (${detail}); try the consent again later.`,
      );
    }
    if (res.status >= 400 && res.status < 500) {
      const said = vendorErrorText(res.text());
      throw new AppError(
        'source_auth_failed',
        `Notion refused the authorization code (HTTP ${res.status}${said ? `: ${redactSecrets(said, secrets)}` : ''}); start the consent again.`,
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
        `Notion's token endpoint answered HTTP ${res.status} without a token; try again later.`,
      );
    }
    return { accessToken: parsed.data.access_token, accountName: parsed.data.workspace_name ?? null };
  },
};
