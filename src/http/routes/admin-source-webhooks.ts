import { z } from 'zod';
import { trustNewestPendingHandshake } from '../../db/repositories/source-events.ts';
import { handshakeSecretAad } from '../../jobs/source-webhooks.ts';
import { AppError } from '../../lib/errors.ts';
import { requireAdmin } from '../auth.ts';
import type { App, RouteDeps } from '../context.ts';
import { commonErrors, errorBodySchema } from '../schemas.ts';

const takenSchema = z.object({
  type: z.string().describe('The source type the handshake was for'),
  verificationToken: z
    .string()
    .describe("The handshake's secret (Notion's verification token), to paste into the vendor's Verify form"),
  receivedAt: z.string().describe('When the handshake arrived (ISO 8601)'),
  othersDropped: z
    .number()
    .int()
    .describe(
      'Other pending handshakes of this type, now dropped: more than 0 means someone else posted one',
    ),
});

/**
 * Admin API: a vendor's set-up handshake arrives unsigned (Notion posts its verification token to the
 * public webhook URL), so the service cannot tell the vendor's from a stranger's. The operator takes the
 * newest one here, which shows it (the vendor asks for it back) and makes it the one signatures are
 * checked with; the other pending ones are dropped.
 */
export function register(app: App, deps: RouteDeps): void {
  app.post(
    '/api/admin/source-webhooks/:type/verification-token',
    {
      onRequest: requireAdmin(deps.config.KB_ADMIN_TOKEN),
      schema: {
        tags: ['admin'],
        summary: "Take and trust the newest pending handshake secret of a source's webhooks",
        description:
          'Returns the newest pending secret a set-up handshake delivered for the source type (Notion: the ' +
          '`verification_token` to paste into the Verify form of the integration’s Webhooks tab), marks it ' +
          'trusted (events signed with it are accepted from now on) and drops the other pending ones. ' +
          '404 when none is pending or the source type receives no notifications.',
        security: [{ adminToken: [] }],
        params: z.object({
          type: z.string().min(1).max(64).describe('The source type (or its alias), e.g. `notion`'),
        }),
        response: { 200: takenSchema, ...commonErrors, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const connector = deps.sources.connectorOf(request.params.type);
      if (!connector?.webhooks) {
        throw new AppError('not_found', 'This source type sends no change notifications to this service.');
      }
      const taken = await deps.db.transaction((tx) => trustNewestPendingHandshake(tx, connector.type));
      if (!taken) {
        throw new AppError(
          'not_found',
          `No handshake of ${connector.label} is waiting: add (or re-send) the webhook subscription at the ` +
            'source, then run this again.',
        );
      }
      // The answer carries a secret: no cache may keep it.
      void reply.header('cache-control', 'no-store');
      return {
        type: connector.type,
        verificationToken: deps.sources.cipher.decrypt(taken.secretEncrypted, handshakeSecretAad(taken.id)),
        receivedAt: taken.receivedAt,
        othersDropped: taken.othersDropped,
      };
    },
  );
}
