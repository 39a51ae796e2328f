-- Problems of a job that a person can act on (an unreadable sitemap or robots.txt, a redirect not
-- followed, a page cut or skipped for its size, a permission the source's credentials lack), kept with the
-- job so the API, the CLI and the console show them: not only the service log. `warnings` holds at most a
-- bounded list of distinct entries (src/db/repositories/job-warnings.ts); `warning_count` counts every
-- warning, those beyond the list included.
ALTER TABLE jobs ADD COLUMN warnings jsonb NOT NULL DEFAULT '[]';
ALTER TABLE jobs ADD COLUMN warning_count integer NOT NULL DEFAULT 0;
