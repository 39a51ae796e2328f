/**
 * Graceful shutdown of the HTTP server: every request that reached the process is answered.
 *
 * Node's `server.close()` closes the listening socket at once and then every connection it considers
 * idle. Both drop requests: closing a listening socket makes the kernel reset the connections it had
 * already accepted for us (its accept queue) but the process had not yet taken in; and "idle" includes a
 * connection whose request the client has written but the server has not read yet, a fresh connection's
 * first request as well as the next one on a keep-alive connection. Instead:
 *
 * 1. draining starts: `/readyz` answers 503 (health.ts asks `isDraining`), every answer carries
 *    `Connection: close`, and the listener stays open for `graceMs`, so a load balancer polling
 *    `/readyz` stops sending before anything is refused;
 * 2. the listener closes right after a poll of the event loop that accepted no connection: libuv accepts
 *    until the kernel's queue is empty, so none is left in it to be reset; a later connection is refused,
 *    which its client knows was never delivered;
 * 3. open connections are left alone: every request arriving on them is answered, and a connection that
 *    has not sent its first request yet is waited for; once no request is in flight, none is awaited and
 *    nothing happened for `quietMs` (or after `maxMs`), the idle keep-alive connections are closed and
 *    the server waits for the rest to send their last answer.
 */
import type http from 'node:http';
import net from 'node:net';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';

/** What a graceful close must wait for, counted from the server's start (`trackConnections`). */
interface ServerActivity {
  inFlight: number;
  /** Accepted connections that have not sent a complete request head yet. */
  awaitingFirstRequest: Set<net.Socket>;
  accepted: number;
  lastActivity: number;
}

const activity = new WeakMap<object, ServerActivity>();

/** The HTTP servers being drained (one per app; shared by all of the app's encapsulated contexts). */
const draining = new WeakSet<object>();

/**
 * Counts connections and requests from now on; call before the server listens, so that a connection
 * accepted before the shutdown, whose request arrives after it, is waited for. Idempotent.
 */
export function trackConnections(server: http.Server): void {
  if (activity.has(server)) return;
  const state: ServerActivity = {
    inFlight: 0,
    awaitingFirstRequest: new Set(),
    accepted: 0,
    lastActivity: Date.now(),
  };
  activity.set(server, state);
  server.on('connection', (socket: net.Socket) => {
    state.accepted++;
    state.lastActivity = Date.now();
    state.awaitingFirstRequest.add(socket);
    socket.once('close', () => state.awaitingFirstRequest.delete(socket));
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    state.awaitingFirstRequest.delete(req.socket);
    state.inFlight++;
    state.lastActivity = Date.now();
    res.once('close', () => {
      state.inFlight--;
      state.lastActivity = Date.now();
    });
  });
}

/** True from the start of a graceful close: the server is shutting down and must not get new work. */
export function isDraining(server: object): boolean {
  return draining.has(server);
}

/** `onSend` hook (registered by buildApp): while draining, every answer closes its connection. */
export async function closeConnectionWhileDraining(
  request: { server: { server: object } },
  reply: { header(name: string, value: string): unknown },
): Promise<void> {
  if (draining.has(request.server.server)) reply.header('connection', 'close');
}

interface GracefulCloseOptions {
  /** How long the listener keeps accepting after draining starts (KB_SHUTDOWN_GRACE_MS). */
  graceMs: number;
  /** Aborted: the grace ends now (a second signal); requests in flight are still answered. */
  endGrace?: AbortSignal;
  /** After the listener closed: how long nothing must happen before idle connections close. */
  quietMs?: number;
  /**
   * After the listener closed: the longest wait for requests in flight and for connections that have not
   * sent their first request (a client that connects and sends nothing); idle connections close then.
   */
  maxMs?: number;
}

export async function closeGracefully(app: FastifyInstance, opts: GracefulCloseOptions): Promise<void> {
  const quietMs = opts.quietMs ?? 300;
  const maxMs = opts.maxMs ?? 10_000;
  const server = app.server;
  trackConnections(server);
  const state = activity.get(server)!;
  draining.add(server);
  state.lastActivity = Date.now();
  await graceWindow(opts.graceMs, opts.endGrace);
  await stopAccepting(server, state, maxMs);
  const started = Date.now();
  const settled = () =>
    state.inFlight === 0 &&
    state.awaitingFirstRequest.size === 0 &&
    Date.now() - state.lastActivity >= quietMs;
  while (Date.now() - started < maxMs) {
    if (settled()) {
      // Read what the kernel holds for the open connections first (a poll), then look again: a request
      // already written on an idle connection is then in flight, not cut by the close below.
      await nextLoopTurn();
      if (settled()) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // Fastify's close runs its onClose hooks, then http.Server#close: that closes the idle keep-alive
  // connections and resolves once the busy ones have sent their last answer (each with Connection: close).
  await app.close();
}

/** Resolves after `ms`, or as soon as `endGrace` aborts. */
function graceWindow(ms: number, endGrace: AbortSignal | undefined): Promise<void> {
  if (ms <= 0 || endGrace?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      endGrace?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    endGrace?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Closes the listening socket, and only the listening socket (net.Server's close; http.Server's would
 * also cut idle connections), right after a poll of the event loop that accepted nothing: the accept
 * queue was empty a moment ago. What remains is the instant between that poll and the close: a
 * connection completed by the kernel exactly then is reset, as with any close of a listening socket;
 * the grace is there so that no client is still connecting by then. Under a steady stream of new
 * connections `maxMs` bounds the wait.
 */
async function stopAccepting(server: net.Server, state: ServerActivity, maxMs: number): Promise<void> {
  const started = Date.now();
  // To the check phase of this turn of the loop (called from a signal's callback, this is still its poll
  // phase): from there each `nextLoopTurn` goes through a poll phase, which accepts what the kernel holds.
  await nextLoopTurn();
  for (;;) {
    const before = state.accepted;
    // The continuation runs in the check phase, right after the poll phase that accepted (or did not).
    await nextLoopTurn();
    if (state.accepted === before || Date.now() - started >= maxMs) break;
  }
  net.Server.prototype.close.call(server);
}
