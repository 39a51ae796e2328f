/**
 * Shared by the MCP tests: the real service on loopback (PGlite, the real model, workers, the test
 * connector's fake source, a one-page site to crawl, logs captured), and one scenario run over each
 * transport with the SDK's own client. The MCP server is a surface over the public API, so storage modes
 * are the API tests' concern; these run on PGlite.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createKbClient, type KbClient, ok } from '../../src/client/index.ts';
import { createProcessLogger } from '../../src/lib/logger.ts';
import { startTestSource, type TestSource } from '../connectors/test-connector-source.ts';
import { testConnector } from '../connectors/test-connector.ts';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, TEST_SOURCE_INPUT } from '../jobs/helpers.ts';
import { withSearch } from '../support/embedding.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

export interface McpTestService {
  t: TestApp;
  /** `http://127.0.0.1:<port>` */
  url: string;
  source: TestSource;
  site: FakeServer;
  /** Embeds everything pending (the tests' stand-in for the background indexer). */
  drain(): Promise<number>;
  /** Everything the service logged so far (trace level). */
  logs(): string;
  /** Organization A's and B's typed clients. */
  a: KbClient;
  b: KbClient;
  close(): Promise<void>;
}

export async function startMcpTestService(): Promise<McpTestService> {
  const source = await startTestSource();
  const site = await startFakeServer((req) =>
    req.path === '/'
      ? {
          status: 200,
          headers: { 'content-type': 'text/html; charset=utf-8' },
          body: '<html><head><title>Walrus care</title></head><body><main><h1>Walrus care</h1><p>Walruses need cold water and a great many clams every single day.</p></main></body></html>',
        }
      : { status: 404, body: 'not found' },
  );
  let raw = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      raw += chunk.toString();
      done();
    },
  });
  const t = await startTestApp('pglite', {
    config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_DOCS_SPACE_BASE_URL: source.url },
    parts: { connectors: [testConnector], sourceHttp: FAST_SOURCE_HTTP },
    logger: createProcessLogger({ level: 'trace', stream }),
  });
  const pool = t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
  const search = await withSearch(t);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  return {
    t,
    url,
    source,
    site,
    drain: () => search.drain(),
    logs: () => raw,
    a: createKbClient({ baseUrl: url, apiKey: t.orgA.key }),
    b: createKbClient({ baseUrl: url, apiKey: t.orgB.key }),
    async close() {
      await pool.stop();
      await t.close();
      await source.close();
      await site.close();
    },
  };
}

/** Every text a tool answered in a test, to check no key ever shows in one. */
export const toolTexts: string[] = [];

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  for (const c of result.content) if (c.type === 'text') toolTexts.push(c.text);
  return result;
}

