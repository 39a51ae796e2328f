/**
 * The console's one way to the service: the typed client (src/client), with the API key the person typed
 * in. The key lives in this tab's sessionStorage only (closing the tab forgets it) and is sent as
 * `Authorization: Bearer` by the client, as any other caller sends it.
 */
import { createKbClient, KbApiError, type KbClient, ok } from '../client/index.ts';

export { KbApiError, ok };
export type { KbClient };

const KEY_STORAGE = 'kb-console-key';

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_STORAGE);
  else sessionStorage.setItem(KEY_STORAGE, key);
}

export function clientFor(apiKey: string): KbClient {
  return createKbClient({ baseUrl: location.origin, apiKey });
}

/** What to tell the person about a failed call: the API's own message, or why no answer came. */
export function messageOf(err: unknown): string {
  if (err instanceof KbApiError) return err.message;
  if (err instanceof TypeError) return 'The service did not answer; check that it is running and reachable.';
  return err instanceof Error ? err.message : String(err);
}

/** A call refused for the key itself (revoked meanwhile): the console signs out. */
export function isUnauthorized(err: unknown): boolean {
  return err instanceof KbApiError && err.status === 401;
}
