/**
 * `wiki`: a Confluence Cloud site, with an Atlassian account e-mail and an API token of any kind Atlassian
 * issues (classic, scoped, a service account's): the credential check finds where the token works and
 * the connection remembers it (route.ts, check.ts). Its pages and blog posts sync as `private` items
 * (`wiki_pages`, `wiki_blogposts`): see sync.ts.
 */
import { z } from 'zod';
import { normalizeEmail, normalizeSiteHost, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';
import { checkWikiCredentials } from './check.ts';
import { GATEWAY_SETTING, GATEWAY_SETTING_KEY, WIKI_SOURCE, type WikiCredentials } from './route.ts';
import { syncWiki, type WikiCursor, wikiCursorSchema } from './sync.ts';

export type { WikiCredentials };

const wikiInputSchema = z.strictObject({
  domain_name: z
    .string()
    .min(1)
    .describe(
      'Site host name: `acme` (meaning acme.atlassian.net), `acme.atlassian.net` or a custom domain.',
    ),
  email: z
    .string()
    .min(1)
    .describe(
      "E-mail of the Atlassian account the API token belongs to (a service account's @serviceaccount.atlassian.com address).",
    ),
  api_token: z
    .string()
    .min(1)
    .describe(
      "Atlassian API token: classic, scoped (read:space:confluence, read:page:confluence) or a service account's.",
    ),
});
type WikiInput = z.infer<typeof wikiInputSchema>;

/**
 * Confluence publishes no request rate for API-token (Basic) traffic, only burst limits answered with
 * 429 and `Retry-After`, which the HTTP client waits out; so no `requestsPerSecond` is declared.
 */
export const wikiConnector: Connector<WikiCredentials, WikiCursor, WikiInput> = {
  ...WIKI_SOURCE,
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
  settings: { [GATEWAY_SETTING_KEY]: GATEWAY_SETTING },
  validate: checkWikiCredentials,
  sync: syncWiki,
  cursor: wikiCursorSchema,
};
