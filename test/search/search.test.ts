import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Embedder } from '../../src/embedding/index.ts';
import { toVectorLiteral } from '../../src/embedding/vector.ts';
import { search } from '../../src/search/search.ts';
import { ensureVectorIndex, ModelMismatchError } from '../../src/search/vector-index.ts';
import { testEmbedder, withSearch } from '../support/embedding.ts';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

const DOCS = [
  {
    title: 'Refund policy',
    content:
      '# Refunds\n\nCustomers can return any product within 30 days for a full refund of the purchase price.',
    tags: ['billing'],
  },
  {
    title: 'Shipping times',
    content:
      '# Shipping\n\nOrders ship from our warehouse in Rotterdam and usually arrive within three business days.',
    tags: ['logistics'],
  },
  {
    title: 'Password reset',
    content:
      '# Account\n\nTo reset your password, open Settings, choose Security and click "Send reset link".',
    tags: ['account'],
    visibility: 'private',
  },
  {
    title: 'Release notes',
    content: '# 2.4\n\nThe zyxwvut flag enables the experimental query planner in version 2.4.',
    tags: ['changelog'],
  },
];

for (const mode of STORAGE_MODES) {
  describe(`search (${mode})`, () => {
    let t: TestApp;
    let drain: () => Promise<number>;
    before(async () => {
      t = await startTestApp(mode);
      ({ drain } = await withSearch(t));
      for (const d of DOCS) {
        const res = await t.call('POST', '/api/connect/knowledgebase-items', { body: d });
        assert.equal(res.status, 200);
        assert.equal(res.body.item.indexing_status, 'pending');
      }
      // Org B has a near-copy of a doc: it must never show up in org A's results.
      await t.call('POST', '/api/connect/knowledgebase-items', {
        key: t.orgB.key,
        body: {
          title: 'Refund policy (org B)',
          content: 'Org B refunds within 30 days too.',
          tags: ['billing'],
        },
      });
      assert.equal(await drain(), DOCS.length + 1);
    });
    after(async () => t?.close());

    const find = (body: Record<string, unknown>, key?: string) =>
      t.call('POST', '/api/consume/search', { body, key });

    test('uploaded items become indexed and the nearest chunk answers the question', async () => {
      const items = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: {} });
      assert.ok(items.body.items.every((i: { indexing_status: string }) => i.indexing_status === 'indexed'));
      const res = await find({ query: 'how long do I have to send an item back for my money?' });
      assert.equal(res.status, 200);
      const top = res.body.result[0];
      assert.equal(top.title, 'Refund policy');
      assert.match(top.chunk_plain_text, /30 days/);
      assert.equal(top.chunk_index, 0);
      assert.equal(top.source_type, 'upload');
      assert.equal(top.source_table_name, 'uploaded_documents');
      assert.equal(top.visibility, 'public');
      assert.ok(top.distance >= 0 && top.distance < 1);
      const distances = res.body.result.map((r: { distance: number }) => r.distance);
      assert.deepEqual(
        distances,
        [...distances].sort((a, b) => a - b),
      );
      // pgvector's text form, with the model's dimension.
      assert.match(top.embedding, /^\[-?\d/);
      const vec = JSON.parse(top.embedding) as number[];
      assert.equal(vec.length, t.service.embedding.embedder()!.dimensions);
      const norm = Math.sqrt(vec.reduce((s, x) => s + x * x, 0));
      assert.ok(Math.abs(norm - 1) < 1e-3);
    });

    test("never returns another organization's chunks, whatever the filters", async () => {
      for (const body of [
        { query: 'refund within 30 days' },
        { query: 'refund within 30 days', tags: ['billing'] },
        { query: 'refund', mode: 'hybrid', limit: 100 },
        { query: 'refund', mode: 'keyword' },
      ]) {
        const a = await find(body);
        assert.ok(a.body.result.length > 0);
        assert.ok(
          a.body.result.every((r: { title: string }) => !r.title.includes('org B')),
          JSON.stringify(body),
        );
        const b = await find(body, t.orgB.key);
        assert.ok(
          b.body.result.every((r: { title: string }) => r.title.includes('org B')),
          JSON.stringify(body),
        );
      }
      expectError(await find({ query: 'x', tenantId: t.orgB.id }), 403, 'forbidden');
      assert.equal((await find({ query: 'x', tenantId: t.orgA.id })).status, 200);
    });

    test('tags, visibility, source types, threshold and includeEmbedding filter as documented', async () => {
      const tagged = await find({ query: 'shipping', tags: ['account', 'changelog'], limit: 10 });
      assert.deepEqual(
        new Set(tagged.body.result.map((r: { title: string }) => r.title)),
        new Set(['Password reset', 'Release notes']),
      );
      const priv = await find({ query: 'anything', visibility: ['private'] });
      assert.deepEqual(
        priv.body.result.map((r: { title: string }) => r.title),
        ['Password reset'],
      );
      assert.equal((await find({ query: 'anything', sourceTypes: ['crawl'] })).body.result.length, 0);
      const all = await find({ query: 'refund', limit: 10 });
      const cut = (all.body.result[0].distance + all.body.result[1].distance) / 2;
      const thresholded = await find({ query: 'refund', limit: 10, cosineDistanceThreshold: cut });
      assert.equal(thresholded.body.result.length, 1);
      assert.ok(thresholded.body.result.every((r: { distance: number }) => r.distance <= cut));
      const bare = await find({ query: 'refund', includeEmbedding: false });
      assert.equal(bare.body.result[0].embedding, undefined);
    });

    test('hybrid finds a rare keyword the vector side alone ranks low', async () => {
      const hybrid = await find({ query: 'what does zyxwvut do', mode: 'hybrid', limit: 3 });
      assert.equal(hybrid.body.result[0].title, 'Release notes');
      assert.ok(typeof hybrid.body.result[0].distance === 'number');
      const kw = await find({ query: 'which zyxwvut option enables the planner please', mode: 'keyword' });
      assert.equal(kw.body.result[0].title, 'Release notes');
    });

    test('renames show at once; deleted and re-ingested content never shows stale', async () => {
      const list = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'Shipping times' },
      });
      const id = list.body.items[0].id;
      await t.call('PUT', '/api/connect/knowledgebase-items', { body: [{ id, title: 'Delivery times' }] });
      const renamed = await find({ query: 'warehouse in Rotterdam', limit: 1 });
      assert.equal(renamed.body.result[0].title, 'Delivery times');
      await t.call('DELETE', '/api/connect/knowledgebase-items', { body: { ids: [id] } });
      const gone = await find({ query: 'warehouse in Rotterdam', limit: 10, mode: 'hybrid' });
      assert.ok(
        gone.body.result.every(
          (r: { chunk_plain_text: string }) => !r.chunk_plain_text.includes('Rotterdam'),
        ),
      );
    });

    test('bad input is a 400 naming the field', async () => {
      for (const [body, field] of [
        [{}, 'query'],
        [{ query: '   ' }, 'query'],
        [{ query: 'x'.repeat(2001) }, 'query'],
        [{ query: 'x', limit: 0 }, 'limit'],
        [{ query: 'x', limit: 101 }, 'limit'],
        [{ query: 'x', cosineDistanceThreshold: 3 }, 'cosineDistanceThreshold'],
        [{ query: 'x', tags: 'billing' }, 'tags'],
        [{ query: 'x', mode: 'fuzzy' }, 'mode'],
      ] as const) {
        const res = await find(body);
        expectError(res, 400, 'invalid_request');
        assert.match(res.body.message, new RegExp(field));
      }
    });
  });
}

