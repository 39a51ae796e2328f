/**
 * How the MCP server's tools answer: what a call returned as JSON text, or a tool error (`isError: true`)
 * carrying the API's own message. A tool never throws to the SDK: an agent reads a tool error and can act
 * on it (fix an argument, wait for a sync), while a thrown error would reach it as a protocol failure or,
 * worse, with internals in the text.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { KbApiError } from '../client/index.ts';

/** Unexpected failures (not answers of the API) go here: the stdio server's stderr, the service's log. */
export type ErrorSink = (err: unknown, where: string) => void;

/** A problem with a tool's arguments that the API cannot name (a rule of the tool's own). */
export class UsageProblem extends Error {}

function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/**
 * What an agent is told when a call fails. An API error keeps its message and code (they say what to
 * change); a failure to reach the service says so; anything else is a short, fixed sentence, with the
 * error itself handed to `onError` (never its stack or text, which could carry internals, to the agent).
 */
export function describeFailure(err: unknown, onError: ErrorSink, where: string): string {
  if (err instanceof KbApiError) return `${err.message} (${err.status} ${err.code})`;
  if (err instanceof UsageProblem) return err.message;
  if (err instanceof TypeError && /fetch failed/i.test(err.message)) {
    const cause = (err as { cause?: { code?: unknown } }).cause;
    const code = typeof cause?.code === 'string' ? ` (${cause.code})` : '';
    return `The knowledge-base service could not be reached${code}; check that it is running and try again.`;
  }
  onError(err, where);
  return `The tool ${where} failed unexpectedly; the error was logged by the MCP server.`;
}

/** Runs a tool's work: its value as JSON text, or a tool error with the API's message. */
export async function runTool(
  where: string,
  onError: ErrorSink,
  work: () => Promise<unknown>,
): Promise<CallToolResult> {
  try {
    return jsonResult(await work());
  } catch (err) {
    return toolError(describeFailure(err, onError, where));
  }
}
