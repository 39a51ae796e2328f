/**
 * The token-endpoint call every OAuth source makes (code exchange, refresh): one POST, and the same
 * errors whatever the vendor: a refusal (4xx) is `source_auth_failed` with what the source said, an
 * unreachable or failing endpoint is `source_unreachable`, a 2xx without a token as well. Never a secret
 * (code, client secret, refresh token) in a message.
 */
import type { z } from 'zod';
import { AppError } from '../lib/errors.ts';
import { redactSecrets } from './credential-check.ts';
import { isSourceHttpError, vendorErrorText } from './http.ts';
import type { SourceHttpClient, SourceResponse } from './types.ts';

interface TokenRequest<T> {
  /** The product, for messages: `Notion`, `Zendesk`. */
  label: string;
  /** What is traded, for messages. */
  grant: 'authorization code' | 'refresh token';
  url: string;
  headers?: Record<string, string>;
  json: unknown;
  /** The answer's shape (the vendor's field names). */
  schema: z.ZodType<T>;
  /** Values to scrub from any message. */
  secrets: readonly string[];
}

export async function requestTokens<T>(http: SourceHttpClient, req: TokenRequest<T>): Promise<T> {
  // A refused code: the user consents again. A refused refresh token: the caller says what to do (the
  // connection must be consented to again, which only it can name).
  const again = req.grant === 'authorization code' ? '; start the consent again.' : '.';
  let res: SourceResponse;
  try {
    res = await http.request('POST', req.url, {
      ...(req.headers ? { headers: req.headers } : {}),
      json: req.json,
    });
  } catch (err) {
    const detail =
      isSourceHttpError(err) || err instanceof Error
        ? redactSecrets(err.message, req.secrets)
        : 'network error';
    throw new AppError(
      'source_unreachable',
      `${req.label}'s token endpoint could not be reached (${detail}); try again later.`,
    );
  }
  if (res.status >= 400 && res.status < 500) {
    const said = vendorErrorText(res.text());
    throw new AppError(
      'source_auth_failed',
      `${req.label} refused the ${req.grant} (HTTP ${res.status}${said ? `: ${redactSecrets(said, req.secrets)}` : ''})${again}`,
    );
  }
  let body: unknown;
  try {
    body = res.status >= 200 && res.status < 300 ? res.json() : undefined;
  } catch {
    body = undefined;
  }
  const parsed = req.schema.safeParse(body);
  if (!parsed.success) {
    throw new AppError(
      'source_unreachable',
      `${req.label}'s token endpoint answered HTTP ${res.status} without a token; try again later.`,
    );
  }
  return parsed.data;
}

/** `expires_in` seconds from now as epoch ms, or null when the source gave none. */
export function expiryOf(expiresInSeconds: number | null | undefined, now = Date.now()): number | null {
  return typeof expiresInSeconds === 'number' && expiresInSeconds > 0 ? now + expiresInSeconds * 1000 : null;
}
