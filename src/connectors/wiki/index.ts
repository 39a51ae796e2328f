/**
 * `wiki`: a Confluence Cloud site, with an Atlassian account e-mail and API token. Its pages and blog
 * posts sync as `private` items (`wiki_pages`, `wiki_blogposts`): see sync.ts.
 */
import { z } from 'zod';
import { credentialCheck } from '../credential-check.ts';
import { normalizeEmail, normalizeSiteHost, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';
import { confluenceAuthHeader, WIKI_SOURCE, WIKI_TOKEN_HINT, type WikiCredentials } from './client.ts';
import { syncWiki, type WikiCursor, wikiCursorSchema } from './sync.ts';

export { confluenceAuthHeader, type WikiCredentials };

const wikiInputSchema = z.strictObject({
  domain_name: z
    .string()
    .min(1)
    .describe(
      'Site host name: `acme` (meaning acme.atlassian.net), `acme.atlassian.net` or a custom domain.',
    ),
  email: z.string().min(1).describe('E-mail of the Atlassian account the API token belongs to.'),
  api_token: z.string().min(1).describe('Atlassian API token.'),
});
type WikiInput = z.infer<typeof wikiInputSchema>;

// Confluence answers anonymous requests on sites open to anonymous users, with `type: "anonymous"`.
const currentUserSchema = z.object({ type: z.string(), accountId: z.string().optional() });

const SOURCE = WIKI_SOURCE;

const tokenHint = WIKI_TOKEN_HINT;

/**
 * Confluence publishes no request rate for API-token (Basic) traffic, only burst limits answered with
 * 429 and `Retry-After`, which the HTTP client waits out; so no `requestsPerSecond` is declared.
 */
export const wikiConnector: Connector<WikiCredentials, WikiCursor, WikiInput> = {
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
  sync: syncWiki,
  cursor: wikiCursorSchema,
};
