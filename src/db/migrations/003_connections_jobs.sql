-- Connections to content sources: one per organization and source type. Credentials are stored only
-- encrypted (AES-256-GCM, the row id as associated data); `cursor` is the connector's last checkpoint
-- that incremental syncs start from.
CREATE TABLE connections (
  id                         text PRIMARY KEY,
  organization_id            text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  type                       text NOT NULL,
  status                     text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  credentials_encrypted      text NOT NULL,
  schedule_interval_minutes  integer CHECK (schedule_interval_minutes BETWEEN 1 AND 525600),
  next_sync_at               timestamptz,
  cursor                     jsonb,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX connections_org_type_key ON connections (organization_id, type);
CREATE INDEX connections_schedule_idx ON connections (next_sync_at)
  WHERE status = 'active' AND schedule_interval_minutes IS NOT NULL;

-- OAuth: a consent in progress (`state` nonce, single use, expiring) and the tokens it produced,
-- stored under the secret id the client was given.
CREATE TABLE oauth_states (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  source_type      text NOT NULL,
  secret_id        text NOT NULL,
  callback_uri     text NOT NULL,
  redirect_uri     text,
  expires_at       timestamptz NOT NULL,
  used_at          timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_states_expiry_idx ON oauth_states (expires_at);

CREATE TABLE oauth_secrets (
  id                text PRIMARY KEY,
  organization_id   text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  source_type       text NOT NULL,
  token_encrypted   text NOT NULL,
  workspace_name    text,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_secrets_org_idx ON oauth_secrets (organization_id, source_type, created_at DESC);

-- The job engine (src/jobs/engine.ts): one row per job of any kind ('sync', 'crawl', ...). Workers claim
-- pending rows with FOR UPDATE SKIP LOCKED, heartbeat while running, and a reaper requeues or fails rows
-- whose heartbeat went stale (the worker died). `lease_token` changes on every claim, so a worker that
-- lost its job (reaped, cancelled) can never write to the next attempt's row.
CREATE TABLE jobs (
  id               bigserial PRIMARY KEY,
  kind             text NOT NULL,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  payload          jsonb NOT NULL DEFAULT '{}',
  status           text NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled', 'incomplete')),
  -- At most one pending or running job per key (e.g. `sync:<connection id>`): see the partial index.
  dedupe_key       text,
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  run_after        timestamptz NOT NULL DEFAULT now(),
  lease_token      text,
  worker_id        text,
  heartbeat_at     timestamptz,
  error            text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  started_at       timestamptz,
  finished_at      timestamptz,
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX jobs_active_dedupe_key ON jobs (dedupe_key)
  WHERE status IN ('pending', 'running') AND dedupe_key IS NOT NULL;
CREATE INDEX jobs_claim_idx ON jobs (run_after, id) WHERE status = 'pending';
CREATE INDEX jobs_running_idx ON jobs (heartbeat_at) WHERE status = 'running';

-- The allowed status transitions, enforced for every writer by the trigger below
-- (src/jobs/status.ts holds the same table for the code).
CREATE TABLE job_status_transitions (
  from_status  text NOT NULL,
  to_status    text NOT NULL,
  PRIMARY KEY (from_status, to_status)
);
INSERT INTO job_status_transitions (from_status, to_status) VALUES
  ('pending', 'running'),
  ('pending', 'cancelled'),
  ('pending', 'failed'),
  ('running', 'succeeded'),
  ('running', 'incomplete'),
  ('running', 'failed'),
  ('running', 'cancelled'),
  ('running', 'pending');

CREATE FUNCTION jobs_check_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM job_status_transitions WHERE from_status = OLD.status AND to_status = NEW.status) THEN
    RAISE EXCEPTION 'job %: status % cannot become %', OLD.id, OLD.status, NEW.status
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER jobs_status_transition BEFORE UPDATE OF status ON jobs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION jobs_check_transition();

-- What a sync job adds to its engine row: the connection, sync or reset, counters, the checkpoint of
-- this job (a retried attempt resumes there) and the documents that failed.
CREATE TABLE sync_jobs (
  job_id          bigint PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
  connection_id   text NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
  job_type        text NOT NULL CHECK (job_type IN ('sync', 'reset')),
  trigger         text NOT NULL DEFAULT 'api' CHECK (trigger IN ('api', 'schedule')),
  bytes_synced    bigint NOT NULL DEFAULT 0,
  rows_synced     bigint NOT NULL DEFAULT 0,
  cursor          jsonb,
  failure_count   integer NOT NULL DEFAULT 0,
  failures        jsonb NOT NULL DEFAULT '[]',
  -- A failure that names no document means the pass cannot tell what is gone: no deletions after it.
  deletions_blocked boolean NOT NULL DEFAULT false
);
CREATE INDEX sync_jobs_connection_idx ON sync_jobs (connection_id, job_id DESC);

-- Which sync job last saw an item: a full (reset) pass removes the connection's items it did not see,
-- and only once the pass completed; the marker is committed with the documents, so a pass that resumes
-- after a crash still knows what it saw before.
ALTER TABLE items ADD COLUMN last_sync_job_id bigint;
