/**
 * The connector contract (DESIGN.md "The connector contract"): what every content source implements and
 * what the sync runner and the create-connection route may rely on. A connector never reads the
 * environment or the database; everything it needs arrives in its {@link ConnectorContext}.
 */
import type { z } from 'zod';
import type { Logger } from '../lib/logger.ts';

/**
 * A canonical source type (`notes`, `support_desk`, ...: neutral stand-ins for the products' names). The
 * set is whatever the registry holds (src/connectors/registry.ts); each connector declares its own.
 */
export type SourceType = string;

/**
 * One document as a source produced it, before chunking and embedding.
 * `externalId` is stable per source object and unique within one connection and `table`.
 */
export interface SourceDocument {
  /** The source's own id of the object (page id, article id, product gid...). */
  externalId: string;
  title: string;
  /** Where a person can read the document at the source (becomes the item's `source_url`). */
  url: string;
  /** The body converted to markdown. */
  markdown: string;
  /** ISO 8601 time of the last change at the source, when the source says. */
  updatedAt?: string;
  /** `public` for help-center, storefront and public docs content; `private` for internal content. */
  visibility: 'public' | 'private';
  /** The source type plus useful source labels (space, section, collection...). */
  tags: string[];
  /** The kind of source record, `<type>_<object>`: e.g. `support_desk_articles`, `notes_pages`. */
  table: string;
  /**
   * The source's change token of this document (a version number, an edit time, a revision id), stored
   * with the item and handed back through {@link SyncOptions.known}: a later sync that sees the same
   * token may skip fetching the document again.
   */
  version?: string;
}

/** A document the connection already holds, as {@link SyncOptions.known} lists it. */
export interface KnownDocument {
  externalId: string;
  table: string;
  /** The {@link SourceDocument.version} it was stored with, or null when it had none. */
  version: string | null;
}

/**
 * What a sync yields, in order. The runner commits documents and deletions as they come and saves a
 * checkpoint only after everything before it is committed, in the same transaction.
 */
export type SyncEvent<Cursor> =
  | { kind: 'document'; doc: SourceDocument }
  /** The source object no longer exists (or is no longer shared / published). */
  | { kind: 'deleted'; externalId: string; table: string }
  /** One document could not be read; the job becomes `incomplete`, not `failed`. */
  | { kind: 'failure'; externalId?: string; table?: string; error: Error; retryable: boolean }
  /** Everything before this event is committed; a restarted job resumes from `cursor`. */
  | { kind: 'checkpoint'; cursor: Cursor };

/** `incremental`: only what changed since the cursor; `full`: re-read everything (reset). */
export type SyncMode = 'incremental' | 'full';

/**
 * The guarded fetch of `src/net/outbound.ts` (refuses private addresses, follows redirects with the same
 * guard, caps the body at `maxBytes`): the only way a connector reaches its source.
 */
export type { OutboundFetch, OutboundResponse } from '../net/outbound.ts';

/** Query-string values; arrays repeat the key, `undefined` leaves it out. */
export type QueryValue = string | number | boolean | undefined | readonly (string | number | boolean)[];
export type Query = Record<string, QueryValue>;

/** Options of one request through {@link SourceHttpClient}. */
export interface SourceRequestOptions {
  headers?: Record<string, string>;
  /** A raw body (sent as is). */
  body?: string;
  /** A JSON body: serialized, and `Content-Type: application/json` is set. */
  json?: unknown;
  query?: Query;
  /** Cap on this response's size; a larger body is an error. Defaults to the client's cap. */
  maxBytes?: number;
  /**
   * Expiring access tokens the connector gets for itself (a grant made during the sync), kept current for
   * this request in place of the client's own (see {@link AccessTokens}).
   */
  accessTokens?: AccessTokens;
}

/** A response of a source, after retries. */
export interface SourceResponse {
  status: number;
  headers: Headers;
  /** The final URL (after redirects). */
  url: string;
  /** Parses the body as JSON; throws a `SourceHttpError` (http.ts) of kind `invalid_response` if it is not. */
  json(): unknown;
  text(): string;
}

/** A 2xx JSON answer parsed with the caller's schema, with what pagination reads besides the body. */
export interface JsonResponse<T> {
  data: T;
  status: number;
  /** The response headers (`Link` pagination, rate-limit state). */
  headers: Headers;
  /** The final URL (after redirects): relative links in the answer resolve against it. */
  url: string;
}

/**
 * The HTTP client a connector talks to its source with: retries 429/5xx/network errors with
 * `Retry-After` / rate-limit-reset headers and backoff, counts received bytes, honours the AbortSignal.
 */
