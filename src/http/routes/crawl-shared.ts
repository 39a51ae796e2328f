/** The crawl job as every crawl endpoint shows it (seed "Crawl job" plus extensions), and its id param. */
import { z } from 'zod';
import { bodyInteger } from '../schemas.ts';
import { jobWarningsSchema } from './job-warnings-schema.ts';

/**
 * A crawl's pace per host, the create body's extensions. The schema bounds are the widest any operator may
 * set; the operator's bounds for the start URL's host are checked by the route (400 beyond them).
 */
export const crawlPaceSchema = {
  maxConcurrency: bodyInteger(1, 64)
    .optional()
    .describe(
      "extension: requests in flight per host at most (default the operator's KB_CRAWL_CONCURRENCY, 2; at most " +
        'KB_CRAWL_MAX_CONCURRENCY, 4, or KB_CRAWL_FAST_CONCURRENCY on hosts the operator lists in KB_CRAWL_FAST_HOSTS)',
    ),
  delayMs: bodyInteger(0, 600_000)
    .optional()
    .describe(
      "extension: ms between two request starts per host (default the operator's KB_CRAWL_DELAY_MS, 100; at least " +
        'KB_CRAWL_MIN_DELAY_MS, 50, or KB_CRAWL_FAST_DELAY_MS on fast hosts). A robots.txt Crawl-delay, when larger, wins, ' +
        'and a host answering 429/503 or slowing down gets a wider gap',
    ),
};

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
      .describe(
        'distinct pages stored so far (created, updated, retagged or unchanged): what `limit` counts; never above it',
      ),
    error_message: z.string().nullable().describe('why the job failed; null unless `failed`'),
    total_pages: z
      .number()
      .describe(
        'pages stored plus pages still queued or being fetched, never above `limit`; equal to `completed_pages` ' +
          'once the job ends',
      ),
    tenant_id: z.string().describe("the caller's organization id"),
    limit: z
      .number()
      .describe(
        'extension: the page budget: distinct pages stored at most (fetches that store nothing do not count)',
      ),
    fetched_pages: z.number().describe('extension: URLs fetched so far, whatever they yielded'),
    fetch_limit: z
      .number()
      .describe('extension: fetches at most (3 x `limit`, at least `limit` + 10); the crawl ends there'),
    includePaths: z.array(z.string()),
    excludePaths: z.array(z.string()),
    allowExternalLinks: z.boolean(),
    maxDepth: z.number().nullable().describe('extension: link depth limit; null for none'),
    tags: z.array(z.string()).describe('extension: tags given to every crawled item'),
    indexListPages: z
      .boolean()
      .describe(
        'extension: pages that are lists of links are searchable too (false: stored and listed, not chunked)',
      ),
    maxConcurrency: z
      .number()
      .nullable()
      .describe("extension: requests in flight per host the crawl asked for; null: the host's default"),
    delayMs: z
      .number()
      .nullable()
      .describe(
        "extension: ms between request starts per host the crawl asked for; null: the host's default",
      ),
    outcomes: z
      .record(z.string(), z.number())
      .describe(
        "extension: finished pages by outcome: `created`, `updated`, `retagged` (same content, this crawl's tags added), " +
          '`unchanged` (same content or 304, tags too), `removed` ' +
          '(404/410, item deleted), `gone`, `duplicate`, `near_duplicate`, `canonical` (its rel=canonical URL is the page ' +
          'stored), `not_html`, `noindex`, `empty`, `tombstoned`, `budget` (fetched after the limit was reached), `failed`, ' +
          '`blocked`...',
      ),
    refused: z
      .record(
        z.string(),
        z.object({
          count: z.number(),
          sample: z.array(z.string()),
          of: z
            .record(z.string(), z.string())
            .optional()
            .describe('`duplicate`, `near_duplicate`, `canonical`: the URL each example stands for'),
        }),
      )
      .describe(
        'extension, for debugging: URLs not crawled or not stored, by reason (`excluded`, `not_included`, `robots`, ' +
          '`external`, `depth`, `budget` (not reached: the limit or the fetch cap ended the crawl), `not_html`, `duplicate`, ' +
          '`near_duplicate` (text nearly the same as a stored page of the host), `canonical` (stored under its ' +
          'rel=canonical URL), `noindex`, `empty`, `too_long`, `blocked`, `failed`, `pdf_encrypted`, `pdf_unreadable`, ' +
          '`pdf_too_large`), each with a count of distinct URLs ' +
          'and a few examples. The kept item of duplicates carries a `variants:N` tag: N pages of the crawl had its text.',
      ),
    warnings: jobWarningsSchema,
    warning_count: z.number().describe('extension: warnings in all, those beyond the list included'),
  })
  .meta({ id: 'CrawlJob' });

export const crawlIdParams = z.strictObject({ id: z.string().min(1).max(200) });