/** A tool's JSON answer; fails the test with the tool's message when it answered an error. */
export async function toolJson(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<any> {
  const result = await callTool(client, name, args);
  const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
  assert.ok(!result.isError, `${name} answered an error: ${text}`);
  return JSON.parse(text);
}

/** A tool error's text; fails the test when the tool succeeded. */
export async function toolErrorText(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<string> {
  const result = await callTool(client, name, args);
  const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
  assert.equal(result.isError, true, `${name} should have answered an error, answered ${text}`);
  return text;
}

export const TOOL_NAMES = [
  'get_item',
  'get_job_progress',
  'list_items',
  'list_sources',
  'search',
  'start_crawl',
  'start_sync',
].sort();

/**
 * What an agent does over either transport, as organization A (`clientA`) and then B (`clientB`):
 * tools listed; two uploads found by `search` exactly as the HTTP search finds them; `get_item` and the
 * item resources give the full text; a sync of the fake source and a crawl of the fake site followed with
 * `get_job_progress` to the end; and B sees none of A's items, jobs or resources. `tag` keeps each run's
 * content apart when two runs share a service.
 */
export async function agentScenario(
  s: McpTestService,
  tag: string,
  clientA: Client,
  clientB: Client,
): Promise<void> {
  const { tools } = await clientA.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
  for (const tool of tools)
    assert.ok((tool.description ?? '').length > 80, `${tool.name} says what it is for and returns`);

  // Two uploads through the typed client, indexed by the real model.
  const penguins = `Emperor penguins (${tag}) huddle together through the long polar winter to keep their eggs warm.`;
  const tea = `Green tea (${tag}) should steep for two minutes in water just below boiling, or it turns bitter.`;
  const up1 = await ok(
    s.a.POST('/api/connect/knowledgebase-items', {
      body: { title: `Penguins ${tag}`, content: penguins, tags: [tag] },
    }),
  );
  const up2 = await ok(
    s.a.POST('/api/connect/knowledgebase-items', {
      body: { title: `Tea ${tag}`, content: tea, tags: [tag, 'drinks'] },
    }),
  );
  await s.drain();

  for (const args of [
    { query: 'how do penguins survive the winter cold' },
    { query: 'brewing tea temperature', mode: 'hybrid', limit: 3 },
    { query: 'penguin eggs', tags: ['drinks'], sourceTypes: ['upload'], visibility: ['public'] },
    { query: 'steeping', mode: 'keyword' },
    { query: 'antarctic birds', cosineDistanceThreshold: 0.9 },
  ]) {
    const viaMcp = await toolJson(clientA, 'search', args);
    const viaHttp = await ok(
      s.a.POST('/api/consume/search', { body: { ...args, includeEmbedding: false } as any }),
    );
    assert.deepEqual(viaMcp, viaHttp, `search ${JSON.stringify(args)} answers as the HTTP search does`);
  }
  const found = await toolJson(clientA, 'search', {
    query: 'how do penguins survive the winter cold',
    tags: [tag],
  });
  assert.equal(found.result[0].item_id, up1.item.id, 'the nearest passage is from the penguin upload');
  assert.equal(found.result[0].embedding, undefined, 'no vectors in an agent’s context');

  const item = await toolJson(clientA, 'get_item', { id: up2.item.id });
  assert.equal(item.item.content, tea);
  assert.equal(item.item.title, `Tea ${tag}`);
  assert.equal(item.item.indexing_status, 'indexed');

  const listed = await toolJson(clientA, 'list_items', { search: tag, limit: 1 });
  assert.deepEqual(
    listed.items.map((i: { id: string }) => i.id),
    [up2.item.id],
    'newest first, one a page',
  );
  assert.equal(listed.pagination.total_items, 2);
  assert.equal(listed.pagination.has_next_page, true);

  // Resources: every item listed (paging through with the cursor), each readable in full.
  const uris: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await clientA.listResources(cursor === undefined ? {} : { cursor });
    uris.push(...page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  assert.ok(uris.includes(`kb://items/${up1.item.id}`) && uris.includes(`kb://items/${up2.item.id}`));
  const { resourceTemplates } = await clientA.listResourceTemplates();
  assert.deepEqual(
    resourceTemplates.map((r) => r.uriTemplate),
    ['kb://items/{id}'],
  );
  const read = await clientA.readResource({ uri: `kb://items/${up1.item.id}` });
  assert.deepEqual(read.contents, [
    { uri: `kb://items/${up1.item.id}`, mimeType: 'text/markdown', text: penguins },
  ]);

  // A sync of the fake source, started and followed over MCP.
  s.source.put(`doc-${tag}`, `Synced page ${tag}`, `Glaciers (${tag}) move a few metres a day.`);
  const sources = await toolJson(clientA, 'list_sources');
  assert.ok(sources.connectableTypes.some((c: { type: string }) => c.type === 'docs_space'));
  // The types come from GET /api/connect/connection-types: Notion connects through OAuth consent, GitBook does not.
  const byType = new Map(sources.connectableTypes.map((c: { type: string; oauth: boolean }) => [c.type, c]));
  assert.equal((byType.get('notes') as { oauth: boolean }).oauth, true);
  assert.equal((byType.get('docs_space') as { oauth: boolean }).oauth, false);
  const started = await toolJson(clientA, 'start_sync', { type: 'docs_space' });
  assert.equal(typeof started.jobId, 'number');
  let progress: any;
  for (let i = 0; ; i++) {
    progress = await toolJson(clientA, 'get_job_progress', { syncJobId: started.jobId });
    if (progress.done) break;
    assert.ok(i < 500, `the sync ends: ${JSON.stringify(progress)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(progress.kind, 'sync');
  assert.equal(progress.job.status, 'succeeded');
  assert.ok(progress.job.documents.stored >= 1, JSON.stringify(progress.job.documents));
  assert.equal(typeof progress.indexing.pending, 'number');
  await s.drain();
  const afterIndexing = await toolJson(clientA, 'get_job_progress', {
    syncJobId: started.jobId,
    type: 'docs_space',
  });
  assert.equal(afterIndexing.indexing.pending, 0);
  assert.equal(afterIndexing.job.jobId, started.jobId);
  const synced = await toolJson(clientA, 'list_items', { search: `Synced page ${tag}` });
  assert.equal(synced.items.length, 1);

  // A crawl, started and followed over MCP.
  const crawl = await toolJson(clientA, 'start_crawl', { url: `${s.site.url}/`, limit: 1, tags: [tag] });
  for (let i = 0; ; i++) {
    progress = await toolJson(clientA, 'get_job_progress', { crawlId: crawl.job.id });
    if (progress.done) break;
    assert.ok(i < 500, `the crawl ends: ${JSON.stringify(progress)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(progress.kind, 'crawl');
  assert.equal(progress.job.status, 'completed', JSON.stringify(progress.job));
  assert.equal(progress.job.completed_pages, 1);

  // Errors of the API are tool errors carrying its message.
  assert.match(await toolErrorText(clientA, 'get_item', { id: 'no-such-item' }), /not_found/);
  assert.match(
    await toolErrorText(clientA, 'start_crawl', { url: 'ftp://example.com/' }),
    /http or https.*invalid_request/,
  );
  assert.match(await toolErrorText(clientA, 'get_job_progress', {}), /exactly one of syncJobId and crawlId/);

  // Organization B's key: none of A's items, jobs or resources.
  const bSearch = await toolJson(clientB, 'search', { query: 'how do penguins survive the winter cold' });
  assert.deepEqual(bSearch.result, []);
  const bItems = await toolJson(clientB, 'list_items', { limit: 100 });
  assert.deepEqual(bItems.items, []);
  const bSources = await toolJson(clientB, 'list_sources');
  assert.deepEqual(bSources.connections, []);
  assert.match(await toolErrorText(clientB, 'get_item', { id: up1.item.id }), /not_found/);
  assert.match(await toolErrorText(clientB, 'get_job_progress', { syncJobId: started.jobId }), /No sync job/);
  assert.match(
    await toolErrorText(clientB, 'get_job_progress', { syncJobId: started.jobId, type: 'docs_space' }),
    /not_found/,
  );
  assert.match(await toolErrorText(clientB, 'get_job_progress', { crawlId: crawl.job.id }), /not_found/);
  assert.match(await toolErrorText(clientB, 'start_sync', { type: 'docs_space' }), /not_found/);
  const bResources = await clientB.listResources();
  assert.deepEqual(bResources.resources, []);
  await assert.rejects(clientB.readResource({ uri: `kb://items/${up1.item.id}` }), /not found|no item/i);
}

/** Connects organization A's docs_space connection to the fake source (once per service); the tests sync over MCP. */
export async function connectSource(s: McpTestService): Promise<void> {
  await ok(s.a.POST('/api/connect/connection', { body: { source: TEST_SOURCE_INPUT as any, sync: false } }));
}

/** The key, and its secret part alone, are nowhere in `text`. */
export function assertNoKey(text: string, key: string, where: string): void {
  assert.ok(!text.includes(key), `the API key appears in ${where}`);
  assert.ok(!text.includes(key.slice('kb_'.length + 17)), `the API key's secret appears in ${where}`);
}
