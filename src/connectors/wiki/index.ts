/** `wiki`: a Confluence Cloud site, with an Atlassian account e-mail and API token. */
import { z } from 'zod';
import { basicAuth, credentialCheck } from '../credential-check.ts';
import { normalizeEmail, normalizeSiteHost, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';

export const wikiInputSchema = z.strictObject({
  domain_name: z
    .string()
    .min(1)
    .describe(
      'Site host name: `acme` (meaning acme.atlassian.net), `acme.atlassian.net` or a custom domain.',
    ),
  email: z.string().min(1).describe('E-mail of the Atlassian account the API token belongs to.'),
  api_token: z.string().min(1).describe('Atlassian API token.'),
});
export type WikiInput = z.infer<typeof wikiInputSchema>;
export interface WikiCredentials {
  /** Full host name of the site (`acme.atlassian.net` or a custom domain). */
  domain_name: string;
  email: string;
  api_token: string;
}

/** API-token authentication: Basic `email:api_token`. */
export function confluenceAuthHeader(creds: WikiCredentials): string {
  return basicAuth(creds.email, creds.api_token);
}

// Confluence answers anonymous requests on sites open to anonymous users, with `type: "anonymous"`.
const currentUserSchema = z.object({ type: z.string(), accountId: z.string().optional() });

const SOURCE = { type: 'wiki', alias: 'confluence', label: 'Confluence' } as const;

const tokenHint = 'Check source.email and source.api_token (an Atlassian API token of that account).';

export const wikiConnector: Connector<WikiCredentials, unknown, WikiInput> = {
  ...SOURCE,
  credentials: wikiInputSchema,
  normalize(input) {
    return {
      domain_name: normalizeSiteHost('domain_name', input.domain_name, 'atlassian.net'),
      email: normalizeEmail('email', input.email),
      api_token: normalizeToken('api_token', input.api_token),
    };
  },
  defaultBaseUrl: 'https://{domain_name}',
  baseUrlSetting: 'KB_WIKI_BASE_URL',
  validate: credentialCheck({
    source: SOURCE,
    path: '/wiki/rest/api/user/current',
    headers: (creds: WikiCredentials) => ({ authorization: confluenceAuthHeader(creds) }),
    schema: currentUserSchema,
    hints: {
      401: tokenHint,
      403: 'The account may not use the Confluence API on this site.',
      404: 'Check source.domain_name: no Confluence Cloud site answers there.',
      other: tokenHint,
    },
    shapeHint: 'Check source.domain_name.',
    secrets: (creds) => [creds.api_token],
    notAccepted: (user) => (user.type === 'anonymous' ? 'it answered as the anonymous user' : undefined),
  }),
  cursor: z.unknown(),
};
