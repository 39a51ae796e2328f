import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Logger as PinoLogger } from 'pino';
import { type Config, loadConfig } from '../../src/config.ts';
import { registeredConnectors } from '../../src/connectors/registry.ts';
import type { AnyConnector } from '../../src/connectors/types.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPgliteThread } from '../../src/db/pglite-thread.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import {
  createApiKey,
  createOrganization,
  findOrganization,
} from '../../src/db/repositories/organizations.ts';
import { composeService, type Service, type ServiceParts } from '../../src/compose.ts';
import { buildApp } from '../../src/http/app.ts';
import type { App } from '../../src/http/context.ts';
import { CredentialCipher } from '../../src/lib/crypto.ts';
import { ensureVectorIndex } from '../../src/search/vector-index.ts';
import { startNativePostgres } from './native-postgres.ts';
import { migrationsHash, pgliteImageFile } from './pglite-image.ts';

export type StorageMode = 'pglite' | 'postgres';

/** Both storage modes; every storage test runs against each. */
export const STORAGE_MODES: StorageMode[] = ['pglite', 'postgres'];

let sharedServer: Promise<{ url: string; stop(): Promise<void> }> | null = null;

/**
 * A native Postgres with pgvector for this test process. `scripts/run-tests.ts` starts one for the whole
 * run and passes its URL in KB_TEST_DATABASE_URL; a test file run on its own starts its own.
 */
async function adminUrl(): Promise<string> {
  if (process.env['KB_TEST_DATABASE_URL']) return process.env['KB_TEST_DATABASE_URL'];
  sharedServer ??= startNativePostgres();
  const server = await sharedServer;
  process.once('beforeExit', () => void server.stop());
  return server.url;
}

/**
 * A fresh database of the given mode (a new database on the native server, or PGlite in memory): empty,
 * or with `migrated` every migration applied already (from a migrated image or template, which is what
 * running them would leave, in a fraction of the time: see pglite-image.ts and migratedTemplate).
 */
export async function freshDatabase(
  mode: StorageMode,
  opts: { migrated?: boolean } = {},
): Promise<{ db: Database; url?: string; drop(): Promise<void> }> {
  if (mode === 'pglite') {
    // As the service opens it: on a thread of its own.
    const image = await pgliteImageFile(opts.migrated ? 'migrated' : 'empty');
    const db = await openPgliteThread(null, { image });
    return { db, drop: () => db.close() };
  }
  const admin = new URL(await adminUrl());
  const template = opts.migrated ? await migratedTemplate(admin) : null;
  const name = `kbtest_${randomBytes(6).toString('hex')}`;
  await adminQuery(admin, `CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = databaseUrl(admin, name);
  const db = await openPostgres(url, { max: 5 });
  return {
    db,
    url,
    async drop() {
      await db.close();
      await adminQuery(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

function databaseUrl(admin: URL, name: string): string {
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

async function adminQuery(admin: URL, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

let templateName: Promise<string> | undefined;

/**
 * A database on the native server with every migration applied, named by the migrations' hash, that
 * CREATE DATABASE copies (nobody connects to it once built, as a template requires). Files running at once
 * may each build one: each migrates a database of its own and renames it into place; the loser drops its
 * own.
 */
function migratedTemplate(admin: URL): Promise<string> {
  templateName ??= (async () => {
    const name = `kbtemplate_${migrationsHash()}`;
    const exists = await adminQuery(admin, 'SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount) return name;
    const building = `kbbuild_${randomBytes(6).toString('hex')}`;
    await adminQuery(admin, `CREATE DATABASE ${building}`);
    const db = await openPostgres(databaseUrl(admin, building), { max: 1 });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    try {
      await adminQuery(admin, `ALTER DATABASE ${building} RENAME TO ${name}`);
    } catch (err) {
      // Another file's template got there first.
      await adminQuery(admin, `DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      if ((err as { code?: string }).code !== '42P04') throw err;
    }
    return name;
  })();
  return templateName;
}

