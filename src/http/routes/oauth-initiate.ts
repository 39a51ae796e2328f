import { z } from 'zod';
import { insertOAuthState } from '../../db/repositories/connections.ts';
import { newId } from '../../lib/ids.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors } from '../schemas.ts';
import { publicOrigin } from './connection-shared.ts';
import { newStateNonce, OAUTH_STATE_TTL_MS, oauthOf } from '../oauth-state.ts';

/** The request body: `type` is one of the sources that declare OAuth steps (type or alias). */
function bodySchema(oauthTypes: string[]) {
  const [first = 'notes', ...rest] = oauthTypes;
  return z.strictObject({
    type: z.enum([first, ...rest], {
      error: `type: only ${oauthTypes.join(', ')} connect${oauthTypes.length > 2 ? '' : 's'} through OAuth; other sources take their credentials in POST /api/connect/connection.`,
    }),
    redirectUri: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .optional()
      .describe(
        'Where the browser is sent after the callback, with `secretId` and `status` (success|error) added.',
      ),
  });
}

/**
 * OAuth step 1 (API.md "Connections"): a consent URL with a signed, expiring, single-use `state`, and the
 * secretId under which the callback will store the token.
 */
export function register(app: App, deps: RouteDeps): void {
  app.post(
    '/api/connect/oauth/initiate',
    {
      schema: {
        tags: ['connections'],
        summary: `Start OAuth consent (${deps.sources.registry.oauthTypeValues().join(', ')})`,
        description:
          'Open `consentUrl` in a browser; after consent the source redirects to /api/connect/oauth/callback, ' +
          'which stores the token under `secretId`. Poll /api/connect/secret-id-exists, then create the ' +
          'connection. 400 oauth_not_configured when the operator has not set up the OAuth app.',
        body: bodySchema(deps.sources.registry.oauthTypeValues()),
        response: {
          200: z.object({
            consentUrl: z.string(),
            secretId: z.string(),
            expiresAt: z.number().describe('Unix epoch ms after which the consent must be started again'),
          }),
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const connector = deps.sources.registry.get(request.body.type);
      const { steps, app: oauthApp } = oauthOf(deps.config, connector);
      const callbackUri = `${publicOrigin(deps.config.KB_PUBLIC_URL, request)}/api/connect/oauth/callback`;
      const nonce = newStateNonce();
      const secretId = newId();
      await insertOAuthState(deps.db, {
        id: nonce,
        organizationId,
        sourceType: connector.type,
        secretId,
        callbackUri,
        redirectUri: request.body.redirectUri ?? null,
        ttlMs: OAUTH_STATE_TTL_MS,
      });
      const state = await deps.oauthStates.sign(nonce, OAUTH_STATE_TTL_MS);
      const consentUrl = steps.authorizeUrl(oauthApp, { redirectUri: callbackUri, state });
      return { consentUrl, secretId, expiresAt: Date.now() + OAUTH_STATE_TTL_MS };
    },
  );
}
