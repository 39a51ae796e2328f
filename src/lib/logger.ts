/**
 * The one logger type of the service: the subset of pino that every layer uses, so a part can be handed
 * the process's pino logger, a child of it, or {@link silentLogger} in tests. Never pass secrets to it
 * (credentials, API keys, OAuth codes): log ids and counts, not values.
 */
import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';

export interface Logger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

/**
 * Fields pino must never print: credentials in request headers and bodies, and credential fields of any
 * logged object.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  '*.api_token',
  '*.access_token',
  '*.apiKey',
  '*.password',
  '*.client_secret',
];

/**
 * The process's logger: JSON lines (pino) at `level`, with {@link REDACT_PATHS} censored. The HTTP layer
 * logs through it too, so the service writes one stream.
 */
export function createProcessLogger(opts: { level: string; stream?: DestinationStream }): PinoLogger {
  return pino({ level: opts.level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, opts.stream);
}

/** Drops everything: the default where a caller gives no logger. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
