/**
 * The MCP server over the public API: tools to search, read and list the knowledge base, list
 * sources, start syncs and crawls and follow them, and items as resources. It holds nothing but a typed
 * client: every tool is a call of the API with the caller's key, so an agent can do exactly what that key
 * may (`kb mcp` over stdio, src/mcp/stdio.ts; streamable HTTP at /mcp, src/http/routes/mcp.ts).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { KbClient } from '../client/index.ts';
import { registerItemResources } from './resources.ts';
import type { ErrorSink } from './results.ts';
import { registerTools } from './tools.ts';

const MCP_SERVER_NAME = 'kb';
const MCP_SERVER_VERSION = '1.0.0';

const INSTRUCTIONS =
  "This server is an organization's knowledge base: documents synced from sources (Notion, Zendesk, " +
  'Confluence, Shopify, GitBook), crawled websites and uploads, searchable by meaning. To answer a ' +
  'question, call search, then get_item for the documents whose passages matter, and cite their ' +
  'source_url. list_items pages through items by words of title or content; list_sources shows the connected ' +
  'sources. start_sync and start_crawl add or refresh content; get_job_progress follows them until done ' +
  'and indexed. Items are also resources, kb://items/{id}.';

interface KbMcpServerOptions {
  /** Where unexpected failures (not API answers) are reported; the agent sees a short sentence. */
  onError?: ErrorSink;
}

export function createKbMcpServer(client: KbClient, opts: KbMcpServerOptions = {}): McpServer {
  const onError = opts.onError ?? (() => {});
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION, title: 'Knowledge base' },
    { instructions: INSTRUCTIONS },
  );
  registerTools(server, client, onError);
  registerItemResources(server, client, onError);
  return server;
}
