-- Every page of a crawl's budget buys distinct content.
--
-- `page_limit` now bounds the pages stored (`stored_pages`: created, updated or unchanged), not the URLs
-- admitted: fetches that store nothing (404, non-HTML, duplicate, near-duplicate, noindex, canonical
-- elsewhere) do not use it up. `fetch_limit` bounds the fetches (`fetched_pages`, counted when a URL is
-- claimed). The frontier admits more URLs than the limit (`admitted_pages`, was total_pages) so it has
-- something to choose from; `settled_pages` (was completed_pages) counts the admitted ones done.
ALTER TABLE crawl_jobs RENAME COLUMN total_pages TO admitted_pages;
ALTER TABLE crawl_jobs RENAME COLUMN completed_pages TO settled_pages;
-- Was total_pages <= page_limit; the frontier's own bound is the crawler's (src/crawler/settings.ts).
ALTER TABLE crawl_jobs DROP CONSTRAINT crawl_jobs_check;
ALTER TABLE crawl_jobs ADD CONSTRAINT crawl_jobs_admitted_pages_check CHECK (admitted_pages >= 0);
ALTER TABLE crawl_jobs ADD COLUMN stored_pages integer NOT NULL DEFAULT 0;
ALTER TABLE crawl_jobs ADD COLUMN fetched_pages integer NOT NULL DEFAULT 0;
ALTER TABLE crawl_jobs ADD COLUMN fetch_limit integer;
UPDATE crawl_jobs SET
  stored_pages = LEAST(page_limit, COALESCE((outcomes->>'created')::int, 0)
    + COALESCE((outcomes->>'updated')::int, 0) + COALESCE((outcomes->>'unchanged')::int, 0)),
  fetched_pages = settled_pages,
  fetch_limit = GREATEST(3 * page_limit, page_limit + 10, settled_pages);
ALTER TABLE crawl_jobs ALTER COLUMN fetch_limit SET NOT NULL;
ALTER TABLE crawl_jobs ADD CONSTRAINT crawl_jobs_stored_pages_check CHECK (stored_pages BETWEEN 0 AND page_limit);
ALTER TABLE crawl_jobs ADD CONSTRAINT crawl_jobs_fetched_pages_check CHECK (fetched_pages BETWEEN 0 AND fetch_limit);

-- The frontier is worked off by priority (lower first; src/crawler/patterns.ts): 4 x depth, + 2 unless
-- the URL came from a sitemap, + 1 when it has a query, + a large push-back while its URL pattern keeps
-- producing duplicates.
ALTER TABLE crawl_frontier ADD COLUMN priority integer NOT NULL DEFAULT 0;
-- The URL's shape (src/crawler/patterns.ts): host, first path segment, segment count, query names.
ALTER TABLE crawl_frontier ADD COLUMN pattern text NOT NULL DEFAULT '';
UPDATE crawl_frontier SET priority = 4 * depth + 2 WHERE state = 'queued';
DROP INDEX crawl_frontier_queue_idx;
CREATE INDEX crawl_frontier_queue_idx ON crawl_frontier (crawl_job_id, priority, seq) WHERE state = 'queued';
CREATE INDEX crawl_frontier_pattern_idx ON crawl_frontier (crawl_job_id, pattern) WHERE state = 'queued';

-- Per URL pattern of a crawl: pages fetched, how many collapsed (duplicate, near-duplicate, canonical
-- elsewhere), and whether its queued URLs are pushed back for it.
CREATE TABLE crawl_patterns (
  crawl_job_id  text NOT NULL REFERENCES crawl_jobs (id) ON DELETE CASCADE,
  pattern       text NOT NULL,
  fetched       integer NOT NULL DEFAULT 0,
  collapsed     integer NOT NULL DEFAULT 0,
  pushed_back   boolean NOT NULL DEFAULT false,
  PRIMARY KEY (crawl_job_id, pattern)
);

-- Near-duplicate fingerprints (src/crawler/fingerprint.ts) of the organization's crawled pages, kept with
-- their page memory so they hold across a crawl that resumes and across re-crawls: the MinHash signature,
-- and its LSH bands salted with organization and host (the GIN index finds candidates by overlap).
-- `variants`: pages a crawl (`variants_crawl_job_id`) collapsed into this one, shown on its item's tags.
ALTER TABLE crawl_pages ADD COLUMN signature integer[];
ALTER TABLE crawl_pages ADD COLUMN bands integer[];
ALTER TABLE crawl_pages ADD COLUMN variants integer NOT NULL DEFAULT 0;
ALTER TABLE crawl_pages ADD COLUMN variants_crawl_job_id text;
CREATE INDEX crawl_pages_bands_idx ON crawl_pages USING gin (bands);
