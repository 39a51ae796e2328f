/**
 * How the service reaches content sources, shared by the connection routes and the sync job: the
 * connector registry, the guarded outbound fetch, the credential cipher, and the operator's base-URL
 * override of each source type. Built once by the composition root (src/compose.ts).
 */
import { resolveBaseUrl } from '../connectors/base-url.ts';
import { CREDENTIAL_CHECK_HTTP, checkCredentials, createConnectorContext } from '../connectors/context.ts';
import { createSourceHttpClient, type SourceHttpClientOptions } from '../connectors/http.ts';
import type { SourceRegistry } from '../connectors/registry.ts';
import type {
  AccessTokens,
  AnyConnector,
  ConnectorContext,
  OAuthApp,
  OAuthSteps,
  SourceHttpClient,
} from '../connectors/types.ts';
import type { CredentialCipher } from '../lib/crypto.ts';
import { AppError } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { OutboundFetch } from '../net/outbound.ts';

/** Sent to sources on every request unless a connector sets its own. */
export const SOURCE_USER_AGENT = 'kb-connector-service/0.1 (knowledge-base sync)';

/** Retry and size settings of a sync's HTTP client (fetch and signal come per job). */
export type SourceHttpSettings = Omit<SourceHttpClientOptions, 'fetch' | 'signal'>;

interface SourceServicesOptions {
  /** The registered connectors (plus whatever a test registers). */
  registry: SourceRegistry;
  /** The guarded fetch every request to a source goes through (it owns the keep-alive pools). */
  fetch: OutboundFetch;
  cipher: CredentialCipher;
  /** The operator's KB_<TYPE>_BASE_URL overrides by type. Never taken from a request. */
  baseUrlOverrides: Readonly<Record<string, string | undefined>>;
  /** The operator's values of each source type's own settings (`Connector.settings`), by type. */
  sourceSettings?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Retry budget of sync jobs' requests. */
  syncHttp: SourceHttpSettings;
  /** The OAuth app of each OAuth source type the operator configured, by type. */
  oauthApps?: Readonly<Record<string, OAuthApp | undefined>>;
  /** The clock token expiries are counted on (epoch ms). Default: Date.now; tests move it. */
  now?: () => number;
}

export class SourceServices {
  readonly fetch: OutboundFetch;
  readonly cipher: CredentialCipher;
  readonly syncHttp: SourceHttpSettings;
  readonly registry: SourceRegistry;
  /** The clock token expiries are counted on. */
  readonly now: () => number;
  readonly #baseUrls: Readonly<Record<string, string | undefined>>;
  readonly #settings: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly #oauthApps: Readonly<Record<string, OAuthApp | undefined>>;

  constructor(opts: SourceServicesOptions) {
    this.fetch = opts.fetch;
    this.cipher = opts.cipher;
    this.syncHttp = opts.syncHttp;
    this.registry = opts.registry;
    this.now = opts.now ?? Date.now;
    this.#baseUrls = opts.baseUrlOverrides;
    this.#settings = opts.sourceSettings ?? {};
    this.#oauthApps = opts.oauthApps ?? {};
  }

  /** The connector of a source type (or its alias), or undefined. */
  connectorOf(type: string): AnyConnector | undefined {
    return this.registry.find(type);
  }

  /** The operator's base-URL override of a source type, if set. */
  baseUrlTemplateFor(type: string): string | undefined {
    const value = this.#baseUrls[type];
    return value ? value : undefined;
  }

  /**
   * The OAuth steps and app of an OAuth source, the app's authorization server resolved for `tenant` (the
   * account, for sources where each has its own), or 400 oauth_not_configured naming the settings.
   */
  oauthOf(connector: AnyConnector, tenant?: string | null): { steps: OAuthSteps; app: OAuthApp } {
    const steps = connector.oauth;
    if (!steps) {
      throw new AppError(
        'invalid_request',
        `${connector.label} (${connector.type}) does not connect through OAuth.`,
      );
    }
    const app = this.#oauthApps[connector.type];
    if (!app) {
      throw new AppError(
        'oauth_not_configured',
        `OAuth for ${connector.type} (${connector.label}) is not configured on this service: the operator must set ${steps.settings.clientId} and ${steps.settings.clientSecret}. Alternatively, pass the token as source.${steps.tokenField}.`,
      );
    }
    if (!steps.tenant) return { steps, app };
    if (!tenant) {
      throw new AppError(
        'invalid_request',
        `${steps.tenant.field}: required to connect ${connector.type} through OAuth.`,
      );
    }
    return { steps, app: { ...app, baseUrl: resolveBaseUrl(app.baseUrl, { [steps.tenant.field]: tenant }) } };
  }

  /** The client of OAuth token calls (code exchange, refresh): the credential check's short retry budget. */
  oauthHttp(signal?: AbortSignal): SourceHttpClient {
    return createSourceHttpClient({
      ...CREDENTIAL_CHECK_HTTP,
      fetch: this.fetch,
      ...(signal ? { signal } : {}),
    });
  }

  /**
   * Runs the connector's credential check (inside an API request: short retry budget); resolves to the
   * credentials to store.
   */
  checkCredentials(connector: AnyConnector, credentials: object, signal?: AbortSignal): Promise<object> {
    return checkCredentials({
      connector,
      credentials,
      fetch: this.fetch,
      baseUrlTemplate: this.baseUrlTemplateFor(connector.type),
      settings: this.#settings[connector.type],
      ...(signal ? { signal } : {}),
    });
  }

  /**
   * What a source's webhooks may need to know the signing secrets (`SourceWebhooks.signingSecrets`): the
   * source's settings, plus `oauthClientSecret`, the operator's OAuth app secret, when one is configured.
   */
  webhookSettings(type: string): Readonly<Record<string, string>> {
    const app = this.#oauthApps[type];
    return { ...this.#settings[type], ...(app ? { oauthClientSecret: app.clientSecret } : {}) };
  }

  /** The context a sync job hands its connector. */
  syncContext(
    connector: AnyConnector,
    credentials: object,
    opts: { signal: AbortSignal; log: Logger; accessTokens?: AccessTokens | undefined },
  ): ConnectorContext<object> & { http: SourceHttpClient } {
    return createConnectorContext({
      accessTokens: opts.accessTokens,
      connector,
      credentials,
      fetch: this.fetch,
      signal: opts.signal,
      log: opts.log,
      baseUrlTemplate: this.baseUrlTemplateFor(connector.type),
      settings: this.#settings[connector.type],
      http: this.syncHttp,
    });
  }

  /** Credentials as stored: JSON of the connector's normalized credentials, encrypted for the row id. */
  encryptCredentials(connectionId: string, credentials: object): string {
    return this.cipher.encrypt(JSON.stringify(credentials), connectionId);
  }

  decryptCredentials(connectionId: string, stored: string): Record<string, unknown> {
    try {
      return JSON.parse(this.cipher.decrypt(stored, connectionId)) as Record<string, unknown>;
    } catch {
      // A different KB_ENCRYPTION_KEY than the one that stored them, or a tampered row.
      throw new AppError(
        'internal_error',
        'The stored credentials of this connection cannot be decrypted (was KB_ENCRYPTION_KEY changed?); create the connection again.',
      );
    }
  }
}

/** Secret credential values (tokens, passwords), for scrubbing them out of any text that leaves the service. */
export function secretValues(credentials: Record<string, unknown>): string[] {
  return Object.entries(credentials)
    .filter(([k, v]) => /token|secret|password|key/i.test(k) && typeof v === 'string' && v.length >= 4)
    .map(([, v]) => v as string);
}
