import type { FastifyRequest } from 'fastify';
import type { App } from './context.ts';

/**
 * One log line per request, when it is answered: method, path (secret query values censored by the
 * process logger's serializer), status and milliseconds. Fastify's own logging writes two lines a
 * request (its arrival and its end). Routine traffic goes at `debug`: health checks, and the console's
 * reads (its pages poll every few seconds and would flood a terminal at `info`).
 */
export function logOneLinePerRequest(app: App): void {
  app.addHook('onResponse', async (request, reply) => {
    const level = isRoutine(request) ? 'debug' : 'info';
    request.log[level](
      { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      'request completed',
    );
  });
}

function isRoutine(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const path = request.url.split('?')[0]!;
  if (path === '/healthz' || path === '/readyz' || path.startsWith('/console')) return true;
  return fromConsole(request.headers.referer);
}

/** A request the console's page made (browsers send the page's address as the referer on the same origin). */
function fromConsole(referer: string | undefined): boolean {
  if (!referer) return false;
  try {
    return new URL(referer).pathname.startsWith('/console');
  } catch {
    return false;
  }
}
