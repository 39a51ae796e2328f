import { z } from 'zod';
import { crawlerPaceSettings } from '../../config.ts';
import { compilePathFilters, MAX_PATH_PATTERN_LENGTH, MAX_PATH_PATTERNS } from '../../crawler/filters.ts';
import { paceBounds } from '../../crawler/settings.ts';
import { canonicalizeUrl } from '../../crawler/url.ts';
import { type CrawlOptions, getCrawlJob } from '../../db/repositories/crawl-jobs.ts';
import { enqueueCrawlJob } from '../../jobs/crawl-job.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { type App, type RouteDeps, callerOf } from '../context.ts';
import { bodyInteger, commonErrors, httpUrl, tagsSchema } from '../schemas.ts';
import { crawlJobSchema, crawlPaceSchema } from './crawl-shared.ts';

const DEFAULT_LIMIT = 100;

const patternsSchema = z
  .array(z.string().min(1).max(MAX_PATH_PATTERN_LENGTH))
  .max(MAX_PATH_PATTERNS)
  .default([]);

function bodySchema(maxLimit: number) {
  return z.strictObject({
    url: httpUrl(2000).describe('start URL (required): absolute http or https, at most 2,000 characters'),
    limit: bodyInteger(1, maxLimit)
      .default(Math.min(DEFAULT_LIMIT, maxLimit))
      .describe(
        `page budget: distinct pages stored at most (default ${DEFAULT_LIMIT}, at most ${maxLimit}); fetches that ` +
          'store nothing (404, non-HTML, duplicate, near-duplicate, noindex) do not count, and 3 x limit fetches end the crawl',
      ),
    excludePaths: patternsSchema.describe(
      'regular expressions (RE2 syntax) on the URL path; a matching page is skipped (wins over includes). A pattern that does not compile as RE2 is refused (400).',
    ),
    includePaths: patternsSchema.describe(
      'regular expressions (RE2 syntax) on the URL path; when given, only matching pages are kept. A pattern that does not compile as RE2 is refused (400).',
    ),
    allowExternalLinks: z
      .boolean()
      .default(false)
      .describe("follow links to other sites (default false: only the start URL's site)"),
    maxDepth: bodyInteger(0, 1000)
      .optional()
      .describe(
        'extension: link depth from the start URL (0: the start page only); when set, sitemaps are not read',
      ),
    tags: tagsSchema
      .default([])
      .describe(
        'extension: tags added to every crawled item; an item reached by several crawls carries all their tags, and ' +
          "a crawl removes none (a user's stay until a user changes them)",
      ),
    indexListPages: z
      .boolean()
      .default(false)
      .describe(
        'extension: make pages that are lists of links (indexes, tables of contents, sitemaps, tag pages: most of their ' +
          'text in links, little text a link) searchable too. By default they are stored and listed, and their links ' +
          'followed, but they are not chunked for search, where they would outrank the pages they list',
      ),
    ...crawlPaceSchema,
  });
}

/**
 * Endpoint 6: queue a crawl. Answers the job in `idle` at once; a worker moves it to `scraping` and on to
 * `completed`, `failed` or `cancelled`.
 */
export function register(app: App, deps: RouteDeps): void {
  app.post(
    '/api/connect/crawling/',
    {
      schema: {
        tags: ['crawl jobs'],
        summary: 'Create a web crawl job',
        description:
          "Crawls the site of `url` (robots.txt, sitemaps and links; polite per host), storing each page's main " +
          'content as a `crawl` item as it arrives. `limit` counts distinct pages stored and is exact; near-duplicate ' +
          'pages collapse into the page they repeat, rel=canonical and robots noindex are honoured. Private, loopback and ' +
          'link-local targets are refused unless the operator sets KB_CRAWL_ALLOW_PRIVATE. Crawling a URL again ' +
          'updates its item, leaves unchanged pages alone and removes pages that now answer 404/410. includePaths and ' +
          'excludePaths are RE2 patterns, which JSON Schema cannot check: one that does not compile is refused (400).',
        body: bodySchema(deps.config.KB_CRAWL_MAX_LIMIT),
        response: { 200: crawlJobSchema, ...commonErrors },
      },
    },
    async (request) => {
      const { organizationId } = callerOf(request);
      const b = request.body;
      const url = canonicalizeUrl(b.url);
      if (!url || !/^https?:\/\//i.test(b.url)) {
        throw new AppError('invalid_request', 'body.url: must be an absolute http or https URL.', {
          field: 'url',
        });
      }
      // Invalid patterns are a 400 naming the pattern (compilePathFilters throws it).
      compilePathFilters(b.includePaths, b.excludePaths);
      checkPace(b, new URL(url).hostname, deps);
      const options: CrawlOptions = {
        includePaths: b.includePaths,
        excludePaths: b.excludePaths,
        allowExternalLinks: b.allowExternalLinks,
        ...(b.maxDepth !== undefined ? { maxDepth: b.maxDepth } : {}),
        tags: [...new Set(b.tags)],
        ...(b.maxConcurrency !== undefined ? { maxConcurrency: b.maxConcurrency } : {}),
        ...(b.delayMs !== undefined ? { delayMs: b.delayMs } : {}),
        ...(b.indexListPages ? { indexListPages: true } : {}),
      };
      const id = newId();
      const job = await deps.db.transaction(async (tx) => {
        await enqueueCrawlJob(tx, { id, organizationId, url, limit: b.limit, options });
        return getCrawlJob(tx, organizationId, id);
      });
      deps.jobs.wake();
      return job!;
    },
  );
}

/** A pace outside the operator's bounds for the start URL's host is a 400 naming the field and the bound. */
function checkPace(
  b: { maxConcurrency?: number | undefined; delayMs?: number | undefined },
  hostname: string,
  deps: RouteDeps,
): void {
  const bounds = paceBounds(hostname, crawlerPaceSettings(deps.config));
  const where = bounds.fast ? `on ${hostname} (a fast host)` : 'on this service';
  if (b.maxConcurrency !== undefined && b.maxConcurrency > bounds.maxConcurrency) {
    throw new AppError(
      'invalid_request',
      `body.maxConcurrency: at most ${bounds.maxConcurrency} ${where} (the operator's KB_CRAWL_${bounds.fast ? 'FAST' : 'MAX'}_CONCURRENCY).`,
      { field: 'maxConcurrency' },
    );
  }
  if (b.delayMs !== undefined && (b.delayMs < bounds.minDelayMs || b.delayMs > bounds.maxDelayMs)) {
    throw new AppError(
      'invalid_request',
      `body.delayMs: from ${bounds.minDelayMs} to ${bounds.maxDelayMs} ${where} (the operator's ` +
        `KB_CRAWL_${bounds.fast ? 'FAST_DELAY_MS' : 'MIN_DELAY_MS'} and KB_CRAWL_MAX_CRAWL_DELAY_MS).`,
      { field: 'delayMs' },
    );
  }
}
