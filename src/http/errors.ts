import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, ERROR_STATUS, type ErrorCode } from '../lib/errors.ts';
import type { RouteTable } from './route-table.ts';
import { pathSegmentProblem } from './text-guard.ts';

/** Fastify's own error codes, mapped onto ours. Anything else from Fastify falls back on its status. */
const FASTIFY_CODES: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Send the request body as application/json.'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'The request body is larger than this endpoint accepts.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['invalid_request', 'The body is empty; send a JSON object.'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['invalid_request', 'The body is not valid JSON.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [
    'invalid_request',
    'The Content-Length header does not match the body.',
  ],
  FST_ERR_BAD_URL: ['invalid_request', 'The URL path is not valid: check its percent-encoding.'],
  FST_ERR_MAX_PARAM_LENGTH: ['invalid_request', 'A path parameter is longer than 200 characters.'],
};

const STATUS_FALLBACK: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable',
};

/** Input quoted in a message, clipped: a message names what is wrong without echoing a whole request. */
export function clipInput(text: string, max = 100): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

interface ErrorBody {
  error: ErrorCode;
  message: string;
  [extra: string]: unknown;
}

/** Turn any thrown value into our status + body; nothing internal (stack, SQL, secrets) leaks. */
function toErrorResponse(err: unknown): { status: number; body: ErrorBody } {
  if (err instanceof AppError) {
    return { status: err.status, body: { ...(err.details ?? {}), error: err.code, message: err.message } };
  }
  const fe = err as FastifyError & { validationContext?: string };
  if (hasZodFastifySchemaValidationErrors(fe)) {
    const first = fe.validation[0]!;
    const where = fe.validationContext ?? 'body';
    const field = first.instancePath ? first.instancePath.slice(1).replaceAll('/', '.') : '';
    // fastify-type-provider-zod hands each zod issue over as { keyword: issue.code, params: the rest }.
    const keys = (first.params as { keys?: unknown } | undefined)?.keys;
    let message: string;
    if (first.keyword === 'unrecognized_keys' && Array.isArray(keys) && keys.length > 0) {
      const at = field ? ` in ${where}.${field}` : ` in the ${where}`;
      const named = keys.slice(0, 5).map((k) => JSON.stringify(clipInput(String(k))));
      const more = keys.length > 5 ? ` and ${keys.length - 5} more` : '';
      message = `Unknown field${keys.length > 1 ? 's' : ''} ${named.join(', ')}${more}${at}.`;
    } else {
      message = field ? `${where}.${field}: ${first.message}` : `${where}: ${first.message}`;
    }
    return { status: 400, body: { error: 'invalid_request', message } };
  }
  if (fe && typeof fe.code === 'string' && FASTIFY_CODES[fe.code]) {
    const [code, message] = FASTIFY_CODES[fe.code]!;
    return { status: ERROR_STATUS[code], body: { error: code, message } };
  }
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    // A client error whose status the API's table lacks (416 from the docs UI's file server for an
    // unsatisfiable Range) is a 400, not a 500.
    const code = STATUS_FALLBACK[status] ?? 'invalid_request';
    return {
      status: ERROR_STATUS[code],
      body: { error: code, message: 'The request could not be processed.' },
    };
  }
  if (status === 503)
    return {
      status,
      body: { error: 'unavailable', message: 'The service is not ready; try again shortly.' },
    };
  return {
    status: 500,
    body: { error: 'internal_error', message: 'Something went wrong on our side; the error was logged.' },
  };
}

export function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = toErrorResponse(err);
  if (status >= 500) request.log.error({ err }, 'request failed');
  if (err instanceof AppError && err.code === 'rate_limited') {
    const after = err.details?.['retryAfterSeconds'];
    if (typeof after === 'number') reply.header('retry-after', String(after));
  }
  void reply.status(status).send(body);
}

/**
 * Requests no route takes: 405 with `Allow` when the path exists with other methods (OPTIONS: 204 with
 * `Allow`), else 404. Both in the API's shape, the path quoted clipped.
 */
export function notFoundHandler(routes: RouteTable) {
  return (request: FastifyRequest, reply: FastifyReply): void => {
    const path = request.url.split('?')[0]!;
    const allowed = routes.allowedMethods(path);
    if (allowed) {
      answerOtherMethod(request, reply, allowed);
      return;
    }
    void reply.status(404).send({
      error: 'not_found',
      message: `No route ${request.method} ${clipInput(path)}; see /openapi.json.`,
    });
  };
}

/**
 * `onRequest` hook, for the two cases the not-found handler cannot take: a request with no route on a
 * known path is answered here, before its body is read (Fastify would refuse a QUERY without a
 * Content-Type with a 400 first); and a method that an exact static path lacks is a 405 there, even
 * where the router would hand the request to a parametric route beside it (`GET
 * .../knowledgebase-items/query` is not the item `query`).
 */
export function methodNotAllowedHook(routes: RouteTable) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const path = request.url.split('?')[0]!;
    const allowed = request.is404
      ? routes.allowedMethods(path)
      : routes.shadowedMethods(request.method, path);
    if (!allowed) return undefined;
    answerOtherMethod(request, reply, allowed);
    // An async hook that answered returns the reply, or Fastify goes on to the route as well.
    return reply;
  };
}

function answerOtherMethod(request: FastifyRequest, reply: FastifyReply, allowed: string[]): void {
  reply.header('allow', allowed.join(', '));
  if (request.method === 'OPTIONS') {
    void reply.status(204).send();
    return;
  }
  const path = clipInput(request.url.split('?')[0]!);
  void reply.status(405).send({
    error: 'method_not_allowed',
    message: `${clipInput(request.method, 20)} is not allowed on ${path}; it takes ${allowed.filter((m) => m !== 'OPTIONS').join(', ')}.`,
  });
}

/**
 * The router refused the URL's percent-encoding: name the path parameter whose segment is not UTF-8 (or
 * not well-formed), when the path is one of ours; else the path as a whole.
 */
export function badUrlError(routes: RouteTable, url: string): AppError {
  const path = url.split('?')[0]!;
  for (const { name, raw } of routes.rawParams(path)) {
    const problem = pathSegmentProblem(raw);
    if (problem)
      return new AppError(
        'invalid_request',
        `path.${name} contains ${problem}; send UTF-8, percent-encoded.`,
      );
  }
  return new AppError(
    'invalid_request',
    'The URL path is not valid: check its percent-encoding (UTF-8, % and two hex digits).',
  );
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers or request line over the size
 * limit, malformed HTTP): answered in the API's shape and the connection closed.
 */
export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const message =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'The request line and headers are larger than this server accepts (16 KiB); send long values in a JSON body.'
      : 'The request is not valid HTTP.';
  const body = JSON.stringify({ error: 'invalid_request', message });
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
