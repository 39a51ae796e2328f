-- The indexer writes a large item's chunks in short transactions, and takes pending items in
-- turns across queues instead of oldest first (src/ingest/indexer.ts explains both).
--
-- Every chunk carries the generation of the indexing attempt that wrote it (a number from the sequence;
-- chunks written before this migration are generation 0). An attempt that needs several transactions
-- lists its generation in chunk_staging first: search skips the chunks of a listed generation. Its last
-- transaction removes the row and every other generation of the item, so search goes from all of the
-- old chunks to all of the new ones at that one commit. A row that outlives its attempt (a crash) names
-- chunks nobody sees; the next attempt on the item, or the embedded service's next start, removes them.
CREATE SEQUENCE chunk_generation_seq;
ALTER TABLE chunks ADD COLUMN generation bigint NOT NULL DEFAULT 0;
CREATE TABLE chunk_staging (
  generation    bigint PRIMARY KEY,
  item_id       text NOT NULL REFERENCES items (id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chunk_staging_item_idx ON chunk_staging (item_id);
-- An item briefly has two generations (old visible, new staged): chunk positions are unique per generation.
ALTER TABLE chunks DROP CONSTRAINT chunks_item_id_chunk_index_key;
CREATE UNIQUE INDEX chunks_item_generation_idx ON chunks (item_id, generation, chunk_index);

-- The indexer's queues: pending items by organization, source type and connection (crawls and uploads
-- have none), oldest change first within each. The lease walks the queues with this index (a loose index
-- scan) and takes each queue's first items; it replaces the index on the status alone.
DROP INDEX items_pending_idx;
CREATE INDEX items_indexing_queue_idx
  ON items (organization_id, source_type, (coalesce(connection_id, '')), updated_at)
  WHERE indexing_status = 'pending';
