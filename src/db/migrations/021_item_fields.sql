-- Ranking's page fields (src/search/page-signal.ts): an item's title and the headings of its markdown as
-- one weighted tsvector, so a search can tell the page whose title or headings name the thing it asks
-- about from a page that mentions it in passing. Title lexemes carry weight A, heading lexemes weight B
-- (a lexeme in both carries both), under to_tsvector('english') like chunks.tsv and BM25's query terms.
--
-- Headings are ATX lines (`# ...` to `###### ...`) outside fenced code blocks: a `# comment` in a Python
-- sample is not a heading. Search reads the field only for the few items its candidate chunks belong to,
-- so it needs no index of its own. Only the first 200,000 characters are read for headings: the trigger
-- runs in the statement that stores the item, and embedded mode's one database thread serves every
-- organization meanwhile (a 5,000,000-character document took it 0.2-0.4 s whole, 20-45 ms so bounded).
CREATE FUNCTION item_headings(content text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(m[1], E'\n'), '')
    FROM regexp_matches(
           -- Fenced blocks out first (shortest match from an opening fence to the next fence line).
           regexp_replace(content, E'(^|\n)[ \t]*(```|~~~).*?\n[ \t]*(```|~~~)[^\n]*', E'\n', 'g'),
           E'^#{1,6}[ \t]+([^\n]*[^ \t\n#])[ \t#]*$', 'gn') AS m
$$;

CREATE FUNCTION item_fields(title text, content text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(to_tsvector('english', title), 'A')
      || setweight(to_tsvector('english', left(item_headings(left(content, 200000)), 100000)), 'B')
$$;

CREATE FUNCTION items_fields_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.fields := item_fields(NEW.title, NEW.content);
  RETURN NEW;
END $$;

ALTER TABLE items ADD COLUMN fields tsvector;
UPDATE items SET fields = item_fields(title, content);
ALTER TABLE items ALTER COLUMN fields SET NOT NULL;

-- Only when the title or content changed: items are updated often for other reasons (indexing status,
-- leases, tags).
CREATE TRIGGER items_fields_insert BEFORE INSERT ON items
  FOR EACH ROW EXECUTE FUNCTION items_fields_trigger();
CREATE TRIGGER items_fields_update BEFORE UPDATE OF title, content ON items
  FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.content IS DISTINCT FROM NEW.content)
  EXECUTE FUNCTION items_fields_trigger();
