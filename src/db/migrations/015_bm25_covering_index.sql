-- BM25 reads each query term's best postings from the impact index alone (an index-only scan).
--
-- Before, every posting read was a heap fetch, and a term's best postings lie on as many heap pages as
-- there are postings (rows are written in chunk order, not term order): at 100k chunks a query read
-- ~4,000 pages for ~5,000 postings, half of its time. With chunk_id, tf and len in the index the scan
-- reads a few leaf pages per term, as long as the heap pages are marked all-visible: server Postgres'
-- autovacuum does that after inserts, and in embedded mode the indexer runs VACUUM on this table after
-- large changes (src/ingest/indexer.ts), as it runs ANALYZE. docs/benchmarks.md, bench/keyword-latency.ts has
-- the before and after.
DROP INDEX bm25_postings_impact_idx;
CREATE INDEX bm25_postings_impact_idx ON bm25_postings (organization_id, term, impact DESC)
  INCLUDE (chunk_id, tf, len);
