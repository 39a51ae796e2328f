import { z } from 'zod';
import { queryItems } from '../../db/repositories/items.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { bodyInteger, commonErrors, itemSchema, paginate, paginationSchema } from '../schemas.ts';

const bodySchema = z.strictObject({
  limit: bodyInteger(1, 100).default(20).describe('page size, 1-100 (default 20)'),
  page: bodyInteger(1, 1_000_000).default(1).describe('page number from 1 (default 1)'),
  search: z
    .string()
    .max(500)
    .optional()
    .describe(
      'case-insensitive match on title and content: the item contains the search text and every word of it ' +
        'begins a word of the item (a word finds longer words it begins; several words match as a phrase, ' +
        'the last a prefix; the inside of a word does not match). %, _, \\ and quotes are ordinary characters',
    ),
});

/** Endpoint 8: the organization's items, newest first, paged, optionally filtered by a search string. */
export function register(app: App, deps: RouteDeps): void {
  app.post(
    '/api/connect/knowledgebase-items/query',
    {
      schema: {
        tags: ['knowledge base'],
        summary: 'Query knowledge base items',
        body: bodySchema,
        response: {
          200: z.object({ items: z.array(itemSchema), pagination: paginationSchema }),
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const { limit, page, search } = request.body;
      const trimmed = search?.trim();
      const { items, total } = await queryItems(deps.db, organizationId, {
        limit,
        page,
        search: trimmed || undefined,
      });
      return { items, pagination: paginate(total, page, limit) };
    },
  );
}
