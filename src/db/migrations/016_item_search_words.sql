-- Items' search words are split by the service (src/lib/search-words.ts) and written with the item,
-- instead of by Postgres's text-search parser in migration 013's triggers: that parser cost ~0.2 ms of
-- embedded Postgres per kB of text, on the thread that serves every request in embedded mode. A search is
-- split by the same code, so both sides agree on what a word is.
--
-- The rows written before this migration get their words again in code right after it, in the same
-- transaction (src/db/migrate.ts, rewriteItemSearchWords): the two splits differ ('0.115.0' was one word).
DROP TRIGGER items_search_words_insert ON items;
DROP TRIGGER items_search_words_update ON items;
DROP FUNCTION items_search_words_trigger();
DROP FUNCTION items_search_words(text, text);
