/**
 * Embedded mode has no checkpointer (PGlite is a single backend), so without one requested `pg_wal` only
 * grows: an idle drain of the indexer checkpoints once enough WAL was written since the last checkpoint.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { storeDocument } from '../../src/ingest/hash-skip.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import { indexerDatabase } from '../support/harness.ts';
import { hashEmbedder } from '../support/hash-embedder.ts';

const embedder = hashEmbedder({ dimensions: 64, maxTokens: 64 });
let db: Database;
let drop: () => Promise<void>;
let org: string;

before(async () => {
  ({ db, drop } = await indexerDatabase('pglite', embedder));
  org = (await createOrganization(db, 'checkpoints')).id;
});
after(async () => drop?.());

/** WAL bytes written since the last checkpoint's redo point. */
async function walSinceCheckpoint(): Promise<number> {
  const [row] = await db.query<{ bytes: number }>(
    `SELECT (pg_current_wal_lsn() - (SELECT redo_lsn FROM pg_control_checkpoint()))::float8 AS bytes`,
  );
  return row!.bytes;
}

async function storeAndDrain(key: string, checkpointWalBytes?: number): Promise<void> {
  await db.transaction((tx) =>
    storeDocument(
      tx,
      org,
      {
        sourceType: 'upload',
        sourceTableName: 'uploaded_documents',
        sourceKey: key,
        title: `Guide ${key}`,
        markdown: Array.from({ length: 40 }, (_, i) => `## Part ${i}\n\nThe ${key} guide, part ${i}.`).join(
          '\n\n',
        ),
        url: '',
        visibility: 'public',
        tags: [],
      },
      { respectTombstones: false },
    ),
  );
  const opts = checkpointWalBytes === undefined ? {} : { checkpointWalBytes };
  assert.equal(await new Indexer(db, embedder, { pollMs: 50, ...opts }).drain(), 1);
}

test('an idle drain leaves WAL since the last checkpoint while it is under the threshold', async () => {
  await storeAndDrain('first');
  assert.ok((await walSinceCheckpoint()) > 0, 'the drain wrote WAL and did not checkpoint for it');
});

test('an idle drain checkpoints once more WAL than the threshold was written since the last checkpoint', async () => {
  await storeAndDrain('second', 1);
  // The checkpoint's own record is all that follows its redo point.
  assert.ok((await walSinceCheckpoint()) < 4096, 'the drain checkpointed');
});
