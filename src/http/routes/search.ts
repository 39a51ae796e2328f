import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { search } from '../../search/search.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import {
  bodyInteger,
  commonErrors,
  errorBodySchema,
  nonBlankText,
  tagSchema,
  visibilitySchema,
} from '../schemas.ts';

const bodySchema = z.strictObject({
  query: nonBlankText(2000).describe('search text (required, at most 2,000 characters)'),
  limit: bodyInteger(1, 100).default(10).describe('maximum number of results, 1-100 (default 10)'),
  tenantId: z.string().max(200).optional().describe("optional; must be the caller's organization id"),
  tags: z
    .array(tagSchema)
    .max(50)
    .optional()
    .describe('an item matches when it carries at least one of these tags'),
  cosineDistanceThreshold: z
    .number()
    .min(0)
    .max(2)
    .optional()
    .describe('only chunks at most this cosine distance away'),
  mode: z
    .enum(['semantic', 'hybrid', 'keyword'])
    .default('semantic')
    .describe('extension: `semantic` (default), `hybrid` (vector + keyword ranks fused), `keyword`'),
  visibility: z.array(visibilitySchema).max(2).optional().describe('extension: filter on item visibility'),
  sourceTypes: z
    .array(z.enum(['integration', 'crawl', 'upload']))
    .max(3)
    .optional()
    .describe('extension'),
  includeEmbedding: z.boolean().default(true).describe('extension: false leaves `embedding` out of the hits'),
  maxPerItem: bodyInteger(1, 100)
    .optional()
    .describe(
      'extension: at most this many hits per item (1: one passage per page, the best); fewer than `limit` hits only when fewer items match',
    ),
});

const resultSchema = z
  .object({
    title: z.string(),
    source_url: z.string(),
    visibility: z.string(),
    distance: z.number().describe('cosine distance between the query and the chunk (0 = same direction)'),
    chunk_index: z.number(),
    chunk_plain_text: z.string(),
    source_type: z.string(),
    source_table_name: z.string(),
    embedding: z
      .string()
      .optional()
      .describe("the chunk's vector in pgvector's text form, `[0.0123,-0.0456,...]`"),
    item_id: z.string(),
    tags: z.array(z.string()),
  })
  .meta({ id: 'SearchResult' });

/** Endpoint 7: embed the query, then one SQL statement over the HNSW index (plus keyword ranks for hybrid). */
export function register(app: App, deps: RouteDeps): void {
  app.post(
    '/api/consume/search',
    {
      schema: {
        tags: ['search'],
        summary: 'Semantic search of knowledge base items',
        body: bodySchema,
        response: {
          200: z.object({ result: z.array(resultSchema) }),
          ...commonErrors,
          403: errorBodySchema,
          503: errorBodySchema,
        },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const b = request.body;
      if (b.tenantId !== undefined && b.tenantId !== organizationId) {
        throw new AppError('forbidden', 'tenantId must be your own organization id (or left out).');
      }
      const embedder = deps.embedder();
      if (!embedder)
        throw new AppError('unavailable', 'The embedding model is not loaded yet; try again shortly.');
      const vector = await embedder.embedQuery(b.query);
      const result = await search(
        deps.db,
        {
          organizationId,
          vector,
          text: b.query,
          limit: b.limit,
          mode: b.mode,
          tags: b.tags,
          visibility: b.visibility,
          sourceTypes: b.sourceTypes,
          cosineDistanceThreshold: b.cosineDistanceThreshold,
          includeEmbedding: b.includeEmbedding,
          maxPerItem: b.maxPerItem,
        },
        embedder.dimensions,
      );
      return { result };
    },
  );
}
