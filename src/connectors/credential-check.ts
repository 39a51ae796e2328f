/**
 * Shared pieces of the connectors' `validate`: one call to the source, turned into the two answers the
 * API knows (`source_auth_failed`, `source_unreachable`) with messages that say which source and what it
 * answered, and never a secret.
 */
import type { z } from 'zod';
import { AppError, isAppError } from '../lib/errors.ts';
import { OutboundBlockedError, OutboundError } from '../net/outbound.ts';
import { joinUrl } from './base-url.ts';
import { isSourceHttpError, vendorErrorText } from './http.ts';
import type { AnyConnector, ConnectorContext, SourceRequestOptions, SourceResponse } from './types.ts';

/** `Zendesk (support_desk)`: how messages name a source. */
export function sourceName(connector: Pick<AnyConnector, 'label' | 'type'>): string {
  return `${connector.label} (${connector.type})`;
}

/** Replaces every occurrence of a secret in `text`, in case a source echoes one back. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured address';
  }
}

/**
 * Sends the check request. Network failures, timeouts and a source that keeps answering 429/5xx become
 * `AppError('source_unreachable')`; cancellation propagates unchanged.
 */
export async function checkRequest(
  connector: Pick<AnyConnector, 'label' | 'type'>,
  ctx: ConnectorContext<unknown>,
  method: string,
  url: string,
  opts: SourceRequestOptions = {},
): Promise<SourceResponse> {
  try {
    return await ctx.http.request(method, url, opts);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (isAppError(err)) throw err;
    if (err instanceof OutboundBlockedError || err instanceof OutboundError) {
      // The outbound guard refused the address (or a redirect loop): an unreachable source, said plainly.
      throw new AppError(
        'source_unreachable',
        `${sourceName(connector)} could not be reached: ${err.message}.`,
      );
    }
    if (isSourceHttpError(err)) {
      const what =
        err.kind === 'network'
          ? `could not be reached at ${hostOf(url)} (${err.detail ?? 'network error'})`
          : err.kind === 'status'
            ? `at ${hostOf(url)} kept failing (HTTP ${err.status}${err.vendorMessage ? `: ${err.vendorMessage}` : ''})`
            : `at ${hostOf(url)} sent an unusable answer`;
      throw new AppError('source_unreachable', `${sourceName(connector)} ${what}; try again later.`);
    }
    throw err;
  }
}

/**
 * The source refused the credentials: `AppError('source_auth_failed')` with the status and the source's
 * own error text (secrets redacted) and a hint naming the fields to check.
 */
function credentialsRejected(
  connector: Pick<AnyConnector, 'label' | 'type'>,
  res: Pick<SourceResponse, 'status' | 'text'>,
  hint: string,
  secrets: readonly (string | undefined)[],
): AppError {
  return sourceRefusal(
    connector,
    'rejected the credentials',
    { status: res.status, vendorMessage: vendorErrorText(res.text()) },
    hint,
    secrets,
  );
}

/**
 * `AppError('source_auth_failed')` saying `<Source> <what> (HTTP <status>: <the source's text>). <hint>`,
 * secrets redacted: a credential check's refusal, or a sync's 401/403 (revoked token, lost access).
 */
export function sourceRefusal(
  connector: Pick<AnyConnector, 'label' | 'type'>,
  what: string,
  answer: { status: number | undefined; vendorMessage: string | undefined },
  hint: string,
  secrets: readonly (string | undefined)[],
): AppError {
  const status = `HTTP ${answer.status ?? '?'}`;
  const said = answer.vendorMessage ? `${status}: ${redactSecrets(answer.vendorMessage, secrets)}` : status;
  return new AppError('source_auth_failed', `${sourceName(connector)} ${what} (${said}). ${hint}`);
}

/** A success status whose body shows the call was not authenticated (anonymous user, GraphQL errors). */
function credentialsNotAccepted(
  connector: Pick<AnyConnector, 'label' | 'type'>,
  what: string,
  hint: string,
): AppError {
  return new AppError(
    'source_auth_failed',
    `${sourceName(connector)} did not accept the credentials (${what}). ${hint}`,
  );
}

/**
 * Parses a 2xx check answer. A body that is not the vendor's shape means the host is not that
 * vendor's API (a wrong custom domain, a parking page): `source_unreachable` saying so.
 */
