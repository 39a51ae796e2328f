-- Job ids are public (a sync's `jobId`), and one counter numbered every organization's jobs: a tenant
-- that saw job 17 and then job 25 learnt that others had started 7 jobs in between. New jobs get a
-- random id instead, drawn from 1 to 2^53 - 1 so that it stays an exact JSON number for every client.
-- The counter lives on as `seq`, the creation order that claims, listings and "latest job" sort by and
-- that no answer shows. Rows that exist keep their ids (their `seq` is their old id), so every id
-- already handed out still resolves.

-- The bits come from gen_random_uuid(), which reads the server's strong random source: random() is a
-- generator whose outputs give its state away, and with it how many draws (jobs) came in between.
-- Of the uuid's 32 hex digits the 13th is its version; 56 bits from the 14 around it, shifted to 53.
-- An id already taken (chance: the jobs stored divided by 2^53) is drawn again; two concurrent inserts
-- drawing the same id (about one in 2^53) would meet the primary key and fail, not merge.
CREATE FUNCTION random_job_id() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  digits text;
  candidate bigint;
BEGIN
  LOOP
    digits := replace(gen_random_uuid()::text, '-', '');
    candidate := (('x' || substr(digits, 1, 12) || substr(digits, 14, 2))::bit(56)::bigint) >> 3;
    EXIT WHEN candidate > 0 AND NOT EXISTS (SELECT 1 FROM jobs WHERE id = candidate);
  END LOOP;
  RETURN candidate;
END;
$$;

ALTER TABLE jobs ADD COLUMN seq bigint;
UPDATE jobs SET seq = id;
ALTER SEQUENCE jobs_id_seq OWNED BY jobs.seq;
ALTER SEQUENCE jobs_id_seq RENAME TO jobs_seq_seq;
ALTER TABLE jobs
  ALTER COLUMN seq SET DEFAULT nextval('jobs_seq_seq'),
  ALTER COLUMN seq SET NOT NULL,
  ALTER COLUMN id SET DEFAULT random_job_id();
DROP INDEX jobs_claim_idx;
CREATE INDEX jobs_claim_idx ON jobs (run_after, seq) WHERE status = 'pending';

-- A sync or crawl job's place in its listing, copied from its engine row when it is inserted, so that a
-- connection's jobs (newest first, and the latest one) and an organization's crawls are read off one
-- index. Existing rows: their engine row's `seq` is their job id.
ALTER TABLE sync_jobs ADD COLUMN job_seq bigint;
UPDATE sync_jobs SET job_seq = job_id;
ALTER TABLE sync_jobs ALTER COLUMN job_seq SET NOT NULL;
DROP INDEX sync_jobs_connection_idx;
CREATE INDEX sync_jobs_connection_idx ON sync_jobs (connection_id, job_seq DESC);

ALTER TABLE crawl_jobs ADD COLUMN job_seq bigint;
UPDATE crawl_jobs SET job_seq = job_id;
ALTER TABLE crawl_jobs ALTER COLUMN job_seq SET NOT NULL;
DROP INDEX crawl_jobs_org_idx;
CREATE INDEX crawl_jobs_org_idx ON crawl_jobs (organization_id, job_seq DESC);