export interface SourceHttpClient {
  /**
   * One logical request (retried as needed). Answers any status that is not retried, 4xx included;
   * throws `SourceHttpError` when it gives up on a retryable status or a network error.
   */
  request(method: string, url: string | URL, opts?: SourceRequestOptions): Promise<SourceResponse>;
  /**
   * Any method, require 2xx, parse JSON with `schema`; answers the headers and final URL as well (what
   * pagination needs). Non-2xx or a mismatching body throw `SourceHttpError`.
   */
  requestJson<T>(
    method: string,
    url: string | URL,
    schema: z.ZodType<T>,
    opts?: SourceRequestOptions,
  ): Promise<JsonResponse<T>>;
  /** GET, require 2xx, parse JSON with `schema`. Non-2xx or a mismatching body throw `SourceHttpError`. */
  getJson<T>(url: string | URL, schema: z.ZodType<T>, opts?: SourceRequestOptions): Promise<T>;
  /** POST `body` as JSON, require 2xx, parse the answer with `schema`. */
  postJson<T>(
    url: string | URL,
    body: unknown,
    schema: z.ZodType<T>,
    opts?: SourceRequestOptions,
  ): Promise<T>;
  /** Bytes of response bodies received so far (all attempts), for the job's `bytesSynced`. */
  readonly bytesReceived: number;
  /** Requests sent so far (all attempts). */
  readonly requestCount: number;
}

/** Everything a connector may use. Built per job (or per credential check) by the caller. */
export interface ConnectorContext<Creds> {
  /** Normalized credentials (the output of {@link Connector.normalize}). */
  credentials: Creds;
  http: SourceHttpClient;
  /**
   * Origin (and optional path prefix) of the source's API, without a trailing slash, already resolved
   * from the connector's {@link Connector.defaultBaseUrl} or the operator's override.
   */
  baseUrl: string;
  /** Fires on cancel (disconnect, job cancel) and shutdown. */
  signal: AbortSignal;
  /** The service's one logger type (src/lib/logger.ts). Never pass secrets to it. */
  log: Logger;
  /** The values of the connector's {@link Connector.settings}, by key (defaults filled in). */
  settings: Readonly<Record<string, string>>;
}

/**
 * An operator setting of a source beyond its base URL (e.g. the vendor API version), read by the config
 * from the environment and handed to the connector through {@link ConnectorContext.settings}.
 */
export interface ConnectorSetting {
  /** The environment variable, `KB_<TYPE>_...`. */
  env: string;
  default: string;
  /** What a value must look like; another value stops the service at start with a readable error. */
  pattern: RegExp;
  /** Shown in that error: what the setting is and an example value. */
  description: string;
}

/** Options of one sync pass. */
export interface SyncOptions<Cursor> {
  /** The last checkpoint saved, or null for a first (or reset) pass. */
  cursor: Cursor | null;
  mode: SyncMode;
  /**
   * The documents this connection holds now, in batches (ordered by external id), read when called.
   * An incremental sync compares them with the source: to skip documents whose version is unchanged,
   * and to find what left the source when the source has no deletion signal (yield `deleted` for them,
   * and only after the enumeration that proves their absence has completed). Documents a user deleted
   * (tombstoned) are not listed.
   */
  known(): AsyncGenerator<KnownDocument[]>;
}

/**
 * A content source. `Input` is the public input shape of API.md (the seed's field names, without
 * `type`); `Creds` is what {@link normalize} makes of it and what is stored (encrypted).
 */
