import { z } from 'zod';
import { insertOAuthState } from '../../db/repositories/connections.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, httpUrl } from '../schemas.ts';
import { credentialRules, publicOrigin, withCredentialRule } from './connection-shared.ts';
import { newStateNonce, OAUTH_STATE_TTL_MS } from '../oauth-state.ts';
import { subscribesTo } from '../../jobs/source-webhooks.ts';

/**
 * The request body: `type` is one of the sources that declare OAuth steps (type or alias), plus the
 * account field of sources whose accounts each run their own consent (`subdomain` for support_desk).
 */
function bodySchema(
  oauthTypes: string[],
  tenantFields: Map<string, string[]>,
  sources: Array<{ names: string[]; tenantField: string | undefined }>,
) {
  const [first = 'notes', ...rest] = oauthTypes;
  const tenants = Object.fromEntries(
    [...tenantFields].map(([field, types]) => {
      const base = z
        .string()
        .min(1)
        .max(300)
        .describe(`Required for ${types.join(', ')}: the account whose consent this is.`);
      // The account field is the source's credential field of that name, with the same rule.
      const rule = types.map((t) => credentialRules[t]?.patterns[field]).find((r) => r !== undefined);
      return [field, (rule ? withCredentialRule(base, rule) : base).optional()];
    }),
  );
  // Which source takes which account field, as JSON Schema can say it (tenantOf below checks it).
  const fields = [...tenantFields.keys()];
  const oneOf = sources.map(({ names, tenantField }) => ({
    properties: { type: { enum: names } },
    ...(tenantField ? { required: [tenantField] } : {}),
    ...(fields.some((f) => f !== tenantField)
      ? { not: { anyOf: fields.filter((f) => f !== tenantField).map((f) => ({ required: [f] })) } }
      : {}),
  }));
  return z
    .strictObject({
      ...tenants,
      type: z.enum([first, ...rest], {
        error: `type: only ${oauthTypes.join(', ')} connect${oauthTypes.length > 2 ? '' : 's'} through OAuth; other sources take their credentials in POST /api/connect/connection.`,
      }),
      redirectUri: httpUrl(2000)
        .optional()
        .describe(
          'Where the browser is sent after the callback, with `secretId` and `status` (success|error) added.',
        ),
    })
    .meta(oneOf.length > 1 ? { oneOf } : {});
}

/**
 * OAuth step 1 (API.md "Connections"): a consent URL with a signed, expiring, single-use `state`, and the
 * secretId under which the callback will store the token.
 */
export function register(app: App, deps: RouteDeps): void {
  const tenantFields = new Map<string, string[]>();
  for (const c of deps.sources.registry.connectors) {
    const field = c.oauth?.tenant?.field;
    if (field) tenantFields.set(field, [...(tenantFields.get(field) ?? []), c.type]);
  }
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
        body: bodySchema(
          deps.sources.registry.oauthTypeValues(),
          tenantFields,
          deps.sources.registry.connectors
            .filter((c) => c.oauth)
            .map((c) => ({ names: [c.type, c.alias], tenantField: c.oauth?.tenant?.field })),
        ),
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
      const body = request.body as { type: string; redirectUri?: string } & Record<
        string,
        string | undefined
      >;
      const connector = deps.sources.registry.get(body.type);
      const tenant = tenantOf(connector.oauth?.tenant, body, connector.type, tenantFields);
      const { steps, app: oauthApp } = deps.sources.oauthOf(connector, tenant);
      const callbackUri = `${publicOrigin(deps.config.KB_PUBLIC_URL, request)}/api/connect/oauth/callback`;
      const nonce = newStateNonce();
      const secretId = newId();
      await insertOAuthState(deps.db, {
        id: nonce,
        organizationId,
        sourceType: connector.type,
        secretId,
        callbackUri,
        redirectUri: body.redirectUri ?? null,
        tenant,
        ttlMs: OAUTH_STATE_TTL_MS,
      });
      const state = await deps.oauthStates.sign(nonce, OAUTH_STATE_TTL_MS);
      const consentUrl = steps.authorizeUrl(oauthApp, {
        redirectUri: callbackUri,
        state,
        receivesChanges: subscribesTo(connector, deps.config.KB_PUBLIC_URL),
      });
      return { consentUrl, secretId, expiresAt: Date.now() + OAUTH_STATE_TTL_MS };
    },
  );
}

/** The account named in the body, canonical; 400 naming the field when it is missing or not the source's. */
function tenantOf(
  tenant: { field: string; normalize(value: string): string } | undefined,
  body: Record<string, string | undefined>,
  type: string,
  tenantFields: Map<string, string[]>,
): string | null {
  for (const field of tenantFields.keys()) {
    if (body[field] !== undefined && field !== tenant?.field) {
      throw new AppError(
        'invalid_request',
        `${field}: ${type} does not take it; only ${tenantFields.get(field)!.join(', ')} do.`,
      );
    }
  }
  if (!tenant) return null;
  const value = body[tenant.field];
  if (value === undefined) {
    throw new AppError(
      'invalid_request',
      `${tenant.field}: required for ${type}, whose accounts each run their own consent.`,
    );
  }
  return tenant.normalize(value);
}
