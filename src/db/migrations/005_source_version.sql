-- The source's change token of a synced document (version number, edit time, revision), so an incremental
-- sync can tell an unchanged document without fetching it again (SourceDocument.version).
ALTER TABLE items ADD COLUMN source_version text;
