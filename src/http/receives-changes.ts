import type { AnyConnector } from '../connectors/types.ts';
import type { RouteDeps } from './context.ts';

/**
 * Whether a new connection of this source will be subscribed to its change notifications: the connector
 * can subscribe and the service has a public URL for the vendor to call (the rule subscribeConnection
 * applies), so a consent asks for what subscribing needs.
 */
export function receivesChanges(deps: RouteDeps, connector: AnyConnector): boolean {
  return connector.webhooks?.subscribe !== undefined && Boolean(deps.config.KB_PUBLIC_URL);
}
