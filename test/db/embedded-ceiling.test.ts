/**
 * The embedded ceiling: the data directory's items and chunks against the measured
 * ceiling, in /readyz (embedded mode only, additive) and in the start-up log line, with the warning from
 * NEAR_CEILING_SHARE of the ceiling on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Queryable } from '../../src/db/database.ts';
import {
  ceilingStatus,
  ceilingWarning,
  EMBEDDED_CEILING,
  embeddedCeilingStatus,
  logEmbeddedCeiling,
  NEAR_CEILING_SHARE,
} from '../../src/db/embedded-ceiling.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { migrate } from '../../src/db/migrate.ts';
import { newId } from '../../src/lib/ids.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

/** `items` items of `chunksEach` chunks each (a constant vector: only the counts matter here). */
async function addItems(db: Queryable, orgId: string, items: number, chunksEach: number): Promise<void> {
  const ids = Array.from({ length: items }, () => newId());
  await db.query(
    `INSERT INTO items (id, organization_id, title, content, content_hash, source_type, source_table_name, source_key, indexing_status, search_words)
     SELECT u.id, $1, 'title', 'content', md5(u.id), 'upload', 'uploaded_documents', 'upload:' || u.id, 'indexed', 'title content'
       FROM unnest($2::text[]) AS u(id)`,
    [orgId, ids],
  );
  await db.query(
    `INSERT INTO chunks (item_id, organization_id, chunk_index, text, embedding, model_id, tsv, visibility, source_type)
     SELECT u.id, $1, i, 'text', '[1,0,0]'::vector, 'm', to_tsvector('english', 'text'), 'public', 'upload'
       FROM unnest($2::text[]) AS u(id), generate_series(0, $3::int - 1) AS i`,
    [orgId, ids, chunksEach],
  );
}

describe('embedded ceiling: the share and the warning', () => {
  test('below, near and beyond the ceiling, by items or by chunks', () => {
    const below = ceilingStatus({ items: 10, chunks: 40 });
    assert.equal(below.near, false);
    assert.equal(ceilingWarning(below), null);
    const nearByChunks = ceilingStatus({
      items: 1,
      chunks: Math.ceil(EMBEDDED_CEILING.chunks * NEAR_CEILING_SHARE),
    });
    assert.equal(nearByChunks.near, true);
    assert.equal(nearByChunks.over, false);
    assert.match(
      ceilingWarning(nearByChunks)!,
      /near embedded mode's measured ceiling.*kb export-to-postgres/,
    );
    const overByItems = ceilingStatus({ items: EMBEDDED_CEILING.items, chunks: 0 });
    assert.equal(overByItems.over, true);
    assert.match(ceilingWarning(overByItems)!, /beyond/);
    assert.equal(
      ceilingStatus({ items: 0, chunks: Math.floor(EMBEDDED_CEILING.chunks * NEAR_CEILING_SHARE) - 1 }).near,
      false,
    );
  });

  test('counts every organization of the data directory; the start-up line says so', async () => {
    const db = await openPglite(null);
    try {
      await migrate(db);
      await db.query("INSERT INTO organizations (id, name) VALUES ('o1', 'one'), ('o2', 'two')");
      await addItems(db, 'o1', 3, 4);
      await addItems(db, 'o2', 2, 1);
      const s = await embeddedCeilingStatus(db);
      assert.deepEqual([s.items, s.chunks], [5, 14]);
      const lines: Array<{ level: string; obj: any; msg: string }> = [];
      const log = {
        info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }),
        warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }),
      };
      await logEmbeddedCeiling(db, log);
      assert.equal(lines.length, 1);
      assert.equal(lines[0]!.level, 'info');
      assert.deepEqual(lines[0]!.obj.embeddedCeiling.chunks, 14);
    } finally {
      await db.close();
    }
  });
});

for (const mode of STORAGE_MODES) {
  describe(`/readyz and the embedded ceiling (${mode})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(mode);
      await addItems(t.db, t.orgA.id, 2, 3);
    });
    after(async () => t?.close());

    test(
      mode === 'pglite'
        ? 'an `embedded` field with the counts and the ceiling'
        : 'no `embedded` field in server mode',
      async () => {
        const res = await t.call('GET', '/readyz', { key: null });
        assert.ok(res.status === 200 || res.status === 503, JSON.stringify(res.body));
        // The existing fields are unchanged (no model here, so the embedding check is not ok).
        assert.equal(res.body.checks.database, 'ok');
        assert.equal(typeof res.body.status, 'string');
        if (mode === 'postgres') {
          assert.equal(res.body.embedded, undefined);
          return;
        }
        assert.deepEqual(res.body.embedded, {
          items: 2,
          chunks: 6,
          ceiling: { items: EMBEDDED_CEILING.items, chunks: EMBEDDED_CEILING.chunks },
          share: ceilingStatus({ items: 2, chunks: 6 }).share,
          nearCeiling: false,
        });
      },
    );
  });
}
