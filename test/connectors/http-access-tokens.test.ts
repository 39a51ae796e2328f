/**
 * The source HTTP client with a connection's expiring access token (`accessTokens`): a `Bearer` header
 * carrying one of the connection's tokens is sent with the current one, a 401 to it gets one refresh and
 * one more try, and any other header is left as the connector wrote it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSourceHttpClient } from '../../src/connectors/http.ts';
import type { AccessTokens } from '../../src/connectors/types.ts';
import { AppError } from '../../src/lib/errors.ts';
import { bearerToken, type FakeServer, startFakeServer } from '../fakes/fake-server.ts';
import { plainFetch } from '../support/plain-fetch.ts';

/** Tokens the test hands out: `valid` is the one the server accepts. */
function tokens(first: string) {
  const state = { token: first, issued: new Set([first]), refreshes: 0, refuse: false, currentCalls: 0 };
  const source: AccessTokens = {
    owns: (t) => state.issued.has(t),
    current: async () => {
      state.currentCalls++;
      return state.token;
    },
    refresh: async (rejected) => {
      if (rejected !== state.token) return state.token;
      if (state.refuse) throw new AppError('source_auth_failed', 'Refused; connect it again.');
      state.refreshes++;
      state.token = `tok-${state.refreshes}`;
      state.issued.add(state.token);
      return state.token;
    },
  };
  return { state, source };
}

describe('source HTTP client with expiring access tokens', () => {
  let server: FakeServer;
  let valid = 'tok-0';
  before(async () => {
    server = await startFakeServer((req) =>
      bearerToken(req) === valid
        ? { status: 200, body: { ok: true } }
        : { status: 401, body: { error: 'invalid_token' } },
    );
  });
  after(() => server.close());

  it('sends the current token in place of the one the credentials hold', async () => {
    const t = tokens('tok-0');
    const http = createSourceHttpClient({ fetch: plainFetch, accessTokens: t.source });
    valid = 'tok-0';
    const res = await http.request('GET', `${server.url}/a`, { headers: { Authorization: 'Bearer tok-0' } });
    assert.equal(res.status, 200);
    assert.equal(t.state.currentCalls, 1);
  });

  it('answers a 401 with one refresh and one more try; a second 401 is returned as it is', async () => {
    const t = tokens('tok-0');
    const http = createSourceHttpClient({ fetch: plainFetch, accessTokens: t.source });
    valid = 'tok-1'; // the source voided tok-0 early
    const before = server.requests.length;
    const res = await http.request('GET', `${server.url}/b`, { headers: { authorization: 'Bearer tok-0' } });
    assert.equal(res.status, 200);
    assert.equal(t.state.refreshes, 1);
    assert.deepEqual(
      server.requests.slice(before).map((r) => r.headers.authorization),
      ['Bearer tok-0', 'Bearer tok-1'],
    );
    // The connector's header still names tok-0: it is sent as the current one, tok-1.
    const again = await http.request('GET', `${server.url}/c`, {
      headers: { authorization: 'Bearer tok-0' },
    });
    assert.equal(again.status, 200);
    assert.equal(server.requests.at(-1)!.headers.authorization, 'Bearer tok-1');

    valid = 'never';
    const refused = await http.request('GET', `${server.url}/d`, {
      headers: { authorization: 'Bearer tok-0' },
    });
    assert.equal(refused.status, 401, 'after one refresh the 401 is the connector’s to name');
    assert.equal(t.state.refreshes, 2);
  });

  it('a refused refresh throws its error; headers of other tokens are left alone', async () => {
    const t = tokens('tok-0');
    t.state.refuse = true;
    const http = createSourceHttpClient({ fetch: plainFetch, accessTokens: t.source });
    valid = 'someone-else';
    await assert.rejects(
      http.request('GET', `${server.url}/e`, { headers: { authorization: 'Bearer tok-0' } }),
      (err: unknown) => err instanceof AppError && err.code === 'source_auth_failed',
    );
    const other = await http.request('GET', `${server.url}/f`, {
      headers: { authorization: 'Bearer someone-else' },
    });
    assert.equal(other.status, 200);
    assert.equal(t.state.currentCalls, 1, 'only the connection’s own token is looked up');
  });
});
