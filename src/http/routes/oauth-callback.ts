import { z } from 'zod';
import { joinUrl } from '../../connectors/base-url.ts';
import { basicAuth, redactSecrets } from '../../connectors/credential-check.ts';
import { CREDENTIAL_CHECK_HTTP } from '../../connectors/context.ts';
import { createSourceHttpClient, isSourceHttpError, vendorErrorText } from '../../connectors/http.ts';
import type { SourceResponse } from '../../connectors/types.ts';
import { consumeOAuthState, saveOAuthSecret } from '../../db/repositories/connections.ts';
import { AppError, isAppError } from '../../lib/errors.ts';
import type { App, RouteDeps } from '../context.ts';
import { errorBodySchema } from '../schemas.ts';
import { notesOAuthApp, oauthSecretAad } from '../oauth-state.ts';

// Loose on purpose: authorization servers add parameters of their own.
const querySchema = z.object({
  code: z.string().max(2000).optional(),
  state: z.string().max(500).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2000).optional(),
});

const tokenSchema = z.object({
  access_token: z.string().min(1),
  workspace_name: z.string().nullish(),
});

/**
 * OAuth step 2, public (the browser lands here from the source): checks the state, exchanges the code at
 * the source's token endpoint and stores the token, encrypted, under the consent's secretId.
 */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/api/connect/oauth/callback',
    {
      schema: {
        tags: ['connections'],
        summary: 'OAuth callback (public)',
        description:
          'No API key: the source redirects the browser here. A forged, expired or already used `state` is ' +
          'refused (400). When the consent was started with a redirectUri, answers 302 to it with ' +
          '`secretId` and `status` (`success`, or `error` with `error`) instead of JSON.',
        security: [],
        querystring: querySchema,
        response: {
          200: z.object({ success: z.boolean(), secretId: z.string() }),
          400: errorBodySchema,
          500: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      if (!q.state)
        throw new AppError('invalid_request', 'The callback carries no state; start the consent again.');
      const nonce = await deps.oauthStates.verify(q.state);
      const state = await consumeOAuthState(deps.db, nonce);
      if (!state) {
        throw new AppError(
          'invalid_request',
          'This OAuth state was already used or has expired; start the consent again.',
        );
      }
      try {
        if (q.error) {
          throw new AppError(
            'source_auth_failed',
            `Notion (notes) did not grant access (${q.error}${q.error_description ? `: ${q.error_description}` : ''}).`,
          );
        }
        if (!q.code)
          throw new AppError('invalid_request', 'The callback carries no code; start the consent again.');
        const token = await exchangeCode(deps, q.code, state.callbackUri);
        await saveOAuthSecret(deps.db, {
          id: state.secretId,
          organizationId: state.organizationId,
          sourceType: state.sourceType,
          tokenEncrypted: deps.sources.cipher.encrypt(token.access_token, oauthSecretAad(state.secretId)),
          workspaceName: token.workspace_name ?? null,
        });
      } catch (err) {
        if (state.redirectUri && isAppError(err)) {
          return reply.redirect(
            withParams(state.redirectUri, { secretId: state.secretId, status: 'error', error: err.code }),
            302,
          );
        }
        throw err;
      }
      if (state.redirectUri) {
        return reply.redirect(
          withParams(state.redirectUri, { secretId: state.secretId, status: 'success' }),
          302,
        );
      }
      return { success: true, secretId: state.secretId };
    },
  );
}

function withParams(uri: string, params: Record<string, string>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

/** POST /v1/oauth/token (vendor-apis/notion.md 2.2): Basic client auth, JSON body. */
async function exchangeCode(
  deps: RouteDeps,
  code: string,
  redirectUri: string,
): Promise<z.infer<typeof tokenSchema>> {
  const oauth = notesOAuthApp(deps.config);
  const url = joinUrl(oauth.baseUrl, '/v1/oauth/token');
  const secrets = [code, oauth.clientSecret];
  const http = createSourceHttpClient({ ...CREDENTIAL_CHECK_HTTP, fetch: deps.sources.fetch });
  let res: SourceResponse;
  try {
    res = await http.request('POST', url, {
      headers: { authorization: basicAuth(oauth.clientId, oauth.clientSecret) },
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
  return parsed.data;
}
