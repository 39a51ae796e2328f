/** The crawl job as every crawl endpoint shows it (seed "Crawl job" plus extensions), and its id param. */
import { z } from 'zod';

export const crawlJobSchema = z
  .object({
    id: z.string().describe('job identifier'),
    service_project_id: z.string().describe("the owning project: the caller's organization id"),
    url: z.string().describe('the crawled start URL'),
    status: z.enum(['idle', 'scraping', 'completed', 'failed', 'cancelled']),
    created_at: z.string().describe('ISO 8601 UTC'),
    updated_at: z.string().describe('ISO 8601 UTC'),
    completed_at: z
      .string()
      .nullable()
      .describe('ISO 8601 UTC when the job ended (completed, failed or cancelled); null before'),
    completed_pages: z
      .number()
      .describe('admitted pages finished (stored, unchanged, removed, skipped or failed)'),
    error_message: z.string().nullable().describe('why the job failed; null unless `failed`'),
    total_pages: z.number().describe('pages discovered and admitted so far; never above `limit`'),
    tenant_id: z.string().describe("the caller's organization id"),
    limit: z.number().describe('extension: the page budget'),
    includePaths: z.array(z.string()),
    excludePaths: z.array(z.string()),
    allowExternalLinks: z.boolean(),
    maxDepth: z.number().nullable().describe('extension: link depth limit; null for none'),
    tags: z.array(z.string()).describe('extension: tags given to every crawled item'),
    outcomes: z
      .record(z.string(), z.number())
      .describe(
        'extension: finished pages by outcome: `created`, `updated`, `unchanged` (same content or 304), `removed` ' +
          '(404/410, item deleted), `gone`, `duplicate`, `not_html`, `noindex`, `empty`, `tombstoned`, `failed`, `blocked`...',
      ),
    refused: z
      .record(z.string(), z.object({ count: z.number(), sample: z.array(z.string()) }))
      .describe(
        'extension, for debugging: URLs not crawled or not stored, by reason (`excluded`, `not_included`, `robots`, ' +
          '`external`, `depth`, `budget`, `not_html`, `duplicate`, `noindex`, `empty`, `too_long`, `blocked`, `failed`), each with a count ' +
          'of distinct URLs and a few examples',
      ),
  })
  .meta({ id: 'CrawlJob' });

export const crawlIdParams = z.strictObject({ id: z.string().min(1).max(200) });
