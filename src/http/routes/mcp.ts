/**
 * `/mcp`: the MCP server (src/mcp/) over streamable HTTP, for agents that reach the service over the
 * network. Authenticated like every /api route (Bearer API key; the auth hook covers /mcp, and a missing
 * or bad key is a 401 in the API's shape before MCP sees the request).
 *
 * Stateless: each POST gets a new MCP server and transport (the SDK's stateless pattern) and is answered
 * with one JSON body. Sessions would keep per-client state in this process's memory, so with several API
 * processes behind a load balancer a client would have to come back to the same one, and an idle
 * session would hold memory until it timed out; nothing here needs them (no subscriptions, no server-sent
 * requests: progress is read by calling get_job_progress again). So GET (a server-to-client stream) and
 * DELETE (ending a session) answer 405, as MCP specifies for a server without them.
 *
 * The tools reach this same service in-process through the typed client (`app.inject`, the full request
 * path: auth, rate limit, validation) with the caller's own key, so /mcp can see and do exactly what the
 * caller's key can, and nothing else.
 *
 * The routes are hidden from the generated OpenAPI document (a zod schema here would make Fastify validate
 * the body and answer in the API's error shape, where MCP answers JSON-RPC errors); ../mcp-openapi.ts
 * describes POST, GET and DELETE as they are served here.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createKbClient } from '../../client/index.ts';
import { createKbMcpServer } from '../../mcp/server.ts';
import { bearerToken } from '../auth.ts';
import type { App, RouteDeps } from '../context.ts';

const MCP_PATH = '/mcp';

/** Request headers the MCP transport reads; the key stays out of it (the tools' client carries it). */
const FORWARDED_HEADERS = [
  'accept',
  'content-type',
  'mcp-protocol-version',
  'mcp-session-id',
  'last-event-id',
];

/** A fetch for the typed client that answers through this app in-process, as the calling request. */
function inProcessFetch(app: App, outer: FastifyRequest) {
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const headers: Record<string, string> = { host: outer.host, 'x-request-id': outer.id };
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const res = await app.inject({
      method: request.method as 'GET',
      url: `${url.pathname}${url.search}`,
      headers,
      ...(body ? { payload: body } : {}),
    });
    const answer = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [String(value)]) answer.append(name, v);
    }
    const empty = res.statusCode === 204 || res.statusCode === 304 || request.method === 'HEAD';
    return new Response(empty ? null : res.payload, { status: res.statusCode, headers: answer });
  };
}

function methodNotAllowed(reply: FastifyReply) {
  return reply
    .status(405)
    .header('allow', 'POST')
    .send({
      jsonrpc: '2.0',
      error: {
        code: -32000,
        message: 'Method not allowed: this MCP server is stateless; send JSON-RPC messages with POST.',
      },
      id: null,
    });
}

/**
 * The origin of the URLs the in-process client and the transport are handed. Both only need a URL to
 * parse; the caller's `Host` is not one to trust (a port like 99999 made `new Request` throw), and the
 * in-process fetch forwards the caller's host header itself.
 */
const IN_PROCESS_ORIGIN = 'http://mcp.invalid';

export function register(app: App, _deps: RouteDeps): void {
  app.post(MCP_PATH, { schema: { hide: true } }, async (request, reply) => {
    // The auth hook has checked this key; the tools call the API with it, as this caller.
    const apiKey = bearerToken(request)!;
    const client = createKbClient({
      baseUrl: IN_PROCESS_ORIGIN,
      apiKey,
      fetch: inProcessFetch(app, request),
    });
    const server = createKbMcpServer(client, {
      onError: (err, where) => request.log.error({ err, where }, 'MCP tool failed'),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await server.connect(transport);
      const headers = new Headers();
      for (const name of FORWARDED_HEADERS) {
        const value = request.headers[name];
        if (typeof value === 'string') headers.set(name, value);
      }
      const answer = await transport.handleRequest(
        new Request(`${IN_PROCESS_ORIGIN}${request.url}`, { method: 'POST', headers }),
        { parsedBody: request.body },
      );
      reply.status(answer.status);
      answer.headers.forEach((value, name) => {
        reply.header(name, value);
      });
      const text = await answer.text();
      return reply.send(text === '' ? undefined : text);
    } finally {
      await transport.close();
      await server.close();
    }
  });
  app.get(MCP_PATH, { schema: { hide: true } }, async (_request, reply) => methodNotAllowed(reply));
  app.delete(MCP_PATH, { schema: { hide: true } }, async (_request, reply) => methodNotAllowed(reply));
}
