/** `support_desk`: a Zendesk account (its Help Center articles), with an API token. */
import { z } from 'zod';
import { basicAuth, credentialCheck } from '../credential-check.ts';
import { normalizeEmail, normalizeTenantLabel, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';

export const supportDeskInputSchema = z.strictObject({
  subdomain: z.string().min(1).describe('Account subdomain: `acme` or `acme.zendesk.com`.'),
  email: z.string().min(1).describe('E-mail of the agent or admin the API token belongs to.'),
  api_token: z.string().min(1).describe('Zendesk API token.'),
});
export type SupportDeskInput = z.infer<typeof supportDeskInputSchema>;
export interface SupportDeskCredentials {
  /** The bare subdomain (`acme`). */
  subdomain: string;
  email: string;
  api_token: string;
}

/** API-token authentication: Basic with the user name `{email}/token` and the token as password. */
export function zendeskAuthHeader(creds: SupportDeskCredentials): string {
  return basicAuth(`${creds.email}/token`, creds.api_token);
}

// `id` is null for the anonymous user Zendesk answers with when a request carries no usable identity.
const meSchema = z.object({ user: z.object({ id: z.number().nullable(), role: z.string().optional() }) });

const SOURCE = { type: 'support_desk', alias: 'zendesk', label: 'Zendesk' } as const;

const tokenHint =
  'Check source.email and source.api_token (token access must be enabled in the Zendesk admin center).';

export const supportDeskConnector: Connector<SupportDeskCredentials, unknown, SupportDeskInput> = {
  ...SOURCE,
  credentials: supportDeskInputSchema,
  normalize(input) {
    return {
      subdomain: normalizeTenantLabel('subdomain', input.subdomain, 'zendesk.com'),
      email: normalizeEmail('email', input.email),
      api_token: normalizeToken('api_token', input.api_token),
    };
  },
  defaultBaseUrl: 'https://{subdomain}.zendesk.com',
  baseUrlSetting: 'KB_SUPPORT_DESK_BASE_URL',
  validate: credentialCheck({
    source: SOURCE,
    path: '/api/v2/users/me.json',
    headers: (creds: SupportDeskCredentials) => ({ authorization: zendeskAuthHeader(creds) }),
    schema: meSchema,
    hints: {
      401: tokenHint,
      403: 'The user may not use the API; use an agent or admin account.',
      404: 'Check source.subdomain: no Zendesk account answers there.',
      other: tokenHint,
    },
    shapeHint: 'Check source.subdomain.',
    secrets: (creds) => [creds.api_token],
    notAccepted: (me) => (me.user.id === null ? 'it answered as the anonymous user' : undefined),
  }),
  cursor: z.unknown(),
};
