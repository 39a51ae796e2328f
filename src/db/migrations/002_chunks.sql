-- Searchable chunks of items. The vector column has no fixed dimension here: the dimension follows the
-- embedding model, and the HNSW index is created over `embedding::vector(<dims>)` once the model is known
-- (src/search/index-setup.ts). organization_id, tags, visibility and source_type are copied from the item so
-- that search filters on one table and pgvector's iterative index scan can apply them.
CREATE TABLE chunks (
  id               bigserial PRIMARY KEY,
  item_id          text NOT NULL REFERENCES items (id) ON DELETE CASCADE,
  organization_id  text NOT NULL,
  chunk_index      integer NOT NULL,
  text             text NOT NULL,
  embedding        vector NOT NULL,
  model_id         text NOT NULL,
  tsv              tsvector NOT NULL,
  tags             text[] NOT NULL DEFAULT '{}',
  visibility       text NOT NULL,
  source_type      text NOT NULL,
  UNIQUE (item_id, chunk_index)
);
CREATE INDEX chunks_org_idx ON chunks (organization_id);
CREATE INDEX chunks_tsv_idx ON chunks USING gin (tsv);
CREATE INDEX chunks_tags_idx ON chunks USING gin (tags);

-- The indexer leases pending items for a while so that several workers do not embed the same item.
ALTER TABLE items ADD COLUMN indexing_lease_until timestamptz;