describe('selective filters (postgres)', () => {
  let t: TestApp;
  let embedder: Embedder;
  const N = 3000;
  before(async () => {
    t = await startTestApp('postgres');
    embedder = await testEmbedder();
    await ensureVectorIndex(t.db, { id: embedder.modelId, dimensions: embedder.dimensions });
    // Real vectors of a few sentences, perturbed into N distinct chunks; 1% of them carry the tag "rare".
    const base = await embedder.embed(['refund policy', 'shipping times', 'password reset', 'release notes']);
    await t.db.query(
      `INSERT INTO items (id, organization_id, title, source_type, source_table_name, source_key, indexing_status, search_words)
       VALUES ('bulk', $1, 'bulk', 'upload', 'uploaded_documents', 'upload:bulk', 'indexed', 'bulk')`,
      [t.orgA.id],
    );
    const rows = Array.from({ length: N }, (_, i) => {
      const b = base[i % base.length]!;
      const v = Array.from(b, (x, j) => x + 0.05 * Math.sin(i * 7.1 + j * 1.3));
      const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
      return {
        i,
        vec: toVectorLiteral(v.map((x) => x / norm)),
        tags: i % 100 === 37 ? ['rare'] : ['common'],
      };
    });
    await t.db.query(
      `INSERT INTO chunks (item_id, organization_id, chunk_index, text, embedding, model_id, tsv, tags, visibility, source_type)
       SELECT 'bulk', $1, u.i, 'chunk ' || u.i, u.v::vector, $2, to_tsvector('simple', 'chunk'), ARRAY[u.t], 'public', 'upload'
         FROM unnest($3::int[], $4::text[], $5::text[]) AS u(i, v, t)`,
      [t.orgA.id, embedder.modelId, rows.map((r) => r.i), rows.map((r) => r.vec), rows.map((r) => r.tags[0])],
    );
    await t.db.exec('ANALYZE chunks');
  });
  after(async () => t?.close());

  test('a tag on 1% of the chunks still yields the nearest `limit` matching chunks', async () => {
    const [q] = await embedder.embed(['how do refunds work']);
    const hits = await search(
      t.db,
      {
        organizationId: t.orgA.id,
        vector: q!,
        text: 'refunds',
        limit: 25,
        mode: 'semantic',
        tags: ['rare'],
        includeEmbedding: false,
      },
      embedder.dimensions,
    );
    assert.equal(hits.length, 25);
    // Against an exact scan of the same filter.
    const exact = await t.db.query<{ chunk_index: number }>(
      `SELECT chunk_index FROM chunks WHERE organization_id = $1 AND tags && ARRAY['rare']
        ORDER BY embedding <=> $2::vector LIMIT 25`,
      [t.orgA.id, toVectorLiteral(q!)],
    );
    const got = new Set(hits.map((h) => h.chunk_index));
    const overlap = exact.filter((r) => got.has(r.chunk_index)).length;
    assert.ok(overlap >= 24, `recall ${overlap}/25`);
    assert.ok(hits.every((h) => h.chunk_index % 100 === 37));
  });

  test('a service started with another model refuses to mix vectors', async () => {
    await assert.rejects(
      ensureVectorIndex(t.db, { id: 'other-model', dimensions: embedder.dimensions }),
      (err: Error) => err instanceof ModelMismatchError && /kb reembed/.test(err.message),
    );
  });
});
