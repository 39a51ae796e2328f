/**
 * Shared by the connection and sync-job endpoints (not an endpoint itself): how a request names a
 * connection, by `type` (canonical or the product's name) or by `connectionId` (API.md "Connections"),
 * and the sync job's response schema.
 */
import { z } from 'zod';
import type { SourceRegistry } from '../../connectors/registry.ts';
import type { Queryable } from '../../db/database.ts';
import { type ConnectionRef, type ConnectionRow, findConnection } from '../../db/repositories/connections.ts';
import { JOB_STATUSES } from '../../db/job-status.ts';
import { AppError } from '../../lib/errors.ts';
import { credentialPatterns } from '../schemas.ts';
import { jobWarningsSchema } from './job-warnings-schema.ts';

/** The two optional fields; exactly one must be given ({@link connectionRefOf} checks). */
export const connectionRefFields = (registry: SourceRegistry) => ({
  type: z
    .enum(registry.typeValues)
    .optional()
    .describe(
      'Source type of the connection (`notes`, `support_desk`, ... or the product name). Give this or connectionId, not both.',
    ),
  connectionId: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('Id of the connection. Give this or type, not both.'),
});

/**
 * "Give type or connectionId, not both", as JSON Schema says it: for the body schemas that take
 * {@link connectionRefFields} (`.meta(CONNECTION_REF_ONE_OF)`). A query string cannot say it in OpenAPI
 * (no rule spans parameters); there the parameters' descriptions do.
 */
export const CONNECTION_REF_ONE_OF = {
  oneOf: [{ required: ['type'] }, { required: ['connectionId'] }],
};

export function connectionRefOf(
  input: { type?: string | undefined; connectionId?: string | undefined },
  registry: SourceRegistry,
): ConnectionRef {
  if (input.type !== undefined && input.connectionId !== undefined) {
    throw new AppError('invalid_request', 'Name the connection with type or with connectionId, not both.');
  }
  if (input.connectionId !== undefined) return { connectionId: input.connectionId };
  if (input.type !== undefined) return { type: registry.get(input.type).type };
  throw new AppError(
    'invalid_request',
    'Name the connection: give type (e.g. "support_desk") or connectionId.',
  );
}

function describeRef(ref: ConnectionRef): string {
  return 'type' in ref
    ? `No ${ref.type} connection exists in this organization.`
    : 'No connection with this connectionId exists in this organization.';
}

/** The organization's connection the request names, or 404 not_found (other organizations' look the same). */
export async function resolveConnection(
  q: Queryable,
  organizationId: string,
  ref: ConnectionRef,
): Promise<ConnectionRow> {
  const row = await findConnection(q, organizationId, ref);
  if (!row) throw new AppError('not_found', describeRef(ref));
  return row;
}

/** This service's public origin for links: KB_PUBLIC_URL, else the origin the request came to. */
export function publicOrigin(
  publicUrl: string | undefined,
  request: { protocol: string; host: string },
): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  return `${request.protocol}://${request.host}`;
}

const syncFailureSchema = z.object({
  externalId: z.string().optional(),
  table: z.string().optional().describe("The document's source_table_name, when the source said"),
  message: z.string(),
  retryable: z.boolean(),
});

