import { z } from 'zod';
import { joinUrl } from '../../connectors/base-url.ts';
import { insertOAuthState } from '../../db/repositories/connections.ts';
import { newId } from '../../lib/ids.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors } from '../schemas.ts';
import { publicOrigin } from './connection-shared.ts';
import { newStateNonce, notesOAuthApp, OAUTH_STATE_TTL_MS } from '../oauth-state.ts';

const bodySchema = z.strictObject({
  type: z.enum(['notes', 'notion'], {
    error:
      'type: only notes (notion) connects through OAuth; other sources take their credentials in POST /api/connect/connection.',
  }),
  redirectUri: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .optional()
    .describe(
      'Where the browser is sent after the callback, with `secretId` and `status` (success|error) added.',
    ),
});

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
        summary: 'Start OAuth consent (notes)',
        description:
          'Open `consentUrl` in a browser; after consent the source redirects to /api/connect/oauth/callback, ' +
          'which stores the token under `secretId`. Poll /api/connect/secret-id-exists, then create the ' +
          'connection. 400 oauth_not_configured when the operator has not set up the OAuth app.',
        body: bodySchema,
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
      const oauth = notesOAuthApp(deps.config);
      const callbackUri = `${publicOrigin(deps.config.KB_PUBLIC_URL, request)}/api/connect/oauth/callback`;
      const nonce = newStateNonce();
      const secretId = newId();
      await insertOAuthState(deps.db, {
        id: nonce,
        organizationId,
        sourceType: 'notes',
        secretId,
        callbackUri,
        redirectUri: request.body.redirectUri ?? null,
        ttlMs: OAUTH_STATE_TTL_MS,
      });
      const state = await deps.oauthStates.sign(nonce, OAUTH_STATE_TTL_MS);
      const consentUrl = joinUrl(oauth.baseUrl, '/v1/oauth/authorize', {
        client_id: oauth.clientId,
        response_type: 'code',
        owner: 'user',
        redirect_uri: callbackUri,
        state,
      });
      return { consentUrl, secretId, expiresAt: Date.now() + OAUTH_STATE_TTL_MS };
    },
  );
}
