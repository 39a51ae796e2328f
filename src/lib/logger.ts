/**
 * The one logger type of the service: the subset of pino that every layer uses, so a part can be handed
 * the process's pino logger, a child of it, or {@link silentLogger} in tests. Never pass secrets to it
 * (credentials, API keys, OAuth codes): log ids and counts, not values.
 */
export interface Logger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

/** Drops everything: the default where a caller gives no logger. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
