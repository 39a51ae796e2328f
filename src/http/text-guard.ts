/**
 * What text the API accepts: any Unicode except U+0000, and only Unicode. Postgres text cannot store a
 * NUL, and a lone UTF-16 surrogate (`"\ud800"` in JSON, which JSON allows) is not a character at all:
 * in a jsonb parameter it fails the statement with a 500, in a text parameter the driver's UTF-8 encoding
 * silently stores U+FFFD instead. Both are refused here, once for every route, with a 400 naming the
 * field, before anything is read or written. (Fetched content is cleaned instead, at the store:
 * src/ingest/store.ts.)
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.ts';

/** Why a string cannot be accepted as text, or undefined when it can. */
function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'a NUL character (U+0000)';
  if (!s.isWellFormed()) return 'an unpaired surrogate (half of a UTF-16 pair, such as \\ud800), which is not Unicode text';
  return undefined;
}

/** The first string (or key) in `value` that is not acceptable text: its path and what is wrong. */
export function findInvalidText(value: unknown, path: string, depth = 0): { path: string; problem: string } | undefined {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { path, problem } : undefined;
  }
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findInvalidText(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, v] of Object.entries(value)) {
    const at = `${path}.${key.replaceAll('\u0000', '\\0').toWellFormed()}`;
    const problem = textProblem(key);
    if (problem) return { path: at, problem };
    const found = findInvalidText(v, at, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** `preValidation` hook: refuses a NUL or a lone surrogate in the path parameters, the query string or the body. */
export async function rejectInvalidText(request: FastifyRequest): Promise<void> {
  const found =
    findInvalidText(request.params, 'path') ?? findInvalidText(request.query, 'query') ?? findInvalidText(request.body, 'body');
  if (found) {
    throw new AppError('invalid_request', `${found.path} contains ${found.problem}; this API does not accept it.`);
  }
}
