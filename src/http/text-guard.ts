/**
 * What text the API accepts: any Unicode except U+0000. Postgres text cannot store a NUL, so a NUL that
 * reached a query would fail there with a 500; it is refused here instead, once for every route, with a
 * 400 naming the field, before anything is read or written. (Fetched content is cleaned instead, at the
 * store: src/ingest/store.ts.)
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.ts';

/** The path of the first string (or key) holding U+0000 in `value`, or undefined. */
export function findNul(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, v] of Object.entries(value)) {
    const at = `${path}.${key.replaceAll('\u0000', '\\0')}`;
    if (key.includes('\u0000')) return at;
    const found = findNul(v, at, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** `preValidation` hook: refuses a NUL in the path parameters, the query string or the body. */
export async function rejectNulCharacters(request: FastifyRequest): Promise<void> {
  const where =
    findNul(request.params, 'path') ?? findNul(request.query, 'query') ?? findNul(request.body, 'body');
  if (where) {
    throw new AppError(
      'invalid_request',
      `${where} contains a NUL character (U+0000), which this API does not accept.`,
    );
  }
}
