/** GET /api/connect/knowledgebase-items/{id} (extension): one item with its full text, tenant-scoped. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

for (const mode of STORAGE_MODES) {
  describe(`get one item with its content (${mode})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(mode);
    });
    after(async () => t?.close());

    test('answers the item with the content it was stored with; other ids are 404', async () => {
      const content =
        '# Returns\n\nItems can be returned within **30 days**.\n\n- unopened\n- with a receipt\n';
      const up = await t.call('POST', '/api/connect/knowledgebase-items', {
        body: {
          title: 'Returns policy',
          content,
          tags: ['policy'],
          source_url: 'https://example.com/returns',
        },
      });
      assert.equal(up.status, 200, JSON.stringify(up.body));
      const id = up.body.item.id as string;

      const res = await t.call('GET', `/api/connect/knowledgebase-items/${id}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.item, { ...up.body.item, content });

      // The stats route beside it is still the stats route, not an item id.
      const stats = await t.call('GET', '/api/connect/knowledgebase-items/stats');
      assert.equal(stats.status, 200);
      assert.equal(stats.body.total, 1);

      expectError(await t.call('GET', '/api/connect/knowledgebase-items/no-such-item'), 404, 'not_found');
      expectError(
        await t.call('GET', `/api/connect/knowledgebase-items/${id}`, { key: t.orgB.key }),
        404,
        'not_found',
      );
      expectError(
        await t.call('GET', `/api/connect/knowledgebase-items/${id}`, { key: null }),
        401,
        'unauthorized',
      );
      expectError(await t.call('GET', `/api/connect/knowledgebase-items/${id}?x=1`), 400, 'invalid_request');
      expectError(
        await t.call('GET', `/api/connect/knowledgebase-items/${'x'.repeat(201)}`),
        400,
        'invalid_request',
      );
    });
  });
}
