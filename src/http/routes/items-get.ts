import { z } from 'zod';
import { getItemWithContent } from '../../db/repositories/items.ts';
import { AppError } from '../../lib/errors.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, errorBodySchema, itemSchema } from '../schemas.ts';

const paramsSchema = z.strictObject({ id: z.string().min(1).max(200) });

const itemWithContentSchema = itemSchema
  .extend({ content: z.string().describe('the full text (markdown or plain text) the item was stored with') })
  .meta({ id: 'KnowledgeBaseItemWithContent' });

/**
 * Extension: one item with its full text. Search answers chunks and the query answers metadata; this is
 * how a caller (the MCP server's `get_item`, the console) reads the whole document. Other organizations'
 * ids are not found.
 */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/api/connect/knowledgebase-items/:id',
    {
      schema: {
        tags: ['knowledge base'],
        summary: 'Get an item with its content (extension)',
        params: paramsSchema,
        querystring: z.strictObject({}),
        response: { 200: z.object({ item: itemWithContentSchema }), 404: errorBodySchema, ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const item = await getItemWithContent(deps.db, organizationId, request.params.id);
      if (!item) throw new AppError('not_found', 'No item with this id exists in this organization.');
      return { item };
    },
  );
}
