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
  return pino(
    {
      level: opts.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { req: requestForLog },
    },
    opts.stream,
  );
}

/** Query parameters whose values are secrets (OAuth `code` and `state`, secret ids, tokens, keys). */
const SECRET_QUERY_KEY = /code|state|secret|token|key|password|signature/i;

/**
 * The request as a log line shows it: method, URL with the values of secret-bearing query parameters
 * censored (the OAuth callback's request line carries the authorization code), and the request's
 * addressing; never headers.
 */
export function requestForLog(req: {
  method?: string;
  url?: string;
  host?: string;
  hostname?: string;
  ip?: string;
  socket?: { remotePort?: number };
}): Record<string, unknown> {
  return {
    method: req.method,
    url: req.url === undefined ? undefined : redactQueryValues(req.url),
    host: req.host ?? req.hostname,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/** `url` with the values of secret-bearing query parameters replaced by `[redacted]`. */
export function redactQueryValues(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return eq >= 0 && SECRET_QUERY_KEY.test(safeDecode(name)) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, q)}?${query}`;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replaceAll('+', ' '));
  } catch {
    return s;
  }
}

/** Drops everything: the default where a caller gives no logger. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
