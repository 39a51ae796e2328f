/** A job's warnings as crawl jobs and sync jobs show them (src/db/repositories/job-warnings.ts). */
import { z } from 'zod';
import { JOB_WARNING_CODES } from '../../db/repositories/job-warnings.ts';

export const jobWarningSchema = z
  .object({
    code: z
      .enum(JOB_WARNING_CODES)
      .describe(
        '`sitemap_unreadable`, `sitemap_other_host` (a sitemap lists URLs of another host: ignored), ' +
          '`robots_unreadable` (5xx, 429 or no answer: the host is not crawled, as RFC 9309 asks), ' +
          '`redirect_refused` (a redirect the crawl did not follow, and why), `page_too_large` (a page cut at ' +
          'the size cap, or a PDF over it skipped), `permission_missing` (the credentials lack a permission ' +
          'at the source; what it costs is listed in `failures` too), `render_unavailable` (a crawl asked to render ' +
          'JavaScript and no browser could be started: its pages were fetched plainly), `render_failed` (a page ' +
          'could not be rendered: its fetched HTML was used), `render_blocked` (requests a rendered page made ' +
          'that the address checks refused)',
      ),
    message: z.string().describe('what happened and what to do about it, naming the URL or resource'),
    subject: z.string().describe('the URL or resource the warning is about'),
    count: z.number().describe('how many times it occurred (for `sitemap_other_host`: URLs ignored)'),
  })
  .meta({ id: 'JobWarning' });

export const jobWarningsSchema = z
  .array(jobWarningSchema)
  .describe(
    'extension: problems a person can act on that did not fail the job, at most 50 distinct entries ' +
      '(10 of one code); a repeated one counts up its entry',
  );
