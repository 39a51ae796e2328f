import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

for (const mode of STORAGE_MODES) {
  describe(`knowledge-base items (${mode})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(mode);
    });
    after(async () => t?.close());

    const upload = async (
      title: string,
      content: string,
      extra: Record<string, unknown> = {},
      key?: string,
    ) => {
      const res = await t.call('POST', '/api/connect/knowledgebase-items', {
        body: { title, content, ...extra },
        key,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.item as { id: string; title: string };
    };

    test('upload, then query lists it newest first with the seed fields', async () => {
      const first = await upload('First doc', 'Alpha content about pricing.');
      const second = await upload('Second doc', 'Beta content about refunds.', {
        source_url: 'https://example.com/beta',
        tags: ['billing'],
        visibility: 'private',
      });
      const res = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: {} });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.items.map((i: { id: string }) => i.id),
        [second.id, first.id],
      );
      const item = res.body.items[0];
      assert.equal(item.title, 'Second doc');
      assert.equal(item.visibility, 'private');
      assert.equal(item.source_type, 'upload');
      assert.equal(item.source_table_name, 'uploaded_documents');
      assert.equal(item.source_url, 'https://example.com/beta');
      assert.deepEqual(item.tags, ['billing']);
      assert.deepEqual(res.body.pagination, {
        current_page: 1,
        total_pages: 1,
        total_items: 2,
        items_per_page: 20,
        has_next_page: false,
        has_previous_page: false,
      });
    });

    test('another organization sees none of it, and cannot change or delete it', async () => {
      const mine = await upload('Private plan', 'Secret roadmap text');
      const theirs = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: {},
        key: t.orgB.key,
      });
      assert.equal(theirs.status, 200);
      assert.equal(theirs.body.items.length, 0);
      assert.equal(theirs.body.pagination.total_items, 0);

      const upd = await t.call('PUT', '/api/connect/knowledgebase-items', {
        body: [{ id: mine.id, title: 'hijacked' }],
        key: t.orgB.key,
      });
      assert.equal(upd.status, 200);
      assert.deepEqual(upd.body, { success: true, updated: 0, notFound: [mine.id] });

      const del = await t.call('DELETE', '/api/connect/knowledgebase-items', {
        body: { ids: [mine.id] },
        key: t.orgB.key,
      });
      assert.deepEqual(del.body, { success: true, deleted: 0 });

      const still = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'Secret roadmap' },
      });
      assert.equal(still.body.items.length, 1);
      assert.equal(still.body.items[0].title, 'Private plan');
    });

    test('search matches title and content, case-insensitively, and treats % literally', async () => {
      await upload('Shipping FAQ', 'We ship worldwide within 5 days.');
      await upload('Discounts', 'Save 100% on nothing.');
      const byContent = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'WORLDWIDE' },
      });
      assert.deepEqual(
        byContent.body.items.map((i: { title: string }) => i.title),
        ['Shipping FAQ'],
      );
      const byTitle = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'shipping faq' },
      });
      assert.equal(byTitle.body.items.length, 1);
      const pct = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: '100%' },
      });
      assert.deepEqual(
        pct.body.items.map((i: { title: string }) => i.title),
        ['Discounts'],
      );
      const none = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { search: '%' } });
      assert.equal(none.body.items.length, 1);
    });

    test('paging is truthful, including past the end', async () => {
      const all = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { limit: 100 } });
      const total = all.body.pagination.total_items as number;
      assert.ok(total >= 5);
      const p2 = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { limit: 2, page: 2 },
      });
      assert.equal(p2.body.items.length, 2);
      assert.deepEqual(
        p2.body.items.map((i: { id: string }) => i.id),
        all.body.items.slice(2, 4).map((i: { id: string }) => i.id),
      );
      assert.equal(p2.body.pagination.total_pages, Math.ceil(total / 2));
      assert.equal(p2.body.pagination.has_previous_page, true);
      assert.equal(p2.body.pagination.has_next_page, 2 < Math.ceil(total / 2));
      const past = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { limit: 2, page: 999 },
      });
      assert.equal(past.status, 200);
      assert.deepEqual(past.body.items, []);
      assert.equal(past.body.pagination.total_items, total);
      assert.equal(past.body.pagination.current_page, 999);
      assert.equal(past.body.pagination.has_next_page, false);
    });

    test('update renames and reports unknown ids; delete removes', async () => {
      const a = await upload('Old name', 'content a');
      const upd = await t.call('PUT', '/api/connect/knowledgebase-items', {
        body: [
          { id: a.id, title: 'New name', tags: ['x'] },
          { id: 'does-not-exist', title: 'nope' },
        ],
      });
      assert.equal(upd.status, 200);
      assert.deepEqual(upd.body, { success: true, updated: 1, notFound: ['does-not-exist'] });
      const found = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'New name' },
      });
      assert.equal(found.body.items[0].id, a.id);
      assert.deepEqual(found.body.items[0].tags, ['x']);

      const del = await t.call('DELETE', '/api/connect/knowledgebase-items', {
        body: { ids: [a.id, a.id, 'nope'] },
      });
      assert.deepEqual(del.body, { success: true, deleted: 1 });
      const gone = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'New name' },
      });
      assert.equal(gone.body.items.length, 0);
    });
  });
}
