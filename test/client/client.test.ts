/** The typed client against the real service on loopback: calls, the bearer key, and the API's errors. */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createKbClient, KbApiError, ok } from '../../src/client/index.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

let t: TestApp;
let baseUrl: string;

before(async () => {
  t = await startTestApp('pglite');
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
after(() => t.close());

test('uploads, lists and reads stats with the organization key, typed end to end', async () => {
  const client = createKbClient({ baseUrl: `${baseUrl}/`, apiKey: t.orgA.key });
  const up = await ok(
    client.POST('/api/connect/knowledgebase-items', {
      body: { title: 'Typed client', content: 'Uploaded through openapi-fetch.', tags: ['client'] },
    }),
  );
  assert.equal(up.item.title, 'Typed client');
  assert.equal(up.item.indexing_status, 'pending');

  const page = await ok(
    client.POST('/api/connect/knowledgebase-items/query', { body: { search: 'openapi-fetch', limit: 10 } }),
  );
  assert.deepEqual(
    page.items.map((i) => i.id),
    [up.item.id],
  );
  const stats = await ok(client.GET('/api/connect/knowledgebase-items/stats'));
  assert.equal(stats.byIndexingStatus.pending, 1);

  // Organization B's key sees none of it: the key is what the client sends, per client.
  const other = createKbClient({ baseUrl, apiKey: t.orgB.key });
  const theirs = await ok(
    other.POST('/api/connect/knowledgebase-items/query', { body: { search: 'openapi-fetch' } }),
  );
  assert.equal(theirs.items.length, 0);
});

test("errors come back as KbApiError with the API's code and message", async () => {
  const anonymous = createKbClient({ baseUrl });
  await assert.rejects(ok(anonymous.GET('/api/connect/connections')), (err: unknown) => {
    assert.ok(err instanceof KbApiError);
    assert.equal(err.status, 401);
    assert.equal(err.code, 'unauthorized');
    assert.ok(err.message.length > 0);
    return true;
  });
  const client = createKbClient({ baseUrl, apiKey: t.orgA.key });
  await assert.rejects(
    ok(client.GET('/api/connect/crawling/{id}', { params: { path: { id: 'no-such-crawl' } } })),
    (err: unknown) => err instanceof KbApiError && err.status === 404 && err.code === 'not_found',
  );
  // A body the schema refuses: the service's message names the field.
  await assert.rejects(
    ok(client.POST('/api/connect/knowledgebase-items', { body: { title: '', content: 'x' } })),
    (err: unknown) => err instanceof KbApiError && err.status === 400 && /title/.test(err.message),
  );
});
