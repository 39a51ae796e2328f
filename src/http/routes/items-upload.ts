import { z } from 'zod';
import { getItem } from '../../db/repositories/items.ts';
import { documentSearchWords, storeDocument } from '../../ingest/hash-skip.ts';
import { newId } from '../../lib/ids.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { commonErrors, httpUrl, nonBlankText, itemSchema, tagsSchema, visibilitySchema } from '../schemas.ts';

const bodySchema = z.strictObject({
  title: nonBlankText(1000),
  content: z.string().min(1).max(5_000_000).describe('markdown or plain text'),
  source_url: httpUrl(2000).optional().describe('absolute http or https URL the document came from'),
  tags: tagsSchema.default([]),
  visibility: visibilitySchema.default('public'),
});

/**
 * Extension: push a document of your own. Answers at once with the item in `indexing_status: pending`;
 * the indexer embeds it off the request path and it becomes searchable when its chunks land.
 */
export function register(app: App, deps: RouteDeps): void {
  app.post(
    '/api/connect/knowledgebase-items',
    {
      bodyLimit: deps.config.KB_BULK_BODY_LIMIT_BYTES,
      schema: {
        tags: ['knowledge base'],
        summary: 'Upload a document (extension)',
        body: bodySchema,
        response: { 200: z.object({ success: z.boolean(), item: itemSchema }), ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const b = request.body;
      const searchWords = await documentSearchWords({ title: b.title, markdown: b.content });
      // The same store step as synced and crawled documents, under a key of its own (every upload is new).
      // A document of up to 5,000,000 characters takes PGlite a second or more to write: other requests
      // are served meanwhile (this request's state is its own).
      const item = await deps.db.transaction(
        async (tx) => {
          const { itemId } = await storeDocument(
            tx,
            organizationId,
            {
              sourceType: 'upload',
              sourceTableName: 'uploaded_documents',
              sourceKey: `upload:${newId()}`,
              title: b.title,
              markdown: b.content,
              searchWords,
              url: b.source_url ?? '',
              visibility: b.visibility,
              tags: b.tags,
            },
            { respectTombstones: false },
          );
          return (await getItem(tx, organizationId, itemId!))!;
        },
        { yieldOnLargeStatements: true },
      );
      deps.itemsChanged();
      return { success: true, item };
    },
  );
}
