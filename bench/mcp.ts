/**
 * What the MCP surface costs over the API it calls: the latency of the same reads straight
 * over HTTP with the typed client, as MCP tools over /mcp (a new stateless server per POST, the tools
 * calling the API in-process) and over stdio (`kb mcp`, a separate process calling the API over
 * loopback); and how long `kb mcp` takes from spawn to its first answer.
 *
 *   node bench/mcp.ts [--calls 300] [--items 1000]
 *
 * PGlite in memory, no model (list and read only: search's own cost is bench/search-latency.ts's).
 */
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createKbClient, ok } from '../src/client/index.ts';
import { startTestApp } from '../test/support/harness.ts';
import { percentile, printTable, writeResult } from './lib.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '300' }, items: { type: 'string', default: '1000' } },
});
const CALLS = Number(values.calls);
const ITEMS = Number(values.items);
const CLI = path.resolve('src/kb.ts');

const t = await startTestApp('pglite');
await t.app.listen({ host: '127.0.0.1', port: 0 });
const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
const api = createKbClient({ baseUrl: url, apiKey: t.orgA.key });
const ids: string[] = [];
for (let i = 0; i < ITEMS; i++) {
  const { item } = await ok(
    api.POST('/api/connect/knowledgebase-items', {
      body: { title: `Document ${i}`, content: `Paragraph ${i}. `.repeat(200), tags: ['bench'] },
    }),
  );
  ids.push(item.id);
}

function tool(client: Client, name: string, args: Record<string, unknown>) {
  return async () => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
  };
}

const env = Object.fromEntries(
  Object.entries(process.env).filter(
    (e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('KB_'),
  ),
);

const httpMcp = new Client({ name: 'bench', version: '1' });
await httpMcp.connect(
  new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { authorization: `Bearer ${t.orgA.key}` } },
  }),
);
const stdioMcp = new Client({ name: 'bench', version: '1' });
await stdioMcp.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--url', url],
    env: { ...env, KB_API_KEY: t.orgA.key },
  }),
);

const rows: Array<Record<string, string>> = [];
const raw: Record<string, number[]> = {};
const paths = {
  'HTTP (typed client)': {
    list: () => ok(api.POST('/api/connect/knowledgebase-items/query', { body: { limit: 20, page: 3 } })),
    get: (i: number) =>
      ok(
        api.GET('/api/connect/knowledgebase-items/{id}', { params: { path: { id: ids[i % ids.length]! } } }),
      ),
  },
  'MCP over /mcp': {
    list: tool(httpMcp, 'list_items', { limit: 20, page: 3 }),
    get: (i: number) => tool(httpMcp, 'get_item', { id: ids[i % ids.length]! })(),
  },
  'MCP over stdio (kb mcp)': {
    list: tool(stdioMcp, 'list_items', { limit: 20, page: 3 }),
    get: (i: number) => tool(stdioMcp, 'get_item', { id: ids[i % ids.length]! })(),
  },
};
// Interleaved: each round calls every path once, so a busy moment of the machine falls on all of them alike.
const series = Object.entries(paths).flatMap(([via, calls]) =>
  Object.entries(calls).map(([what, call]) => ({
    via,
    what,
    call: call as (i: number) => Promise<unknown>,
    ms: [] as number[],
  })),
);
for (let i = -10; i < CALLS; i++) {
  for (const s of series) {
    const start = performance.now();
    await s.call(Math.abs(i));
    if (i >= 0) s.ms.push(performance.now() - start); // the first 10 rounds warm up
  }
}
for (const { via, what, ms } of series) {
  ms.sort((a, b) => a - b);
  raw[`${via} ${what}`] = ms;
  rows.push({
    path: via,
    call: what === 'list' ? 'list 20 items' : 'read one item (~2.4 KB)',
    p50: `${percentile(ms, 50).toFixed(2)} ms`,
    p95: `${percentile(ms, 95).toFixed(2)} ms`,
    p99: `${percentile(ms, 99).toFixed(2)} ms`,
  });
}
await httpMcp.close();
await stdioMcp.close();

// `kb mcp` from spawn to the answer of tools/list (what an MCP client waits for when it starts it).
const starts: number[] = [];
for (let i = 0; i < 5; i++) {
  const start = performance.now();
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--url', url],
      env: { ...env, KB_API_KEY: t.orgA.key },
    }),
  );
  await c.listTools();
  starts.push(performance.now() - start);
  await c.close();
}
starts.sort((a, b) => a - b);

printTable(
  `MCP vs the API it calls (${CALLS} rounds of one call each, interleaved; ${ITEMS} items, PGlite)`,
  rows,
);
printTable('kb mcp: spawn to the answer of tools/list (5 starts)', [
  {
    median: `${percentile(starts, 50).toFixed(0)} ms`,
    min: `${starts[0]!.toFixed(0)} ms`,
    max: `${starts.at(-1)!.toFixed(0)} ms`,
  },
]);
writeResult('mcp', { calls: CALLS, items: ITEMS, raw, starts });
await t.close();
