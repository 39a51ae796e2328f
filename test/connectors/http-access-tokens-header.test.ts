/**
 * Expiring access tokens in a header of the source's own (Shopify's `X-Shopify-Access-Token` holds the
 * bare token), and tokens a connector gets for itself during a sync, given with the request
 * (`accessTokens` of the request, in place of the client's): the header carrying one of the tokens is sent
 * with the current one, and a 401 gets one refresh and one more try, in that same header.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSourceHttpClient } from '../../src/connectors/http.ts';
import type { AccessTokens } from '../../src/connectors/types.ts';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.ts';
import { plainFetch } from '../support/plain-fetch.ts';

/** Tokens `${prefix}-0`, `${prefix}-1`…: each refresh issues the next. */
function tokens(prefix: string) {
  const state = { token: `${prefix}-0`, issued: new Set([`${prefix}-0`]), refreshes: 0 };
  const source: AccessTokens = {
    owns: (t) => state.issued.has(t),
    current: async () => state.token,
    refresh: async (rejected) => {
      if (rejected !== state.token) return state.token;
      state.refreshes++;
      state.token = `${prefix}-${state.refreshes}`;
      state.issued.add(state.token);
      return state.token;
    },
  };
  return { state, source };
}

describe('source HTTP client: access tokens in any header, and per request', () => {
  let server: FakeServer;
  let valid = '';
  before(async () => {
    server = await startFakeServer((req) =>
      req.headers['x-shopify-access-token'] === valid
        ? { status: 200, body: { ok: true } }
        : { status: 401, body: { errors: '[API] Invalid API key or access token' } },
    );
  });
  after(() => server.close());

  it('swaps a bare token header for the current token and refreshes it there on a 401', async () => {
    const t = tokens('conn');
    const http = createSourceHttpClient({ fetch: plainFetch, accessTokens: t.source });
    valid = 'conn-1'; // the store voided conn-0 early
    const from = server.requests.length;
    const res = await http.request('POST', `${server.url}/graphql.json`, {
      headers: { 'X-Shopify-Access-Token': 'conn-0' },
      json: { query: '{ shop { name } }' },
    });
    assert.equal(res.status, 200);
    assert.equal(t.state.refreshes, 1);
    assert.deepEqual(
      server.requests.slice(from).map((r) => r.headers['x-shopify-access-token']),
      ['conn-0', 'conn-1'],
    );
    assert.ok(server.requests.slice(from).every((r) => r.headers.authorization === undefined));
  });

  it("a request's own tokens replace the client's for that request", async () => {
    const connection = tokens('conn');
    const granted = tokens('grant');
    const http = createSourceHttpClient({ fetch: plainFetch, accessTokens: connection.source });
    valid = 'grant-1';
    const res = await http.request('POST', `${server.url}/graphql.json`, {
      headers: { 'x-shopify-access-token': 'grant-0' },
      accessTokens: granted.source,
    });
    assert.equal(res.status, 200);
    assert.equal(granted.state.refreshes, 1);
    assert.equal(connection.state.refreshes, 0, "the client's tokens were not asked");
    assert.equal(server.requests.at(-1)!.headers['x-shopify-access-token'], 'grant-1');
  });
});
