import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { connectorSettings } from './connectors/context.ts';
import { registeredConnectors } from './connectors/registry.ts';
import type { AnyConnector, OAuthApp } from './connectors/types.ts';
import type { CrawlerSettings } from './crawler/settings.ts';
import { DEFAULT_POOL_MAX } from './db/postgres.ts';

/**
 * Every setting of the service, parsed once from the environment (and an optional `.env`, loaded by the entry
 * points). The settings the service was specified with keep their plain names (PORT, DATABASE_URL, ...); our
 * own additions carry the `KB_` prefix. docs/configuration.md lists them all.
 */
const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const optionalUrl = z.url({ protocol: /^https?$/ }).optional();

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  KB_DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  KB_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  KB_MODEL_DIR: z.string().min(1).optional(),
  KB_MODEL_NAME: z.string().min(1).optional(),
  KB_MODEL_ALLOW_REMOTE: booleanFromEnv.default(false),
  KB_EMBEDDING_PROVIDER: z.enum(['local', 'openai']).default('local'),
  KB_EMBEDDING_BASE_URL: optionalUrl,
  KB_EMBEDDING_MODEL: z.string().min(1).optional(),
  KB_EMBEDDING_API_KEY: z.string().min(1).optional(),
  KB_CRAWL_ALLOW_PRIVATE: booleanFromEnv.default(false),
  KB_CRAWL_MAX_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** A crawl's pace per host (docs/crawling.md, "Pace"): its defaults and the bounds of what a crawl may ask. */
  KB_CRAWL_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  KB_CRAWL_MAX_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  KB_CRAWL_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(100),
  KB_CRAWL_MIN_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(50),
  KB_CRAWL_MAX_CRAWL_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(30_000),
  /** Hosts the organizations own, comma-separated (`docs.example.com`, `*.example.com`): they may go fast. */
  KB_CRAWL_FAST_HOSTS: z
    .string()
    .default('')
    .transform((v) => v.split(/[\s,]+/).filter(Boolean))
    .pipe(
      z.array(
        z.string().regex(/^(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i, {
          error: 'expected host names or *.domain entries',
        }),
      ),
    ),
  KB_CRAWL_FAST_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(8),
  KB_CRAWL_FAST_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  KB_PUBLIC_URL: optionalUrl,
  /** base64 of 32 random bytes; encrypts source credentials at rest. Generated into the data dir in embedded mode. */
  KB_ENCRYPTION_KEY: z.string().optional(),
  KB_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  KB_BULK_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(16 * 1024 * 1024),
  KB_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
  /**
   * On SIGTERM/SIGINT: how long the listener keeps accepting while /readyz already answers 503; set it
   * above the load balancer's health-check interval (times its failure threshold). 0: stop at once.
   */
  KB_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(1000),
  KB_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** auto: readable lines on a terminal, JSON when piped or NODE_ENV=production (src/lib/logger.ts). */
  KB_LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  KB_WORKERS: z.coerce.number().int().min(0).max(64).default(2),
  /** Server mode: connections in this process's pool (src/db/postgres.ts says how many it needs). */
  KB_DB_POOL_MAX: z.coerce.number().int().min(2).max(1000).default(DEFAULT_POOL_MAX),
  /** Embedded mode: PGlite's shared_buffers in MB; unset, a quarter of the data dir, 128-512 (src/db/pglite.ts). */
  KB_PGLITE_SHARED_BUFFERS_MB: z.coerce.number().int().min(16).max(4096).optional(),
});

type Env = z.infer<typeof envSchema>;

export interface Config extends Env {
  /**
   * `KB_*` variables of the environment that no setting reads, each with the setting it most likely
   * misspells: a typo must not pass for a setting left at its default.
   */
  unknownSettings: Array<{ name: string; likely: string | undefined }>;
  /** `pglite` without DATABASE_URL, `postgres` with it. */
  storage: 'pglite' | 'postgres';
  dataDir: string;
  /**
   * Per source type, from the settings each connector declares: the operator's base-URL override
   * (`baseUrlSetting`, e.g. KB_NOTES_BASE_URL) and the OAuth app (`oauth.settings`), when set.
   */
  sources: Record<
    string,
    {
      baseUrl: string | undefined;
      oauthApp: OAuthApp | undefined;
      /** The connector's own settings (`Connector.settings`) by key, defaults filled in. */
      settings: Record<string, string>;
    }
  >;
}

/** The settings a connector declares: its base-URL override and, for OAuth sources, its OAuth app. */
function sourceSettingsSchema(connectors: readonly AnyConnector[]): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const c of connectors) {
    shape[c.baseUrlSetting] = optionalUrl;
    for (const setting of Object.values(c.settings ?? {})) {
      shape[setting.env] = z
        .string()
        .regex(setting.pattern, { error: `expected ${setting.description}` })
        .optional();
    }
    if (c.oauth) {
      shape[c.oauth.settings.clientId] = z.string().min(1).optional();
      shape[c.oauth.settings.clientSecret] = z.string().min(1).optional();
      shape[c.oauth.settings.baseUrl] = optionalUrl;
    }
  }
  return z.object(shape);
}

