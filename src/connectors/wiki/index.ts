/**
 * `wiki`: a Confluence Cloud site, with an Atlassian account e-mail and an API token of any kind Atlassian
 * issues (classic, scoped, a service account's): the credential check finds where the token works and
 * the connection remembers it (route.ts, check.ts). Its pages and blog posts sync as `private` items
 * (`wiki_pages`, `wiki_blogposts`): see sync.ts. With a `webhook_secret`, an Automation rule of the site
 * tells the service which ones changed (webhooks.ts), and exactly those are read again (changes.ts).
 */
import { z } from 'zod';
import { normalizeEmail, normalizeSiteHost, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';
import { AppError } from '../../lib/errors.ts';
import { syncWikiChanges } from './changes.ts';
import { checkWikiCredentials } from './check.ts';
import { GATEWAY_SETTING, GATEWAY_SETTING_KEY, WIKI_SOURCE, type WikiCredentials } from './route.ts';
import { syncWiki, type WikiCursor, wikiCursorSchema } from './sync.ts';
import { wikiWebhooks } from './webhooks.ts';

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
  webhook_secret: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Optional: a secret of 32 to 255 characters you choose, which the site's Automation rule sends in the X-KB-Webhook-Secret header with change notifications (docs/sources/wiki.md). Stored encrypted, never shown again.",
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
      ...(input.webhook_secret === undefined
        ? {}
        : { webhook_secret: normalizeWebhookSecret(input.webhook_secret) }),
    };
  },
  defaultBaseUrl: 'https://{domain_name}',
  baseUrlSetting: 'KB_WIKI_BASE_URL',
  settings: { [GATEWAY_SETTING_KEY]: GATEWAY_SETTING },
  validate: checkWikiCredentials,
  sync: syncWiki,
  cursor: wikiCursorSchema,
  webhooks: wikiWebhooks,
  syncChanged: syncWikiChanges,
};

/**
 * The secret an Automation rule sends in a header: a token (no spaces or control characters) long enough
 * not to be guessed, and within what a header value and Data Center's secret field (255) hold.
 */
function normalizeWebhookSecret(raw: string): string {
  const value = normalizeToken('webhook_secret', raw);
  if (value.length < 32 || value.length > 255) {
    throw new AppError(
      'invalid_request',
      'source.webhook_secret must be 32 to 255 characters (e.g. the output of `openssl rand -hex 32`).',
      { field: 'source.webhook_secret' },
    );
  }
  return value;
}
