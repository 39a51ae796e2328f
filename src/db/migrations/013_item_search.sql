-- The items query's `search` uses an index instead of scanning every item's content.
--
-- search_words holds the words of an item's title and content as Postgres's text-search parser splits
-- them, lower-cased ('simple' configuration: no stemming, no stop words), without positions (strip): a
-- GIN index over it finds the items that have a word beginning with each word of a search ('word':*),
-- and the query checks the search text itself on those few items (src/db/repositories/items.ts). A
-- phrase is therefore checked on the text, not on tsvector positions, which stop counting at 16,383 and
-- would miss phrases deep in a long page.
--
-- Why not trigram indexes (pg_trgm, tried in the old migration 005): at 100k items of 250-700 characters
-- a trigram index holds about 7 times as many entries as this one (each item has ~400 distinct trigrams,
-- ~60 distinct words), and it answers infix matches no user of a search box asks for. docs/benchmarks.md,
-- bench/items-query.ts reports what the trigram indexes did in embedded mode at 200k items.
--
-- A tsvector holds at most 1 MB of distinct words. Content of up to 250,000 characters cannot exceed that
-- (4 bytes a character at most); longer content (uploads take 5,000,000) is tried whole and, past the
-- limit, indexed by its first 250,000 characters instead of failing the item's write. Only that branch
-- pays for the exception block's subtransaction.
CREATE FUNCTION items_search_words(title text, content text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF length(content) <= 250000 THEN
    RETURN strip(to_tsvector('simple', title || ' ' || content));
  END IF;
  BEGIN
    RETURN strip(to_tsvector('simple', title || ' ' || content));
  EXCEPTION WHEN program_limit_exceeded THEN
    RETURN strip(to_tsvector('simple', title || ' ' || left(content, 250000)));
  END;
END $$;

CREATE FUNCTION items_search_words_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_words := items_search_words(NEW.title, NEW.content);
  RETURN NEW;
END $$;

ALTER TABLE items ADD COLUMN search_words tsvector;
UPDATE items SET search_words = items_search_words(title, content);
ALTER TABLE items ALTER COLUMN search_words SET NOT NULL;

-- A trigger rather than a generated column: a stored generated column is computed again on every UPDATE
-- of the row, and items are updated often without a new title or content (indexing status, leases, tags).
CREATE TRIGGER items_search_words_insert BEFORE INSERT ON items
  FOR EACH ROW EXECUTE FUNCTION items_search_words_trigger();
CREATE TRIGGER items_search_words_update BEFORE UPDATE OF title, content ON items
  FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.content IS DISTINCT FROM NEW.content)
  EXECUTE FUNCTION items_search_words_trigger();

-- The pending list (GIN's fast update) holds new entries until it is merged into the index, and every
-- search reads all of it. At the default 4 MB, embedded mode (no autovacuum to merge it) spent ~110 ms a
-- search on it at 30k items; at 256 kB a search took 28 ms and loading 30k items 42 s (4 MB: 30 s;
-- fast update off: 103 s, search 33 ms), load average ~12 on 2 cores.
CREATE INDEX items_search_words_idx ON items USING gin (search_words) WITH (gin_pending_list_limit = 256);
