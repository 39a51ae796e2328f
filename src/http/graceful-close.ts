/**
 * Graceful shutdown of the HTTP server. Node's `server.close()` stops accepting connections and then
 * closes every keep-alive connection it considers idle; a request a client has already written on such a
 * connection, but the server has not parsed yet, is then reset. Under load that is most requests in
 * flight at SIGTERM. Instead:
 *
 * 1. stop accepting new connections, but leave open connections alone;
 * 2. answer every request that still arrives on them, with `Connection: close`, so each client closes its
 *    connection after its answer;
 * 3. once no request has been in flight for `quietMs` (or after `maxMs`), close what is still idle.
 */
import type { FastifyInstance } from 'fastify';

/** The HTTP servers being drained (one per app; shared by all of the app's encapsulated contexts). */
const draining = new WeakSet<object>();

/** `onSend` hook (registered by buildApp): while draining, every answer closes its connection. */
export async function closeConnectionWhileDraining(
  request: { server: { server: object } },
  reply: { header(name: string, value: string): unknown },
): Promise<void> {
  if (draining.has(request.server.server)) reply.header('connection', 'close');
}

export async function closeGracefully(
  app: FastifyInstance,
  opts: { quietMs?: number; maxMs?: number } = {},
): Promise<void> {
  const quietMs = opts.quietMs ?? 300;
  const maxMs = opts.maxMs ?? 10_000;
  const server = app.server;
  draining.add(server);
  let inFlight = 0;
  let lastActivity = Date.now();
  const onRequest = (_req: unknown, res: { once(event: string, fn: () => void): void }) => {
    inFlight++;
    lastActivity = Date.now();
    res.once('close', () => {
      inFlight--;
      lastActivity = Date.now();
    });
  };
  server.on('request', onRequest);
  // Keep Node from cutting idle keep-alive connections inside close(): a request may be on its way.
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {};
  const closed = app.close();
  const started = Date.now();
  while (Date.now() - started < maxMs && (inFlight > 0 || Date.now() - lastActivity < quietMs)) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  closeIdle();
  await closed;
  server.off('request', onRequest);
}
