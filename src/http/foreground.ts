import type { FastifyRequest } from 'fastify';
import type { ForegroundGate } from '../lib/foreground-gate.ts';
import type { App } from './context.ts';

/**
 * Counts the API requests in progress on `gate`, from their first hook to their answer (or their client
 * going away), so background writers let them through first (ForegroundGate says why). Only `/api/`: a
 * request there is answered in one go, while a stream (MCP's) could hold the gate for as long as it
 * stays open; MCP's tool calls reach the API as requests of their own.
 */
export function giveWayToApiRequests(app: App, gate: ForegroundGate | undefined): void {
  if (!gate) return;
  const leaving = new WeakMap<FastifyRequest, () => void>();
  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith('/api/')) leaving.set(request, gate.enter());
  });
  const leave = async (request: FastifyRequest) => {
    leaving.get(request)?.();
    leaving.delete(request);
  };
  app.addHook('onResponse', leave);
  app.addHook('onRequestAbort', leave);
}