/** The values the operator set for a connector's own settings, by key. */
function operatorSettings(c: AnyConnector, env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, setting] of Object.entries(c.settings ?? {})) {
    const value = env[setting.env];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parse the environment; throws ConfigError with one readable line per bad setting. `connectors`: the
 * sources whose declared settings are read (the registered ones; tests add their own).
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  connectors: readonly AnyConnector[] = registeredConnectors,
): Config {
  // Empty strings in the environment mean "not set", as in most twelve-factor tools.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  const parsedSources = sourceSettingsSchema(connectors).safeParse(cleaned);
  const issues = [...(parsed.error?.issues ?? []), ...(parsedSources.error?.issues ?? [])];
  if (!parsed.success || !parsedSources.success) {
    const lines = issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const settings = parsedSources.data as Record<string, string | undefined>;
  const sources: Config['sources'] = {};
  for (const c of connectors) {
    const o = c.oauth?.settings;
    const clientId = o && settings[o.clientId];
    const clientSecret = o && settings[o.clientSecret];
    sources[c.type] = {
      baseUrl: settings[c.baseUrlSetting],
      oauthApp:
        c.oauth && clientId && clientSecret
          ? {
              clientId,
              clientSecret,
              baseUrl: (settings[c.oauth.settings.baseUrl] ?? c.oauth.defaultBaseUrl).replace(/\/+$/, ''),
            }
          : undefined,
      settings: { ...connectorSettings(c, operatorSettings(c, settings)) },
    };
  }
  return {
    ...e,
    unknownSettings: unknownSettings(cleaned, connectors),
    storage: e.DATABASE_URL ? 'postgres' : 'pglite',
    dataDir: path.resolve(e.KB_DATA_DIR),
    sources,
  };
}

/** `KB_*` variables read outside the settings: the CLI's, the fixture scripts' and the test driver's. */
const OTHER_KB_VARIABLES = new Set(['KB_URL', 'KB_API_KEY', 'KB_CACHE_DIR', 'KB_DEBUG']);
const OTHER_KB_PREFIXES = ['KB_TEST_', 'KB_BENCH_'];

function unknownSettings(
  env: Record<string, string | undefined>,
  connectors: readonly AnyConnector[],
): Config['unknownSettings'] {
  const known = [...Object.keys(envSchema.shape), ...Object.keys(sourceSettingsSchema(connectors).shape)];
  const knownSet = new Set([...known, ...OTHER_KB_VARIABLES]);
  return Object.keys(env)
    .filter((name) => name.startsWith('KB_') && !knownSet.has(name))
    .filter((name) => !OTHER_KB_PREFIXES.some((prefix) => name.startsWith(prefix)))
    .sort()
    .map((name) => ({ name, likely: closest(name, known) }));
}

/** The known name nearest to `name` by edit distance, if it is near enough to be a typo of it. */
function closest(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(name.length / 4)) ? best.name : undefined;
}

/** Levenshtein distance (settings are short: the quadratic table is nothing). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The warning of an unknown `KB_*` variable, as the service's start logs it. */
export function unknownSettingWarning({ name, likely }: Config['unknownSettings'][number]): string {
  return likely
    ? `${name} is not a setting and is ignored; did you mean ${likely}?`
    : `${name} is not a setting and is ignored (docs/configuration.md lists them)`;
}

/** Load `.env` from the working directory when present, without overriding the real environment. */
export async function loadDotEnv(): Promise<void> {
  if (!existsSync('.env')) return;
  const dotenv = await import('dotenv');
  dotenv.config({ quiet: true });
}

/**
 * The crawler's pace settings (src/crawler/settings.ts) from the operator's KB_CRAWL_* settings. The bounds
 * are the operator's word: a default outside them (KB_CRAWL_MIN_DELAY_MS=200 with the default delay of 100)
 * moves inside.
 */
export function crawlerPaceSettings(config: Config) {
  return {
    perHostConcurrency: Math.min(config.KB_CRAWL_CONCURRENCY, config.KB_CRAWL_MAX_CONCURRENCY),
    maxPerHostConcurrency: config.KB_CRAWL_MAX_CONCURRENCY,
    minDelayMs: Math.max(config.KB_CRAWL_DELAY_MS, config.KB_CRAWL_MIN_DELAY_MS),
    leastDelayMs: config.KB_CRAWL_MIN_DELAY_MS,
    maxCrawlDelayMs: config.KB_CRAWL_MAX_CRAWL_DELAY_MS,
    fastHosts: config.KB_CRAWL_FAST_HOSTS,
    fastConcurrency: config.KB_CRAWL_FAST_CONCURRENCY,
    fastDelayMs: config.KB_CRAWL_FAST_DELAY_MS,
  } satisfies Partial<CrawlerSettings>;
}
