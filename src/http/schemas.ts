import { z } from 'zod';

/** `{ "error", "message" }`: the one error shape of every response (API.md "Errors"). */
export const errorBodySchema = z.object({ error: z.string(), message: z.string() }).meta({
  id: 'Error',
  description: 'Every error response: a code from a closed set and a sentence a person can act on.',
});

/** Standard error responses to list on every authenticated route in the OpenAPI document. */
export const commonErrors = {
  400: errorBodySchema,
  401: errorBodySchema,
  413: errorBodySchema,
  415: errorBodySchema,
  429: errorBodySchema,
  500: errorBodySchema,
} as const;

export const paginationSchema = z
  .object({
    current_page: z.number(),
    total_pages: z.number(),
    total_items: z.number(),
    items_per_page: z.number(),
    has_next_page: z.boolean(),
    has_previous_page: z.boolean(),
  })
  .meta({ id: 'Pagination' });

export function paginate(total: number, page: number, perPage: number): z.infer<typeof paginationSchema> {
  const totalPages = Math.ceil(total / perPage);
  return {
    current_page: page,
    total_pages: totalPages,
    total_items: total,
    items_per_page: perPage,
    has_next_page: page < totalPages,
    has_previous_page: page > 1,
  };
}

/**
 * A whole number from `min` to `max` in a JSON body. The range is checked before integrality, so an
 * absurd value (`1e308`) is answered with the real bounds rather than JavaScript's safe-integer limit.
 */
export function bodyInteger(min: number, max: number) {
  return z.number().min(min).max(max).int();
}

/**
 * The same in a query string: digits only, so an empty `?offset=` is an error rather than 0. The
 * document declares it as what it is, an integer from `min` to `max` (a query value is text on the wire;
 * OpenAPI's integer parameters are written as digits).
 */
export function queryInteger(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,15}$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().min(min).max(max).int())
    .meta({ type: 'integer', minimum: min, maximum: max, pattern: undefined });
}

/**
 * An absolute http(s) URL as the API takes it (RFC 3986, ASCII): scheme, a host (a name whose last label
 * starts with a letter, an IPv4 address dotted or as one number, or an IPv6 literal), an optional port,
 * then path, query and fragment of URI characters, anything else percent-encoded; no user info. Every
 * value the pattern matches is one the URL parser takes, so the pattern is the whole rule: declared in
 * the document (`format: uri` plus the pattern) and checked as declared, and a value valid by the
 * document is one the service takes, and the other way round.
 */
const URI_CHARS = "(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9._~!$&'()*+,;=:@/?-])*";
const IPV4_PART = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `${IPV4_PART}(?:\\.${IPV4_PART}){3}`;
// One number (the WHATWG parser reads `http://2130706433/` as 127.0.0.1): below 2^32, no leading zero.
const IPV4_NUMBER = '(?:0|[1-9][0-9]{0,8}|[1-3][0-9]{9}|4[01][0-9]{8})';
const H16 = '[0-9A-Fa-f]{1,4}';
const LS32 = `(?:${H16}:${H16}|${IPV4})`;
const IPV6 = [
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `(?:${H16})?::(?:${H16}:){4}${LS32}`,
  `(?:(?:${H16}:){0,1}${H16})?::(?:${H16}:){3}${LS32}`,
  `(?:(?:${H16}:){0,2}${H16})?::(?:${H16}:){2}${LS32}`,
  `(?:(?:${H16}:){0,3}${H16})?::${H16}:${LS32}`,
  `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
  `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
  `(?:(?:${H16}:){0,6}${H16})?::`,
].join('|');
const HOST = `(?:(?:[A-Za-z0-9-]+\\.)*[A-Za-z][A-Za-z0-9-]*|${IPV4}|${IPV4_NUMBER}|\\[(?:${IPV6})\\])`;
const PORT = '(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?';
const HTTP_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?://${HOST}${PORT}(?:[/?]${URI_CHARS})?(?:#${URI_CHARS})?$`;
const httpUrlRegex = new RegExp(HTTP_URL_PATTERN);

