/**
 * Tenant isolation: organization A holds one of everything (an uploaded item with its own tag,
 * a synced connection with a job, a crawl job, an OAuth-free secret id). Organization B then walks every
 * organization-scoped route with A's identifiers, tags, tenantId, connection type and ids. Each answer must
 * be a 404 (or 403 for a foreign tenantId), or a success that shows and touches nothing of A's. Afterwards,
 * A's rows are exactly as they were.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.ts';
import { connect, type SyncApp, startSyncApp, syncAndWait } from '../jobs/helpers.ts';
import { withSearch } from '../support/embedding.ts';
import { expectError, STORAGE_MODES } from '../support/harness.ts';

/** Everything of one organization that another could touch, as one comparable value. */
async function snapshot(db: Database, organizationId: string): Promise<string> {
  const parts = await Promise.all([
    db.query(
      `SELECT id, title, tags, visibility, indexing_status, updated_at::text, source_key FROM items
        WHERE organization_id = $1 ORDER BY id`,
      [organizationId],
    ),
    db.query(
      `SELECT c.id, c.item_id, c.tags FROM chunks c JOIN items i ON i.id = c.item_id
        WHERE i.organization_id = $1 ORDER BY c.id`,
      [organizationId],
    ),
    db.query(
      'SELECT id, type, status, updated_at::text, credentials_encrypted FROM connections WHERE organization_id = $1 ORDER BY id',
      [organizationId],
    ),
    db.query('SELECT id, status, updated_at::text FROM jobs WHERE organization_id = $1 ORDER BY id', [
      organizationId,
    ]),
    db.query('SELECT id, revoked_at::text FROM api_keys WHERE organization_id = $1 ORDER BY id', [
      organizationId,
    ]),
    db.query('SELECT source_key FROM item_tombstones WHERE organization_id = $1 ORDER BY source_key', [
      organizationId,
    ]),
  ]);
  return JSON.stringify(parts);
}

