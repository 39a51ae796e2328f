import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { createApiKey, createOrganization } from '../../src/db/repositories/organizations.ts';
import { buildApp } from '../../src/http/app.ts';
import { createProcessLogger } from '../../src/lib/logger.ts';
import type { App } from '../../src/http/context.ts';
import type { Database } from '../../src/db/database.ts';
import { composeTestService, testConfig } from '../support/harness.ts';

describe('structured logs', () => {
  const lines: Array<Record<string, unknown>> = [];
  let raw = '';
  let app: App;
  let db: Database;
  let key: string;
  before(async () => {
    db = await openPglite(null);
    await migrate(db);
    const org = await createOrganization(db, 'logs');
    key = (await createApiKey(db, org.id)).apiKey;
    const stream = new Writable({
      write(chunk, _enc, done) {
        raw += chunk.toString();
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    app = await buildApp(composeTestService(db, testConfig()).appDeps, {
      logger: createProcessLogger({ level: 'trace', stream }),
    });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await db.close();
  });

  test('are JSON lines with request ids, and never contain keys or tokens', async () => {
    const secretToken = 'tok_do_not_log_me_123456';
    await app.inject({
      method: 'POST',
      url: '/api/connect/knowledgebase-items',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'x-request-id': 'req-logs-1',
      },
      payload: JSON.stringify({ title: 'x', content: `api_token=${secretToken}` }),
    });
    await app.inject({
      method: 'POST',
      url: '/api/connect/knowledgebase-items/query',
      headers: { authorization: `Bearer ${key.slice(0, -2)}xx`, 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.ok(lines.length > 0);
    const mine = lines.filter((l) => l['reqId'] === 'req-logs-1');
    assert.equal(mine.length, 1, 'one line a request, with its id');
    const line = mine[0]!;
    assert.equal(line['level'], 30, 'at info');
    assert.equal((line['req'] as { method: string }).method, 'POST');
    assert.equal((line['req'] as { url: string }).url, '/api/connect/knowledgebase-items');
    assert.equal((line['res'] as { statusCode: number }).statusCode, 200);
    assert.equal(typeof line['responseTime'], 'number');
    assert.ok(!raw.includes(key), 'an API key was logged');
    assert.ok(!raw.includes(key.slice('kb_'.length + 17)), 'an API key secret was logged');
    assert.ok(!raw.includes(secretToken), 'a request body was logged');
  });

  test('health checks and the console’s polling are logged at debug, the console’s changes at info', async () => {
    const levelOf = async (id: string, req: { method: 'GET' | 'POST'; url: string; referer?: string }) => {
      await app.inject({
        method: req.method,
        url: req.url,
        headers: {
          authorization: `Bearer ${key}`,
          'x-request-id': id,
          ...(req.referer ? { referer: req.referer } : {}),
          ...(req.method === 'POST' ? { 'content-type': 'application/json' } : {}),
        },
        ...(req.method === 'POST' ? { payload: '{}' } : {}),
      });
      const mine = lines.filter((l) => l['reqId'] === id);
      assert.equal(mine.length, 1, `${req.method} ${req.url}: one line`);
      return mine[0]!['level'];
    };
    assert.equal(await levelOf('lvl-1', { method: 'GET', url: '/healthz' }), 20);
    assert.equal(await levelOf('lvl-2', { method: 'GET', url: '/readyz' }), 20);
    const consolePage = 'http://127.0.0.1:8080/console/items';
    assert.equal(
      await levelOf('lvl-3', {
        method: 'GET',
        url: '/api/connect/knowledgebase-items/stats',
        referer: consolePage,
      }),
      20,
    );
    assert.equal(
      await levelOf('lvl-4', { method: 'GET', url: '/api/connect/knowledgebase-items/stats' }),
      30,
      'other callers at info',
    );
    const query = '/api/connect/knowledgebase-items/query';
    assert.equal(await levelOf('lvl-5', { method: 'POST', url: query, referer: consolePage }), 30);
  });

  test('the OAuth callback’s code and state, and other secret query values, are censored in request lines', async () => {
    const code = 'oauth-code-never-logged-0123';
    const state = 'oauth-state-never-logged-4567';
    await app.inject({
      method: 'GET',
      url: `/api/connect/oauth/callback?code=${code}&state=${state}&x=keep-me`,
      headers: { 'x-request-id': 'req-logs-2' },
    });
    await app.inject({
      method: 'GET',
      url: '/api/connect/secret-id-exists?secretId=secret-id-never-logged-89',
      headers: { authorization: `Bearer ${key}`, 'x-request-id': 'req-logs-3' },
    });
    const requestLines = lines.filter((l) => l['reqId'] === 'req-logs-2' && l['req']);
    assert.ok(requestLines.length > 0, 'the callback request was logged');
    assert.match(JSON.stringify(requestLines), /code=\[redacted\]&state=\[redacted\]&x=keep-me/);
    for (const secret of [code, state, 'secret-id-never-logged-89'])
      assert.ok(!raw.includes(secret), `${secret} was logged`);
  });
});
