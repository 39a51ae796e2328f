/**
 * Items as MCP resources: `kb://items/{id}` reads an item's full text; `resources/list` pages through the
 * organization's items, newest first, 100 a page, with MCP's cursor.
 */
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  McpError,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import { type KbClient, KbApiError, type KnowledgeBaseItem, ok } from '../client/index.ts';
import { describeFailure, type ErrorSink } from './results.ts';

const ITEM_URI_TEMPLATE = 'kb://items/{id}';
/** The API's largest items page. */
const LIST_PAGE = 100;
/** MCP's code for a resource that does not exist (the spec's "Resource not found"). */
const RESOURCE_NOT_FOUND = -32002;

function itemUri(id: string): string {
  return `kb://items/${encodeURIComponent(id)}`;
}

function asResource(item: KnowledgeBaseItem): Resource {
  return {
    uri: itemUri(item.id),
    name: item.title,
    title: item.title,
    mimeType: 'text/markdown',
    description: [item.source_type, item.source_url, item.tags.length ? `tags: ${item.tags.join(', ')}` : '']
      .filter(Boolean)
      .join(' · '),
  };
}

/** The cursor is the next page's number; opaque to clients, as MCP asks. */
function pageOf(cursor: string | undefined): number {
  if (cursor === undefined) return 1;
  const m = /^page:(\d{1,7})$/.exec(cursor);
  if (!m || Number(m[1]) < 1)
    throw new McpError(ErrorCode.InvalidParams, 'The cursor is not one this server gave.');
  return Number(m[1]);
}

/** A failed call as a JSON-RPC error: resources have no `isError` result, so the API's message goes there. */
function resourceError(err: unknown, onError: ErrorSink, where: string): McpError {
  const message = describeFailure(err, onError, where);
  if (err instanceof KbApiError && err.status === 404) return new McpError(RESOURCE_NOT_FOUND, message);
  if (err instanceof KbApiError && err.status < 500) return new McpError(ErrorCode.InvalidParams, message);
  return new McpError(ErrorCode.InternalError, message);
}

export function registerItemResources(server: McpServer, client: KbClient, onError: ErrorSink): void {
  server.registerResource(
    'item',
    // No list callback here: the list below pages, which McpServer's template list cannot (it gets no cursor).
    new ResourceTemplate(ITEM_URI_TEMPLATE, { list: undefined }),
    {
      title: 'Knowledge-base item',
      description:
        "An item's full text (markdown or plain text); the id is an item id from search or list_items.",
      mimeType: 'text/markdown',
    },
    async (uri, variables) => {
      const raw = variables['id'];
      const id = decodeURIComponent(Array.isArray(raw) ? (raw[0] ?? '') : (raw ?? ''));
      try {
        const { item } = await ok(
          client.GET('/api/connect/knowledgebase-items/{id}', { params: { path: { id } } }),
        );
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: item.content }] };
      } catch (err) {
        throw resourceError(err, onError, 'resources/read');
      }
    },
  );

  // Replaces the list McpServer installed with registerResource: one page of items per request, and a
  // cursor to the next while there is one, so a client can walk 100k items without one giant answer.
  server.server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const page = pageOf(request.params?.cursor);
    try {
      const { items, pagination } = await ok(
        client.POST('/api/connect/knowledgebase-items/query', { body: { page, limit: LIST_PAGE } }),
      );
      return {
        resources: items.map(asResource),
        ...(pagination.has_next_page ? { nextCursor: `page:${page + 1}` } : {}),
      };
    } catch (err) {
      throw resourceError(err, onError, 'resources/list');
    }
  });
}
