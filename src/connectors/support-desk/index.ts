/**
 * `support_desk`: a Zendesk account. Its Help Center articles sync as items (`support_desk_articles`,
 * `public` when visible to everyone; one item per language, and with `brands` every brand's help center),
 * and with `include_tickets` its solved and closed tickets too
 * (`support_desk_tickets`, `private`, public comments only): see sync.ts. Authenticated with the seed's
 * e-mail + API token (Basic `{email}/token:{api_token}`) or an OAuth access token (Bearer), which the
 * consent flow fills; Zendesk is retiring API tokens (vendor-apis/zendesk.md, Corrections). Article events
 * come through a webhook the service subscribes (webhooks.ts) and name the articles changes.ts reads again.
 */
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { credentialCheck } from '../credential-check.ts';
import { normalizeEmail, normalizeTenantLabel, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';
import {
  SUPPORT_DESK_SOURCE,
  type SupportDeskCredentials,
  ZENDESK_OAUTH_REVOKED_HINT,
  ZENDESK_TOKEN_RETIRED_HINT,
  zendeskAuthHeader,
  zendeskSecrets,
} from './client.ts';
import {
  DEFAULT_LISTING_HOURS,
  type SupportDeskCursor,
  supportDeskCursorSchema,
  syncSupportDesk,
} from './sync.ts';
import { zendeskOAuth } from './oauth.ts';
import { syncChangedArticles } from './changes.ts';
import { supportDeskWebhooks } from './webhooks.ts';

export { type SupportDeskCredentials, ZENDESK_TOKEN_RETIRED_HINT, zendeskAuthHeader };

/** Brands one connection may name: more is an account to split into connections. */
const MAX_BRANDS = 100;

const supportDeskInputSchema = z.strictObject({
  subdomain: z.string().min(1).describe('Account subdomain: `acme` or `acme.zendesk.com`.'),
  email: z
    .string()
    .min(1)
    .optional()
    .describe('E-mail of the agent or admin the API token belongs to (with api_token).'),
  api_token: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Zendesk API token (with email). Zendesk stops accepting API tokens on 2027-04-30; OAuth (access_token) replaces them.',
    ),
  access_token: z
    .string()
    .min(1)
    .optional()
    .describe('OAuth access token, in place of email and api_token; the OAuth consent flow fills it.'),
  include_tickets: z
    .boolean()
    .optional()
    .describe(
      'Also sync solved and closed tickets, their public comments only, as private items. Default false.',
    ),
  brands: z
    .union([z.literal('all'), z.array(z.string().min(1)).min(1).max(MAX_BRANDS)])
    .optional()
    .describe(
      'Also sync other brands\' help centers: `all` (every brand whose help center is live) or a list of brand subdomains (`["acme", "acme-pro"]`). Each item is tagged `brand:<subdomain>`. Absent: only the subdomain\'s own help center.',
    ),
});
type SupportDeskInput = z.infer<typeof supportDeskInputSchema>;

// `id` is null for the anonymous user Zendesk answers with when a request carries no usable identity.
const meSchema = z.object({ user: z.object({ id: z.number().nullable(), role: z.string().optional() }) });

const SOURCE = SUPPORT_DESK_SOURCE;

const tokenHint =
  'Check source.email and source.api_token (token access must be enabled in the Zendesk admin center).';
const accessHints = {
  403: 'The user may not use the API; use an agent or admin account.',
  404: 'Check source.subdomain: no Zendesk account answers there.',
};

function noCredentials(): AppError {
  return new AppError(
    'oauth_required',
    'The support_desk source has neither an API token nor an OAuth access token: give source.email and source.api_token, or connect through OAuth (POST /api/connect/oauth/initiate with type support_desk and the subdomain).',
  );
}

function invalid(field: string, message: string): AppError {
  return new AppError('invalid_request', `source.${field} ${message}`, { field: `source.${field}` });
}

const checkApiToken = credentialCheck({
  source: SOURCE,
  path: '/api/v2/users/me.json',
  headers: (creds: SupportDeskCredentials) => ({ authorization: zendeskAuthHeader(creds) }),
  schema: meSchema,
  hints: { 401: tokenHint, ...accessHints, other: tokenHint },
  shapeHint: 'Check source.subdomain.',
  secrets: zendeskSecrets,
  notAccepted: (me) => (me.user.id === null ? 'it answered as the anonymous user' : undefined),
});

