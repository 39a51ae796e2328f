/**
 * A connection's OAuth tokens while the service uses them: the refresh that trades a refresh token for a
 * new pair and commits the pair (encrypted) before anyone uses the new access token, one refresh at a
 * time per connection across processes; and the {@link AccessTokens} a sync's HTTP client takes its
 * token from, refreshed before the announced expiry and again on a 401, as often as the sync lasts.
 */
import type { AccessTokens, AnyConnector, OAuthTokens } from '../connectors/types.ts';
import type { Database } from '../db/database.ts';
import {
  lockConnectionCredentials,
  markConnectionConsentNeeded,
  updateConnectionCredentials,
} from '../db/repositories/connections.ts';
import { AppError } from '../lib/errors.ts';
import {
  credentialsWithTokens,
  needsRefresh,
  refreshRefused,
  refreshTokenOf,
  tenantOf,
} from './oauth-tokens.ts';
import type { SourceServices } from './source-services.ts';

/** Points of a refresh a crash test stops the process at. */
export type RefreshStep = 'source-answered' | 'committed';

export interface TokenRefreshDeps {
  db: Database;
  sources: SourceServices;
  /** Called at each step of a refresh (tests kill the process there); not set in the service. */
  onRefreshStep?: (step: RefreshStep) => Promise<void> | void;
}

interface RefreshRequest {
  connector: AnyConnector;
  connectionId: string;
  /** The credentials the caller holds: when the stored ones differ, another process refreshed already. */
  holding: Record<string, unknown>;
  /** Whether the stored credentials still need the refresh once the row is locked. */
  due: (stored: Record<string, unknown>) => boolean;
  signal?: AbortSignal;
}

/**
 * Trades the connection's refresh token for new tokens, with its row locked: when another process
 * changed the stored credentials since the caller read them, those are the answer (the refresh token
 * the caller holds is spent). The new pair is committed before this returns, so nothing uses a new
 * access token whose refresh token is not stored. A refusal marks the connection as needing consent
 * and throws an error saying so; a source that cannot be reached throws and changes nothing.
 */
export async function refreshStoredTokens(
  deps: TokenRefreshDeps,
  req: RefreshRequest,
): Promise<Record<string, unknown>> {
  const { connector, connectionId } = req;
  const steps = connector.oauth;
  if (!steps?.refresh) return req.holding;
  let refused: unknown;
  const next = await deps.db
    .transaction(async (tx) => {
      const row = await lockConnectionCredentials(tx, connectionId);
      if (!row) throw new AppError('not_found', 'The connection was removed.');
      const stored = deps.sources.decryptCredentials(connectionId, row.credentialsEncrypted);
      const refreshToken = refreshTokenOf(stored);
      const changed =
        refreshToken !== refreshTokenOf(req.holding) ||
        stored[steps.tokenField] !== req.holding[steps.tokenField];
      if (changed || !refreshToken || !req.due(stored)) return stored;
      const now = deps.sources.now();
      const { app } = deps.sources.oauthOf(connector, tenantOf(steps, stored));
      let tokens: OAuthTokens;
      try {
        tokens = await steps.refresh!(deps.sources.oauthHttp(req.signal), app, { refreshToken, now });
      } catch (err) {
        refused = refreshRefused(connector, err);
        throw refused;
      }
      await deps.onRefreshStep?.('source-answered');
      const fresh = credentialsWithTokens(stored, steps, tokens, now);
      await updateConnectionCredentials(
        tx,
        connectionId,
        deps.sources.encryptCredentials(connectionId, fresh),
      );
      return fresh;
    })
    .catch(async (err: unknown) => {
      if (err === refused && err instanceof AppError && err.code === 'source_auth_failed') {
        await markConnectionConsentNeeded(deps.db, connectionId, err.message);
      }
      throw err;
    });
  await deps.onRefreshStep?.('committed');
  return next;
}

/**
 * The access tokens of one sync: the HTTP client asks here for the token to send, in place of the one the
 * connector's credentials hold. Each new token joins `secrets`, the values no message may carry.
 */
export class ConnectionTokens implements AccessTokens {
  readonly #deps: TokenRefreshDeps;
  readonly #connector: AnyConnector;
  readonly #connectionId: string;
  readonly #signal: AbortSignal;
  readonly #field: string;
  readonly #issued = new Set<string>();
  readonly #secrets: string[];
  #credentials: Record<string, unknown>;
  #refreshing: Promise<string> | null = null;
  /** Refreshes done by this sync (the benchmark reports them). */
  refreshes = 0;

  constructor(
    deps: TokenRefreshDeps,
    opts: {
      connector: AnyConnector;
      connectionId: string;
      credentials: Record<string, unknown>;
      signal: AbortSignal;
      /** Grows with each refreshed token and refresh token. */
      secrets: string[];
    },
  ) {
    this.#deps = deps;
    this.#connector = opts.connector;
    this.#connectionId = opts.connectionId;
    this.#signal = opts.signal;
    this.#field = opts.connector.oauth?.tokenField ?? 'access_token';
    this.#credentials = opts.credentials;
    this.#secrets = opts.secrets;
    this.#remember();
  }

  /** The credentials as they stand now (after any refresh). */
  get credentials(): Record<string, unknown> {
    return this.#credentials;
  }

  owns(token: string): boolean {
    return this.#issued.has(token);
  }

  async current(): Promise<string> {
    if (needsRefresh(this.#credentials, this.#deps.sources.now())) {
      return this.#refresh((stored) => needsRefresh(stored, this.#deps.sources.now()));
    }
    return this.#token();
  }

  async refresh(rejected: string): Promise<string> {
    // Another request of this sync refreshed since `rejected` was sent: its token is the one to use.
    if (rejected !== this.#token()) return this.#token();
    return this.#refresh(() => true);
  }

  /** One refresh at a time: requests that need one while it runs wait for it. */
  #refresh(due: (stored: Record<string, unknown>) => boolean): Promise<string> {
    this.#refreshing ??= refreshStoredTokens(this.#deps, {
      connector: this.#connector,
      connectionId: this.#connectionId,
      holding: this.#credentials,
      due,
      signal: this.#signal,
    })
      .then((next) => {
        if (refreshTokenOf(next) !== refreshTokenOf(this.#credentials)) this.refreshes++;
        this.#credentials = next;
        this.#remember();
        return this.#token();
      })
      .finally(() => {
        this.#refreshing = null;
      });
    return this.#refreshing;
  }

  #token(): string {
    return String(this.#credentials[this.#field] ?? '');
  }

  #remember(): void {
    const token = this.#token();
    if (token) this.#issued.add(token);
    for (const secret of [token, refreshTokenOf(this.#credentials)]) {
      if (secret && !this.#secrets.includes(secret)) this.#secrets.push(secret);
    }
  }
}
