/**
 * A fake Zendesk authorization server on loopback, as Zendesk's OAuth reference and its announcements of
 * token expiry describe it (vendor-apis/zendesk.md, "Checked again"), attached to a {@link FakeZendesk}
 * whose API then accepts exactly the access tokens issued here that are alive:
 *
 * - `GET [/<prefix>]/oauth/authorizations/new` answers 302 to `redirect_uri` with a `code` and the
 *   `state` (consent is granted at once); codes live 120 s and are single use.
 * - `POST [/<prefix>]/oauth/tokens`, JSON body with `client_id` + `client_secret` (wrong: 401
 *   `invalid_client`): `authorization_code` (code, same `redirect_uri`) and `refresh_token`. Each grant
 *   answers `access_token`, `token_type: "bearer"`, `scope`, `refresh_token`, `expires_in`,
 *   `refresh_token_expires_in`. Lifetimes default to 30 minutes and 30 days (new global clients); a
 *   request's `expires_in` (300 < s < 172,800) and `refresh_token_expires_in` (604,800 ≤ s < 7,776,000)
 *   set them, as the OAS allows.
 * - A refresh voids both old tokens at once (rotation): the old refresh token is spent once used, a spent
 *   or expired or revoked one answers 400 `invalid_grant`.
 * - An expired, voided or unknown access token on an API call answers 401 `invalid_token` with Zendesk's
 *   `WWW-Authenticate: Bearer ... error="invalid_token"` (zendesk.ts answers it).
 *
 * Time is the test's clock ({@link ZendeskAuthOptions.now}), so a test moves past a token's life without
 * waiting. Not modelled: PKCE, scopes beyond echoing `hc:read read`, lifetimes outside the ranges (the
 * reference does not say how they are refused: the defaults are used), older clients whose tokens never
 * expire, per-user token limits, and the token endpoint's own rate limit.
 */
import { randomBytes } from 'node:crypto';
import { type FakeReply, type FakeServer, startFakeServer } from './fake-server.ts';
import type { FakeZendesk } from './zendesk.ts';

const ACCESS_LIFE_S = 1800;
const REFRESH_LIFE_S = 2_592_000;
const CODE_LIFE_MS = 120_000;
const SCOPE = 'hc:read read';

export interface ZendeskAuthOptions {
  clientId: string;
  clientSecret: string;
  /** The test's clock, epoch ms. Default: Date.now. */
  now?: () => number;
}

interface Grant {
  access: string;
  refresh: string;
  accessExpiresAt: number;
  refreshExpiresAt: number;
}

export interface ZendeskAuth extends FakeServer {
  /** Every pair issued, oldest first. */
  readonly grants: readonly Grant[];
  /** Refresh-token grants answered with new tokens. */
  readonly counts: { refreshes: number };
  /** Issue a pair directly (as a finished consent would), e.g. to store it on a connection. */
  issue(lifetimes?: { expiresIn?: number; refreshExpiresIn?: number }): Grant;
  /** Void a pair now (the user revoked the app): its refresh token then answers `invalid_grant`. */
  revoke(refreshToken: string): void;
  /** Void an access token early (Zendesk may revoke one before its expiry). */
  revokeAccess(accessToken: string): void;
  /** Whether the API accepts this access token now. */
  accepts(token: string): boolean;
}

const oauthError = (status: number, error: string, description: string): FakeReply => ({
  status,
  body: { error, error_description: description },
});

function lifetime(requested: unknown, min: number, max: number, fallback: number): number {
  return typeof requested === 'number' && requested >= min && requested < max ? requested : fallback;
}