export function parseCheckBody<T>(
  connector: Pick<AnyConnector, 'label' | 'type'>,
  res: SourceResponse,
  url: string,
  schema: z.ZodType<T>,
  hint?: string,
): T {
  let body: unknown;
  try {
    body = res.json();
  } catch {
    body = undefined;
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new AppError(
      'source_unreachable',
      `${sourceName(connector)} at ${hostOf(url)} answered HTTP ${res.status}, but not like the ${connector.label} API.${hint ? ` ${hint}` : ''}`,
    );
  }
  return parsed.data;
}

/** Basic authorization header value. */
export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

/**
 * The answer for a check response that is not 2xx: any 4xx means the source refused these credentials
 * (or the account/space they name): `source_auth_failed` with the hint for that status; anything else
 * (3xx, 501...) means the host is not answering like the API: `source_unreachable`.
 */
export function checkFailure(
  connector: Pick<AnyConnector, 'label' | 'type'>,
  res: SourceResponse,
  url: string,
  hints: { [status: number]: string; other: string },
  secrets: readonly (string | undefined)[],
): AppError {
  if (res.status >= 400 && res.status <= 499) {
    return credentialsRejected(connector, res, hints[res.status] ?? hints.other, secrets);
  }
  return new AppError(
    'source_unreachable',
    `${sourceName(connector)} at ${hostOf(url)} answered HTTP ${res.status}, which the ${connector.label} API does not. ${hints.other}`,
  );
}

/**
 * A connector's credential check, declared: the one cheap authenticated request, and what each answer
 * means. {@link credentialCheck} turns it into the connector's `validate`.
 */
interface CredentialCheckSpec<Creds, Body> {
  /** The connector, for messages (`Zendesk (support_desk)`). */
  source: Pick<AnyConnector, 'label' | 'type'>;
  /** Default GET. */
  method?: 'GET' | 'POST';
  /** Path under the connection's base URL; segments taken from credentials go through `pathSegment`. */
  path: string | ((creds: Creds) => string);
  headers: (creds: Creds) => Record<string, string>;
  /** A JSON body (GraphQL queries). */
  json?: unknown;
  /** The vendor's shape of a 2xx answer. Any other 2xx body means the host is not that vendor's API. */
  schema: z.ZodType<Body>;
  /** What to tell the user for a 4xx answer, by status, and for anything else (`other`). */
  hints: { [status: number]: string; other: string };
  /** Appended when a 2xx body is not the vendor's shape: which field names the host. */
  shapeHint?: string;
  /** Credential values never to repeat in a message, even when the source echoes them. */
  secrets: (creds: Creds) => readonly (string | undefined)[];
  /**
   * For a 2xx body that still shows no authenticated caller (an anonymous user, GraphQL errors): what it
   * shows, for the message. Undefined accepts the credentials.
   */
  notAccepted?: (body: Body) => string | undefined;
}

/**
 * The `validate` of a connector from its declared check: sends the request through `ctx.http`, then
 * answers `source_unreachable` (network, a source that keeps failing, a host that is not the vendor's
 * API) or `source_auth_failed` (a 4xx, or a 2xx that {@link CredentialCheckSpec.notAccepted} refuses),
 * with the hint for that answer and never a secret.
 */
export function credentialCheck<Creds, Body>(
  spec: CredentialCheckSpec<Creds, Body>,
): (ctx: ConnectorContext<Creds>) => Promise<void> {
  const { source, hints } = spec;
  return async (ctx) => {
    const creds = ctx.credentials;
    const url = joinUrl(ctx.baseUrl, typeof spec.path === 'string' ? spec.path : spec.path(creds));
    const res = await checkRequest(source, ctx, spec.method ?? 'GET', url, {
      headers: spec.headers(creds),
      ...(spec.json === undefined ? {} : { json: spec.json }),
    });
    if (res.status < 200 || res.status > 299)
      throw checkFailure(source, res, url, hints, spec.secrets(creds));
    const body = parseCheckBody(source, res, url, spec.schema, spec.shapeHint);
    const refusal = spec.notAccepted?.(body);
    if (refusal !== undefined) throw credentialsNotAccepted(source, refusal, hints[401] ?? hints.other);
  };
}
