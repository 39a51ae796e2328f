/**
 * Building a connector's context, and the credential check the create-connection route runs before it
 * stores anything.
 */
import { type Logger, silentLogger } from '../lib/logger.ts';
import { resolveBaseUrl } from './base-url.ts';
import { createSourceHttpClient, type SourceHttpClientOptions } from './http.ts';
import type {
  AccessTokens,
  AnyConnector,
  ConnectorContext,
  OutboundFetch,
  SourceHttpClient,
} from './types.ts';

interface ConnectorContextOptions<Creds> {
  connector: AnyConnector;
  /** Normalized credentials (`connector.normalize` output, or decrypted from storage). */
  credentials: Creds;
  fetch: OutboundFetch;
  signal: AbortSignal;
  log?: Logger;
  /**
   * The operator's override of the connector's base-URL template (KB_<TYPE>_BASE_URL), from the config.
   * Never from a request.
   */
  baseUrlTemplate?: string | undefined;
  /** The operator's values of the connector's own settings (from the config); defaults fill the rest. */
  settings?: Readonly<Record<string, string>> | undefined;
  /**
   * Retry and size settings of the HTTP client (fetch and signal are taken from above). Its
   * `requestsPerSecond`, when set, replaces the connector's own (tests and benchmarks against a local
   * fake raise it).
   */
  http?: Omit<SourceHttpClientOptions, 'fetch' | 'signal'>;
  /** A sync's expiring OAuth access token, which the HTTP client keeps current (see {@link AccessTokens}). */
  accessTokens?: AccessTokens | undefined;
}

/** A context whose `http.bytesReceived` the caller reads for the job's `bytesSynced`. */
export function createConnectorContext<Creds extends object>(
  opts: ConnectorContextOptions<Creds>,
): ConnectorContext<Creds> & { http: SourceHttpClient } {
  const template = opts.baseUrlTemplate || opts.connector.defaultBaseUrl;
  return {
    credentials: opts.credentials,
    baseUrl: resolveBaseUrl(template, opts.credentials as Record<string, unknown>),
    signal: opts.signal,
    log: opts.log ?? silentLogger,
    settings: connectorSettings(opts.connector, opts.settings),
    http: createSourceHttpClient({
      requestsPerSecond: opts.connector.requestsPerSecond,
      ...opts.http,
      fetch: opts.fetch,
      signal: opts.signal,
      ...(opts.accessTokens ? { accessTokens: opts.accessTokens } : {}),
    }),
  };
}

/** The connector's settings: the given values over the declared defaults (unknown keys dropped). */
export function connectorSettings(
  connector: AnyConnector,
  values: Readonly<Record<string, string>> = {},
): Readonly<Record<string, string>> {
  return Object.fromEntries(
    Object.entries(connector.settings ?? {}).map(([key, setting]) => [key, values[key] ?? setting.default]),
  );
}

/**
 * Retry budget of a credential check: it runs inside an API request, so it gives up after a few
 * seconds rather than waiting out a long rate limit.
 */
export const CREDENTIAL_CHECK_HTTP: Omit<SourceHttpClientOptions, 'fetch' | 'signal'> = {
  maxAttempts: 3,
  baseDelayMs: 250,
  maxDelayMs: 2_000,
  maxWaitMs: 5_000,
  attemptTimeoutMs: 10_000,
  maxResponseBytes: 1024 * 1024,
};

/**
 * Runs `connector.validate` with a fresh context: resolves on accepted credentials to the credentials to
 * store (the connector's, when its check learned something about them), throws
 * `AppError('source_auth_failed' | 'source_unreachable' | 'oauth_required')` otherwise.
 */
export async function checkCredentials<Creds extends object>(
  opts: Omit<ConnectorContextOptions<Creds>, 'signal' | 'http'> & {
    signal?: AbortSignal;
    http?: ConnectorContextOptions<Creds>['http'];
  },
): Promise<Creds> {
  const ctx = createConnectorContext({
    ...opts,
    signal: opts.signal ?? new AbortController().signal,
    http: opts.http ?? CREDENTIAL_CHECK_HTTP,
  });
  return ((await opts.connector.validate(ctx)) as Creds | undefined) ?? opts.credentials;
}
