/**
 * OAuth tokens between the consent and the sync: how a consent's tokens are stored under its secret id,
 * how they become a connection's credentials, and the refresh a sync job does before an access token
 * runs out (Zendesk's may expire; their refresh tokens rotate). Used by the OAuth routes and the sync job.
 */
import { z } from 'zod';
import type { AnyConnector, OAuthSteps, OAuthTokens } from '../connectors/types.ts';
import { AppError } from '../lib/errors.ts';

/** Credential fields a consent adds beside the connector's own token field (never shown, redacted as tokens). */
export const OAUTH_REFRESH_FIELD = 'oauth_refresh_token';
const OAUTH_EXPIRES_FIELD = 'oauth_expires_at';
/** When to refresh the access token: its expiry less a margin, fixed when it was stored. */
const OAUTH_REFRESH_AT_FIELD = 'oauth_refresh_at';
const OAUTH_REFRESH_EXPIRES_FIELD = 'oauth_refresh_expires_at';
/** When the refresh token was issued (or first stored): idle connections are refreshed counting from it. */
const OAUTH_REFRESHED_FIELD = 'oauth_refreshed_at';

/**
 * Refresh when less than this is left (or half the token's life, for short-lived tokens), so no request
 * runs out of token halfway through and a 5-minute token is not refreshed before every request.
 */
const REFRESH_MARGIN_MS = 15 * 60_000;
/**
 * An idle connection's refresh token is traded for a new one when this share of its life is spent, so
 * a scheduled refresh that fails (source down, service stopped) has the rest of the life to try again.
 */
const KEEP_ALIVE_SHARE = 0.5;
/**
 * A refresh token whose life the source did not announce is traded after this long idle: Zendesk's
 * shortest refresh-token life is 7 days.
 */
const KEEP_ALIVE_UNANNOUNCED_MS = 3 * 24 * 60 * 60_000;

const storedSchema = z.object({
  accessToken: z.string().min(1),
  refreshToken: z.string().nullish(),
  expiresAt: z.number().nullish(),
  refreshExpiresAt: z.number().nullish(),
});

/** What is encrypted under a secret id: the token set as JSON. */
export function encodeStoredTokens(tokens: OAuthTokens): string {
  return JSON.stringify({
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken ?? null,
    expiresAt: tokens.expiresAt ?? null,
    refreshExpiresAt: tokens.refreshExpiresAt ?? null,
  });
}

/** The token set of a secret; secrets stored before refresh tokens existed hold the bare access token. */
export function decodeStoredTokens(plain: string): Omit<OAuthTokens, 'accountName'> {
  if (plain.startsWith('{')) {
    try {
      const parsed = storedSchema.safeParse(JSON.parse(plain));
      if (parsed.success) return parsed.data;
    } catch {
      // not JSON after all: a bare token
    }
  }
  return { accessToken: plain };
}

/**
 * Credentials with a consent's tokens filled in: the access token in the connector's field, the rest
 * beside. `now` is when they were issued (the refresh times count from it).
 */
export function credentialsWithTokens(
  credentials: Record<string, unknown>,
  steps: OAuthSteps,
  tokens: Omit<OAuthTokens, 'accountName'>,
  now = Date.now(),
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...credentials, [steps.tokenField]: tokens.accessToken };
  for (const field of [
    OAUTH_REFRESH_FIELD,
    OAUTH_EXPIRES_FIELD,
    OAUTH_REFRESH_AT_FIELD,
    OAUTH_REFRESH_EXPIRES_FIELD,
    OAUTH_REFRESHED_FIELD,
  ]) {
    delete out[field];
  }
  if (tokens.refreshToken) {
    out[OAUTH_REFRESH_FIELD] = tokens.refreshToken;
    out[OAUTH_REFRESHED_FIELD] = now;
    if (tokens.refreshExpiresAt) out[OAUTH_REFRESH_EXPIRES_FIELD] = tokens.refreshExpiresAt;
  }
  if (tokens.expiresAt) {
    out[OAUTH_EXPIRES_FIELD] = tokens.expiresAt;
    const life = Math.max(0, tokens.expiresAt - now);
    out[OAUTH_REFRESH_AT_FIELD] = tokens.expiresAt - Math.min(REFRESH_MARGIN_MS, life / 2);
  }
  return out;
}

/** The refresh token of these credentials, or null when they have none (fixed tokens, API tokens). */
export function refreshTokenOf(credentials: Record<string, unknown>): string | null {
  const token = credentials[OAUTH_REFRESH_FIELD];
  return typeof token === 'string' && token ? token : null;
}

/** Whether these normalized credentials need a stored consent's token (the source's rule, or: no token). */
export function needsConsent(steps: OAuthSteps, credentials: Record<string, unknown>): boolean {
  return steps.needsConsent ? steps.needsConsent(credentials) : !credentials[steps.tokenField];
}

/** The account a consent is for, from the credentials (sources whose accounts each run their own), else null. */
export function tenantOf(steps: OAuthSteps, credentials: Record<string, unknown>): string | null {
  return steps.tenant ? String(credentials[steps.tenant.field]) : null;
}

/** Whether the consent's credentials say to refresh now: a refresh token and an expiry that is near. */
export function needsRefresh(credentials: Record<string, unknown>, now = Date.now()): boolean {
  if (!refreshTokenOf(credentials)) return false;
  const refreshAt = credentials[OAUTH_REFRESH_AT_FIELD];
  if (typeof refreshAt === 'number') return now >= refreshAt;
  // Stored before the refresh time was: the fixed margin.
  const expiresAt = credentials[OAUTH_EXPIRES_FIELD];
  return typeof expiresAt === 'number' && expiresAt - now < REFRESH_MARGIN_MS;
}

/**
 * Whether a job about to start should refresh first: the token has less than the full margin left (a
 * short-lived token is then refreshed once per job, not before each request).
 */
export function expiresSoon(credentials: Record<string, unknown>, now = Date.now()): boolean {
  const expiresAt = credentials[OAUTH_EXPIRES_FIELD];
  return (
    refreshTokenOf(credentials) !== null &&
    typeof expiresAt === 'number' &&
    expiresAt - now < REFRESH_MARGIN_MS
  );
}

/**
 * Whether an idle connection's refresh token should be traded now so it does not run out unused: half
 * its announced life spent, or some days idle when no life was announced. `updatedAt` (the row's last
 * change) stands in for the issue time of credentials stored before it was recorded.
 */
export function needsKeepAlive(
  credentials: Record<string, unknown>,
  opts: { now: number; updatedAt: number },
): boolean {
  if (!refreshTokenOf(credentials)) return false;
  const refreshed = credentials[OAUTH_REFRESHED_FIELD];
  const issuedAt = typeof refreshed === 'number' ? refreshed : opts.updatedAt;
  const expires = credentials[OAUTH_REFRESH_EXPIRES_FIELD];
  if (typeof expires === 'number') {
    return opts.now >= issuedAt + (expires - issuedAt) * KEEP_ALIVE_SHARE;
  }
  return opts.now - issuedAt >= KEEP_ALIVE_UNANNOUNCED_MS;
}

/**
 * The job's error when the refresh is refused: the connection must be consented to again. Keeps the
 * refusal's own words (already free of secrets) and says what to do.
 */
export function refreshRefused(connector: AnyConnector, err: unknown): unknown {
  if (err instanceof AppError && err.code === 'source_auth_failed') {
    return new AppError(
      'source_auth_failed',
      `${err.message} The OAuth access of this ${connector.type} connection has ended: connect it again through POST /api/connect/oauth/initiate.`,
    );
  }
  return err;
}
