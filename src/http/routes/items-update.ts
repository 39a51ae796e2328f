import { z } from 'zod';
import type { Queryable } from '../../db/database.ts';
import {
  type ItemUpdate,
  type ItemUpdateWithWords,
  readItemContents,
  updateItems,
} from '../../db/repositories/items.ts';
import { itemSearchWords, itemSearchWordsInSlices } from '../../lib/search-words.ts';
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
      // A new title changes the search words, split from title and content: before the transaction (a
      // document of millions of characters takes a large part of a second, and on PGlite an open
      // transaction holds every other organization's queries). Inside it, only the items whose content
      // changed in between are split again.
      const prepared = await withSearchWords(deps.db, organizationId, request.body, itemSearchWordsInSlices);
      const updated = await deps.db.transaction(async (tx) => {
        const done = await updateItems(tx, organizationId, prepared);
        const changed = request.body.filter((u) => !done.has(u.id));
        if (changed.length === 0) return done;
        const again = await withSearchWords(tx, organizationId, changed, async (t, c) =>
          itemSearchWords(t, c),
        );
        for (const id of await updateItems(tx, organizationId, again)) done.add(id);
        return done;
      });
      return { success: true, updated: updated.size, notFound: ids.filter((id) => !updated.has(id)) };
    },
  );
}

/** The updates of items that exist, each with the search words of its new title and its content. */
async function withSearchWords(
  q: Queryable,
  organizationId: string,
  updates: ItemUpdate[],
  split: (title: string, content: string) => Promise<string>,
): Promise<ItemUpdateWithWords[]> {
  const contents = new Map(
    (
      await readItemContents(
        q,
        organizationId,
        updates.map((u) => u.id),
      )
    ).map((r) => [r.id, r]),
  );
  const out: ItemUpdateWithWords[] = [];
  for (const u of updates) {
    const item = contents.get(u.id);
    if (item) out.push({ ...u, words: await split(u.title, item.content), contentHash: item.contentHash });
  }
  return out;
}
