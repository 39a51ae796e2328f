-- Inbound change notifications of the sources (their webhooks): the events received, the work per document
-- they make, the subscriptions the service made at the sources, and the secrets set-up handshakes carried.

-- The account each connection receives notifications for (a shop domain, a Zendesk subdomain, a Notion
-- workspace): how a notification finds its candidate connections without decrypting every connection.
CREATE TABLE source_webhook_accounts (
  connection_id    text PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  source_type      text NOT NULL,
  account          text NOT NULL
);
CREATE INDEX source_webhook_accounts_lookup_idx ON source_webhook_accounts (source_type, account);

-- One row per notification accepted for a connection. A vendor's retry carries the same event id and
-- inserts nothing (the unique key), so it makes no work twice. `changes`: the documents it named.
CREATE TABLE source_events (
  id               bigserial PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  connection_id    text NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
  vendor_event_id  text NOT NULL,
  occurred_at      timestamptz,
  received_at      timestamptz NOT NULL DEFAULT now(),
  changes          jsonb NOT NULL,
  state            text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'processed')),
  processed_at     timestamptz
);
CREATE UNIQUE INDEX source_events_vendor_id_key ON source_events (connection_id, vendor_event_id);
CREATE INDEX source_events_queued_idx ON source_events (connection_id) WHERE state = 'queued';
CREATE INDEX source_events_processed_idx ON source_events (processed_at) WHERE state = 'processed';

-- The documents waiting to be read again, one row per document however many events named it (ten edits
-- make one fetch). `revision` counts up with every event: the job removes a row only at the revision it
-- read, so an event that arrives while the document is being fetched leaves the row for one more fetch.
CREATE TABLE source_document_work (
  connection_id    text NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  source_table     text NOT NULL,
  external_id      text NOT NULL,
  deleted          boolean NOT NULL,
  revision         bigint NOT NULL DEFAULT 1,
  event_id         bigint REFERENCES source_events (id) ON DELETE SET NULL,
  attempts         integer NOT NULL DEFAULT 0,
  last_error       text,
  not_before       timestamptz NOT NULL DEFAULT now(),
  received_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (connection_id, source_table, external_id)
);
CREATE INDEX source_document_work_due_idx ON source_document_work (not_before);
CREATE INDEX source_document_work_event_idx ON source_document_work (event_id);

-- What the service subscribed at the source for a connection (Shopify's webhook subscriptions): the
-- vendor's ids, to delete them on disconnect, and the subscription's own signing secret, encrypted.
CREATE TABLE source_webhook_subscriptions (
  connection_id     text PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
  organization_id   text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  subscription_ids  text[] NOT NULL,
  secret_encrypted  text,
  callback_url      text NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);

-- Secrets a vendor's set-up handshake delivered (Notion's verification token), per source type, encrypted.
CREATE TABLE source_webhook_handshakes (
  id                text PRIMARY KEY,
  source_type       text NOT NULL,
  secret_encrypted  text NOT NULL,
  received_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX source_webhook_handshakes_type_idx ON source_webhook_handshakes (source_type, received_at DESC);
