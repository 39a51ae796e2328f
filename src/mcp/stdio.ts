/**
 * `kb mcp`: the MCP server over stdio, for an MCP client that starts it as a process (Claude Desktop,
 * Cursor, an agent framework). It talks to a running service over its public API with the key in
 * KB_API_KEY. stdout carries the protocol, so everything for people goes to stderr.
 */
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createKbClient, KbApiError, ok } from '../client/index.ts';
import { serviceUrl } from '../client/service-url.ts';
import { describeFailure } from './results.ts';
import { createKbMcpServer } from './server.ts';

const USAGE = `usage: kb mcp [--url <service URL>]

Runs the knowledge base's MCP server on stdin/stdout, for an MCP client to start.
  --url      the service (default: KB_URL, else http://127.0.0.1:$PORT, port 8080), as for kb's other commands
  KB_API_KEY an API key of your organization (required; from the environment only)`;

function say(line: string): void {
  process.stderr.write(`kb mcp: ${line}\n`);
}

/** Runs until stdin closes. Sets a non-zero exit code, with the reason on stderr, when it cannot start. */
export async function runMcpStdio(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let url: string;
  try {
    const { values } = parseArgs({
      args: argv,
      options: { url: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      process.stderr.write(`${USAGE}\n`);
      return;
    }
    url = serviceUrl(values.url, env);
  } catch (err) {
    say((err as Error).message);
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const apiKey = env['KB_API_KEY']?.trim();
  if (!apiKey) {
    say(
      'set KB_API_KEY to an API key of your organization (kb key create <org>, or the key printed on first start).',
    );
    process.exitCode = 2;
    return;
  }

  const client = createKbClient({ baseUrl: url, apiKey });
  // A key the service refuses is a setting to fix, not something an agent can fix: say so and stop. A
  // service that is not up yet is not: the tools report it until it is.
  try {
    await ok(client.GET('/api/connect/connections'));
  } catch (err) {
    if (err instanceof KbApiError && err.status === 401) {
      say(`the service at ${url} refused the API key in KB_API_KEY: ${err.message}`);
      process.exitCode = 1;
      return;
    }
    say(`warning: ${describeFailure(err, report, 'the start-up check')} (service: ${url})`);
  }

  const server = createKbMcpServer(client, { onError: report });
  await server.connect(new StdioServerTransport());
  say(`serving the knowledge base at ${url} on stdio`);
}

function report(err: unknown, where: string): void {
  say(`${where} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
}
