-- When the indexer took an item for its latest attempt (set by the lease, kept by lease renewals). With
-- indexed_at it bounds the time the item was being indexed, so the indexer's rate is measured over the
-- time it was working (the union of those intervals) rather than over a window that includes idle time.
ALTER TABLE items ADD COLUMN indexing_started_at timestamptz;

-- A crawl followed until searchable (`kb crawl --wait`) asks how many of its items are still pending, every
-- second or few: this keeps that an index probe whatever the size of the organization's knowledge base.
CREATE INDEX items_pending_by_crawl_idx ON items (crawl_job_id) WHERE indexing_status = 'pending';
