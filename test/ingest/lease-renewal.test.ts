/**
 * A round renews its items' indexing leases while it works, and ends the lease of an item whose content
 * changed under it so the next round takes it at once. A renewal that comes after that end must not
 * take the item back: it would sit leased to a round that dropped it until the lease ran out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import {
  endIndexingLease,
  leasePendingItems,
  renewIndexingLeases,
} from '../../src/db/repositories/chunks.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { storeDocument } from '../../src/ingest/hash-skip.ts';
import { indexerDatabase, STORAGE_MODES } from '../support/harness.ts';
import { hashEmbedder } from '../support/hash-embedder.ts';

for (const mode of STORAGE_MODES) {
  describe(`indexing leases (${mode})`, () => {
    let db: Database;
    let drop: () => Promise<void>;
    before(async () => {
      ({ db, drop } = await indexerDatabase(mode, hashEmbedder({ dimensions: 32, maxTokens: 64 })));
    });
    after(async () => drop?.());

    test('a renewal after a lease was ended leaves the item free for the next round', async () => {
      const org = await createOrganization(db, `leases-${mode}`);
      const { itemId } = await db.transaction((tx) =>
        storeDocument(
          tx,
          org.id,
          {
            sourceType: 'upload',
            sourceTableName: 'uploaded_documents',
            sourceKey: 'upload:lease-renewal',
            title: 'Returns',
            markdown: 'Returns are accepted within 30 days.',
            url: '',
            visibility: 'public',
            tags: [],
          },
          { respectTombstones: false },
        ),
      );
      const leased = await leasePendingItems(db, { limit: 100, leaseSeconds: 3600 });
      assert.ok(leased.some((i) => i.id === itemId));
      assert.equal((await leasePendingItems(db, { limit: 100, leaseSeconds: 3600 })).length, 0, 'leased');

      await endIndexingLease(db, itemId!);
      // The round that dropped it renews its items' leases once more before it ends.
      await renewIndexingLeases(db, [itemId!], 3600);
      const next = await leasePendingItems(db, { limit: 100, leaseSeconds: 3600 });
      assert.deepEqual(
        next.map((i) => i.id),
        [itemId],
        'the next round takes it at once',
      );
    });
  });
}