/** Starts the authorization server and makes `zendesk` accept only the access tokens it issues. */
export async function startZendeskAuth(zendesk: FakeZendesk, opts: ZendeskAuthOptions): Promise<ZendeskAuth> {
  const now = opts.now ?? Date.now;
  const codes = new Map<string, { redirect: string; expiresAt: number }>();
  const grants: Grant[] = [];
  const live = new Map<string, Grant>(); // by refresh token: the pairs not voided
  const revokedAccess = new Set<string>();

  const issue = (lifetimes: { expiresIn?: unknown; refreshExpiresIn?: unknown } = {}): Grant => {
    const refreshLife = lifetime(lifetimes.refreshExpiresIn, 604_800, 7_776_000, REFRESH_LIFE_S);
    const accessLife = Math.min(lifetime(lifetimes.expiresIn, 301, 172_800, ACCESS_LIFE_S), refreshLife - 1);
    const t = now();
    const grant: Grant = {
      access: `zd-oauth-access-${randomBytes(9).toString('hex')}`,
      refresh: `zd-oauth-refresh-${randomBytes(9).toString('hex')}`,
      accessExpiresAt: t + accessLife * 1000,
      refreshExpiresAt: t + refreshLife * 1000,
    };
    grants.push(grant);
    live.set(grant.refresh, grant);
    return grant;
  };
  const answer = (grant: Grant): FakeReply => ({
    status: 200,
    body: {
      access_token: grant.access,
      token_type: 'bearer',
      scope: SCOPE,
      refresh_token: grant.refresh,
      expires_in: Math.round((grant.accessExpiresAt - now()) / 1000),
      refresh_token_expires_in: Math.round((grant.refreshExpiresAt - now()) / 1000),
    },
  });

  const counts = { refreshes: 0 };
  const server = await startFakeServer((req) => {
    const m = /(?:^|\/)oauth\/(authorizations\/new|tokens)$/.exec(req.path);
    if (!m) return { status: 404, body: { error: 'InvalidEndpoint' } };
    if (m[1] === 'authorizations/new') {
      const redirect = new URL(req.query.get('redirect_uri') ?? 'about:blank');
      const code = `zd-code-${randomBytes(6).toString('hex')}`;
      codes.set(code, { redirect: redirect.toString(), expiresAt: now() + CODE_LIFE_MS });
      redirect.searchParams.set('code', code);
      redirect.searchParams.set('state', req.query.get('state') ?? '');
      return { status: 302, headers: { location: redirect.toString() } };
    }
    if (req.method !== 'POST') return { status: 404, body: { error: 'InvalidEndpoint' } };
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body) as Record<string, unknown>;
    } catch {
      return oauthError(400, 'invalid_request', 'The request body is not JSON.');
    }
    if (body['client_id'] !== opts.clientId || body['client_secret'] !== opts.clientSecret) {
      return oauthError(401, 'invalid_client', 'Client authentication failed.');
    }
    const lifetimes = { expiresIn: body['expires_in'], refreshExpiresIn: body['refresh_token_expires_in'] };
    if (body['grant_type'] === 'authorization_code') {
      const code = codes.get(String(body['code'] ?? ''));
      codes.delete(String(body['code'] ?? ''));
      if (!code || code.expiresAt <= now() || code.redirect !== body['redirect_uri']) {
        return oauthError(
          400,
          'invalid_grant',
          'The provided authorization grant is invalid, expired, or revoked.',
        );
      }
      return answer(issue(lifetimes));
    }
    if (body['grant_type'] === 'refresh_token') {
      const old = live.get(String(body['refresh_token'] ?? ''));
      // Spent once used: whatever the outcome, this refresh token is gone.
      live.delete(String(body['refresh_token'] ?? ''));
      if (!old || old.refreshExpiresAt <= now()) {
        return oauthError(
          400,
          'invalid_grant',
          'The provided authorization grant is invalid, expired, or revoked.',
        );
      }
      revokedAccess.add(old.access);
      counts.refreshes++;
      return answer(issue(lifetimes));
    }
    return oauthError(400, 'unsupported_grant_type', 'The authorization grant type is not supported.');
  });

  const accepts = (token: string): boolean => {
    const grant = grants.find((g) => g.access === token);
    return !!grant && !revokedAccess.has(token) && grant.accessExpiresAt > now();
  };
  zendesk.account.bearerTokens = { accepts };
  return Object.assign(server, {
    grants,
    counts,
    issue: (l?: { expiresIn?: number; refreshExpiresIn?: number }) => issue(l),
    revoke(refreshToken: string) {
      const grant = live.get(refreshToken);
      live.delete(refreshToken);
      if (grant) revokedAccess.add(grant.access);
    },
    revokeAccess(accessToken: string) {
      revokedAccess.add(accessToken);
    },
    accepts,
  });
}

/**
 * The service's settings for support_desk over OAuth against a fake help desk and a fake token server
 * (each account its own authorization server, under `{subdomain}`), private addresses allowed.
 */
export function zendeskOAuthSettings(o: {
  zendeskUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  publicUrl: string;
}): Record<string, string> {
  return {
    KB_CRAWL_ALLOW_PRIVATE: 'true',
    KB_SUPPORT_DESK_BASE_URL: o.zendeskUrl,
    KB_SUPPORT_DESK_OAUTH_BASE_URL: `${o.authUrl}/{subdomain}`,
    KB_SUPPORT_DESK_CLIENT_ID: o.clientId,
    KB_SUPPORT_DESK_CLIENT_SECRET: o.clientSecret,
    KB_PUBLIC_URL: o.publicUrl,
  };
}
