-- Crawl jobs (endpoint 6): what a crawl adds to its job-engine row (`jobs`, kind 'crawl'). The API's
-- status (idle / scraping / completed / failed / cancelled) is derived from the engine's status, so the
-- reaper and cancel keep it truthful without a second state machine. The CHECKs make the page budget a
-- database invariant: no writer can admit more pages than the limit or complete more than it admitted.
CREATE TABLE crawl_jobs (
  id               text PRIMARY KEY,
  job_id           bigint NOT NULL UNIQUE REFERENCES jobs (id) ON DELETE CASCADE,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  url              text NOT NULL,
  page_limit       integer NOT NULL CHECK (page_limit >= 1),
  -- includePaths, excludePaths, allowExternalLinks, maxDepth, tags as the caller sent them.
  options          jsonb NOT NULL DEFAULT '{}',
  total_pages      integer NOT NULL DEFAULT 0,
  completed_pages  integer NOT NULL DEFAULT 0,
  -- Pages by outcome (created, updated, unchanged, removed, duplicate, failed...).
  outcomes         jsonb NOT NULL DEFAULT '{}',
  -- URLs not admitted or not stored, by reason: {"<reason>": {"count": n, "sample": [url, ...]}}.
  refused          jsonb NOT NULL DEFAULT '{}',
  -- Discovery steps done before the frontier is worked off concurrently (a resumed attempt skips them).
  sitemaps_done    boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CHECK (total_pages BETWEEN 0 AND page_limit),
  CHECK (completed_pages BETWEEN 0 AND total_pages)
);
CREATE INDEX crawl_jobs_org_idx ON crawl_jobs (organization_id, job_id DESC);

-- The frontier: one row per URL key (`//host/path?query`, see src/crawler/url.ts) a crawl has seen.
-- `admitted` rows count against the page budget and are fetched; the others only mark a key as taken
-- (a redirect target, a start URL outside the path filters). Rows left `fetching` by a dead worker are
-- put back to `queued` when the job resumes.
CREATE TABLE crawl_frontier (
  crawl_job_id  text NOT NULL REFERENCES crawl_jobs (id) ON DELETE CASCADE,
  url_key       text NOT NULL,
  url           text NOT NULL,
  depth         integer NOT NULL,
  admitted      boolean NOT NULL DEFAULT true,
  state         text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'fetching', 'done')),
  outcome       text,
  detail        text,
  seq           bigserial,
  PRIMARY KEY (crawl_job_id, url_key)
);
CREATE INDEX crawl_frontier_queue_idx ON crawl_frontier (crawl_job_id, depth, seq) WHERE state = 'queued';

-- Text hashes of the pages a crawl has taken: a page whose text is identical to one already taken is
-- a duplicate. The primary key decides races between concurrent fetches.
CREATE TABLE crawl_texts (
  crawl_job_id  text NOT NULL REFERENCES crawl_jobs (id) ON DELETE CASCADE,
  text_hash     text NOT NULL,
  url_key       text NOT NULL,
  PRIMARY KEY (crawl_job_id, text_hash)
);

-- What the last crawl learnt about a page of an organization, keyed like its item: validators for
-- conditional requests and the page's links and text hash, so a 304 still feeds discovery and dedupe.
CREATE TABLE crawl_pages (
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  source_key       text NOT NULL,
  etag             text,
  last_modified    text,
  text_hash        text NOT NULL,
  links            text[] NOT NULL DEFAULT '{}',
  fetched_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, source_key)
);
