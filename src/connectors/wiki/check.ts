/**
 * The credential check of `wiki`, which also finds where the token works (route.ts):
 *
 * 1. `GET /wiki/rest/api/user/current` on the site with Basic `email:api_token`: a known user means a
 *    classic token, remembered as the `site` route.
 * 2. A 401 or 403 there may be a scoped or service-account token: the site's cloud id from
 *    `GET /_edge/tenant_info` (no credentials), then `GET /wiki/api/v2/spaces?limit=1` and
 *    `GET /wiki/api/v2/pages?limit=1` through the gateway with the same header: both answered means a
 *    scoped token with the scopes the sync needs, remembered as the `gateway` route with the cloud id.
 *    The v2 listings, not `user/current`, because they need only the scopes the sync needs.
 *
 * Each refusal gets the hint of its fix (route.ts `WIKI_HINTS`), never a secret.
 */
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { joinUrl } from '../base-url.ts';
import {
  basicAuth,
  checkFailure,
  checkRequest,
  parseCheckBody,
  sourceName,
  sourceRefusal,
} from '../credential-check.ts';
import { vendorErrorText } from '../http.ts';
import type { ConnectorContext, SourceResponse } from '../types.ts';
import {
  cloudIdSchema,
  gatewayBaseUrl,
  isScopeRefusal,
  WIKI_HINTS,
  WIKI_SOURCE,
  type WikiCredentials,
} from './route.ts';

// Confluence answers anonymous requests on sites open to anonymous users, with `type: "anonymous"`.
const currentUserSchema = z.object({ type: z.string(), accountId: z.string().optional() });
const tenantInfoSchema = z.object({ cloudId: cloudIdSchema });
const listingSchema = z.object({ results: z.array(z.unknown()) });

/** What the check leaves out of the stored credentials: the previous route is found again. */
function given(creds: WikiCredentials): WikiCredentials {
  const { domain_name, email, api_token, webhook_secret } = creds;
  return { domain_name, email, api_token, ...(webhook_secret === undefined ? {} : { webhook_secret }) };
}

/** Checks the credentials and resolves to them with the route they work on. */
export async function checkWikiCredentials(ctx: ConnectorContext<WikiCredentials>): Promise<WikiCredentials> {
  const creds = given(ctx.credentials);
  const site = await checkOnSite(ctx);
  if (site === 'accepted') return { ...creds, api_route: 'site' };
  const cloudId = await siteCloudId(ctx);
  if (cloudId === undefined) {
    const hint = site.status === 403 ? WIKI_HINTS.forbidden : WIKI_HINTS.noCloudId(creds.domain_name);
    throw refusal(site, hint, creds);
  }
  await checkThroughGateway(ctx, cloudId, site);
  return { ...creds, api_route: 'gateway', cloud_id: cloudId };
}

const authorization = (creds: WikiCredentials) => ({
  authorization: basicAuth(creds.email, creds.api_token),
});

function refusal(res: SourceResponse, hint: string, creds: WikiCredentials): AppError {
  return sourceRefusal(
    WIKI_SOURCE,
    'rejected the credentials',
    { status: res.status, vendorMessage: vendorErrorText(res.text()) },
    hint,
    [creds.api_token],
  );
}

/** `accepted` for a classic token; the site's 401 or 403 answer otherwise (any other answer throws). */
async function checkOnSite(ctx: ConnectorContext<WikiCredentials>): Promise<'accepted' | SourceResponse> {
  const url = joinUrl(ctx.baseUrl, '/wiki/rest/api/user/current');
  const res = await checkRequest(WIKI_SOURCE, ctx, 'GET', url, { headers: authorization(ctx.credentials) });
  if (res.status === 401 || res.status === 403) return res;
  if (res.status < 200 || res.status > 299) {
    throw checkFailure(
      WIKI_SOURCE,
      res,
      url,
      { 404: WIKI_HINTS.notFound, other: WIKI_HINTS.neitherAccepted },
      [ctx.credentials.api_token],
    );
  }
  const user = parseCheckBody(WIKI_SOURCE, res, url, currentUserSchema, 'Check source.domain_name.');
  if (user.type === 'anonymous') {
    // A site open to anonymous users answers a wrong token so; a scoped token gets a 401 instead.
    throw new AppError(
      'source_auth_failed',
      `${sourceName(WIKI_SOURCE)} did not accept the credentials (it answered as the anonymous user). ${WIKI_HINTS.neitherAccepted}`,
    );
  }
  return 'accepted';
}

/** The site's cloud id from `/_edge/tenant_info`, or undefined where the host does not say it. */
async function siteCloudId(ctx: ConnectorContext<WikiCredentials>): Promise<string | undefined> {
  const res = await checkRequest(WIKI_SOURCE, ctx, 'GET', joinUrl(ctx.baseUrl, '/_edge/tenant_info'));
  if (res.status < 200 || res.status > 299) return undefined;
  let body: unknown;
  try {
    body = res.json();
  } catch {
    return undefined;
  }
  const parsed = tenantInfoSchema.safeParse(body);
  return parsed.success ? parsed.data.cloudId : undefined;
}

/**
 * The two listings the sync starts with, through the gateway. A plain 401 there too means neither way
 * took the token, unless the site said 403 (then the site's refusal is the one to fix).
 */
async function checkThroughGateway(
  ctx: ConnectorContext<WikiCredentials>,
  cloudId: string,
  site: SourceResponse,
): Promise<void> {
  const base = gatewayBaseUrl(ctx.settings, cloudId);
  const secrets = [ctx.credentials.api_token];
  for (const path of ['/wiki/api/v2/spaces', '/wiki/api/v2/pages']) {
    const url = joinUrl(base, path, { limit: 1 });
    const res = await checkRequest(WIKI_SOURCE, ctx, 'GET', url, { headers: authorization(ctx.credentials) });
    if (res.status === 401 && isScopeRefusal(vendorErrorText(res.text()))) {
      throw refusal(res, WIKI_HINTS.scopeMissing, ctx.credentials);
    }
    if (res.status === 401 && site.status === 403) throw refusal(site, WIKI_HINTS.forbidden, ctx.credentials);
    if (res.status < 200 || res.status > 299) {
      throw checkFailure(
        WIKI_SOURCE,
        res,
        url,
        { 401: WIKI_HINTS.neitherAccepted, 403: WIKI_HINTS.forbidden, other: WIKI_HINTS.neitherAccepted },
        secrets,
      );
    }
    parseCheckBody(WIKI_SOURCE, res, url, listingSchema);
  }
}
