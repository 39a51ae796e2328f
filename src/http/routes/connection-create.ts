import { z } from 'zod';
import type { NormalizedSource, SourceRegistry } from '../../connectors/registry.ts';
import { findOAuthSecret, upsertConnection } from '../../db/repositories/connections.ts';
import type { Queryable } from '../../db/database.ts';
import { recordWebhookAccount, subscribeConnection } from '../../jobs/source-webhooks.ts';
import { enqueueSyncJob } from '../../jobs/sync-job.ts';
import { AppError } from '../../lib/errors.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { bodyInteger, commonErrors } from '../schemas.ts';
import { credentialRules, withCredentialRule } from './connection-shared.ts';
import {
  credentialsWithTokens,
  decodeStoredTokens,
  needsConsent,
  tenantOf,
} from '../../jobs/oauth-tokens.ts';
import { oauthSecretAad } from '../oauth-state.ts';

/** The whole credential check, retries included, runs inside the request: bound it. */
const CHECK_TIMEOUT_MS = 30_000;

/**
 * The `source` object: one strict shape per registered source (its declared input schema, type and
 * alias accepted), each credential field with its rule.
 */
function sourceSchema(registry: SourceRegistry) {
  const shapes = registry.connectors.map((c) => {
    const rules = credentialRules[c.type];
    const credentials = c.credentials as z.ZodObject;
    const fields = Object.fromEntries(
      Object.entries(credentials.shape).map(([name, field]) => {
        const rule = rules?.patterns[name];
        return [name, rule ? withCredentialRule(field as z.ZodType, rule) : field];
      }),
    );
    const together = rules?.together?.filter((f) => f in credentials.shape) ?? [];
    const shape = z.strictObject({ ...fields, type: z.enum([c.type, c.alias]) });
    return together.length > 1
      ? shape.meta({
          anyOf: [{ required: together }, { not: { anyOf: together.map((f) => ({ required: [f] })) } }],
        })
      : shape;
  });
  const [first, ...rest] = shapes;
  if (!first) throw new Error('no connectors registered');
  return z.discriminatedUnion('type', [first, ...rest]);
}

/** The request body. */
const bodySchema = (registry: SourceRegistry) =>
  z
    .strictObject({
      source: sourceSchema(registry),
      schedule: z
        .strictObject({
          intervalMinutes: bodyInteger(5, 525_600).describe('Sync every so many minutes (5 to 525600)'),
        })
        .nullable()
        .optional()
        .describe('Extension: sync on a schedule. null removes the schedule; absent keeps the current one.'),
      secretId: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe(
          'Extension, OAuth sources (notes, support_desk) only: the secretId of the OAuth consent to use (default: the newest one, of the same subdomain for support_desk).',
        ),
      sync: z
        .boolean()
        .default(true)
        .describe(
          'Extension: false leaves the first sync to you (POST /api/connect/run-sync). By default a new connection, or one that needed consent again and now has new credentials, starts syncing at once (`jobId` in the answer).',
        ),
    })
    .meta(secretIdOnlyForOAuth(registry));

/** "secretId only with an OAuth source", as JSON Schema says it: the source types split in two. */
function secretIdOnlyForOAuth(registry: SourceRegistry) {
  const oauth = registry.oauthTypeValues();
  const others = registry.typeValues.filter((t) => !oauth.includes(t));
  if (oauth.length === 0 || others.length === 0) return {};
  const sourceType = (names: string[]) => ({
    properties: { source: { properties: { type: { enum: names } } } },
  });
  return { anyOf: [sourceType(oauth), { ...sourceType(others), not: { required: ['secretId'] } }] };
}

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
          'credentials and keeps the synced items. An OAuth source (notes, support_desk) given no token in the ' +
          'request takes the one its consent stored (the newest, or the one under secretId): without a stored ' +
          "consent, 400 oauth_required. Each credential field's pattern is the rule the source applies. " +
          'Extension: a new connection starts its first sync at once (its `jobId` in the answer) unless the ' +
          'body says `"sync": false`; so does one that needed consent again and gets new credentials.',
        body: bodySchema(deps.sources.registry),
        response: {
          200: z.object({
            success: z.boolean(),
            connectionId: z.string(),
            created: z.boolean().describe('false when an existing connection got new credentials'),
            jobId: z
              .number()
              .optional()
              .describe(
                'Extension: the sync job queued with the connection (its first sync), absent when none was (`sync: false`, a rotation of working credentials, an inactive connection)',
              ),
          }),
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const { source, schedule, secretId, sync } = request.body;
      const normalized = deps.sources.registry.normalize(source);
      const { type } = normalized;
      const given = await withConsentTokens(deps, organizationId, normalized, secretId);
      const credentials = await checkWithinDeadline(deps, normalized, given);
      const result = await deps.db.transaction(async (tx) => {
        const stored = await upsertConnection(tx, {
          organizationId,
          type,
          encrypt: (id) => deps.sources.encryptCredentials(id, credentials),
          scheduleIntervalMinutes: schedule === undefined ? undefined : (schedule?.intervalMinutes ?? null),
        });
        await recordWebhookAccount(tx, {
          connectionId: stored.id,
          organizationId,
          connector: normalized.connector,
          credentials,
        });
        const jobId =
          sync && startsSyncing(stored) ? await queueFirstSync(tx, organizationId, stored.id) : null;
        return { ...stored, jobId };
      });
      if (result.jobId !== null) deps.jobs.wake();
      // Change notifications where the source lets an API subscribe; a failure is only logged.
      await subscribeConnection(
        { db: deps.db, sources: deps.sources, log: request.log, publicUrl: deps.config.KB_PUBLIC_URL },
        { connectionId: result.id, organizationId, connector: normalized.connector, credentials },
      );
      return {
        success: true,
        connectionId: result.id,
        created: result.created,
        ...(result.jobId === null ? {} : { jobId: result.jobId }),
      };
    },
  );
}

