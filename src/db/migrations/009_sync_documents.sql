-- A sync job's progress by document while it runs (and after): what the source yielded, what was
-- stored (new or changed), found unchanged, deleted, beside failure_count. rows_synced stays the seed's
-- "documents created, updated or deleted".
ALTER TABLE sync_jobs ADD COLUMN documents_seen bigint NOT NULL DEFAULT 0;
ALTER TABLE sync_jobs ADD COLUMN documents_stored bigint NOT NULL DEFAULT 0;
ALTER TABLE sync_jobs ADD COLUMN documents_unchanged bigint NOT NULL DEFAULT 0;
ALTER TABLE sync_jobs ADD COLUMN documents_deleted bigint NOT NULL DEFAULT 0;
