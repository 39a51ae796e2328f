import { z } from 'zod';
import { updateItems } from '../../db/repositories/items.ts';
import { AppError } from '../../lib/errors.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, nonBlankText, tagsSchema, visibilitySchema } from '../schemas.ts';

const entrySchema = z.strictObject({
  id: z.string().min(1).max(200),
  title: nonBlankText(1000),
  tags: tagsSchema.optional().describe("extension: replaces the item's tags"),
  visibility: visibilitySchema.optional().describe('extension'),
});

const bodySchema = z.array(entrySchema).min(1).max(1000);

/** Endpoint 9: rename items (and, as an extension, retag them or change visibility). */
export function register(app: App, deps: RouteDeps): void {
  app.put(
    '/api/connect/knowledgebase-items',
    {
      bodyLimit: deps.config.KB_BULK_BODY_LIMIT_BYTES,
      schema: {
        tags: ['knowledge base'],
        summary: 'Update knowledge base items',
        description:
          'Each id at most once per request (400 otherwise; JSON Schema `uniqueItems` compares whole entries, so ' +
          'the document cannot say it). Ids of no item of the organization are listed in `notFound`.',
        body: bodySchema,
        response: {
          200: z.object({ success: z.boolean(), updated: z.number(), notFound: z.array(z.string()) }),
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const ids = request.body.map((e) => e.id);
      if (new Set(ids).size !== ids.length) {
        throw new AppError('invalid_request', 'Each id may appear once per request.');
      }
      const updated = await deps.db.transaction((tx) => updateItems(tx, organizationId, request.body));
      return { success: true, updated: updated.size, notFound: ids.filter((id) => !updated.has(id)) };
    },
  );
}