/**
 * Whether storing the credentials starts a sync: a new connection has nothing yet, and one that needed
 * consent again could not sync until now. A rotation of working credentials changes nothing to sync, and
 * an inactive connection stays paused.
 */
function startsSyncing(stored: { created: boolean; status: string; consentWasNeeded: boolean }): boolean {
  return stored.status === 'active' && (stored.created || stored.consentWasNeeded);
}

/** Queues the sync in the connection's transaction; null when a job of the connection is already queued. */
function queueFirstSync(tx: Queryable, organizationId: string, connectionId: string): Promise<number | null> {
  return enqueueSyncJob(tx, { organizationId, connectionId, jobType: 'sync', trigger: 'api' });
}

/**
 * The credentials to check and store. An OAuth source without a token (or another way in) in the request
 * takes the one its consent stored (the newest, or the one under `secretId`).
 */
async function withConsentTokens(
  deps: RouteDeps,
  organizationId: string,
  { type, connector, credentials }: NormalizedSource,
  secretId: string | undefined,
): Promise<Record<string, unknown>> {
  const oauth = connector.oauth;
  if (secretId !== undefined && !oauth) {
    throw new AppError(
      'invalid_request',
      `secretId only applies to OAuth connections (${deps.sources.registry.oauthTypeValues().join(', ')}).`,
    );
  }
  if (!oauth || !needsConsent(oauth, credentials)) return credentials;
  const tenantField = oauth.tenant?.field;
  const tenant = tenantOf(oauth, credentials);
  const secret = await findOAuthSecret(deps.db, organizationId, type, secretId, tenant);
  if (!secret) {
    throw new AppError(
      'oauth_required',
      secretId === undefined
        ? `Connecting ${type}${tenant ? ` (${tenantField} ${tenant})` : ''} needs OAuth consent first: POST /api/connect/oauth/initiate, open the consentUrl, then create the connection (or pass the token as source.${oauth.tokenField}).`
        : 'No OAuth token is stored under this secretId for this organization; complete the consent first.',
    );
  }
  if (tenantField && secret.tenant !== tenant) {
    throw new AppError(
      'invalid_request',
      `source.${tenantField}: the consent under this secretId was given for another ${tenantField}; start the consent for this one.`,
    );
  }
  const tokens = decodeStoredTokens(
    deps.sources.cipher.decrypt(secret.tokenEncrypted, oauthSecretAad(secret.id)),
  );
  return credentialsWithTokens(credentials, oauth, tokens);
}

/**
 * Checks the credentials with the source, within CHECK_TIMEOUT_MS: past it, the source is unreachable.
 * Resolves to the credentials to store (with what the check learned, e.g. which host a token works on).
 */
async function checkWithinDeadline(
  deps: RouteDeps,
  { type, connector }: NormalizedSource,
  credentials: Record<string, unknown>,
): Promise<object> {
  const deadline = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  try {
    return await deps.sources.checkCredentials(connector, credentials, deadline);
  } catch (err) {
    if (deadline.aborted) {
      throw new AppError(
        'source_unreachable',
        `${connector.label} (${type}) did not answer the credential check within ${CHECK_TIMEOUT_MS / 1000} s; try again later.`,
      );
    }
    throw err;
  }
}
