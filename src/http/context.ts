import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { OAuthStates } from './oauth-state.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Embedder } from '../embedding/index.ts';
import type { JobSignals } from '../jobs/signals.ts';
import type { SourceServices } from '../jobs/source-services.ts';

/**
 * What the routes need from the rest of the service, built once by the composition root
 * (src/compose.ts); tests build it with their own parts.
 */
export interface AppDeps {
  config: Config;
  db: Database;
  /** Connectors, credential cipher and the guarded fetch to sources. */
  sources: SourceServices;
  /** This process's job workers, if any: routes wake them and cancel their jobs at once. */
  jobs: JobSignals;
  /** The embedding model for query embeddings; undefined until loaded (search answers 503 meanwhile). */
  embedder(): Embedder | undefined;
  /** Wakes the indexer after items were written (uploads). */
  itemsChanged(): void;
  /** Readiness checks beyond the database (embedding model loaded, ...): null when fine, else the problem. */
  readinessChecks: Record<string, () => Promise<string | null>>;
}

/** What each route is registered with: the service's parts plus the HTTP layer's own (OAuth state keys). */
export interface RouteDeps extends AppDeps {
  oauthStates: OAuthStates;
}

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** The caller, resolved from its API key by the auth hook. */
interface Caller {
  organizationId: string;
  keyId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
}

/** The caller of a route under /api (the auth hook guarantees it is set). */
export function callerOf(request: { caller: Caller | null }): Caller {
  if (!request.caller) throw new Error('route registered outside the authenticated scope');
  return request.caller;
}
