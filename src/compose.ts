/**
 * The composition root: builds every part of the service once, from the config, and hands each part only
 * what it needs. Entry points (server.ts, worker-process.ts, kb.ts) and the tests' harness call it; no
 * module below this level builds a shared part itself.
 *
 *   config ─▶ database, cipher (storage.ts: openStorage)
 *          ─▶ sources (connectors + guarded fetch + cipher + base-URL overrides)
 *          ─▶ crawler runtime (settings, fetch, host gate, extraction threads)
 *          ─▶ embedding runtime (model, indexer)
 *          ─▶ job kinds (sync, crawl) + periodic tasks ─▶ worker pool (startWorkers)
 *          ─▶ HTTP deps (appDeps) ─▶ buildApp
 */
import { type Config, crawlerPaceSettings } from './config.ts';
import { registeredConnectors, SourceRegistry } from './connectors/registry.ts';
import type { AnyConnector } from './connectors/types.ts';
import { type CrawlerOverrides, type CrawlerRuntime, createCrawlerRuntime } from './crawler/runtime.ts';
import type { Database } from './db/database.ts';
import { embedderConfigFrom } from './embedding/from-config.ts';
import { createEmbedder } from './embedding/index.ts';
import type { AppDeps } from './http/context.ts';
import { crawlJobKind } from './jobs/crawl-job.ts';
import { createJobSignalRelay, type JobSignalRelay } from './jobs/signals.ts';
import { SOURCE_USER_AGENT, type SourceHttpSettings, SourceServices } from './jobs/source-services.ts';
import { SYNC_HTTP, syncJobKind, syncScheduleTask } from './jobs/sync-job.ts';
import { tokenRefreshTask } from './jobs/token-refresh-task.ts';
import { startWorkerPool, type WorkerPool, type WorkerPoolOptions } from './jobs/worker.ts';
import {
  DEFAULT_WEBHOOK_SETTINGS,
  WEBHOOK_USER_AGENT,
  type WebhookDeliveryDeps,
  type WebhookDeliverySettings,
  webhookDeliveryTask,
} from './jobs/webhook-delivery.ts';
import type { CredentialCipher } from './lib/crypto.ts';
import { type Logger, silentLogger } from './lib/logger.ts';
import { createOutboundFetch, type OutboundFetch } from './net/outbound.ts';
import { EmbeddingRuntime } from './embedding-runtime.ts';

/** Parts a test or benchmark may put in place of the ones built from the config. */
export interface ServiceParts {
  /**
   * Connectors added to the registered ones, or replacing one of the same type. Load the config with the
   * same list (`loadConfig(env, [...registeredConnectors, ...these])`) so their settings are read.
   */
  connectors?: readonly AnyConnector[];
  /** Retry settings of sync jobs' HTTP client (tests shorten the waits). */
  sourceHttp?: SourceHttpSettings;
  /** The guarded fetch to sources. */
  sourceFetch?: OutboundFetch;
  /** The clock OAuth token expiries are counted on (tests move it past a token's life). */
  tokenClock?: () => number;
  /** Crawler settings and parts (tests shorten delays, benchmarks tune concurrency). */
  crawler?: CrawlerOverrides;
  /**
   * Where the embedding model comes from: `config` (default) loads the configured one in the
   * background; `none` starts without one (tests hand a ready model to `embedding.use`).
   */
  embedding?: 'config' | 'none';
  /** Run the background indexer in this process (default: true). */
  runIndexer?: boolean;
  /** Webhook delivery settings (tests shorten the retry waits and move the clock). */
  webhooks?: Partial<WebhookDeliverySettings>;
  /** Called besides the indexer when items were written (tests count wake-ups, benchmarks drive their own indexer). */
  onItemsChanged?: () => void;
  log?: Logger;
}

