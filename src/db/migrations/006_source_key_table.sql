-- A synced document's key names its table: `integration:<connection>:<table>:<external id>`, because
-- source ids are only unique per table (a Zendesk article and a ticket may both be 7). Existing items
-- keep their rows (ids, chunks, embeddings); only the key is rewritten, from the table each row records.
UPDATE items
   SET source_key = 'integration:' || connection_id || ':' || source_table_name || ':'
                    || substr(source_key, length('integration:' || connection_id || ':') + 1)
 WHERE source_type = 'integration'
   AND connection_id IS NOT NULL
   AND starts_with(source_key, 'integration:' || connection_id || ':');

-- A tombstone does not record its table; `*` stands for any table (legacyIntegrationTombstoneKey in
-- src/ingest/store.ts), so what a user deleted stays deleted. Connection ids hold no colon.
UPDATE item_tombstones
   SET source_key = 'integration:' || split_part(source_key, ':', 2) || ':*:'
                    || substr(source_key, length('integration:' || split_part(source_key, ':', 2) || ':') + 1)
 WHERE starts_with(source_key, 'integration:');
