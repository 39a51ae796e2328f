/**
 * The scheduled refresh of idle connections' OAuth tokens: a refresh token lives a fixed time (Zendesk:
 * 30 days by default) and only a refresh renews it, so a connection nobody syncs would die unused. Every
 * worker process runs this task; the row lock of the refresh keeps two from trading the same token.
 */
import { isAppError } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import { listConnectionsForTokenRefresh } from '../db/repositories/connections.ts';
import { refreshStoredTokens, type TokenRefreshDeps } from './connection-tokens.ts';
import { needsKeepAlive } from './oauth-tokens.ts';
import type { PeriodicTask } from './registry.ts';

/** How often the task looks: far more often than the shortest refresh-token life (7 days) needs. */
const TOKEN_REFRESH_EVERY_MS = 30 * 60_000;

export interface TokenRefreshOutcome {
  /** Connections whose refresh token was traded for a new one (or found traded by another process). */
  refreshed: string[];
  /** Connections whose source refused the refresh: they now say they need consent. */
  refused: string[];
  /** Connections whose refresh failed for a cause that may pass (the next run tries again). */
  failed: string[];
}

/** Refreshes every active OAuth connection whose refresh token has spent half its life. */
export async function refreshIdleConnectionTokens(deps: TokenRefreshDeps): Promise<TokenRefreshOutcome> {
  const { sources } = deps;
  const types = sources.registry.connectors.filter((c) => c.oauth?.refresh).map((c) => c.type);
  const outcome: TokenRefreshOutcome = { refreshed: [], refused: [], failed: [] };
  for (const row of await listConnectionsForTokenRefresh(deps.db, types)) {
    const connector = sources.connectorOf(row.type);
    if (!connector) continue;
    let holding: Record<string, unknown>;
    try {
      holding = sources.decryptCredentials(row.id, row.credentialsEncrypted);
    } catch {
      continue; // undecryptable: the connection's own sync says so
    }
    const due = (stored: Record<string, unknown>) =>
      needsKeepAlive(stored, { now: sources.now(), updatedAt: row.updatedAt });
    if (!due(holding)) continue;
    try {
      await refreshStoredTokens(deps, { connector, connectionId: row.id, holding, due });
      outcome.refreshed.push(row.id);
    } catch (err) {
      (isAppError(err) && err.code === 'source_auth_failed' ? outcome.refused : outcome.failed).push(row.id);
    }
  }
  return outcome;
}

/** The periodic task that keeps idle connections' refresh tokens alive (every worker process runs it). */
export function tokenRefreshTask(deps: TokenRefreshDeps & { log?: Logger }): PeriodicTask {
  return {
    name: 'oauth-token-refresh',
    everyMs: TOKEN_REFRESH_EVERY_MS,
    run: async () => {
      const outcome = await refreshIdleConnectionTokens(deps);
      if (outcome.refused.length > 0 || outcome.failed.length > 0) {
        deps.log?.warn(
          { refused: outcome.refused, failed: outcome.failed },
          'scheduled OAuth refresh: some connections could not be refreshed',
        );
      }
    },
  };
}
