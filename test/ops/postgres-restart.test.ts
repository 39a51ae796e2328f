/**
 * Crash suite: the native Postgres goes away under load (immediate shutdown: backends killed,
 * crash recovery on restart) and comes back, while clients upload and query and a sync job runs. While it
 * is away, every request is answered promptly with `503 unavailable` (never a 500, never a hang); once it
 * is back, the same process serves again without a restart; every acknowledged upload is stored exactly
 * once; the sync job reaches a terminal state (or finishes after resuming) instead of staying `running`.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createApiKey, createOrganization } from '../../src/db/repositories/organizations.ts';
import { getSyncJob } from '../../src/db/repositories/sync-jobs.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { buildApp } from '../../src/http/app.ts';
import type { App } from '../../src/http/context.ts';
import type { WorkerPool } from '../../src/jobs/worker.ts';
import type { Service } from '../../src/compose.ts';
import { startTestSource, type TestSource } from '../connectors/test-connector-source.ts';
import { testConnector } from '../connectors/test-connector.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, TEST_SOURCE_INPUT } from '../jobs/helpers.ts';
import { composeTestService, testConfig } from '../support/harness.ts';
import { type NativePostgres, startNativePostgres } from '../support/native-postgres.ts';

/** A request that has not answered after this long counts as a hang. */
const HANG_MS = 10_000;
const OUTAGE_MS = 2_500;

let server: NativePostgres;
let db: Database;
let service: Service;
let app: App;
let pool: WorkerPool;
let source: TestSource;
let key: string;
let organizationId: string;

before(async () => {
  // The fixture turns synchronous_commit off for speed, which lets a crash lose the last commits: a
  // production setting here, so that "acknowledged" means committed to the WAL. (fsync may stay off: the
  // machine does not crash, only the server process does.)
  server = await startNativePostgres({ settings: { synchronous_commit: 'on' } });
  db = await openPostgres(server.url, { max: 10, onIdleError: () => {} });
  await migrate(db);
  const org = await createOrganization(db, 'restart');
  organizationId = org.id;
  key = (await createApiKey(db, org.id)).apiKey;
  source = await startTestSource();
  service = composeTestService(
    db,
    testConfig({ KB_CRAWL_ALLOW_PRIVATE: 'true', KB_DOCS_SPACE_BASE_URL: source.url }, [testConnector]),
    { connectors: [testConnector], sourceHttp: FAST_SOURCE_HTTP },
  );
  app = await buildApp(service.appDeps, { logger: false });
  await app.ready();
  pool = service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
});
after(async () => {
  await pool?.stop();
  await app?.close();
  await service?.close();
  await db?.close();
  await source?.close();
  await server?.stop();
});

interface Answer {
  status: number;
  error?: string;
  ms: number;
  phase: 'before' | 'away' | 'back';
}

async function call(
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now();
  const res = await Promise.race([
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    }),
    sleep(HANG_MS).then(() => null),
  ]);
  if (!res) return { status: 0, body: null, ms: Date.now() - started };
  let parsed: unknown = null;
  try {
    parsed = res.json();
  } catch {}
  return { status: res.statusCode, body: parsed, ms: Date.now() - started };
}

test('the database restarting under load: 503 while it is away, service resumes, nothing lost or stuck', async () => {
  source.seed(300);
  const created = await call('POST', '/api/connect/connection', { source: TEST_SOURCE_INPUT });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  // The connection's first sync, queued by the create.
  const jobId = created.body.jobId as number;
  assert.equal(typeof jobId, 'number', JSON.stringify(created.body));

  let phase: Answer['phase'] = 'before';
  const answers: Answer[] = [];
  const acknowledged: string[] = [];
  let stop = false;
  let n = 0;
  const client = async (kind: number) => {
    while (!stop) {
      const p = phase;
      const res =
        kind % 2 === 0
          ? await call('POST', '/api/connect/knowledgebase-items', {
              title: `Upload ${n++}`,
              content: 'Stored once, whatever happens.',
            })
          : await call('POST', '/api/connect/knowledgebase-items/query', { limit: 5 });
      answers.push({ status: res.status, error: res.body?.error, ms: res.ms, phase: p });
      if (res.status === 200 && kind % 2 === 0) acknowledged.push(res.body.item.id);
      if (res.status !== 200) await sleep(50);
    }
  };
  const clients = Array.from({ length: 8 }, (_, i) => client(i));

  await sleep(800);
  phase = 'away';
  await server.halt('immediate');
  await sleep(OUTAGE_MS);
  const ready = await call('GET', '/readyz');
  await server.start();
  phase = 'back';
  // The pool's connections died with the server; the first requests after it is back may still meet one.
  await sleep(2_000);
  stop = true;
  await Promise.all(clients);

  const hung = answers.filter((a) => a.status === 0);
  assert.deepEqual(hung, [], 'no request hung');
  const fiveHundreds = answers.filter((a) => a.status >= 500 && a.status !== 503);
  assert.deepEqual(fiveHundreds, [], 'no 500 while the database is away');
  const away = answers.filter((a) => a.phase === 'away' && a.status !== 200);
  assert.ok(away.length > 0, 'requests were answered while the database was away');
  for (const a of away) assert.deepEqual([a.status, a.error], [503, 'unavailable']);
  assert.ok(Math.max(...away.map((a) => a.ms)) < HANG_MS);
  assert.equal(ready.status, 503);
  assert.equal(ready.body.checks.database, 'unreachable', 'readyz says the database is away');
  const lastBack = answers.filter((a) => a.phase === 'back').slice(-8);
  assert.ok(
    lastBack.length > 0 && lastBack.every((a) => a.status === 200),
    `served again: ${JSON.stringify(lastBack)}`,
  );
  // (No embedding model in this test, so readyz stays 503 for that; the database check is what matters.)
  assert.equal((await call('GET', '/readyz')).body.checks.database, 'ok');

  // Every acknowledged upload is stored, once.
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM items WHERE organization_id = $1 AND source_type = 'upload' AND id = ANY($2::text[])`,
    [organizationId, acknowledged],
  );
  assert.equal(rows.length, new Set(acknowledged).size);
  assert.equal(acknowledged.length, new Set(acknowledged).size);

  // The sync job ends (or resumes and ends); it does not stay running.
  let job = await getSyncJob(db, organizationId, jobId);
  for (let i = 0; job && !['succeeded', 'failed', 'incomplete', 'cancelled'].includes(job.status); i++) {
    assert.ok(i < 600, `job ${jobId} still ${job.status}`);
    await sleep(100);
    job = await getSyncJob(db, organizationId, jobId);
  }
  assert.ok(job);
  if (job.status === 'succeeded') {
    const synced = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM items WHERE organization_id = $1 AND source_type = 'integration'`,
      [organizationId],
    );
    assert.equal(synced[0]!.n, 300, 'a resumed sync stores every document once');
  }
});
