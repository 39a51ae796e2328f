/**
 * `/mcp` in the OpenAPI document. The route (routes/mcp.ts) hands the raw body to the MCP SDK's transport,
 * so it declares no zod schema (one would make Fastify validate and answer in the API's error shape where
 * MCP answers JSON-RPC errors); its operations are described here instead, as far as OpenAPI can describe
 * JSON-RPC over streamable HTTP: the messages' envelope, not each MCP method (those are MCP's own
 * specification, and the tools are listed by `tools/list`).
 */
import { operationIdOf } from './operation-ids.ts';

const errorRef = () => ({ $ref: '#/components/schemas/Error' });

// Functions, not constants: the document's passes (openapi.ts) annotate request schemas in place, and a
// schema object shared with a response or kept between documents would carry that into them.
const jsonRpcId = () => ({
  anyOf: [{ type: 'string' }, { type: 'integer' }],
  description: 'The id of a request, echoed in its response.',
});

const jsonRpcErrorObject = () => ({
  type: 'object',
  properties: {
    code: {
      type: 'integer',
      description: 'JSON-RPC error code (-32700 parse error, -32601 unknown method...).',
    },
    message: { type: 'string' },
    data: { description: 'More about the error, when there is more.' },
  },
  required: ['code', 'message'],
});

const jsonRpcMessage = () => ({
  type: 'object',
  description:
    'A JSON-RPC 2.0 message of MCP: a request (`id` and `method`), a notification (`method` without `id`), ' +
    'or a response (`id` with `result` or `error`).',
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: jsonRpcId(),
    method: {
      type: 'string',
      description: 'e.g. `initialize`, `tools/list`, `tools/call`, `resources/read`.',
    },
    params: { type: 'object', additionalProperties: true },
    result: { type: 'object', additionalProperties: true },
    error: jsonRpcErrorObject(),
  },
  required: ['jsonrpc'],
});

const jsonRpcError = () => ({
  type: 'object',
  description: "A JSON-RPC 2.0 error answered by the MCP transport itself (`id` is null: no request's).",
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: { type: 'null' },
    error: jsonRpcErrorObject(),
  },
  required: ['jsonrpc', 'error', 'id'],
});

const json = (schema: object, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

const unauthorized = () =>
  json(errorRef(), 'No API key, or one that is unknown or revoked (the API’s error shape).');

const methodNotOffered = (summary: string, operationId: string, description: string) => ({
  tags: ['mcp'],
  operationId,
  summary,
  description:
    `${description} This MCP server is stateless (no sessions, no server-to-client stream), so it answers ` +
    '405 with `Allow: POST`, as MCP specifies for a server without them.',
  responses: {
    '401': unauthorized(),
    '405': {
      ...json(jsonRpcError(), 'Not offered: send JSON-RPC messages with POST.'),
      headers: { Allow: { description: 'POST', schema: { type: 'string', enum: ['POST'] } } },
    },
  },
});

/** The `/mcp` path item: POST as the MCP endpoint, GET and DELETE answered 405 as the route serves them. */
export function mcpPathItem(): Record<string, object> {
  return {
    post: {
      tags: ['mcp'],
      operationId: operationIdOf('POST', '/mcp'),
      summary: 'Send MCP messages (JSON-RPC over streamable HTTP)',
      description:
        "The MCP server for agents: the same tools and resources as `kb mcp` on stdio, acting with the caller's " +
        'API key and nothing more. Stateless: every POST stands alone (no `Mcp-Session-Id`), and its answer is ' +
        'one JSON body, never an event stream. Send `Accept: application/json, text/event-stream` (both, as ' +
        'MCP requires of clients) and `Content-Type: application/json`.',
      parameters: [
        {
          name: 'mcp-protocol-version',
          in: 'header',
          required: false,
          description: 'The MCP protocol version the client negotiated in `initialize` (e.g. `2025-06-18`).',
          schema: { type: 'string' },
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { anyOf: [jsonRpcMessage(), { type: 'array', items: jsonRpcMessage(), minItems: 1 }] },
          },
        },
      },
      responses: {
        '200': json(
          { anyOf: [jsonRpcMessage(), { type: 'array', items: jsonRpcMessage() }] },
          'The responses to the requests the POST carried.',
        ),
        '202': { description: 'Accepted: the POST carried only notifications or responses; no body.' },
        '400': json(
          { anyOf: [jsonRpcError(), errorRef()] },
          'Not a JSON-RPC message (a JSON-RPC error), or a body that is not UTF-8 JSON or carries a NUL ' +
            '(the API’s error shape).',
        ),
        '401': unauthorized(),
        '406': json(jsonRpcError(), '`Accept` does not list both application/json and text/event-stream.'),
        '413': json(errorRef(), 'The body is larger than KB_BODY_LIMIT_BYTES.'),
        '415': json(errorRef(), 'The body is not application/json.'),
        '500': json(errorRef(), 'An unexpected error.'),
      },
    },
    get: methodNotOffered(
      'Open a server-to-client stream: not offered (405)',
      operationIdOf('GET', '/mcp'),
      'Where a stateful MCP server opens an event stream for messages it sends on its own.',
    ),
    delete: methodNotOffered(
      'End an MCP session: not offered (405)',
      operationIdOf('DELETE', '/mcp'),
      'Where a stateful MCP server ends the session named by `Mcp-Session-Id`.',
    ),
  };
}
