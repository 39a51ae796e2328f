/**
 * How the service reaches content sources, shared by the connection routes and the sync job: the
 * connector registry (injectable for tests), the guarded outbound fetch, the credential cipher, and the
 * operator's base-URL override of each source type.
 */
import type { Config } from '../config.ts';
import { connectors as builtinConnectors } from '../connectors/registry.ts';
import type { AnyConnector, SourceType } from '../connectors/types.ts';
import type { AppContext } from '../http/context.ts';
import { CredentialCipher } from '../lib/crypto.ts';
import { AppError } from '../lib/errors.ts';
import { createOutboundFetch, type OutboundFetch } from '../net/outbound.ts';

/** Sent to sources on every request unless a connector sets its own. */
export const SOURCE_USER_AGENT = 'kb-connector-service/0.1 (knowledge-base sync)';

/** The connector of a canonical source type, with the context's overrides (tests) applied. */
export function connectorOf(app: AppContext, type: string): AnyConnector | undefined {
  const override = app.connectors?.[type as SourceType];
  if (override) return override;
  return Object.hasOwn(builtinConnectors, type) ? builtinConnectors[type as SourceType] : undefined;
}

const fetches = new WeakMap<AppContext, OutboundFetch>();

/** The guarded fetch every request to a source goes through (one per context: it owns keep-alive pools). */
export function outboundFetchOf(app: AppContext): OutboundFetch {
  if (app.outboundFetch) return app.outboundFetch;
  let f = fetches.get(app);
  if (!f) {
    f = createOutboundFetch({
      allowPrivate: app.config.KB_CRAWL_ALLOW_PRIVATE,
      userAgent: SOURCE_USER_AGENT,
    });
    fetches.set(app, f);
  }
  return f;
}

const ciphers = new WeakMap<AppContext, CredentialCipher>();

/** The credential cipher: the context's, or one over KB_ENCRYPTION_KEY (tests set the key in config). */
export function cipherOf(app: AppContext): CredentialCipher {
  if (app.cipher) return app.cipher;
  let c = ciphers.get(app);
  if (!c) {
    if (!app.config.KB_ENCRYPTION_KEY) {
      throw new AppError('internal_error', 'No credential encryption key is configured.');
    }
    c = new CredentialCipher(app.config.KB_ENCRYPTION_KEY);
    ciphers.set(app, c);
  }
  return c;
}

const BASE_URL_SETTINGS: Record<SourceType, keyof Config> = {
  notes: 'KB_NOTES_BASE_URL',
  support_desk: 'KB_SUPPORT_DESK_BASE_URL',
  wiki: 'KB_WIKI_BASE_URL',
  storefront: 'KB_STOREFRONT_BASE_URL',
  docs_space: 'KB_DOCS_SPACE_BASE_URL',
};

/** The operator's KB_<TYPE>_BASE_URL for a source type, if set. Never taken from a request. */
export function baseUrlTemplateFor(config: Config, type: string): string | undefined {
  const key = BASE_URL_SETTINGS[type as SourceType];
  const value = key ? config[key] : undefined;
  return typeof value === 'string' && value ? value : undefined;
}

/** Credentials as stored: JSON of the connector's normalized credentials, encrypted for the row id. */
export function encryptCredentials(app: AppContext, connectionId: string, credentials: object): string {
  return cipherOf(app).encrypt(JSON.stringify(credentials), connectionId);
}

export function decryptCredentials(
  app: AppContext,
  connectionId: string,
  stored: string,
): Record<string, unknown> {
  try {
    return JSON.parse(cipherOf(app).decrypt(stored, connectionId)) as Record<string, unknown>;
  } catch {
    // A different KB_ENCRYPTION_KEY than the one that stored them, or a tampered row.
    throw new AppError(
      'internal_error',
      'The stored credentials of this connection cannot be decrypted (was KB_ENCRYPTION_KEY changed?); create the connection again.',
    );
  }
}

/** Secret credential values (tokens, passwords), for scrubbing them out of any text that leaves the service. */
export function secretValues(credentials: Record<string, unknown>): string[] {
  return Object.entries(credentials)
    .filter(([k, v]) => /token|secret|password|key/i.test(k) && typeof v === 'string' && v.length >= 4)
    .map(([, v]) => v as string);
}
