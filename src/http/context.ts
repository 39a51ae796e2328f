import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Embedder } from '../embedding/index.ts';

/** What the routes need from the rest of the service; tests build it with their own parts. */
export interface AppContext {
  config: Config;
  db: Database;
  /** The embedding model (query embeddings for search). Absent until loaded: search answers 503. */
  embedder?: Embedder;
  /** Wakes the indexer after items were written (uploads, syncs, crawls). */
  onItemsChanged?: () => void;
  /** Readiness checks beyond the database (embedding model loaded, ...). */
  readinessChecks?: Array<() => Promise<string | null>>;
}

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** The caller, resolved from its API key by the auth hook. */
export interface Caller {
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
