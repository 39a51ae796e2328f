import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { closedPortUrl, type FakeServer } from '../fakes/fake-server.ts';
import { startFakeZendesk, ZENDESK_GOOD } from '../fakes/zendesk.ts';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

const good = { type: 'support_desk', subdomain: 'acme', ...ZENDESK_GOOD };

for (const mode of STORAGE_MODES) {
  describe(`connections (${mode})`, () => {
    let fake: FakeServer;
    let t: TestApp;
    before(async () => {
      fake = await startFakeZendesk();
      t = await startTestApp(mode, {
        config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_SUPPORT_DESK_BASE_URL: fake.url },
      });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    test('create checks the credentials with the source, stores them encrypted, and never returns them', async () => {
      const before = fake.requests.length;
      const res = await t.call('POST', '/api/connect/connection', { body: { source: good } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.success, true);
      assert.equal(res.body.created, true);
      assert.equal(typeof res.body.connectionId, 'string');
      assert.equal(fake.requests.length - before, 1, 'one cheap authenticated call');

      const rows = await t.db.query<{ type: string; credentials_encrypted: string }>(
        'SELECT type, credentials_encrypted FROM connections WHERE id = $1',
        [res.body.connectionId],
      );
      assert.equal(rows[0]!.type, 'support_desk');
      assert.ok(!rows[0]!.credentials_encrypted.includes(ZENDESK_GOOD.api_token), 'encrypted at rest');
      assert.ok(!rows[0]!.credentials_encrypted.includes(ZENDESK_GOOD.email));

      const list = await t.call('GET', '/api/connect/connections');
      assert.equal(list.status, 200);
      assert.equal(list.body.data.length, 1);
      assert.equal(list.body.data[0].id, res.body.connectionId);
      assert.equal(list.body.data[0].status, 'active');
      // Its first sync is queued with it (no worker runs here: it stays pending).
      assert.equal(typeof res.body.jobId, 'number');
      assert.equal(list.body.data[0].lastJob.jobId, res.body.jobId);
      assert.equal(list.body.data[0].lastJob.status, 'pending');
      assert.ok(!JSON.stringify(list.body).includes(ZENDESK_GOOD.api_token));
      assert.ok(!JSON.stringify(list.body).includes(ZENDESK_GOOD.email));
    });

    test('a second create (alias, full host name) rotates the credentials of the same connection', async () => {
      const first = await t.call('GET', '/api/connect/connections');
      const res = await t.call('POST', '/api/connect/connection', {
        body: { source: { ...good, type: 'zendesk', subdomain: 'ACME.zendesk.com' } },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.created, false);
      assert.equal(res.body.connectionId, first.body.data[0].id);
      const list = await t.call('GET', '/api/connect/connections');
      assert.equal(list.body.data.length, 1);
      assert.equal(list.body.data[0].type, 'support_desk');
    });

    test('rejected credentials: 400 source_auth_failed naming the source, without the token; nothing stored', async () => {
      const res = await t.call('POST', '/api/connect/connection', {
        body: { source: { ...good, api_token: 'wrong-token-987654' } },
        key: t.orgB.key,
      });
      expectError(res, 400, 'source_auth_failed');
      assert.match(res.body.message, /Zendesk/);
      assert.doesNotMatch(res.body.message, /wrong-token-987654/);
      const list = await t.call('GET', '/api/connect/connections', { key: t.orgB.key });
      assert.deepEqual(list.body.data, []);
    });

    test('bad input is refused field by field; the base URL cannot come from a request', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ source: { ...good, subdomain: 'acme.evil.test/x' } }, /source\.subdomain/],
        [{ source: { ...good, subdomain: 'http://127.0.0.1:8080' } }, /source\.subdomain/],
        [{ source: { ...good, email: 'not-an-email' } }, /source\.email/],
        [{ source: { ...good, api_token: '' } }, /api_token/],
        [{ source: { ...good, base_url: 'http://127.0.0.1:1' } }, /base_url/],
        [{ source: { type: 'dropbox' } }, /type/],
        [{ source: good, extra: 1 }, /extra/],
        [{}, /source/],
      ];
      for (const [body, field] of cases) {
        const res = await t.call('POST', '/api/connect/connection', { body });
        expectError(res, 400, 'invalid_request');
        assert.match(res.body.message, field, JSON.stringify(body));
      }
    });

    test('run-sync of a connection whose source type the service no longer has: 400 invalid_request saying so', async () => {
      const id = 'conn-of-a-retired-source';
      await t.db.query(
        `INSERT INTO connections (id, organization_id, type, credentials_encrypted) VALUES ($1, $2, 'retired_source', 'x')`,
        [id, t.orgA.id],
      );
      const res = await t.call('POST', '/api/connect/run-sync', { body: { connectionId: id } });
      expectError(res, 400, 'invalid_request');
      assert.match(res.body.message, /no connector for source type retired_source/);
      const jobs = await t.call('GET', `/api/connect/connection-sync-jobs?connectionId=${id}`);
      assert.equal(jobs.status, 200);
      assert.deepEqual(jobs.body.data, []);
      await t.db.query('DELETE FROM connections WHERE id = $1', [id]);
    });

    test('status: inactive makes run-sync 409 connection_inactive; naming the connection needs type or id', async () => {
      const off = await t.call('PATCH', '/api/connect/set-connection-status', {
        body: { type: 'zendesk', status: 'inactive' },
      });
      assert.equal(off.status, 200, JSON.stringify(off.body));
      assert.equal(off.body.success, true);
      expectError(
        await t.call('POST', '/api/connect/run-sync', { body: { type: 'support_desk' } }),
        409,
        'connection_inactive',
      );
      const list = await t.call('GET', '/api/connect/connections');
      assert.equal(list.body.data[0].status, 'inactive');
      expectError(
        await t.call('PATCH', '/api/connect/set-connection-status', {
          body: { type: 'support_desk', status: 'paused' },
        }),
        400,
        'invalid_request',
      );
      expectError(
        await t.call('PATCH', '/api/connect/set-connection-status', { body: { status: 'active' } }),
        400,
        'invalid_request',
      );
      const id = list.body.data[0].id;
      expectError(
        await t.call('PATCH', '/api/connect/set-connection-status', {
          body: { type: 'support_desk', connectionId: id, status: 'active' },
        }),
        400,
        'invalid_request',
      );
      const on = await t.call('PATCH', '/api/connect/set-connection-status', {
        body: { connectionId: id, status: 'active' },
      });
      assert.equal(on.status, 200);
    });

    test("another organization's connection behaves as if it did not exist", async () => {
      const list = await t.call('GET', '/api/connect/connections');
      const id = list.body.data[0].id;
      const k = { key: t.orgB.key };
      expectError(
        await t.call('DELETE', '/api/connect/connection', { body: { connectionId: id }, ...k }),
        404,
        'not_found',
      );
      expectError(
        await t.call('PATCH', '/api/connect/set-connection-status', {
          body: { connectionId: id, status: 'inactive' },
          ...k,
        }),
        404,
        'not_found',
      );
      expectError(
        await t.call('POST', '/api/connect/run-sync', { body: { connectionId: id }, ...k }),
        404,
        'not_found',
      );
      expectError(
        await t.call('GET', `/api/connect/connection-sync-jobs?connectionId=${id}`, k),
        404,
        'not_found',
      );
      expectError(
        await t.call('POST', '/api/connect/run-sync', { body: { type: 'support_desk' }, ...k }),
        404,
        'not_found',
      );
      const still = await t.call('GET', '/api/connect/connections');
      assert.equal(still.body.data[0].status, 'active');
    });

    test('disconnect by type or by id deletes the connection; a second disconnect is 404', async () => {
      const res = await t.call('DELETE', '/api/connect/connection', { body: { type: 'support_desk' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.success, true);
      expectError(
        await t.call('DELETE', '/api/connect/connection', { body: { type: 'support_desk' } }),
        404,
        'not_found',
      );
      const rows = await t.db.query('SELECT 1 FROM connections');
      assert.equal(rows.length, 0, 'the credentials are gone');

      const again = await t.call('POST', '/api/connect/connection', { body: { source: good } });
      assert.equal(again.body.created, true);
      const byId = await t.call('DELETE', '/api/connect/connection', {
        body: { connectionId: again.body.connectionId },
      });
      assert.equal(byId.status, 200);
      assert.deepEqual((await t.call('GET', '/api/connect/connections')).body.data, []);
    });
  });
}

// Outbound failures do not depend on the storage mode: one mode is enough.
describe('connections: sources that cannot be reached', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await startFakeZendesk();
  });
  after(async () => fake?.close());

  test('an unreachable source: 400 source_unreachable', async () => {
    const down = await startTestApp('postgres', {
      config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_SUPPORT_DESK_BASE_URL: await closedPortUrl() },
    });
    try {
      const res = await down.call('POST', '/api/connect/connection', { body: { source: good } });
      expectError(res, 400, 'source_unreachable');
      assert.match(res.body.message, /Zendesk/);
    } finally {
      await down.close();
    }
  });

  test('without KB_CRAWL_ALLOW_PRIVATE the outbound guard refuses a loopback source', async () => {
    const guarded = await startTestApp('postgres', { config: { KB_SUPPORT_DESK_BASE_URL: fake.url } });
    try {
      const before = fake.requests.length;
      const res = await guarded.call('POST', '/api/connect/connection', { body: { source: good } });
      expectError(res, 400, 'source_unreachable');
      assert.equal(fake.requests.length, before, 'no request reached the address');
    } finally {
      await guarded.close();
    }
  });
});
