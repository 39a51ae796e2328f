/**
 * `kb mcp`, the MCP server over stdio, spawned by the SDK's own client (`node src/kb.ts mcp --url ...`)
 * against the service on loopback: the agent scenario as A and B, a refused or missing key explained on
 * stderr, and no key in tool output or on stderr.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  agentScenario,
  assertNoKey,
  connectSource,
  type McpTestService,
  startMcpTestService,
  toolTexts,
} from './helpers.ts';

const CLI = path.resolve('src/kb.ts');

/** The environment `kb mcp` gets: this process's, without any KB_ setting of the test run, plus `extra`. */
function env(extra: Record<string, string>): Record<string, string> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('KB_'),
    ),
  );
  return { ...base, ...extra };
}

/** Runs `kb mcp` to its exit without a client (for the refusals): exit code and stderr. */
function runToExit(
  args: string[],
  extra: Record<string, string>,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'mcp', ...args], {
      env: env(extra),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stderr, stdout }));
  });
}

describe('MCP over stdio (kb mcp)', () => {
  let s: McpTestService;
  const clients: Client[] = [];
  let stderr = '';
  before(async () => {
    s = await startMcpTestService();
    await connectSource(s);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await s?.close();
  });

  async function stdioClient(key: string): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--url', s.url],
      env: env({ KB_API_KEY: key }),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d) => {
      stderr += d;
    });
    const client = new Client({ name: 'kb-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  test('an agent searches, reads, lists, syncs and crawls as A; B sees none of it', async () => {
    const [a, b] = await Promise.all([stdioClient(s.t.orgA.key), stdioClient(s.t.orgB.key)]);
    assert.equal(a.getServerVersion()?.name, 'kb');
    await agentScenario(s, 'stdio', a, b);
    assert.match(stderr, /serving the knowledge base at http:\/\/127\.0\.0\.1:\d+ on stdio/);
  });

  test('KB_URL stands in for --url', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: env({ KB_API_KEY: s.t.orgA.key, KB_URL: s.url }),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'kb-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const { items } = JSON.parse(
      (
        (await client.callTool({ name: 'list_items', arguments: { limit: 1 } })).content as Array<{
          text: string;
        }>
      )[0]!.text,
    );
    assert.equal(items.length, 1);
  });

  test('a refused key, a missing key and a bad URL stop it with the reason on stderr', async () => {
    const wrong = `${s.t.orgA.key.slice(0, -4)}zzzz`;
    const refused = await runToExit(['--url', s.url], { KB_API_KEY: wrong });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refused the API key in KB_API_KEY: The API key is unknown or revoked/);
    assert.equal(refused.stdout, '', 'nothing on the protocol channel');
    assertNoKey(refused.stderr, wrong, 'stderr');

    const missing = await runToExit(['--url', s.url], {});
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /set KB_API_KEY/);

    const badUrl = await runToExit(['--url', 'localhost:8080'], { KB_API_KEY: s.t.orgA.key });
    assert.equal(badUrl.code, 2);
    assert.match(badUrl.stderr, /must be http or https/);

    const unknownFlag = await runToExit(['--key', 'x'], { KB_API_KEY: s.t.orgA.key });
    assert.equal(unknownFlag.code, 2);
    assert.match(unknownFlag.stderr, /usage: kb mcp/);
  });

  test('a service that is down is a tool error that says so, not a crash', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--url', 'http://127.0.0.1:9'],
      env: env({ KB_API_KEY: s.t.orgA.key }),
      stderr: 'pipe',
    });
    let err = '';
    transport.stderr?.on('data', (d) => {
      err += d;
    });
    const client = new Client({ name: 'kb-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const result = await client.callTool({ name: 'search', arguments: { query: 'anything' } });
    assert.equal(result.isError, true);
    assert.match(JSON.stringify(result.content), /could not be reached/);
    assert.match(err, /warning: The knowledge-base service could not be reached/);
    assertNoKey(err, s.t.orgA.key, 'stderr');
  });

  test('no key appears in what the tools answered, on stderr or in the service’s logs', () => {
    assert.ok(toolTexts.length > 20, 'the scenario ran');
    for (const key of [s.t.orgA.key, s.t.orgB.key]) {
      assertNoKey(toolTexts.join('\n'), key, 'tool output');
      assertNoKey(stderr, key, 'stderr');
      assertNoKey(s.logs(), key, 'the logs');
    }
  });
});