const checkAccessToken = credentialCheck({
  source: SOURCE,
  path: '/api/v2/users/me.json',
  headers: (creds: SupportDeskCredentials) => ({ authorization: zendeskAuthHeader(creds) }),
  schema: meSchema,
  hints: { 401: ZENDESK_OAUTH_REVOKED_HINT, ...accessHints, other: 'Check source.access_token.' },
  shapeHint: 'Check source.subdomain.',
  secrets: zendeskSecrets,
  notAccepted: (me) => (me.user.id === null ? 'it answered as the anonymous user' : undefined),
});

/**
 * Pacing: §7 documents account-wide limits per plan, from 200 requests a minute (Suite Team) up to
 * 2,500; the lowest is what any account allows, so 200 a minute. The incremental exports are stricter
 * (10 a minute, 30 with the High Volume add-on), which a per-connector pacer cannot express; but one
 * export page holds 1,000 articles or tickets (and tickets interleave a comment read each), so a pass
 * reaches that limit only beyond some 10,000 changed records, and then Zendesk's 429 with `Retry-After`
 * (under a minute) is waited out by the HTTP client.
 */
export const supportDeskConnector: Connector<SupportDeskCredentials, SupportDeskCursor, SupportDeskInput> = {
  ...SOURCE,
  credentials: supportDeskInputSchema,
  normalize(input) {
    const creds: SupportDeskCredentials = {
      subdomain: normalizeTenantLabel('subdomain', input.subdomain, 'zendesk.com'),
    };
    // Both or neither: with neither, the OAuth consent supplies `access_token` (the create-connection
    // route fills it from the stored consent after normalizing; zendeskOAuth.needsConsent), and without
    // one `validate` answers oauth_required.
    if ((input.email === undefined) !== (input.api_token === undefined)) {
      throw input.email !== undefined
        ? invalid('api_token', 'is required with source.email (or give neither and connect through OAuth).')
        : invalid('email', 'is required with source.api_token (the e-mail of its agent or admin).');
    }
    if (input.email !== undefined && input.api_token !== undefined) {
      creds.email = normalizeEmail('email', input.email);
      creds.api_token = normalizeToken('api_token', input.api_token);
    }
    if (input.access_token !== undefined) {
      creds.access_token = normalizeToken('access_token', input.access_token);
    }
    creds.include_tickets = input.include_tickets === true;
    if (input.brands !== undefined) {
      creds.brands =
        input.brands === 'all'
          ? 'all'
          : [...new Set(input.brands.map((b) => normalizeTenantLabel('brands', b, 'zendesk.com')))];
    }
    return creds;
  },
  defaultBaseUrl: 'https://{subdomain}.zendesk.com',
  baseUrlSetting: 'KB_SUPPORT_DESK_BASE_URL',
  oauth: zendeskOAuth,
  settings: {
    listingHours: {
      env: 'KB_SUPPORT_DESK_LISTING_HOURS',
      default: DEFAULT_LISTING_HOURS,
      pattern: /^\d{1,5}$/,
      description:
        'the most hours an incremental sync goes without listing every article and reading the categories, sections and languages (whole hours; 0 does both on every sync), e.g. 24',
    },
  },
  async validate(ctx) {
    if (ctx.credentials.access_token) return checkAccessToken(ctx);
    if (!ctx.credentials.api_token) throw noCredentials();
    return checkApiToken(ctx);
  },
  sync(ctx, opts) {
    if (!ctx.credentials.access_token && !ctx.credentials.api_token) throw noCredentials();
    return syncSupportDesk(ctx, opts);
  },
  cursor: supportDeskCursorSchema,
  requestsPerSecond: 200 / 60,
  webhooks: supportDeskWebhooks,
  syncChanged(ctx, changes) {
    if (!ctx.credentials.access_token && !ctx.credentials.api_token) throw noCredentials();
    return syncChangedArticles(ctx, changes);
  },
};