export interface Connector<Creds = unknown, Cursor = unknown, Input = unknown> {
  /** Canonical type, lower-case `[a-z][a-z0-9_]*`: the `source.type` of API.md and the stored type. */
  type: SourceType;
  /** The product's own name, accepted as `source.type` and stored as `type` (API.md): `notion`. */
  alias: string;
  /** The product behind the stand-in, for messages: `Notion`, `Zendesk`, `Confluence`, `Shopify`, `GitBook`. */
  label: string;
  /**
   * The setting that overrides {@link defaultBaseUrl} (an operator's proxy, a test's fake server), e.g.
   * `KB_NOTES_BASE_URL`. Read by the config; never taken from a request.
   */
  baseUrlSetting: string;
  /** Further operator settings, by the key the connector reads them under in `ctx.settings`. */
  settings?: Readonly<Record<string, ConnectorSetting>>;
  /** For sources that connect through OAuth consent: the two steps and the settings of the OAuth app. */
  oauth?: OAuthSteps;
  /** The public input fields of API.md, strict (unknown fields are rejected). */
  credentials: z.ZodType<Input>;
  /**
   * Checks and canonicalizes input values (host names, e-mails, tokens). Throws
   * `AppError('invalid_request')` whose message names the field (`source.<field>`).
   */
  normalize(input: Input): Creds;
  /**
   * The API origin with `{placeholders}` naming credential fields, e.g. `https://{subdomain}.zendesk.com`.
   * Resolve with `resolveBaseUrl` (src/connectors/base-url.ts); operators may override it.
   */
  defaultBaseUrl: string;
  /**
   * One cheap authenticated call. Rejected credentials: `AppError('source_auth_failed')` naming the
   * source and what it answered (status, vendor error text; never secrets). Network failure or a source
   * that keeps failing: `AppError('source_unreachable')`. May resolve to the credentials to store in
   * place of the checked ones, with what the check learned about them (which API host a token works on);
   * resolving to nothing stores the checked credentials.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: most checks learn nothing and resolve to nothing (`async validate() {...}`)
  validate(ctx: ConnectorContext<Creds>): Promise<Creds | void>;
  /** Streams the source's content. */
  sync(ctx: ConnectorContext<Creds>, opts: SyncOptions<Cursor>): AsyncGenerator<SyncEvent<Cursor>>;
  /** The checkpoint's shape (parsed when a job resumes). */
  cursor: z.ZodType<Cursor>;
  /**
   * The source's documented sustained request rate. The sync's HTTP client paces requests to it (bursts
   * of up to a second's worth allowed), so a large sync stays under the limit instead of living on 429s.
   */
  requestsPerSecond?: number;
  /** Change notifications the source sends (its webhooks), for sources that send them. */
  webhooks?: SourceWebhooks<Creds>;
  /**
   * Reads again exactly the documents a change notification named, never trusting the event's content:
   * yields a `document` for each that the credentials can read, `deleted` for each that is gone, not
   * shared or no longer published, and `failure` for each that could not be read. No checkpoints. A
   * notification that names a container (a GitBook space revision) may expand into its changed documents.
   */
  syncChanged?(
    ctx: ConnectorContext<Creds>,
    changes: readonly ChangedDocument[],
  ): AsyncGenerator<SyncEvent<never>>;
}

/** An inbound request that claims to be a source's change notification, exactly as received. */
export interface WebhookRequest {
  /** Header names in lower case. */
  headers: Readonly<Record<string, string>>;
  /** The body's bytes as received: signatures are computed over them, never over re-serialized JSON. */
  rawBody: Buffer;
}

/** One document a notification names. */
export interface ChangedDocument {
  /** The {@link SourceDocument.table} it is (or would be) stored under. */
  table: string;
  externalId: string;
  /** The event says the document is gone (deleted, unpublished, trashed); the source is read to confirm. */
  deleted: boolean;
}

/** What a verified notification means. */
export type WebhookMessage =
  /** Documents changed. `eventId`: the vendor's id of the event, the same on every retry (deduplicated). */
  | { kind: 'changes'; eventId: string; occurredAt?: string; changes: ChangedDocument[] }
  /**
   * The vendor's set-up handshake (Notion posts a verification token when a subscription is created): the
   * `secret` it carries signs later events and is kept (encrypted); `reply` is the JSON answered, if any.
   */
  | { kind: 'handshake'; secret?: string; reply?: unknown }
  /** An event the service does not act on (a topic it did not ask for): acknowledged, not stored. */
  | { kind: 'ignored'; eventId?: string };

/** Whether a notification proves it came from the vendor with a given secret. */
export type WebhookVerdict = 'valid' | 'bad_signature' | 'stale';

/** A subscription the service made at the source (Shopify, Zendesk, Confluence let an API subscribe). */
export interface WebhookSubscription {
  /** The vendor's ids of what was created (one per topic where the vendor needs one each), to delete later. */
  ids: string[];
  /** The signing secret the vendor issued or the service chose for it, when the subscription has its own. */
  secret?: string | null;
}

/**
 * A source's change notifications. The route finds the connections a request may belong to by
 * {@link accountOf} (read before verification: it only narrows the candidates), then accepts the request
 * for the first candidate one of whose {@link signingSecrets} gives {@link verify} `valid`.
 */
export interface SourceWebhooks<Creds> {
  /**
   * The account the request says it is from, in the form {@link connectionAccount} gives (a shop domain, a
   * Zendesk subdomain, a Notion workspace id, a Confluence cloud id, a GitBook space id), or null when the
   * request names none (a handshake).
   */
  accountOf(req: WebhookRequest): string | null;
  /** The account of a connection, from its normalized credentials. */
  connectionAccount(credentials: Creds): string;
  /**
   * The secrets that may have signed a connection's notifications: the connection's own (a Shopify app's
   * client secret), its subscription's, the operator's app secret (`settings`), the handshake's.
   */
  signingSecrets(opts: {
    credentials: Creds;
    subscription: WebhookSubscription | null;
    settings: Readonly<Record<string, string>>;
    /** Secrets handshakes delivered for this source type, newest first. */
    handshakeSecrets: readonly string[];
  }): string[];
  /** Checks the vendor's signature in constant time, and its replay window where the vendor signs a time. */
  verify(req: WebhookRequest, secret: string, opts: { now: number }): WebhookVerdict;
  /**
   * Reads a notification (verified, or a handshake, which carries no signature). Throws
   * `AppError('invalid_request')` when the body is not the vendor's shape.
   */
  parse(req: WebhookRequest): WebhookMessage;
  /** Subscribes to the changes of the connection's documents, delivered to `callbackUrl`. */
  subscribe?(ctx: ConnectorContext<Creds>, opts: { callbackUrl: string }): Promise<WebhookSubscription>;
  /** Removes what {@link subscribe} created (a subscription already gone is not an error). */
  unsubscribe?(ctx: ConnectorContext<Creds>, subscription: WebhookSubscription): Promise<void>;
}

