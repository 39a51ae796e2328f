import { z } from 'zod';
import type { AnyConnector } from '../../connectors/types.ts';
import { consumeOAuthState, type OAuthStateRow, saveOAuthSecret } from '../../db/repositories/connections.ts';
import { AppError, isAppError } from '../../lib/errors.ts';
import type { App, RouteDeps } from '../context.ts';
import { clipInput } from '../errors.ts';
import { errorBodySchema } from '../schemas.ts';
import { encodeStoredTokens } from '../../jobs/oauth-tokens.ts';
import { oauthSecretAad } from '../oauth-state.ts';
import { subscribesTo } from '../../jobs/source-webhooks.ts';

// Loose on purpose: authorization servers add parameters of their own.
const querySchema = z.object({
  code: z.string().max(2000).optional(),
  state: z
    .string({ error: 'The callback carries no state; start the consent again.' })
    .min(1)
    .max(500)
    .describe('the signed state of POST /api/connect/oauth/initiate (single use, expires)'),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2000).optional(),
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
          302: z
            .null()
            .describe(
              'The consent was started with a redirectUri: the browser goes back to it (Location), with `secretId` and `status` (`success`, or `error` with `error`, an error code) as query parameters. No body.',
            ),
          400: errorBodySchema,
          500: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const nonce = await deps.oauthStates.verify(q.state);
      const state = await consumeOAuthState(deps.db, nonce);
      if (!state) {
        throw new AppError(
          'invalid_request',
          'This OAuth state was already used or has expired; start the consent again.',
        );
      }
      const connector = deps.sources.connectorOf(state.sourceType);
      if (!connector) {
        throw new AppError(
          'invalid_request',
          'This OAuth consent names a source this service no longer has.',
        );
      }
      try {
        await storeConsentToken(deps, state, connector, q);
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

/**
 * The source's answer to the consent: a refusal is an error naming it; a code is exchanged at the source's
 * token endpoint and the token stored, encrypted, under the consent's secretId.
 */
async function storeConsentToken(
  deps: RouteDeps,
  state: OAuthStateRow,
  connector: AnyConnector,
  q: z.infer<typeof querySchema>,
): Promise<void> {
  if (q.error) {
    throw new AppError(
      'source_auth_failed',
      `${connector.label} (${connector.type}) did not grant access (${clipInput(q.error)}${q.error_description ? `: ${clipInput(q.error_description, 200)}` : ''}).`,
    );
  }
  if (!q.code)
    throw new AppError('invalid_request', 'The callback carries no code; start the consent again.');
  const { steps, app: oauthApp } = deps.sources.oauthOf(connector, state.tenant);
  const token = await steps.exchangeCode(deps.sources.oauthHttp(), oauthApp, {
    code: q.code,
    redirectUri: state.callbackUri,
    receivesChanges: subscribesTo(connector, deps.config.KB_PUBLIC_URL),
  });
  await saveOAuthSecret(deps.db, {
    id: state.secretId,
    organizationId: state.organizationId,
    sourceType: state.sourceType,
    tokenEncrypted: deps.sources.cipher.encrypt(encodeStoredTokens(token), oauthSecretAad(state.secretId)),
    workspaceName: token.accountName,
    tenant: state.tenant,
  });
}

function withParams(uri: string, params: Record<string, string>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}
