import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from '../config.ts';
import type { SourceHttpClientOptions } from '../connectors/http.ts';
import type { AnyConnector, SourceType } from '../connectors/types.ts';
import type { CrawlerOverrides } from '../crawler/runner.ts';
import type { Database } from '../db/database.ts';
import type { Embedder } from '../embedding/index.ts';
import type { JobSignals } from '../jobs/worker.ts';
import type { CredentialCipher } from '../lib/crypto.ts';
import type { OutboundFetch } from '../net/outbound.ts';

/** What the routes need from the rest of the service; tests build it with their own parts. */
export interface AppContext {
  config: Config;
  db: Database;
  /** The embedding model (query embeddings for search). Absent until loaded: search answers 503. */
  embedder?: Embedder;
  /** Wakes the indexer after items were written (uploads, syncs, crawls). */
  onItemsChanged?: () => void;
  /** Readiness checks beyond the database (embedding model loaded, ...). */
  readinessChecks?: Record<string, () => Promise<string | null>>;
  /** Encrypts source credentials at rest; defaults to one over config.KB_ENCRYPTION_KEY. */
  cipher?: CredentialCipher;
  /** This process's job workers, when it runs any: routes wake them and cancel their jobs at once. */
  jobs?: JobSignals;
  /** Connector overrides by source type (tests plug in a connector with a content sync). */
  connectors?: Partial<Record<SourceType, AnyConnector>>;
  /** The guarded outbound fetch to sources; defaults to one built from config (KB_CRAWL_ALLOW_PRIVATE). */
  outboundFetch?: OutboundFetch;
  /** Retry settings of sync jobs' HTTP client (tests shorten the waits). */
  sourceHttp?: Omit<SourceHttpClientOptions, 'fetch' | 'signal'>;
  /** Crawler settings and parts (tests shorten delays, benchmarks tune concurrency); defaults from config. */
  crawler?: CrawlerOverrides;
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
