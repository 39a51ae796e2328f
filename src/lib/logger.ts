/**
 * The one logger type of the service: the subset of pino that every layer uses, so a part can be handed
 * the process's pino logger, a child of it, or {@link silentLogger} in tests. Never pass secrets to it
 * (credentials, API keys, OAuth codes): log ids and counts, not values.
 */
import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';
import pinoPretty from 'pino-pretty';

export interface Logger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

/**
 * Fields pino must never print: credentials in request headers and bodies, and credential fields of any
 * logged object.
 */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  '*.api_token',
  '*.access_token',
  '*.apiKey',
  '*.password',
  '*.client_secret',
  '*.webhook_secret',
  '*.webhook_verification_token',
];

/** How log lines look: `json` (one pino object a line, for machines) or `pretty` (for people at a terminal). */
export type LogFormat = 'json' | 'pretty';

/** The KB_LOG_FORMAT setting: `auto` picks by where the lines go (see {@link chooseLogFormat}). */
type LogFormatSetting = 'auto' | LogFormat;

/**
 * `auto` is pretty only for a person at a terminal: a TTY outside production. Piped output (a file, a
 * log collector, `| jq`) and NODE_ENV=production stay JSON. `json` and `pretty` force the format.
 */
export function chooseLogFormat(
  setting: LogFormatSetting,
  where: { isTTY: boolean; nodeEnv: string | undefined },
): LogFormat {
  if (setting !== 'auto') return setting;
  return where.isTTY && where.nodeEnv !== 'production' ? 'pretty' : 'json';
}

interface ProcessLoggerOptions {
  level: string;
  /** Default `json`; the entry points pass KB_LOG_FORMAT. */
  format?: LogFormatSetting | undefined;
  /** Where lines go (default stdout). */
  stream?: (DestinationStream & { isTTY?: boolean }) | undefined;
  /** For `auto`: whether the destination is a terminal (default: the stream's, or stdout's, isTTY). */
  isTTY?: boolean | undefined;
  /** For `auto` (default: process.env.NODE_ENV). */
  nodeEnv?: string | undefined;
}

/**
 * The process's logger: pino at `level`, with {@link REDACT_PATHS} censored, writing JSON lines or, for
 * a terminal, pino-pretty's readable lines. The HTTP layer logs through it too, so the service writes one
 * stream. Redaction and the request serializer run in pino before a line is written, so the pretty
 * printer only ever sees censored lines: it formats, it cannot reveal.
 */
export function createProcessLogger(opts: ProcessLoggerOptions): PinoLogger {
  const isTTY = opts.isTTY ?? Boolean((opts.stream ?? process.stdout).isTTY);
  const format = chooseLogFormat(opts.format ?? 'json', {
    isTTY,
    nodeEnv: opts.nodeEnv ?? process.env['NODE_ENV'],
  });
  const options = {
    level: opts.level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: { req: requestForLog },
  };
  if (format === 'json') return pino(options, opts.stream);
  return pino(options, prettyStream({ destination: opts.stream, color: opts.stream === undefined && isTTY }));
}

/**
 * pino-pretty as an in-process stream: one line per entry (`12:01:02.345 INFO  request completed GET
 * /api/... 200 in 4 ms`), the request and response folded into the message, pid and hostname left out.
 * Synchronous, so log lines and the start banner (plain stdout writes) appear in the order they happened.
 */
function prettyStream(opts: {
  destination: DestinationStream | undefined;
  color: boolean;
}): DestinationStream {
  return pinoPretty({
    destination: opts.destination ?? 1,
    sync: true,
    colorize: opts.color && pinoPretty.isColorSupported,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    ignore: 'pid,hostname,req,res,responseTime,reqId',
    messageFormat: requestMessage,
  });
}

/** The message of a pretty line: Fastify's request lines carry their method, URL, status and time in it. */
function requestMessage(log: Record<string, unknown>, messageKey: string): string {
  const parts = [String(log[messageKey] ?? '')];
  const req = log['req'] as { method?: unknown; url?: unknown } | undefined;
  const res = log['res'] as { statusCode?: unknown } | undefined;
  if (req && typeof req.method === 'string') parts.push(`${req.method} ${String(req.url ?? '')}`);
  if (res && typeof res.statusCode === 'number') {
    const ms = typeof log['responseTime'] === 'number' ? ` in ${Math.round(log['responseTime'])} ms` : '';
    parts.push(`${res.statusCode}${ms}`);
  }
  // A request's lines pair up by id; its first 8 characters tell them apart on a screen.
  if (typeof log['reqId'] === 'string') parts.push(`#${log['reqId'].slice(0, 8)}`);
  return parts.join(' ');
}

/** Query parameters whose values are secrets (OAuth `code` and `state`, secret ids, tokens, keys). */
const SECRET_QUERY_KEY = /code|state|secret|token|key|password|signature/i;

/**
 * The request as a log line shows it: method, URL with the values of secret-bearing query parameters
 * censored (the OAuth callback's request line carries the authorization code), and the request's
 * addressing; never headers.
 */
function requestForLog(req: {
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
function redactQueryValues(url: string): string {
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
