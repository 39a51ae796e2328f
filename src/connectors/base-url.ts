/**
 * Base URLs of source APIs. A connector declares a template such as `https://{subdomain}.zendesk.com`;
 * the operator may replace it (KB_<TYPE>_BASE_URL, read by the config module, never taken from a
 * request) with another template, e.g. `http://127.0.0.1:4010/{subdomain}` for a fake server.
 */
import { AppError } from '../lib/errors.ts';
import type { Query } from './types.ts';

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
/** Placeholder values end up in a host name or a path segment: only host-name characters are allowed. */
const SAFE_VALUE = /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/;

/** The `{placeholder}` names a template uses, in order of appearance. */
export function baseUrlPlaceholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!);
}

/**
 * Fills the template's `{placeholders}` from normalized credentials and returns the URL's origin plus
 * path prefix without a trailing slash (`https://acme.zendesk.com`, `http://127.0.0.1:4010/acme`).
 * A missing or non-host-safe value, or a result that is not a plain http(s) URL, is a configuration or
 * programming error: `AppError('internal_error')`, whose message names the placeholder, never a value.
 */
export function resolveBaseUrl(template: string, creds: Record<string, unknown>): string {
  const filled = template.replace(PLACEHOLDER, (_match, name: string) => {
    const value = creds[name];
    if (typeof value !== 'string' || !SAFE_VALUE.test(value)) {
      throw new AppError(
        'internal_error',
        `The source base URL needs a host-name value for {${name}}, and the connection has none.`,
      );
    }
    return value;
  });
  let url: URL;
  try {
    url = new URL(filled);
  } catch {
    throw new AppError('internal_error', 'The source base URL is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new AppError('internal_error', 'The source base URL must use http or https.');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new AppError(
      'internal_error',
      'The source base URL must not carry user info, a query or a fragment.',
    );
  }
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/**
 * Throws `AppError('internal_error')` if an operator's template names a placeholder the connector's
 * credentials do not have. Call at start-up for each KB_<TYPE>_BASE_URL.
 */
export function assertBaseUrlTemplate(template: string, allowed: readonly string[]): void {
  for (const name of baseUrlPlaceholders(template)) {
    if (!allowed.includes(name)) {
      throw new AppError(
        'internal_error',
        `The base URL template uses {${name}}, which is not one of: ${allowed.join(', ') || '(none)'}.`,
      );
    }
  }
  // A template with every placeholder filled by a harmless value must still be a valid base URL.
  resolveBaseUrl(template, Object.fromEntries(allowed.map((name) => [name, 'x'])));
}

/**
 * `baseUrl` + `path` (which starts with `/`; already-encoded segments) + query. Keeps any path prefix
 * of the base URL, unlike `new URL(path, base)`.
 */
export function joinUrl(baseUrl: string, path: string, query?: Query): string {
  const url = new URL(baseUrl.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`));
  if (query) appendQuery(url, query);
  return url.toString();
}

/** Appends query parameters to `url` in place: arrays repeat the key, `undefined` is skipped. */
export function appendQuery(url: URL, query: Query): void {
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (const v of value) url.searchParams.append(key, String(v));
    } else {
      url.searchParams.append(key, String(value));
    }
  }
}

/** Encodes one path segment taken from data (ids), so it can never add `/`, `..` or a query. */
export function pathSegment(value: string): string {
  if (value === '.' || value === '..') return encodeURIComponent(value).replace(/\./g, '%2E');
  return encodeURIComponent(value);
}
