-- Items query `search` is a substring match on title and content; trigram indexes keep it from scanning
-- every item of the organization (patterns of fewer than 3 characters still scan).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX items_title_trgm_idx ON items USING gin (title gin_trgm_ops);
CREATE INDEX items_content_trgm_idx ON items USING gin (content gin_trgm_ops);
