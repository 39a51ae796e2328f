import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

const ADMIN = 'admin-token-for-tests-0123456789';

for (const mode of STORAGE_MODES) {
  describe(`admin API (${mode})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(mode, { config: { KB_ADMIN_TOKEN: ADMIN } });
    });
    after(async () => t?.close());

    test('provisions an organization whose key works at once, more keys, and revocation', async () => {
      expectError(
        await t.call('POST', '/api/admin/organizations', { key: null, body: { name: 'acme' } }),
        401,
        'unauthorized',
      );
      expectError(
        await t.call('POST', '/api/admin/organizations', { key: t.orgA.key, body: { name: 'acme' } }),
        401,
        'unauthorized',
      );
      const created = await t.call('POST', '/api/admin/organizations', {
        key: ADMIN,
        body: { name: 'acme' },
      });
      assert.equal(created.status, 200);
      assert.equal(created.body.name, 'acme');
      assert.match(created.body.apiKey, /^kb_[0-9a-f]{16}_/);
      expectError(
        await t.call('POST', '/api/admin/organizations', { key: ADMIN, body: { name: 'acme' } }),
        409,
        'conflict',
      );

      const q = (key: string) => t.call('POST', '/api/connect/knowledgebase-items/query', { key, body: {} });
      assert.equal((await q(created.body.apiKey)).status, 200);
      const second = await t.call('POST', `/api/admin/organizations/${created.body.id}/keys`, { key: ADMIN });
      assert.equal(second.status, 200);
      assert.equal((await q(second.body.apiKey)).status, 200);
      const used = await t.db.query<{ last_used_at: string | null }>(
        'SELECT last_used_at::text FROM api_keys WHERE id = $1',
        [second.body.id],
      );
      assert.ok(used[0]!.last_used_at, 'a key records when it was last used');
      expectError(
        await t.call('POST', '/api/admin/organizations/nope/keys', { key: ADMIN }),
        404,
        'not_found',
      );

      // Keys are stored hashed: the plaintext appears nowhere in the database.
      const stored = await t.db.query<{ secret_hash: string }>('SELECT secret_hash FROM api_keys');
      const secret = second.body.apiKey.slice('kb_'.length + 17);
      assert.ok(stored.every((r) => r.secret_hash !== secret && !r.secret_hash.includes(secret)));

      assert.equal((await t.call('DELETE', `/api/admin/keys/${second.body.id}`, { key: ADMIN })).status, 200);
      expectError(await q(second.body.apiKey), 401, 'unauthorized');
      assert.equal((await q(created.body.apiKey)).status, 200);
      expectError(
        await t.call('DELETE', `/api/admin/keys/${second.body.id}`, { key: ADMIN }),
        404,
        'not_found',
      );
      const nul = await t.call('DELETE', '/api/admin/keys/%00', { key: ADMIN });
      expectError(nul, 400, 'invalid_request');
      assert.match(nul.body.message, /path\.\w+ contains a NUL/);
    });
  });
}
