import { z } from 'zod';
import { cachedCeilingStatus } from '../../db/embedded-ceiling.ts';
import { pingDatabase } from '../../db/repositories/health.ts';
import type { App, RouteDeps } from '../context.ts';
import { isDraining } from '../graceful-close.ts';
import { errorBodySchema } from '../schemas.ts';

/**
 * Embedded mode only: the data directory's size against the measured ceiling (src/db/embedded-ceiling.ts).
 * Informational: a data directory near its ceiling still answers, so it does not make /readyz fail.
 */
const embeddedSchema = z
  .object({
    items: z.number().int(),
    chunks: z.number().int(),
    ceiling: z.object({ items: z.number().int(), chunks: z.number().int() }),
    share: z.number().describe('the larger of items and chunks as a share of the ceiling'),
    nearCeiling: z.boolean().describe('share >= 0.8: time to move to server mode (kb export-to-postgres)'),
  })
  .optional()
  .describe('embedded mode (PGlite) only');
const readySchema = z.object({
  status: z.string(),
  checks: z.record(z.string(), z.string()),
  embedded: embeddedSchema,
});

/**
 * `/healthz`: the process answers. `/readyz`: the database answers, every readiness check passes and the
 * process is not shutting down (from the signal on it answers 503 with `checks.shutdown`, while the
 * listener stays open for the grace period, so a load balancer stops sending before anything is refused).
 */
export function register(app: App, deps: RouteDeps): void {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process answers',
        security: [],
        // 400: a query string with bad percent-encoding or a NUL, refused here as on every path.
        response: { 200: z.object({ status: z.literal('ok') }), 400: errorBodySchema },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Readiness: the database, the model and the service are ready for traffic',
        security: [],
        response: { 200: readySchema, 400: errorBodySchema, 503: readySchema },
      },
    },
    async (request, reply) => {
      const checks: Record<string, string> = {};
      if (isDraining(request.server.server)) checks['shutdown'] = 'shutting down';
      try {
        await pingDatabase(deps.db);
        checks['database'] = 'ok';
      } catch {
        checks['database'] = 'unreachable';
      }
      for (const [name, check] of Object.entries(deps.readinessChecks)) {
        const problem = await check().catch((e: Error) => e.message);
        checks[name] = problem ?? 'ok';
      }
      const ready = Object.values(checks).every((v) => v === 'ok');
      let embedded: z.infer<typeof embeddedSchema>;
      if (deps.db.kind === 'pglite' && checks['database'] === 'ok') {
        const s = await cachedCeilingStatus(deps.db).catch(() => null);
        if (s)
          embedded = {
            items: s.items,
            chunks: s.chunks,
            ceiling: s.ceiling,
            share: s.share,
            nearCeiling: s.near,
          };
      }
      return reply
        .status(ready ? 200 : 503)
        .send({ status: ready ? 'ready' : 'not_ready', checks, embedded });
    },
  );
}