/** A sync job as every endpoint shows it (API.md "Sync jobs"). */
export const syncJobSchema = z
  .object({
    jobId: z
      .number()
      .describe(
        'Random integer up to 2^53 - 1, unique across the service; it carries no order (lists sort by creation)',
      ),
    status: z.enum(JOB_STATUSES).describe('pending, running, succeeded, failed, cancelled or incomplete'),
    jobType: z.enum(['sync', 'reset']),
    startTime: z.number().describe('Unix epoch ms when it started running (when queued, while pending)'),
    connectionId: z.string(),
    lastUpdatedAt: z.number().describe('Unix epoch ms'),
    duration: z.number().describe('Milliseconds it ran (so far, while running)'),
    bytesSynced: z.number().describe('Bytes received from the source'),
    rowsSynced: z.number().describe('Documents created, updated or deleted'),
    error: z.string().optional().describe('Why it failed (or, when incomplete, a summary of the failures)'),
    trigger: z.enum(['api', 'schedule']),
    attempts: z.number().describe('Runs so far; more than 1 after a worker died'),
    createdAt: z.number().describe('Unix epoch ms when it was queued'),
    finishedAt: z.number().nullable(),
    failureCount: z.number(),
    failures: z.array(syncFailureSchema).describe('Documents that could not be synced (first 100)'),
    documents: z
      .object({
        seen: z
          .number()
          .describe('Documents the source yielded as new or changed (unchanged ones it skips are not read)'),
        stored: z.number().describe('Of those, stored as new or changed items'),
        unchanged: z
          .number()
          .describe('Of those, identical to the stored item (nothing written or embedded)'),
        deleted: z
          .number()
          .describe('Items removed: deleted at the source, or not seen by a completed reset'),
        failed: z.number().describe('Documents that could not be synced (failureCount)'),
      })
      .describe('Progress by document, updated with every committed batch while the job runs'),
    warnings: jobWarningsSchema,
    warningCount: z.number().describe('extension: warnings in all, those beyond the list included'),
  })
  .meta({ id: 'SyncJob' });

/**
 * What each source's connector checks in its credential fields (its `normalize`, with the rules of
 * src/connectors/normalize.ts), stated in the document: a pattern per field, and the fields that go
 * together. The connectors' input schemas only say "a string"; without this the document would call
 * `email: "0"` valid. Validation itself stays the connector's (its messages name the field); the
 * patterns say exactly what it takes, which test/http/openapi.test.ts checks against the normalizers.
 */
interface CredentialRules {
  patterns: Record<string, { pattern: string; note?: string }>;
  /** Fields that are given together or not at all. */
  together?: string[];
}

const IDN_NOTE = ' A name in another script is also taken (converted to its ASCII form).';

export const credentialRules: Record<string, CredentialRules> = {
  notes: { patterns: { access_token: { pattern: credentialPatterns.token } } },
  support_desk: {
    patterns: {
      subdomain: { pattern: credentialPatterns.tenantLabel('zendesk.com'), note: IDN_NOTE },
      email: { pattern: credentialPatterns.email },
      api_token: { pattern: credentialPatterns.token },
      access_token: { pattern: credentialPatterns.token },
    },
    together: ['email', 'api_token'],
  },
  wiki: {
    patterns: {
      domain_name: { pattern: credentialPatterns.siteHost, note: IDN_NOTE },
      email: { pattern: credentialPatterns.email },
      api_token: { pattern: credentialPatterns.token },
    },
  },
  storefront: {
    patterns: {
      shop: { pattern: credentialPatterns.tenantLabel('myshopify.com'), note: IDN_NOTE },
      access_token: { pattern: credentialPatterns.token },
      client_id: { pattern: credentialPatterns.token },
      client_secret: { pattern: credentialPatterns.token },
    },
    together: ['client_id', 'client_secret'],
  },
  docs_space: {
    patterns: {
      access_token: { pattern: credentialPatterns.token },
      space_id: { pattern: credentialPatterns.id },
    },
  },
};

/** A credential field with its rule declared (an optional field stays optional). */
export function withCredentialRule(
  field: z.ZodType,
  rule: { pattern: string; note?: string },
  outerDescription?: string,
): z.ZodType {
  if (field instanceof z.ZodOptional) {
    return withCredentialRule(field.unwrap() as z.ZodType, rule, field.description).optional();
  }
  const description = `${field.description ?? outerDescription ?? ''}${rule.note ?? ''}`.trim();
  return field.meta({ pattern: rule.pattern, ...(description ? { description } : {}) });
}
