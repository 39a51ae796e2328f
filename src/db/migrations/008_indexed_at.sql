-- When each item was last indexed: the indexing rate the stats endpoint reports (items indexed in the
-- last minutes, service-wide) and from it the estimated time until an organization's pending items are
-- searchable. Items indexed before this migration have none; the rate only counts recent ones anyway.
ALTER TABLE items ADD COLUMN indexed_at timestamptz;
CREATE INDEX items_indexed_at_idx ON items (indexed_at) WHERE indexed_at IS NOT NULL;
