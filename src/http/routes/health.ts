import { z } from 'zod';
import type { App, RouteDeps } from '../context.ts';

/** `/healthz`: the process answers. `/readyz`: the database answers and every readiness check passes. */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/healthz',
    { schema: { tags: ['operations'], security: [], response: { 200: z.object({ status: z.literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        security: [],
        response: { 200: z.object({ status: z.string(), checks: z.record(z.string(), z.string()) }), 503: z.object({ status: z.string(), checks: z.record(z.string(), z.string()) }) },
      },
    },
    async (_request, reply) => {
      const checks: Record<string, string> = {};
      try {
        await deps.db.query('SELECT 1');
        checks['database'] = 'ok';
      } catch {
        checks['database'] = 'unreachable';
      }
      for (const [name, check] of Object.entries(deps.readinessChecks)) {
        const problem = await check().catch((e: Error) => e.message);
        checks[name] = problem ?? 'ok';
      }
      const ready = Object.values(checks).every((v) => v === 'ok');
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
    },
  );
}
