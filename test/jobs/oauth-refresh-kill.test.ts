/**
 * A process killed (SIGKILL) in the middle of an OAuth refresh (native Postgres: PGlite is
 * single-process). The refresh runs in a child (fixtures/refresh-step.ts) against a Zendesk-faithful
 * authorization server, stopped at a step and killed there:
 *
 * - just after the commit: the rotated pair is stored (encrypted) before anything used the new access
 *   token, so the next sync uses it without another refresh;
 * - between the source's answer and the commit: the stored pair is the old one, whole and readable (never
 *   half a pair), and the row lock died with the process. Zendesk spends a refresh token once used, so
 *   that pair is void at the source: the next refresh is refused, and the connection and the job say to
 *   consent again rather than fail without words or hang.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { zendeskOAuth } from '../../src/connectors/support-desk/oauth.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import {
  getConnectionById,
  listConnections,
  lockConnectionCredentials,
  upsertConnection,
} from '../../src/db/repositories/connections.ts';
import { createOrganization } from '../../src/db/repositories/organizations.ts';
import { getSyncJob } from '../../src/db/repositories/sync-jobs.ts';
import { credentialsWithTokens } from '../../src/jobs/oauth-tokens.ts';
import { enqueueSyncJob } from '../../src/jobs/sync-job.ts';
import type { Service } from '../../src/compose.ts';
import { type ZendeskAuth, startZendeskAuth } from '../fakes/zendesk-oauth.ts';
import { type FakeZendesk, startFakeZendesk } from '../fakes/zendesk.ts';
import { composeTestService, freshDatabase, testConfig } from '../support/harness.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitFor } from './helpers.ts';

const REFRESH_STEP = fileURLToPath(new URL('./fixtures/refresh-step.ts', import.meta.url));
const CLIENT_ID = 'kb-zendesk-client';
const CLIENT_SECRET = `zd-client-secret-${randomBytes(6).toString('hex')}`;

let db: Database;
let drop: () => Promise<void>;
let env: Record<string, string>;
let zendesk: FakeZendesk;
let auth: ZendeskAuth;
let service: Service;
let org: string;
const children: ChildProcess[] = [];

before(async () => {
  const fresh = await freshDatabase('postgres');
  db = fresh.db;
  drop = fresh.drop;
  await migrate(db);
  zendesk = await startFakeZendesk();
  auth = await startZendeskAuth(zendesk, { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  const acct = zendesk.account;
  acct.addArticle({ section: acct.addSection(acct.addCategory('Guides'), 'Setup'), title: 'Hello' });
  env = {
    DATABASE_URL: fresh.url!,
    KB_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    KB_CRAWL_ALLOW_PRIVATE: 'true',
    KB_LOG_LEVEL: 'silent',
    KB_SUPPORT_DESK_BASE_URL: zendesk.url,
    KB_SUPPORT_DESK_OAUTH_BASE_URL: `${auth.url}/{subdomain}`,
    KB_SUPPORT_DESK_CLIENT_ID: CLIENT_ID,
    KB_SUPPORT_DESK_CLIENT_SECRET: CLIENT_SECRET,
  };
  service = composeTestService(db, testConfig(env), { sourceHttp: FAST_SOURCE_HTTP });
  org = (await createOrganization(db, 'kill-refresh-org')).id;
});
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await service?.close();
  await zendesk?.close();
  await auth?.close();
  await drop?.();
});

/** A support_desk connection holding a freshly issued pair. */
async function connectWithNewGrant(): Promise<string> {
  const grant = auth.issue();
  const credentials = credentialsWithTokens({ subdomain: 'acme' }, zendeskOAuth, {
    accessToken: grant.access,
    refreshToken: grant.refresh,
    expiresAt: grant.accessExpiresAt,
    refreshExpiresAt: grant.refreshExpiresAt,
  });
  const { id } = await db.transaction((tx) =>
    upsertConnection(tx, {
      organizationId: org,
      type: 'support_desk',
      encrypt: (connectionId) => service.sources.encryptCredentials(connectionId, credentials),
    }),
  );
  return id;
}

