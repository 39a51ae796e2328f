-- Outbound webhooks: an organization's endpoints, and one delivery row per event and endpoint, sent from
-- here by the delivery task (src/jobs/webhook-delivery.ts) in `seq` order per endpoint.
--
-- Events are written by triggers on the rows whose change causes them (jobs, connections, items), so an
-- event commits or rolls back with its cause whichever writer made the change (a worker finishing a job,
-- the reaper failing it, a route cancelling it, the token refresh marking a connection), and no writer
-- can forget to emit one. An organization without an endpoint that wants the event pays one index probe.

CREATE TABLE webhook_endpoints (
  id                text PRIMARY KEY,
  organization_id   text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  url               text NOT NULL,
  description       text,
  -- The event types delivered; null: every type.
  event_types       text[],
  -- The signing secret (`whsec_...`), AES-256-GCM like connection credentials; shown to the caller once.
  secret_encrypted  text NOT NULL,
  enabled           boolean NOT NULL DEFAULT true,
  -- Why the service disabled the endpoint (every attempt failed for a day), for its owner to read.
  disabled_reason   text,
  disabled_at       timestamptz,
  -- The first failed attempt since the last successful one; null while the endpoint answers.
  failing_since     timestamptz,
  -- One delivery task at a time sends to an endpoint (its order); a dead task's lease runs out.
  lease_token       text,
  lease_until       timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_org_idx ON webhook_endpoints (organization_id, created_at);

CREATE TABLE webhook_deliveries (
  seq              bigserial PRIMARY KEY,
  id               text NOT NULL UNIQUE,
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- `webhook-id`: the event's id, the same on every attempt (receivers deduplicate on it).
  message_id       text NOT NULL,
  event_type       text NOT NULL,
  -- The JSON body exactly as sent and signed: {"type", "timestamp", "data"}.
  body             text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_attempt_at  timestamptz,
  last_status_code integer,
  last_error       text,
  delivered_at     timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (endpoint_id, seq) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (endpoint_id, seq DESC);

-- Items indexed since the last `items.indexed` events: the delivery task batches them per organization
-- (one event per second at most, a bounded list of items each) and deletes them in the same transaction.
CREATE TABLE webhook_indexed_items (
  seq              bigserial PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  item_id          text NOT NULL,
  source_type      text NOT NULL,
  connection_id    text,
  crawl_job_id     text,
  indexed_at       timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION webhook_wants(org text, wanted text) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM webhook_endpoints e
                  WHERE e.organization_id = org AND e.enabled
                    AND (e.event_types IS NULL OR wanted = ANY (e.event_types)))
$$;

-- One event: a delivery row for each enabled endpoint of the organization that wants its type.
CREATE FUNCTION webhook_emit(org text, event_type text, data jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  message text := 'msg_' || replace(gen_random_uuid()::text, '-', '');
  body text := jsonb_build_object(
    'type', event_type,
    'timestamp', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'data', data)::text;
BEGIN
  INSERT INTO webhook_deliveries (id, endpoint_id, organization_id, message_id, event_type, body)
    SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), e.id, org, message, event_type, body
      FROM webhook_endpoints e
     WHERE e.organization_id = org AND e.enabled
       AND (e.event_types IS NULL OR event_type = ANY (e.event_types))
     ORDER BY e.id;
END;
$$;

-- sync.started (the first claim of a sync job), sync.finished and crawl.finished (any end: a job cancelled
-- before it ran included).
CREATE FUNCTION webhook_job_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s record;
  c record;
  finished boolean := NEW.status IN ('succeeded', 'incomplete', 'failed', 'cancelled');
BEGIN
  IF NEW.kind = 'sync' AND (finished OR (NEW.status = 'running' AND OLD.started_at IS NULL)) THEN
    SELECT sj.connection_id, sj.job_type, sj.trigger, sj.rows_synced, sj.bytes_synced, sj.failure_count,
           cn.type AS source_type
      INTO s FROM sync_jobs sj LEFT JOIN connections cn ON cn.id = sj.connection_id WHERE sj.job_id = NEW.id;
    IF NOT FOUND THEN RETURN NULL; END IF;
    IF NOT finished THEN
      PERFORM webhook_emit(NEW.organization_id, 'sync.started', jsonb_build_object(
        'jobId', NEW.id, 'connectionId', s.connection_id, 'sourceType', s.source_type,
        'jobType', s.job_type, 'trigger', s.trigger));
    ELSE
      PERFORM webhook_emit(NEW.organization_id, 'sync.finished', jsonb_build_object(
        'jobId', NEW.id, 'connectionId', s.connection_id, 'sourceType', s.source_type,
        'jobType', s.job_type, 'trigger', s.trigger, 'status', NEW.status, 'error', NEW.error,
        'rowsSynced', s.rows_synced, 'bytesSynced', s.bytes_synced, 'failureCount', s.failure_count,
        'warningCount', NEW.warning_count));
    END IF;
  ELSIF NEW.kind = 'crawl' AND finished THEN
    SELECT cj.id, cj.url, cj.stored_pages, cj.fetched_pages, cj.outcomes INTO c
      FROM crawl_jobs cj WHERE cj.job_id = NEW.id;
    IF NOT FOUND THEN RETURN NULL; END IF;
    PERFORM webhook_emit(NEW.organization_id, 'crawl.finished', jsonb_build_object(
      'crawlId', c.id, 'url', c.url,
      'status', CASE NEW.status WHEN 'succeeded' THEN 'completed' WHEN 'incomplete' THEN 'completed'
                ELSE NEW.status END,
      'error', NEW.error, 'completedPages', c.stored_pages, 'fetchedPages', c.fetched_pages,
      'outcomes', c.outcomes, 'warningCount', NEW.warning_count));
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER jobs_webhook_events AFTER UPDATE OF status ON jobs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.kind IN ('sync', 'crawl'))
  EXECUTE FUNCTION webhook_job_events();

CREATE FUNCTION webhook_consent_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_emit(NEW.organization_id, 'connection.needs_consent', jsonb_build_object(
    'connectionId', NEW.id, 'sourceType', NEW.type, 'message', NEW.consent_needed));
  RETURN NULL;
END;
$$;
CREATE TRIGGER connections_webhook_consent AFTER UPDATE OF consent_needed ON connections
  FOR EACH ROW WHEN (OLD.consent_needed IS NULL AND NEW.consent_needed IS NOT NULL)
  EXECUTE FUNCTION webhook_consent_event();

CREATE FUNCTION webhook_item_indexed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF webhook_wants(NEW.organization_id, 'items.indexed') THEN
    INSERT INTO webhook_indexed_items (organization_id, item_id, source_type, connection_id, crawl_job_id)
      VALUES (NEW.organization_id, NEW.id, NEW.source_type, NEW.connection_id, NEW.crawl_job_id);
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER items_webhook_indexed AFTER UPDATE OF indexing_status ON items
  FOR EACH ROW WHEN (NEW.indexing_status = 'indexed' AND OLD.indexing_status IS DISTINCT FROM 'indexed')
  EXECUTE FUNCTION webhook_item_indexed();
