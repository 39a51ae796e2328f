-- BM25 keyword ranking (src/search/bm25.ts explains the scoring and its parameters).
--
-- Terms are the lexemes of chunks.tsv (to_tsvector('english'): Postgres' snowball English stemmer and its
-- stop words). Three tables hold what BM25 needs, per organization:
--   bm25_postings  one row per (chunk, term): the term frequency, the chunk's length in tokens, and an
--                  impact (the term's BM25 weight in that chunk, without idf) that orders each term's
--                  postings, so a query reads the best postings of each of its terms from an index and
--                  its cost follows the candidate depth, not the corpus;
--   bm25_terms     document frequency of every term (chunks that contain it);
--   bm25_org_stats chunk count and total length (their ratio is the average chunk length).
-- Statement-level triggers with transition tables keep all three exact in the transaction that writes or
-- deletes chunks, whoever does it (the indexer's parts, ON DELETE CASCADE from items, connections...).
-- They count every row of chunks, staged generations included (those are briefly counted twice while an
-- item is re-indexed; search skips their chunks but the statistics are those of the table).
CREATE TABLE bm25_postings (
  chunk_id         bigint NOT NULL,
  term             text NOT NULL,
  organization_id  text NOT NULL,
  tf               integer NOT NULL,
  len              integer NOT NULL,
  impact           real NOT NULL,
  PRIMARY KEY (chunk_id, term)
);
CREATE INDEX bm25_postings_impact_idx ON bm25_postings (organization_id, term, impact DESC);

CREATE TABLE bm25_terms (
  organization_id  text NOT NULL,
  term             text NOT NULL,
  df               integer NOT NULL,
  PRIMARY KEY (organization_id, term)
);

CREATE TABLE bm25_org_stats (
  organization_id  text PRIMARY KEY,
  chunk_count      bigint NOT NULL,
  total_len        bigint NOT NULL
);

-- A chunk's terms: lexeme, term frequency (positions; a lexeme without positions counts once) and the
-- chunk's length (the sum of its term frequencies, stop words excluded, as bm25s counts it).
CREATE FUNCTION bm25_terms_of(v tsvector) RETURNS TABLE (term text, tf integer, len integer)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1),
         (sum(coalesce(array_length(u.positions, 1), 1)) OVER ())::integer
    FROM unnest(v) AS u
$$;

-- The statistics are applied per statement from arrays of the rows (transition tables are only visible in
-- the trigger function itself). The impact uses k1 = 1.2, b = 0.75 (src/search/bm25.ts) and the average
-- length after the statement; it only orders each term's postings for the candidate scan, scores use the
-- current statistics.
--
-- Concurrent writers (several indexer processes on Postgres): each statement first takes a
-- transaction-level advisory lock per organization it touches, in organization order, before any term
-- row. Two transactions therefore never lock term or stats rows in opposite orders (no deadlock); the
-- writers of one organization queue at that lock until commit, as they would at its one stats row.
CREATE FUNCTION bm25_lock(orgs text[]) RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(hashtextextended('bm25:' || o, 0)) FROM (SELECT DISTINCT o FROM unnest(orgs) AS o ORDER BY 1) AS x
$$;

CREATE FUNCTION bm25_add(ids bigint[], orgs text[], tsvs tsvector[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF coalesce(cardinality(ids), 0) = 0 THEN RETURN; END IF;
  PERFORM bm25_lock(orgs);
  INSERT INTO bm25_org_stats AS s (organization_id, chunk_count, total_len)
  SELECT r.org, count(*), coalesce(sum(l.len), 0)
    FROM unnest(ids, orgs, tsvs) AS r(id, org, v)
    LEFT JOIN LATERAL (SELECT max(t.len) AS len FROM bm25_terms_of(r.v) AS t) AS l ON true
   GROUP BY r.org ORDER BY r.org
  ON CONFLICT (organization_id) DO UPDATE
    SET chunk_count = s.chunk_count + excluded.chunk_count, total_len = s.total_len + excluded.total_len;
  INSERT INTO bm25_terms AS bt (organization_id, term, df)
  SELECT r.org, t.term, count(*)
    FROM unnest(orgs, tsvs) AS r(org, v), bm25_terms_of(r.v) AS t
   GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (organization_id, term) DO UPDATE SET df = bt.df + excluded.df;
  INSERT INTO bm25_postings (chunk_id, term, organization_id, tf, len, impact)
  SELECT r.id, t.term, r.org, t.tf, t.len,
         t.tf / (t.tf + 1.2 * (0.25 + 0.75 * t.len / greatest(s.total_len::real / greatest(s.chunk_count, 1), 1)))
    FROM unnest(ids, orgs, tsvs) AS r(id, org, v)
    JOIN bm25_org_stats AS s ON s.organization_id = r.org,
         bm25_terms_of(r.v) AS t;
END;
$$;

CREATE FUNCTION bm25_remove(ids bigint[], orgs text[], tsvs tsvector[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF coalesce(cardinality(ids), 0) = 0 THEN RETURN; END IF;
  PERFORM bm25_lock(orgs);
  UPDATE bm25_org_stats AS s SET chunk_count = s.chunk_count - x.n, total_len = s.total_len - x.len
    FROM (SELECT r.org, count(*) AS n, coalesce(sum(l.len), 0) AS len
            FROM unnest(orgs, tsvs) AS r(org, v)
            LEFT JOIN LATERAL (SELECT max(t.len) AS len FROM bm25_terms_of(r.v) AS t) AS l ON true
           GROUP BY r.org) AS x
   WHERE s.organization_id = x.org;
  UPDATE bm25_terms AS bt SET df = bt.df - x.n
    FROM (SELECT r.org, t.term, count(*) AS n
            FROM unnest(orgs, tsvs) AS r(org, v), bm25_terms_of(r.v) AS t GROUP BY 1, 2) AS x
   WHERE bt.organization_id = x.org AND bt.term = x.term;
  -- A second statement: one statement cannot delete the rows its own CTE updated.
  DELETE FROM bm25_terms AS bt
   USING (SELECT DISTINCT r.org, t.term FROM unnest(orgs, tsvs) AS r(org, v), bm25_terms_of(r.v) AS t) AS x
   WHERE bt.organization_id = x.org AND bt.term = x.term AND bt.df <= 0;
  DELETE FROM bm25_postings WHERE chunk_id = ANY(ids);
END;
$$;

CREATE FUNCTION bm25_chunks_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM bm25_add(array_agg(id), array_agg(organization_id), array_agg(tsv)) FROM new_chunks;
  RETURN NULL;
END;
$$;
CREATE FUNCTION bm25_chunks_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM bm25_remove(array_agg(id), array_agg(organization_id), array_agg(tsv)) FROM old_chunks;
  RETURN NULL;
END;
$$;
-- Updates today touch tags and visibility only; a changed text or organization is a removal and an addition.
CREATE FUNCTION bm25_chunks_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed bigint[];
BEGIN
  SELECT array_agg(o.id) INTO changed FROM old_chunks AS o JOIN new_chunks AS n ON n.id = o.id
   WHERE o.tsv IS DISTINCT FROM n.tsv OR o.organization_id IS DISTINCT FROM n.organization_id;
  IF changed IS NULL THEN RETURN NULL; END IF;
  PERFORM bm25_remove(array_agg(id), array_agg(organization_id), array_agg(tsv)) FROM old_chunks WHERE id = ANY(changed);
  PERFORM bm25_add(array_agg(id), array_agg(organization_id), array_agg(tsv)) FROM new_chunks WHERE id = ANY(changed);
  RETURN NULL;
END;
$$;
CREATE TRIGGER chunks_bm25_insert AFTER INSERT ON chunks REFERENCING NEW TABLE AS new_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_inserted();
CREATE TRIGGER chunks_bm25_delete AFTER DELETE ON chunks REFERENCING OLD TABLE AS old_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_deleted();
CREATE TRIGGER chunks_bm25_update AFTER UPDATE ON chunks REFERENCING OLD TABLE AS old_chunks NEW TABLE AS new_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_updated();

-- Backfill: the chunks already written, one organization at a time (same code as the triggers).
DO $$
DECLARE
  o text;
BEGIN
  FOR o IN SELECT DISTINCT organization_id FROM chunks ORDER BY 1 LOOP
    PERFORM bm25_add(array_agg(id), array_agg(organization_id), array_agg(tsv)) FROM chunks WHERE organization_id = o;
  END LOOP;
END;
$$;
