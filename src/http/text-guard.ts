/**
 * What text the API accepts: any Unicode except U+0000, and only Unicode. Postgres text cannot store a
 * NUL, and a lone UTF-16 surrogate (`"\ud800"` in JSON, which JSON allows) is not a character at all:
 * in a jsonb parameter it fails the statement with a 500, in a text parameter the driver's UTF-8 encoding
 * silently stores U+FFFD instead. Bytes that are not UTF-8 (in the body, or percent-encoded in the query
 * string or a path segment) are not text either: decoding them leniently would store U+FFFD in their
 * place. All of these are refused here, once for every route, with a 400 naming the field, before
 * anything is read or written. (Fetched content is cleaned instead, at the store: src/ingest/hash-skip.ts.)
 */
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.ts';

/** The rule in one sentence, for the OpenAPI document and messages. */
export const TEXT_RULE =
  'Every string (JSON body, query parameter, path segment) must be Unicode text without U+0000: a NUL, an ' +
  'unpaired surrogate escape (such as \\ud800) or bytes that are not UTF-8 (raw in the body, or percent-encoded ' +
  'in the URL) are refused with 400 invalid_request naming the field; nothing is replaced or stored.';

/** JSON Schema `pattern` of a string without U+0000, declared on every request string of the document. */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

/** Why a string cannot be accepted as text, or undefined when it can. */
function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'a NUL character (U+0000)';
  if (!s.isWellFormed())
    return 'an unpaired surrogate (half of a UTF-16 pair, such as \\ud800), which is not Unicode text';
  return undefined;
}

/** Where `value` holds a string (or key) for which `problemOf` has something to say: its path and what. */
function findString(
  value: unknown,
  path: string,
  problemOf: (s: string) => string | undefined,
  depth = 0,
): { path: string; problem: string } | undefined {
  if (typeof value === 'string') {
    const problem = problemOf(value);
    return problem ? { path, problem } : undefined;
  }
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findString(value[i], `${path}[${i}]`, problemOf, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, v] of Object.entries(value)) {
    const at = `${path}.${key.replaceAll('\u0000', '\\0').toWellFormed()}`;
    const problem = problemOf(key);
    if (problem) return { path: at, problem };
    const found = findString(v, at, problemOf, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The first string (or key) in `value` that is not acceptable text: its path and what is wrong. */
function findInvalidText(value: unknown, path: string): { path: string; problem: string } | undefined {
  return findString(value, path, textProblem);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

/** A percent-encoded URL component as bytes, or null when an escape is malformed (`%`, `%zz`). */
function percentDecodeBytes(component: string): Buffer | null {
  const bytes: number[] = [];
  for (let i = 0; i < component.length; i++) {
    const c = component.charCodeAt(i);
    if (c === 0x25 /* % */) {
      const hex = component.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return null;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (c === 0x2b /* + */) {
      bytes.push(0x20);
    } else {
      // What arrived raw in the request line is Latin-1 here (Node reads the URL byte for byte).
      bytes.push(c & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/**
 * The query string's first name or value that is not UTF-8 text once percent-decoded (a malformed escape,
 * or bytes that are not UTF-8), with its field path. The framework's parser keeps a malformed escape as
 * it is and decodes bad bytes leniently, so this reads the raw query string itself.
 */
function findInvalidQueryEncoding(url: string): { path: string; problem: string } | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  for (const pair of url.slice(q + 1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
    const nameBytes = percentDecodeBytes(rawName);
    let name: string | undefined;
    try {
      name = nameBytes ? strictUtf8.decode(nameBytes) : undefined;
    } catch {}
    const path = name === undefined ? 'query' : `query.${name.replaceAll('\u0000', '\\0')}`;
    for (const [raw, bytes] of [
      [rawName, nameBytes],
      [rawValue, percentDecodeBytes(rawValue)],
    ] as const) {
      const problem = encodingProblem(raw, bytes);
      if (problem)
        return { path: raw === rawName && name === undefined ? 'a query parameter name' : path, problem };
    }
  }
  return undefined;
}

function encodingProblem(raw: string, bytes: Buffer | null): string | undefined {
  if (bytes === null) return 'malformed percent-encoding (% must be followed by two hex digits)';
  try {
    strictUtf8.decode(bytes);
  } catch {
    return `bytes that are not UTF-8 once percent-decoded (${clipped(raw)})`;
  }
  return undefined;
}

function clipped(raw: string): string {
  return raw.length > 40 ? `${raw.slice(0, 40)}…` : raw;
}

/** Why a raw path segment cannot be a parameter value, or undefined when it decodes to UTF-8 text. */
export function pathSegmentProblem(raw: string): string | undefined {
  return encodingProblem(raw, percentDecodeBytes(raw.replaceAll('+', '%2B')));
}

/**
 * Where in a JSON body that is not valid UTF-8 the first bad bytes are: the field path (`body.title`), or
 * undefined when they are outside any string or the body is no JSON anyway. Only the refusal's message
 * needs it, so it may take a second pass: the body is decoded leniently, the first byte that does not
 * survive the round trip marks the spot, and a random marker put there is looked for in the parsed value
 * (bytes of 0x80 and above are never JSON syntax, so the marker lands in the string that held them).
 */
export function invalidUtf8Field(body: Buffer): string | undefined {
  const bytes = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.subarray(3) : body;
  const again = Buffer.from(lenientUtf8.decode(bytes));
  let at = 0;
  while (at < bytes.length && bytes[at] === again[at]) at++;
  if (at >= bytes.length) return undefined;
  const marker = `\ue000${randomUUID()}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(
      lenientUtf8.decode(bytes.subarray(0, at)) + marker + lenientUtf8.decode(bytes.subarray(at)),
    );
  } catch {
    return undefined;
  }
  return findString(parsed, 'body', (s) => (s.includes(marker) ? 'marker' : undefined))?.path.replace(
    marker,
    '',
  );
}

/**
 * `preValidation` hook: refuses bad percent-encoding in the query string, and a NUL or a lone surrogate in
 * the path parameters, the query string or the body. (Bad bytes in a path segment stop the router before
 * this: errors.ts names the parameter; in a body, the JSON parser in app.ts refuses them.)
 */
export async function rejectInvalidText(request: FastifyRequest): Promise<void> {
  const encoding = findInvalidQueryEncoding(request.url);
  if (encoding) {
    throw new AppError(
      'invalid_request',
      `${encoding.path} contains ${encoding.problem}; send UTF-8, percent-encoded.`,
    );
  }
  const found =
    findInvalidText(request.params, 'path') ??
    findInvalidText(request.query, 'query') ??
    findInvalidText(request.body, 'body');
  if (found) {
    throw new AppError(
      'invalid_request',
      `${found.path} contains ${found.problem}; this API does not accept it.`,
    );
  }
}
