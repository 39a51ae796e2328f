/**
 * Normalization of credential input values. Host-like values decide where the service sends the user's
 * credentials, so anything that is not a plain name or host name (scheme, path, port, user info, IP
 * literal) is refused here, before the outbound guard ever sees it.
 */
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { AppError } from '../lib/errors.ts';

/** One DNS label: letters, digits and inner hyphens, at most 63 characters. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const emailSchema = z.email();

function invalid(field: string, message: string): AppError {
  return new AppError('invalid_request', `source.${field} ${message}`, { field: `source.${field}` });
}

/** Why `value` is not a bare host name, or undefined when it has none of the refused parts. */
function structuralProblem(value: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) || value.startsWith('//'))
    return 'must not include a scheme (https://)';
  if (value.includes('@')) return 'must not include user info';
  if (/[/?#\\]/.test(value)) return 'must not include a path, query or fragment';
  if (value.includes('[') || value.includes(']')) return 'must not be an IP address';
  if (value.includes(':')) return 'must not include a port';
  return undefined;
}

/** True for IP literals, including the numeric forms a URL parser turns into IPv4 (`127.1`, `0x7f.1`). */
function looksLikeIp(host: string): boolean {
  if (ipaddr.isValid(host)) return true;
  const last = host.split('.').filter(Boolean).at(-1) ?? '';
  return /^\d+$/.test(last) || /^0x[0-9a-f]*$/i.test(last);
}

/** Lower-cases, trims, removes one trailing dot and converts an internationalized name to ASCII. */
function toAsciiHost(field: string, raw: string): string {
  let value = raw.trim().toLowerCase();
  if (!value) throw invalid(field, 'must not be empty.');
  // Checked first so that `::1` is called an IP address rather than a value with a port. A bare label
  // (no dot) is never an address here: it gets the vendor's domain appended.
  if (/[.:]/.test(value) && ipaddr.isValid(value.replace(/^\[|\]$/g, '')))
    throw invalid(field, 'must be a host name, not an IP address.');
  const problem = structuralProblem(value);
  if (problem) throw invalid(field, `${problem}; give the host name only.`);
  if (value.endsWith('.')) value = value.slice(0, -1);
  if (value.includes('.') && looksLikeIp(value))
    throw invalid(field, 'must be a host name, not an IP address.');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is the point: only ASCII passes unchanged
  if (/[^\x00-\x7f]/.test(value)) {
    const ascii = domainToASCII(value);
    if (!ascii) throw invalid(field, 'is not a valid host name.');
    value = ascii;
  }
  return value;
}

function isHostName(host: string): boolean {
  if (host.length > 253) return false;
  const labels = host.split('.');
  return labels.every((label) => LABEL.test(label));
}

/**
 * A tenant name that is the leading label of a vendor host: accepts `acme` or `acme.<vendorDomain>`
 * (any case, trailing dot) and returns `acme`. Used for Zendesk `subdomain` and Shopify `shop`.
 */
export function normalizeTenantLabel(field: string, raw: string, vendorDomain: string): string {
  const host = toAsciiHost(field, raw);
  const suffix = `.${vendorDomain}`;
  const label = host.endsWith(suffix) ? host.slice(0, -suffix.length) : host;
  if (!LABEL.test(label)) {
    throw invalid(
      field,
      `must be the account name (letters, digits and hyphens) or its host name, such as acme or acme${suffix}.`,
    );
  }
  return label;
}

/**
 * A site host name: a bare name means `<name>.<defaultDomain>` (`acme` → `acme.atlassian.net`); a full
 * host name (a custom domain included) is kept as given, lower-cased and in ASCII.
 */
export function normalizeSiteHost(field: string, raw: string, defaultDomain: string): string {
  const host = toAsciiHost(field, raw);
  const full = host.includes('.') ? host : `${host}.${defaultDomain}`;
  if (!isHostName(full)) {
    throw invalid(field, `must be a host name such as acme.${defaultDomain} (or just acme).`);
  }
  return full;
}

/** An e-mail address, trimmed; it must look like one. */
export function normalizeEmail(field: string, raw: string): string {
  const value = raw.trim();
  if (!value) throw invalid(field, 'must not be empty.');
  if (!emailSchema.safeParse(value).success) throw invalid(field, 'must be an e-mail address.');
  return value;
}

/**
 * A token or key, trimmed. Must be non-empty, without whitespace or control characters (which can only
 * be a copy-and-paste accident and would break the HTTP header), and of sane length.
 */
export function normalizeToken(field: string, raw: string): string {
  const value = raw.trim();
  if (!value) throw invalid(field, 'must not be empty.');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\s\x00-\x1f\x7f]/.test(value)) throw invalid(field, 'must not contain spaces or control characters.');
  if (value.length > 4096) throw invalid(field, 'is too long.');
  return value;
}

/** An identifier that becomes a URL path segment: letters, digits, `_` and `-` only. */
export function normalizeId(field: string, raw: string): string {
  const value = raw.trim();
  if (!value) throw invalid(field, 'must not be empty.');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(value)) {
    throw invalid(field, 'must contain only letters, digits, underscores and hyphens.');
  }
  return value;
}
