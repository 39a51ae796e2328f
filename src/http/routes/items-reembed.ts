import { z } from 'zod';
import { markItemsForReembedding } from '../../db/repositories/item-reembed.ts';
import { AppError } from '../../lib/errors.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, errorBodySchema } from '../schemas.ts';

/**
 * Extension: re-embed the organization's items with the service's model. Answers at once with how many
 * items are now pending; `GET /api/connect/knowledgebase-items/stats` shows them drain (`kb reembed`
 * follows it). Changing the model itself is an operator's offline step (`kb reembed-local`), since the
 * service refuses to start on vectors of another model.
 */
export function register(app: App, deps: RouteDeps): void {
  app.post(
    '/api/connect/knowledgebase-items/reembed',
    {
      schema: {
        tags: ['knowledge base'],
        summary: 'Re-embed every item (extension)',
        description:
          "Marks every item of the caller's organization `pending`; the indexer chunks and embeds each again " +
          'with the configured model, and search keeps serving its old chunks until the new ones replace them. ' +
          '503 when this service has no embedding model loaded (nothing would embed them).',
        body: z.strictObject({}).optional(),
        response: {
          200: z.object({
            success: z.boolean(),
            marked: z.number().describe('Items set pending by this call'),
            pending: z
              .number()
              .describe("The organization's items now waiting for the indexer (marked + already pending)"),
          }),
          503: errorBodySchema,
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      if (!deps.embedder()) {
        throw new AppError(
          'unavailable',
          'The embedding model is not loaded, so nothing would re-embed the items; try again when /readyz is ready.',
        );
      }
      const counts = await deps.db.transaction((tx) => markItemsForReembedding(tx, organizationId));
      deps.itemsChanged();
      return { success: true, ...counts };
    },
  );
}
