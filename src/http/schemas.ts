import { z } from 'zod';

/** `{ "error", "message" }`: the one error shape of every response (API.md "Errors"). */
export const errorBodySchema = z
  .object({ error: z.string(), message: z.string() })
  .meta({ id: 'Error', description: 'Every error response: a code from a closed set and a sentence a person can act on.' });

export const successSchema = z.object({ success: z.boolean() });

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

/** The same in a query string: digits only, so an empty `?offset=` is an error rather than 0. */
export function queryInteger(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,15}$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().min(min).max(max).int());
}

export const visibilitySchema = z.enum(['public', 'private']);
export const tagSchema = z.string().trim().min(1).max(100);
export const tagsSchema = z.array(tagSchema).max(50);

export const itemSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    visibility: z.string().describe('`public` or `private`'),
    source_type: z.string().describe('`integration`, `crawl` or `upload`'),
    source_table_name: z.string().describe('`<type>_<object>` for integrations, `crawled_pages`, `uploaded_documents`'),
    source_url: z.string(),
    tags: z.array(z.string()),
    indexing_status: z.string().describe('`pending` until the chunks are embedded, then `indexed` (or `failed`)'),
    created_at: z.string().describe('ISO 8601 UTC'),
    updated_at: z.string().describe('ISO 8601 UTC'),
  })
  .meta({ id: 'KnowledgeBaseItem' });
