-- Organizations own everything; one project per organization (project_id = id).
CREATE TABLE organizations (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX organizations_name_key ON organizations (name);

-- API keys are stored as a SHA-256 of their random secret part; the key id is public (shown in lists).
CREATE TABLE api_keys (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  secret_hash      text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_used_at     timestamptz,
  revoked_at       timestamptz
);
CREATE INDEX api_keys_org_idx ON api_keys (organization_id);

-- Knowledge-base items: one per source document, crawled page or upload.
-- source_key identifies the document at its source (connection + external id, canonical page URL, ...)
-- so a re-sync or re-crawl updates the item instead of adding a second one.
CREATE TABLE items (
  id                 text PRIMARY KEY,
  organization_id    text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  title              text NOT NULL,
  content            text NOT NULL DEFAULT '',
  content_hash       text NOT NULL DEFAULT '',
  visibility         text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'private')),
  source_type        text NOT NULL CHECK (source_type IN ('integration', 'crawl', 'upload')),
  source_table_name  text NOT NULL,
  source_url         text NOT NULL DEFAULT '',
  source_key         text NOT NULL,
  connection_id      text,
  crawl_job_id       text,
  tags               text[] NOT NULL DEFAULT '{}',
  indexing_status    text NOT NULL DEFAULT 'pending' CHECK (indexing_status IN ('pending', 'indexed', 'failed')),
  indexing_error     text,
  seq                bigserial,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX items_source_key_idx ON items (organization_id, source_key);
-- Newest first listing: seq breaks ties between items created in the same microsecond.
CREATE INDEX items_org_listing_idx ON items (organization_id, created_at DESC, seq DESC);
CREATE INDEX items_connection_idx ON items (connection_id) WHERE connection_id IS NOT NULL;
CREATE INDEX items_pending_idx ON items (indexing_status) WHERE indexing_status = 'pending';

-- An item a user deleted stays deleted across incremental syncs and re-crawls of other pages.
CREATE TABLE item_tombstones (
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  source_key       text NOT NULL,
  deleted_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, source_key)
);

-- Settings of the installation (embedding model of the stored vectors, ...).
CREATE TABLE service_settings (
  key    text PRIMARY KEY,
  value  jsonb NOT NULL
);