for (const mode of STORAGE_MODES) {
  describe(`tenant isolation: another organization's ids get nothing (${mode})`, () => {
    let s: SyncApp;
    let site: FakeServer;
    before(async () => {
      s = await startSyncApp(mode);
      site = await startFakeServer(() => ({
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: '<html><head><title>Walrus care</title></head><body><main><h1>Walrus care</h1><p>Walruses need cold water and a lot of clams every single day.</p></main></body></html>',
      }));
    });
    after(async () => {
      await s?.close();
      await site?.close();
    });

    test('every organization-scoped route, called by B with A’s identifiers', async () => {
      const { t, source } = s;
      const search = await withSearch(t);
      const A = t.orgA;
      const B = { key: t.orgB.key };

      // A's world.
      const upload = await t.call('POST', '/api/connect/knowledgebase-items', {
        body: {
          title: 'Penguin handbook',
          content: 'Emperor penguins huddle together through the polar winter.',
          tags: ['team-a-only'],
        },
      });
      assert.equal(upload.status, 200, JSON.stringify(upload.body));
      const itemId = upload.body.item.id as string;
      source.put('p1', 'Synced page of A', 'Only organization A may read this synced page about glaciers.');
      const connectionId = await connect(t);
      const job = await syncAndWait(t);
      assert.equal(job.status, 'succeeded');
      const crawl = await t.call('POST', '/api/connect/crawling/', {
        body: { url: `${site.url}/`, limit: 1 },
      });
      assert.equal(crawl.status, 200, JSON.stringify(crawl.body));
      const crawlId = crawl.body.id as string;
      for (let i = 0; ; i++) {
        const c = await t.call('GET', `/api/connect/crawling/${crawlId}`);
        if (['completed', 'failed', 'cancelled'].includes(c.body.status)) break;
        assert.ok(i < 400, 'the crawl ends');
        await new Promise((r) => setTimeout(r, 25));
      }
      await search.drain();
      const before = await snapshot(t.db, A.id);
      assert.ok(JSON.parse(before)[0].length >= 3, 'A holds an upload, a synced page and a crawled page');

      // Reads: nothing of A's is visible.
      const items = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        key: B.key,
        body: { limit: 100 },
      });
      assert.equal(items.status, 200);
      assert.deepEqual(items.body.items, []);
      const found = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        key: B.key,
        body: { search: 'penguin' },
      });
      assert.deepEqual(found.body.items, []);
      for (const body of [
        { query: 'emperor penguins in winter' },
        { query: 'emperor penguins in winter', tags: ['team-a-only'] },
        { query: 'glaciers', sourceTypes: ['integration', 'crawl', 'upload'] },
        { query: 'walrus clams', visibility: ['public', 'private'] },
      ]) {
        const res = await t.call('POST', '/api/consume/search', { key: B.key, body });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body.result, [], `B's search ${JSON.stringify(body)} sees nothing`);
      }
      // The same search by A does find its own content: the empty answers above are isolation, not emptiness.
      const own = await t.call('POST', '/api/consume/search', {
        body: { query: 'emperor penguins in winter' },
      });
      assert.ok(own.body.result.some((r: { item_id: string }) => r.item_id === itemId));
      expectError(
        await t.call('POST', '/api/consume/search', {
          key: B.key,
          body: { query: 'penguins', tenantId: A.id },
        }),
        403,
        'forbidden',
      );
      expectError(
        await t.call('GET', `/api/connect/knowledgebase-items/${itemId}`, { key: B.key }),
        404,
        'not_found',
      );
      expectError(await t.call('GET', `/api/connect/crawling/${crawlId}`, { key: B.key }), 404, 'not_found');
      const crawls = await t.call('GET', '/api/connect/crawling/', { key: B.key });
      assert.equal(crawls.status, 200);
      assert.equal(crawls.body.total, 0);
      const connections = await t.call('GET', '/api/connect/connections', { key: B.key });
      assert.deepEqual(connections.body.data, []);
      const stats = await t.call('GET', '/api/connect/knowledgebase-items/stats', { key: B.key });
      assert.equal(stats.status, 200, JSON.stringify(stats.body));
      assert.deepEqual(
        [stats.body.total, stats.body.chunks, stats.body.byConnection],
        [0, 0, []],
        "B's stats count none of A's items, chunks or connections",
      );
      const types = await t.call('GET', '/api/connect/connection-types', { key: B.key });
      assert.equal(types.status, 200, JSON.stringify(types.body));
      assert.deepEqual(
        types.body,
        (await t.call('GET', '/api/connect/connection-types')).body,
        'the source types are the service’s own, the same for every organization',
      );
      expectError(
        await t.call('GET', `/api/connect/connection-sync-jobs?connectionId=${connectionId}`, { key: B.key }),
        404,
        'not_found',
      );
      expectError(
        await t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space', { key: B.key }),
        404,
        'not_found',
      );

      // Writes: refused or touching nothing.
      expectError(
        await t.call('POST', '/api/connect/run-sync', { key: B.key, body: { connectionId } }),
        404,
        'not_found',
      );
      expectError(
        await t.call('POST', '/api/connect/run-sync', { key: B.key, body: { type: 'docs_space' } }),
        404,
        'not_found',
      );
      expectError(
        await t.call('PATCH', '/api/connect/set-connection-status', {
          key: B.key,
          body: { connectionId, status: 'inactive' },
        }),
        404,
        'not_found',
      );
      expectError(
        await t.call('DELETE', '/api/connect/connection', { key: B.key, body: { connectionId } }),
        404,
        'not_found',
      );
      expectError(
        await t.call('DELETE', '/api/connect/connection', { key: B.key, body: { type: 'docs_space' } }),
        404,
        'not_found',
      );
      expectError(
        await t.call('DELETE', `/api/connect/crawling/${crawlId}`, { key: B.key }),
        404,
        'not_found',
      );
      const renamed = await t.call('PUT', '/api/connect/knowledgebase-items', {
        key: B.key,
        body: [{ id: itemId, title: 'Taken over' }],
      });
      assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
      assert.deepEqual(
        [renamed.body.updated, renamed.body.notFound],
        [0, [itemId]],
        'the rename reached no item of A',
      );
      const reembed = await t.call('POST', '/api/connect/knowledgebase-items/reembed', {
        key: B.key,
        body: {},
      });
      assert.equal(reembed.status, 200, JSON.stringify(reembed.body));
      assert.deepEqual(
        [reembed.body.marked, reembed.body.pending],
        [0, 0],
        "B's re-embedding marks none of A's items",
      );
      const deleted = await t.call('DELETE', '/api/connect/knowledgebase-items', {
        key: B.key,
        body: { ids: [itemId] },
      });
      assert.ok(
        deleted.status === 404 || (deleted.status === 200 && deleted.body.deleted === 0),
        JSON.stringify(deleted.body),
      );
      const exists = await t.call('GET', `/api/connect/secret-id-exists?secretId=${connectionId}`, {
        key: B.key,
      });
      assert.equal(exists.body.exists, false);

      // B's own connection of the same type is B's alone: it neither sees nor replaces A's.
      const bConnection = await connect(t, {}, B.key);
      assert.notEqual(bConnection, connectionId);

      const afterWalk = await snapshot(t.db, A.id);
      assert.equal(afterWalk, before, "A's rows are exactly as they were");
      // And A still reads everything it had.
      const mine = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { limit: 100 } });
      assert.ok(
        mine.body.items.some(
          (i: { id: string; title: string }) => i.id === itemId && i.title === 'Penguin handbook',
        ),
      );
    });
  });
}