/** The registered OAuth app of a source, from the settings its {@link OAuthSteps} name. */
export interface OAuthApp {
  clientId: string;
  clientSecret: string;
  /** Origin of the authorization server (the vendor's, or the operator's override). */
  baseUrl: string;
}

/** What a token endpoint granted. */
export interface OAuthTokens {
  accessToken: string;
  /** The workspace or account the consent was given for, when the source says. */
  accountName: string | null;
  /** Present when the source issues refresh tokens (Zendesk may; Notion's public integrations do not). */
  refreshToken?: string | null;
  /** Epoch ms after which `accessToken` no longer works, when the source says (`expires_in`). */
  expiresAt?: number | null;
  /** Epoch ms after which `refreshToken` no longer works, when the source says (`refresh_token_expires_in`). */
  refreshExpiresAt?: number | null;
}

/**
 * Where a sync's HTTP client gets an access token that may expire: the job holds the connection's
 * tokens, refreshes them (and stores the rotated ones) and hands out the current one. The client puts it
 * in place of the credentials' token in whichever header carries it (`Authorization: Bearer …`, or a
 * header holding the bare token, as Shopify's `X-Shopify-Access-Token`), so a connector never sees the
 * refresh.
 */
export interface AccessTokens {
  /** Whether `token` is one of this connection's access tokens (the one the credentials hold, or a later one). */
  owns(token: string): boolean;
  /** The token to send now: refreshed first when its announced expiry is near. */
  current(): Promise<string>;
  /**
   * The source refused `rejected` (401): a fresh token, refreshed once however many requests saw it refused.
   * Throws `AppError('source_auth_failed')` saying to consent again when the source refuses the refresh.
   */
  refresh(rejected: string): Promise<string>;
}

/**
 * OAuth consent of a source (API.md "Connections": initiate, callback, secret-id-exists). The routes are
 * generic; the vendor's endpoints and parameters live here, in the connector's folder.
 */
export interface OAuthSteps {
  /** Settings naming the OAuth app, e.g. `{ clientId: 'KB_NOTES_CLIENT_ID', ... }`. */
  settings: { clientId: string; clientSecret: string; baseUrl: string };
  /**
   * The authorization server's origin when its setting is unset. May hold the {@link tenant} field as a
   * `{placeholder}` (`https://{subdomain}.zendesk.com`): each account runs its own consent.
   */
  defaultBaseUrl: string;
  /**
   * For sources whose accounts each have their own authorization server: the credential field naming the
   * account (`subdomain`), which the initiate body must carry, and how to canonicalize it (throws
   * `AppError('invalid_request')` naming the field, as `normalize` does).
   */
  tenant?: { field: string; normalize(value: string): string };
  /** The credential field the stored token fills before a credential check or a sync. */
  tokenField: string;
  /**
   * Whether these normalized credentials need the token of a stored consent. Default: the token field
   * is empty. A source with another way in (Zendesk's API token) says no when that is given.
   */
  needsConsent?(credentials: Record<string, unknown>): boolean;
  /** The consent URL the user's browser opens. */
  authorizeUrl(app: OAuthApp, opts: { redirectUri: string; state: string }): string;
  /**
   * Exchanges the authorization code at the token endpoint. Throws `AppError('source_auth_failed')` when
   * the source refuses it, `AppError('source_unreachable')` when it cannot be reached; never a secret in
   * a message.
   */
  exchangeCode(
    http: SourceHttpClient,
    app: OAuthApp,
    opts: { code: string; redirectUri: string },
  ): Promise<OAuthTokens>;
  /** Trades a refresh token for new tokens (same errors as {@link exchangeCode}); for sources that issue them. */
  refresh?(
    http: SourceHttpClient,
    app: OAuthApp,
    opts: {
      refreshToken: string /** The clock expiries count from (epoch ms); default now. */;
      now?: number;
    },
  ): Promise<OAuthTokens>;
}

/** A connector with its type parameters erased, as the registry holds it. */
// biome-ignore lint/suspicious/noExplicitAny: the registry erases each connector's own types on purpose
export type AnyConnector = Connector<any, any, any>;
