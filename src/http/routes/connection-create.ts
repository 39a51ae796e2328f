import { z } from 'zod';
import { canonicalSourceType, sourceInputSchema } from '../../connectors/registry.ts';
import { findOAuthSecret, upsertConnection } from '../../db/repositories/connections.ts';
import { AppError } from '../../lib/errors.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors } from '../schemas.ts';
import { oauthSecretAad } from '../oauth-state.ts';

/** The whole credential check, retries included, runs inside the request: bound it. */
const CHECK_TIMEOUT_MS = 30_000;

const bodySchema = z.strictObject({
  source: sourceInputSchema,
  schedule: z
    .strictObject({
      intervalMinutes: z
        .number()
        .int()
        .min(5)
        .max(525_600)
        .describe('Sync every so many minutes (5 to 525600)'),
    })
    .nullable()
    .optional()
    .describe('Extension: sync on a schedule. null removes the schedule; absent keeps the current one.'),
  secretId: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Extension, notes only: the secretId of the OAuth consent to use (default: the newest one).'),
});

/**
 * Endpoint 1: create a connection, or replace its credentials (one per organization and source type).
 * The credentials are checked with one call to the source before anything is stored.
 */
export function register(app: App, deps: RouteDeps): void {
  app.post(
    '/api/connect/connection',
    {
      schema: {
        tags: ['connections'],
        summary: 'Create a connection (or rotate its credentials)',
        description:
          'Checks the credentials with one authenticated call to the source (400 source_auth_failed / ' +
          'source_unreachable), then stores them encrypted. A second create for the same type replaces the ' +
          'credentials and keeps the synced items. `notes` needs OAuth consent first (400 oauth_required) ' +
          'unless source.access_token carries an internal integration token.',
        body: bodySchema,
        response: {
          200: z.object({
            success: z.boolean(),
            connectionId: z.string(),
            created: z.boolean().describe('false when an existing connection got new credentials'),
          }),
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const { source, schedule, secretId } = request.body;
      const { type: givenType, ...fields } = source;
      const type = canonicalSourceType(givenType)!;
      const connector = deps.sources.connectorOf(type)!;
      let credentials = connector.normalize(fields) as Record<string, string>;

      if (secretId !== undefined && type !== 'notes') {
        throw new AppError('invalid_request', 'secretId only applies to notes connections (OAuth).');
      }
      if (type === 'notes' && !credentials['access_token']) {
        const secret = await findOAuthSecret(deps.db, organizationId, 'notes', secretId);
        if (!secret) {
          throw new AppError(
            'oauth_required',
            secretId === undefined
              ? 'Connecting notes needs OAuth consent first: POST /api/connect/oauth/initiate, open the consentUrl, then create the connection (or pass an internal integration token as source.access_token).'
              : 'No OAuth token is stored under this secretId for this organization; complete the consent first.',
          );
        }
        credentials = {
          ...credentials,
          access_token: deps.sources.cipher.decrypt(secret.tokenEncrypted, oauthSecretAad(secret.id)),
        };
      }

      const deadline = AbortSignal.timeout(CHECK_TIMEOUT_MS);
      try {
        await deps.sources.checkCredentials(connector, credentials, deadline);
      } catch (err) {
        if (deadline.aborted) {
          throw new AppError(
            'source_unreachable',
            `${connector.label} (${type}) did not answer the credential check within ${CHECK_TIMEOUT_MS / 1000} s; try again later.`,
          );
        }
        throw err;
      }

      const result = await deps.db.transaction((tx) =>
        upsertConnection(tx, {
          organizationId,
          type,
          encrypt: (id) => deps.sources.encryptCredentials(id, credentials),
          scheduleIntervalMinutes: schedule === undefined ? undefined : (schedule?.intervalMinutes ?? null),
        }),
      );
      return { success: true, connectionId: result.id, created: result.created };
    },
  );
}