/** A fresh database with the migrations applied and the vector index of `model` (the indexer's tests). */
export async function indexerDatabase(
  mode: StorageMode,
  model: { modelId: string; dimensions: number },
): Promise<{ db: Database; drop(): Promise<void> }> {
  const fresh = await freshDatabase(mode, { migrated: true });
  await ensureVectorIndex(fresh.db, { id: model.modelId, dimensions: model.dimensions });
  return { db: fresh.db, drop: fresh.drop };
}

/** `connectors`: extra sources a test registers, whose declared settings the config then reads. */
export function testConfig(
  overrides: Record<string, string> = {},
  connectors: readonly AnyConnector[] = [],
): Config {
  return loadConfig(
    {
      KB_DATA_DIR: '/nonexistent-test-data-dir',
      KB_LOG_LEVEL: 'silent',
      KB_RATE_LIMIT_PER_MINUTE: '0',
      KB_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ...overrides,
    },
    [...registeredConnectors, ...connectors],
  );
}

/**
 * The composed service over a database the caller opened (migrated), with no model and no background
 * indexer unless `parts` say otherwise. Close it with `service.close()`.
 */
export function composeTestService(
  db: Database,
  config: Config = testConfig(),
  parts: ServiceParts = {},
): Service {
  return composeService({
    config,
    db,
    cipher: new CredentialCipher(config.KB_ENCRYPTION_KEY!),
    parts: { embedding: 'none', runIndexer: false, ...parts },
  });
}

export interface TestOrg {
  id: string;
  key: string;
}

export interface TestApp {
  app: App;
  db: Database;
  /** The composed service behind the app (its parts: sources, crawler, embedding, job kinds...). */
  service: Service;
  /** Two organizations: every test that creates data in `a` checks that `b` cannot see or touch it. */
  orgA: TestOrg;
  orgB: TestOrg;
  call(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    opts?: { key?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** Build the real app on a fresh database of the given mode, with two organizations and a key each. */
export async function startTestApp(
  mode: StorageMode,
  opts: {
    config?: Record<string, string>;
    /** Parts in place of those built from the config (connectors, fast retries, crawler settings...). */
    parts?: ServiceParts;
    /** Benchmarks: a file-backed PGlite directory kept between runs (organizations are reused). */
    pgliteDir?: string;
    /** A process logger for the HTTP layer (and the service's jobs, unless `parts.log` is given). */
    logger?: PinoLogger;
  } = {},
): Promise<TestApp> {
  const fresh = opts.pgliteDir
    ? await openPgliteThread(opts.pgliteDir).then((db) => ({ db, drop: () => db.close() }))
    : await freshDatabase(mode, { migrated: true });
  const db = fresh.db;
  // A kept benchmark directory may predate a migration; a fresh database has them all.
  if (opts.pgliteDir) await migrate(db);
  const makeOrg = async (name: string): Promise<TestOrg> => {
    const org = (await findOrganization(db, name)) ?? (await createOrganization(db, name));
    return { id: org.id, key: (await createApiKey(db, org.id)).apiKey };
  };
  const orgA = await makeOrg('org-a');
  const orgB = await makeOrg('org-b');
  // No model unless a test hands one in (withSearch), no background indexer: tests drain it themselves.
  const parts = opts.logger ? { log: opts.logger, ...opts.parts } : opts.parts;
  const service = composeTestService(db, testConfig(opts.config, opts.parts?.connectors), parts);
  const app = await buildApp(service.appDeps, { logger: opts.logger ?? false });
  await app.ready();
  return {
    app,
    db,
    service,
    orgA,
    orgB,
    async call(method, url, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      const key = o.key === undefined ? orgA.key : o.key;
      if (key) headers['authorization'] = `Bearer ${key}`;
      let payload: string | undefined;
      if (o.body !== undefined) {
        payload = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
      let body: unknown = res.body;
      try {
        body = res.json();
      } catch {}
      return { status: res.statusCode, body, headers: res.headers };
    },
    async close() {
      await app.close();
      await service.close();
      await fresh.drop();
    },
  };
}

/** Assert the `{error, message}` shape and code. */
export function expectError(res: { status: number; body: any }, status: number, code: string): void {
  if (res.status !== status || res.body?.error !== code || typeof res.body?.message !== 'string') {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  const keys = Object.keys(res.body).sort();
  if (!keys.includes('error') || !keys.includes('message')) throw new Error('error body lacks error/message');
}
