/**
 * The MCP server over streamable HTTP at /mcp, driven by the SDK's own client: the agent scenario as A and
 * B, Bearer-key auth in the API's shape, /mcp's answers to malformed requests, and no key in tool output
 * or logs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  agentScenario,
  assertNoKey,
  connectSource,
  type McpTestService,
  startMcpTestService,
  toolTexts,
} from './helpers.ts';

async function httpClient(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'kb-http-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('MCP over streamable HTTP at /mcp', () => {
  let s: McpTestService;
  const clients: Client[] = [];
  before(async () => {
    s = await startMcpTestService();
    await connectSource(s);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await s?.close();
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  test('an agent searches, reads, lists, syncs and crawls as A; B sees none of it', async () => {
    const a = await httpClient(s.url, s.t.orgA.key);
    const b = await httpClient(s.url, s.t.orgB.key);
    clients.push(a, b);
    assert.equal(a.getServerVersion()?.name, 'kb');
    assert.match(a.getInstructions() ?? '', /search/);
    await agentScenario(s, 'http', a, b);
  });

  test('a missing or bad key is a 401 in the API’s error shape, before MCP', async () => {
    const refused: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer kb_0000000000000000_notarealkeynotarealkeynotareal' },
      { authorization: 'Basic abc' },
    ];
    for (const headers of refused) {
      const res = await post(INITIALIZE, headers);
      assert.equal(res.status, 401);
      const body = (await res.json()) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
      assert.equal(body['error'], 'unauthorized');
    }
    const wrong = `${s.t.orgA.key.slice(0, -4)}zzzz`;
    await assert.rejects(httpClient(s.url, wrong), /401|unauthorized|unknown or revoked/i);
  });

  test('answers malformed requests without a 5xx or internals; GET and DELETE are 405 (stateless)', async () => {
    const key = { authorization: `Bearer ${s.t.orgA.key}` };
    const cases: Array<[string, Response, number]> = [
      ['not JSON', await post('{"jsonrpc":', key), 400],
      ['JSON that is not JSON-RPC', await post({ hello: 'world' }, key), 400],
      [
        'a NUL in a string',
        await post(
          { ...INITIALIZE, params: { ...INITIALIZE.params, clientInfo: { name: 'a\u0000b', version: '1' } } },
          key,
        ),
        400,
      ],
      [
        'an Accept without event streams',
        await post(INITIALIZE, { ...key, accept: 'application/json' }),
        406,
      ],
      ['text/plain', await post('x', { ...key, 'content-type': 'text/plain' }), 415],
      ['GET', await fetch(`${s.url}/mcp`, { headers: { ...key, accept: 'text/event-stream' } }), 405],
      ['DELETE', await fetch(`${s.url}/mcp`, { method: 'DELETE', headers: key }), 405],
    ];
    for (const [what, res, status] of cases) {
      const text = await res.text();
      assert.equal(res.status, status, `${what}: ${res.status} ${text}`);
      assert.doesNotMatch(text, /\n\s+at |node_modules|\.ts:\d+/, `${what}: no stack`);
      assert.ok(JSON.parse(text), `${what}: a JSON body`);
    }
    // An unknown tool and bad arguments are answered in MCP, not as HTTP failures.
    const client = await httpClient(s.url, s.t.orgA.key);
    clients.push(client);
    const unknown = await client.callTool({ name: 'drop_database', arguments: {} });
    assert.equal(unknown.isError, true);
    const bad = await client.callTool({ name: 'search', arguments: { query: 'x', limit: 'many' } });
    assert.equal(bad.isError, true);
    assert.match(JSON.stringify(bad.content), /limit/);
  });

  test('no key appears in what the tools answered or in the service’s logs', () => {
    assert.ok(toolTexts.length > 20, 'the scenario ran');
    for (const key of [s.t.orgA.key, s.t.orgB.key]) {
      assertNoKey(toolTexts.join('\n'), key, 'tool output');
      assertNoKey(s.logs(), key, 'the logs');
    }
    assert.match(s.logs(), /"url":"\/mcp"/, 'the logs show the /mcp requests');
  });
});