export function httpUrl(maxLength: number) {
  return z
    .string()
    .max(maxLength)
    .regex(httpUrlRegex, 'must be an absolute http or https URL (RFC 3986: percent-encode other characters)')
    .meta({ format: 'uri' });
}

/** JavaScript's whitespace (what `String.prototype.trim` removes), as a regex character class body. */
const JS_SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * Text with something besides whitespace, trimmed, at most `max` characters once trimmed. The document
 * says "not blank" as a pattern (one character that is neither whitespace nor NUL, the text rule kept).
 */
export function nonBlankText(max: number) {
  return z
    .string()
    .trim()
    .min(1, 'must not be empty or only whitespace')
    .max(max)
    .meta({ pattern: `^[^\\u0000]*[^\\u0000${JS_SPACE}][^\\u0000]*$` });
}

export const visibilitySchema = z.enum(['public', 'private']);
export const tagSchema = nonBlankText(100);
export const tagsSchema = z.array(tagSchema).max(50);

export const itemSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    visibility: z.string().describe('`public` or `private`'),
    source_type: z.string().describe('`integration`, `crawl` or `upload`'),
    source_table_name: z
      .string()
      .describe('`<type>_<object>` for integrations, `crawled_pages`, `uploaded_documents`'),
    source_url: z.string(),
    tags: z.array(z.string()),
    indexing_status: z
      .string()
      .describe('`pending` until the chunks are embedded, then `indexed` (or `failed`)'),
    created_at: z.string().describe('ISO 8601 UTC'),
    updated_at: z.string().describe('ISO 8601 UTC'),
  })
  .meta({ id: 'KnowledgeBaseItem' });

/**
 * The credential fields' rules (src/connectors/normalize.ts) as JSON Schema patterns, so that the
 * document accepts exactly what the connectors accept: surrounding whitespace is trimmed, host names
 * are case-insensitive and may end in a dot. Each pattern is written for both ECMAScript and Python
 * regular expressions (no `\s`, whose sets differ; `\uXXXX` escapes only). The host patterns cover ASCII
 * names; a name in another script is also taken, converted to its ASCII (IDNA) form, which no pattern
 * can state: the field's description says so.
 */
const WS = `[${JS_SPACE}]*`;
/** One DNS label: letters, digits and inner hyphens, at most 63 characters. */
const DNS_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** `example.com` as a case-insensitive pattern. */
const anyCase = (text: string) =>
  [...text].map((c) => (/[a-z]/.test(c) ? `[${c.toUpperCase()}${c}]` : c.replace(/[.]/g, '\\.'))).join('');

export const credentialPatterns = {
  /** normalizeToken: 1 to 4096 characters once trimmed, none of them whitespace or a control character. */
  token: `^${WS}[^\\u0000-\\u001f\\u007f${JS_SPACE}]{1,4096}${WS}$`,
  /** normalizeEmail: an address as zod's `z.email()` takes it, once trimmed. */
  email: `^${WS}(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}${WS}$`,
  /** normalizeId: letters, digits, `_` and `-`, 1 to 200 of them once trimmed. */
  id: `^${WS}[A-Za-z0-9_-]{1,200}${WS}$`,
  /** normalizeTenantLabel: the account name, or its host name under the vendor's domain. */
  tenantLabel: (vendorDomain: string) => `^${WS}${DNS_LABEL}(?:\\.${anyCase(vendorDomain)})?\\.?${WS}$`,
  /**
   * normalizeSiteHost: a host name of DNS labels, at most 253 characters, whose last label is not a
   * number (that would be an IPv4 address); a single label means one under the default domain.
   */
  siteHost: `^${WS}(?=[A-Za-z0-9.-]{1,253}\\.?${WS}$)(?:${DNS_LABEL}|(?:${DNS_LABEL}\\.)+(?![0-9]+\\.?${WS}$)(?!0[Xx][0-9A-Fa-f]*\\.?${WS}$)${DNS_LABEL})\\.?${WS}$`,
} as const;