export interface Service {
  config: Config;
  db: Database;
  cipher: CredentialCipher;
  sources: SourceServices;
  crawler: CrawlerRuntime;
  embedding: EmbeddingRuntime;
  /** Forwards the routes' wake/cancel to the worker pool of this process, once one runs. */
  jobs: JobSignalRelay;
  /** What the HTTP layer is built with. */
  appDeps: AppDeps;
  /** What the webhook delivery task runs with (tests run it themselves). */
  webhooks: WebhookDeliveryDeps;
  /** Starts a worker pool over the service's job kinds and attaches it to `jobs`. */
  startWorkers(opts: Partial<WorkerPoolOptions> & { concurrency: number }): WorkerPool;
  /** Stops the workers this service started, the indexer and the crawler's threads. Not the database. */
  close(): Promise<void>;
}

/** The connectors (registered, and a test's), each with its settings from the config, and their fetch. */
function createSourceServices(config: Config, cipher: CredentialCipher, parts: ServiceParts): SourceServices {
  const registry = new SourceRegistry([...registeredConnectors, ...(parts.connectors ?? [])]);
  return new SourceServices({
    registry,
    fetch:
      parts.sourceFetch ??
      createOutboundFetch({ allowPrivate: config.KB_CRAWL_ALLOW_PRIVATE, userAgent: SOURCE_USER_AGENT }),
    cipher,
    baseUrlOverrides: Object.fromEntries(
      registry.connectors.map((c) => [c.type, config.sources[c.type]?.baseUrl]),
    ),
    oauthApps: Object.fromEntries(registry.connectors.map((c) => [c.type, config.sources[c.type]?.oauthApp])),
    sourceSettings: Object.fromEntries(
      registry.connectors.map((c) => [c.type, config.sources[c.type]?.settings ?? {}]),
    ),
    syncHttp: parts.sourceHttp ?? SYNC_HTTP,
    ...(parts.tokenClock ? { now: parts.tokenClock } : {}),
  });
}

export function composeService(opts: {
  config: Config;
  db: Database;
  cipher: CredentialCipher;
  parts?: ServiceParts;
}): Service {
  const { config, db, cipher } = opts;
  const parts = opts.parts ?? {};
  const log = parts.log ?? silentLogger;

  const sources = createSourceServices(config, cipher, parts);
  const crawler = createCrawlerRuntime({
    allowPrivate: config.KB_CRAWL_ALLOW_PRIVATE,
    publicUrl: config.KB_PUBLIC_URL,
    db,
    overrides: { ...crawlerPaceSettings(config), ...parts.crawler },
  });
  const embedding = new EmbeddingRuntime(db, log, {
    load:
      (parts.embedding ?? 'config') === 'config' ? () => createEmbedder(embedderConfigFrom(config)) : null,
    runIndexer: parts.runIndexer ?? true,
  });
  const itemsChanged = () => {
    embedding.notify();
    parts.onItemsChanged?.();
  };
  const jobs = createJobSignalRelay();
  const jobKinds = [syncJobKind({ db, sources, itemsChanged }), crawlJobKind({ db, crawler, itemsChanged })];
  const webhooks: WebhookDeliveryDeps = {
    db,
    sources,
    fetch: createOutboundFetch({
      allowPrivate: config.KB_CRAWL_ALLOW_PRIVATE,
      userAgent: WEBHOOK_USER_AGENT,
      timeoutMs: 15_000,
      maxRedirects: 0,
    }),
    log,
    settings: { ...DEFAULT_WEBHOOK_SETTINGS, ...parts.webhooks },
  };
  const periodicTasks = [
    syncScheduleTask(db, jobs),
    tokenRefreshTask({ db, sources, log }),
    webhookDeliveryTask(webhooks),
  ];

  const pools: WorkerPool[] = [];
  return {
    config,
    db,
    cipher,
    sources,
    crawler,
    embedding,
    jobs,
    webhooks,
    appDeps: {
      config,
      db,
      sources,
      jobs,
      embedder: () => embedding.embedder(),
      itemsChanged,
      readinessChecks: { embedding_model: async () => embedding.problem },
    },
    startWorkers(o) {
      const pool = startWorkerPool(db, {
        kinds: jobKinds,
        periodicTasks,
        listenUrl: config.DATABASE_URL ?? null,
        log,
        ...o,
      });
      pools.push(pool);
      jobs.attach(pool);
      return pool;
    },
    async close() {
      for (const pool of pools.splice(0)) await pool.stop();
      jobs.attach(null);
      await embedding.close();
      await crawler.extractor.close();
    },
  };
}
