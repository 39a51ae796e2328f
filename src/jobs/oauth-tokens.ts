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

/** Refresh when less than this is left, so a sync does not run out of token halfway through. */
const REFRESH_MARGIN_MS = 15 * 60_000;

const storedSchema = z.object({
  accessToken: z.string().min(1),
  refreshToken: z.string().nullish(),
  expiresAt: z.number().nullish(),
});

/** What is encrypted under a secret id: the token set as JSON. */
export function encodeStoredTokens(tokens: OAuthTokens): string {
  return JSON.stringify({
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken ?? null,
    expiresAt: tokens.expiresAt ?? null,
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

/** Credentials with a consent's tokens filled in: the access token in the connector's field, the rest beside. */
export function credentialsWithTokens(
  credentials: Record<string, unknown>,
  steps: OAuthSteps,
  tokens: Omit<OAuthTokens, 'accountName'>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...credentials, [steps.tokenField]: tokens.accessToken };
  delete out[OAUTH_REFRESH_FIELD];
  delete out[OAUTH_EXPIRES_FIELD];
  if (tokens.refreshToken) out[OAUTH_REFRESH_FIELD] = tokens.refreshToken;
  if (tokens.expiresAt) out[OAUTH_EXPIRES_FIELD] = tokens.expiresAt;
  return out;
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
  const expiresAt = credentials[OAUTH_EXPIRES_FIELD];
  return (
    typeof credentials[OAUTH_REFRESH_FIELD] === 'string' &&
    typeof expiresAt === 'number' &&
    expiresAt - now < REFRESH_MARGIN_MS
  );
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