async function stored(connectionId: string): Promise<Record<string, unknown>> {
  const row = await getConnectionById(db, connectionId);
  return service.sources.decryptCredentials(connectionId, row!.credentialsEncrypted);
}

/** Runs the refresh in a child, stopped at `step`, and SIGKILLs it there. */
async function refreshKilledAt(connectionId: string, step: 'source-answered' | 'committed'): Promise<void> {
  const child = spawn(process.execPath, [REFRESH_STEP], {
    env: { ...process.env, ...env, KB_TEST_CONNECTION_ID: connectionId, KB_TEST_STOP_AT: step },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`refresh ended before ${step} (${code}): ${out}`)));
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes(`at ${step}`)) resolve();
    });
  });
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

async function syncOnce(connectionId: string) {
  const pool = service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
  try {
    const jobId = (await db.transaction((tx) =>
      enqueueSyncJob(tx, { organizationId: org, connectionId, jobType: 'sync', trigger: 'api' }),
    ))!;
    pool.wake();
    let job = await getSyncJob(db, org, jobId);
    await waitFor(async () => {
      job = await getSyncJob(db, org, jobId);
      return !!job && ['succeeded', 'failed', 'incomplete', 'cancelled'].includes(job.status);
    });
    return job!;
  } finally {
    await pool.stop();
  }
}

test('killed just after the commit: the rotated pair is stored before its access token was used', async () => {
  const connectionId = await connectWithNewGrant();
  const issued = auth.grants.length;
  await refreshKilledAt(connectionId, 'committed');
  assert.equal(auth.grants.length, issued + 1, 'the source rotated the pair');
  const newest = auth.grants.at(-1)!;
  const creds = await stored(connectionId);
  assert.equal(creds['access_token'], newest.access);
  assert.equal(creds['oauth_refresh_token'], newest.refresh);
  const row = await getConnectionById(db, connectionId);
  assert.ok(!row!.credentialsEncrypted.includes(newest.refresh), 'committed encrypted');

  const refreshes = auth.counts.refreshes;
  const job = await syncOnce(connectionId);
  assert.equal(job.status, 'succeeded', JSON.stringify(job));
  assert.equal(auth.counts.refreshes, refreshes, 'the stored pair was used as it was');
  const calls = zendesk.requests.filter((r) => r.path.includes('/help_center/'));
  assert.equal(calls.at(-1)!.headers.authorization, `Bearer ${newest.access}`);
});

test('killed between the source’s answer and the commit: the old pair stays whole, the lock is free, and a refused refresh asks for consent', async () => {
  const connectionId = await connectWithNewGrant();
  const before = await stored(connectionId);
  await refreshKilledAt(connectionId, 'source-answered');
  // Nothing half-written: the stored pair is the one from before, readable.
  assert.deepEqual(await stored(connectionId), before);
  // The row lock died with the process's connection (a hang here would block every later refresh).
  await db.transaction(async (tx) => {
    assert.ok(await lockConnectionCredentials(tx, connectionId));
  });
  // The source spent the refresh token when it answered: the next sync's refresh is refused.
  zendesk.account.onRequest = undefined;
  const failed = await syncOnce(connectionId);
  assert.equal(failed.status, 'failed');
  assert.match(
    failed.error ?? '',
    /Zendesk refused the refresh token \(HTTP 400: invalid_grant.*The OAuth access of this support_desk connection has ended: connect it again through POST \/api\/connect\/oauth\/initiate/,
  );
  const view = (await listConnections(db, org)).find((c) => c.id === connectionId)!;
  assert.match(view.consentNeeded ?? '', /connect it again through POST \/api\/connect\/oauth\/initiate/);
  for (const g of auth.grants) {
    assert.ok(!(failed.error ?? '').includes(g.refresh) && !(view.consentNeeded ?? '').includes(g.refresh));
  }
});
