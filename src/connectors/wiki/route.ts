/**
 * Which host a `wiki` connection's token works on. Atlassian issues API tokens of three kinds, and neither
 * the token string nor a refusal says which one a token is:
 *
 * - a classic (unscoped) token works with Basic `email:token` on the site itself (`https://{domain_name}`);
 * - a scoped token, and every service account's token (service accounts only have scoped ones), is refused
 *   there with the same 401 as a wrong token, and works only through Atlassian's API gateway
 *   `https://api.atlassian.com/ex/confluence/{cloudId}` (Basic `email:token` as well), the cloud id being
 *   what the site's `/_edge/tenant_info` answers.
 *
 * The credential check (check.ts) finds which, and the connection stores it with its credentials
 * (`api_route`, and `cloud_id` for the gateway); every later call goes where the token works.
 * Credentials stored before the route was remembered used the site, the only way in then.
 */
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { joinUrl, pathSegment, resolveBaseUrl } from '../base-url.ts';
import type { ConnectorContext, ConnectorSetting } from '../types.ts';

/** How the service names this source: type, product alias and label (one declaration, used by index.ts). */
export const WIKI_SOURCE = { type: 'wiki', alias: 'confluence', label: 'Confluence' } as const;

export interface WikiCredentials {
  /** Full host name of the site (`acme.atlassian.net` or a custom domain). */
  domain_name: string;
  email: string;
  api_token: string;
  /** Where the token works, as the credential check found it; absent in credentials stored before. */
  api_route?: 'site' | 'gateway';
  /** The site's cloud id, for the gateway route. */
  cloud_id?: string;
  /** The secret the site's Automation rule sends with change notifications (webhooks.ts), when given. */
  webhook_secret?: string;
}

export type WikiContext = Pick<
  ConnectorContext<WikiCredentials>,
  'http' | 'signal' | 'baseUrl' | 'credentials' | 'settings'
>;

/** The key of the gateway's origin in `ctx.settings`. */
export const GATEWAY_SETTING_KEY = 'gatewayBaseUrl';

/** The operator's override of the gateway's origin (a proxy, a test's fake), like KB_WIKI_BASE_URL for the site. */
export const GATEWAY_SETTING: ConnectorSetting = {
  env: 'KB_ATLASSIAN_API_BASE_URL',
  default: 'https://api.atlassian.com',
  pattern: /^https?:\/\/[A-Za-z0-9.-]+(?::\d{1,5})?(?:\/[A-Za-z0-9._~%-]+)*\/?$/,
  description:
    "the origin of Atlassian's API gateway, through which scoped and service-account tokens reach Confluence, e.g. https://api.atlassian.com",
};

/** A cloud id is a UUID; anything else from `/_edge/tenant_info` is not used in a URL. */
export const cloudIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/);

const storedRouteSchema = z.discriminatedUnion('api_route', [
  z.object({ api_route: z.literal('site') }),
  z.object({ api_route: z.literal('gateway'), cloud_id: cloudIdSchema }),
]);
type StoredRoute = z.infer<typeof storedRouteSchema>;

/** The route stored with the credentials (the site for credentials stored before routes were). */
function routeOf(creds: WikiCredentials): StoredRoute {
  if (creds.api_route === undefined) return { api_route: 'site' };
  const parsed = storedRouteSchema.safeParse(creds);
  if (!parsed.success) {
    throw new AppError(
      'internal_error',
      'The stored route of this Confluence connection is not readable; create the connection again.',
    );
  }
  return parsed.data;
}

/** `https://api.atlassian.com/ex/confluence/{cloudId}` (or the operator's gateway origin instead). */
export function gatewayBaseUrl(settings: Readonly<Record<string, string>>, cloudId: string): string {
  const origin = resolveBaseUrl(settings[GATEWAY_SETTING_KEY] ?? GATEWAY_SETTING.default, {});
  return joinUrl(origin, `/ex/confluence/${pathSegment(cloudId)}`);
}

/** Where the API calls of this connection go: the site, or the gateway path of its cloud id. */
export function apiBaseUrl(ctx: WikiContext): string {
  const route = routeOf(ctx.credentials);
  return route.api_route === 'gateway' ? gatewayBaseUrl(ctx.settings, route.cloud_id) : ctx.baseUrl;
}

/** Whether the connection's calls go through the gateway (a scoped or service-account token). */
export function usesGateway(creds: WikiCredentials): boolean {
  return routeOf(creds).api_route === 'gateway';
}

/** The scopes a scoped token needs for this service's calls (v2 spaces, pages and blog posts). */
export const READ_SCOPES = 'read:space:confluence and read:page:confluence';

/** The gateway's 401 for a token without the endpoint's scope: `Unauthorized; scope does not match`. */
export function isScopeRefusal(vendorText: string | undefined): boolean {
  return /scope does not match/i.test(vendorText ?? '');
}

/** What each refusal means and what fixes it, by where it happened. */
export const WIKI_HINTS = {
  /** The site refused a classic token during a sync. */
  classicRefused:
    'Check source.email and source.api_token: the site no longer accepts this API token (Atlassian API tokens expire after at most a year, and can be revoked). Create a new API token for that account and connect again with it.',
  /** The gateway refused a scoped token during a sync. */
  scopedRefused:
    "Check source.email and source.api_token: Atlassian's API gateway no longer accepts this scoped token (they expire after at most a year, and can be revoked). Create a new scoped token with " +
    `${READ_SCOPES} (a service account's in admin.atlassian.com, with its @serviceaccount.atlassian.com address as source.email) and connect again with it.`,
  /** The gateway took the token but not for this endpoint. */
  scopeMissing: `The token reaches Confluence through Atlassian's API gateway but lacks a scope this service needs: create a scoped token with ${READ_SCOPES} and connect again with it.`,
  /** Neither the site nor the gateway took the token at the connection check. */
  neitherAccepted:
    "Check source.email and source.api_token: neither the site (classic API token) nor Atlassian's API gateway (scoped or service-account token) accepted them. The token may have expired or been revoked, or belong to another account; a service account's token goes with its @serviceaccount.atlassian.com address.",
  /** The site refused the token and did not tell its cloud id, so the gateway could not be tried. */
  noCloudId: (host: string) =>
    `Check source.email and source.api_token: the site refused them as a classic API token, and a scoped or service-account token needs the site's cloud id, which https://${host}/_edge/tenant_info did not give (source.domain_name may name the site's Atlassian address instead, e.g. acme.atlassian.net).`,
  forbidden:
    'The account may not use the Confluence API on this site: it needs Confluence product access and permission to view the spaces (a service account too).',
  notFound: 'Check source.domain_name: no Confluence Cloud site answers there.',
} as const;

/** The hint for a 401 or 403 of a sync's call, by the route the connection uses. */
export function refusalHint(creds: WikiCredentials, status: number, vendorText: string | undefined): string {
  if (status === 403) return WIKI_HINTS.forbidden;
  if (!usesGateway(creds)) return WIKI_HINTS.classicRefused;
  return isScopeRefusal(vendorText) ? WIKI_HINTS.scopeMissing : WIKI_HINTS.scopedRefused;
}
