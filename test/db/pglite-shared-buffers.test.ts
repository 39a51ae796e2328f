/**
 * Embedded mode sizes PGlite's buffer pool to its data directory (src/db/pglite.ts): a big knowledge base
 * keeps more of its indexes in memory, a small one keeps PGlite's small default.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../src/db/open.ts';
import { defaultSharedBuffersMb } from '../../src/db/pglite.ts';
import { testConfig } from '../support/harness.ts';

test('the default is a quarter of the data dir, between 128 and 512 MB', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kb-sb-'));
  try {
    assert.equal(defaultSharedBuffersMb(null), 128);
    assert.equal(defaultSharedBuffersMb(path.join(dir, 'missing')), 128);
    // Sparse files: sizes on disk as stat reports them, without writing gigabytes.
    const sized = (name: string, mb: number) => {
      writeFileSync(path.join(dir, name), '');
      truncateSync(path.join(dir, name), mb * 2 ** 20);
    };
    sized('a', 1000); // 1000 MB: a quarter is 250, stepped up to 256
    assert.equal(defaultSharedBuffersMb(dir), 256);
    mkdirSync(path.join(dir, 'base'));
    sized('base/b', 3000); // 4000 MB in all, a subdirectory's included: 1000, capped at 512
    assert.equal(defaultSharedBuffersMb(dir), 512);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('KB_PGLITE_SHARED_BUFFERS_MB reaches PGlite', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kb-sb-'));
  // The setting as an operator gives it: an environment variable, read by the service's config.
  const db = await openDatabase(testConfig({ KB_DATA_DIR: dir, KB_PGLITE_SHARED_BUFFERS_MB: '64' }));
  try {
    const [row] = await db.query<{ setting: string }>("SELECT current_setting('shared_buffers') AS setting");
    assert.equal(row!.setting, '64MB');
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
