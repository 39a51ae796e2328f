/**
 * `kb export-to-postgres DATABASE_URL` end to end: an embedded data directory with two
 * organizations, their keys, connections with encrypted credentials, sync jobs, items and chunks with
 * vectors, moved by the real `kb` to a new database on the test fixture's native Postgres; the service
 * composed on that database in server mode then holds the same rows in every table, authenticates the
 * same keys, decrypts the connection's credentials (a sync against the fake source succeeds), and answers
 * a search with the same hits in the same order. Also: a refusal while the directory is open, and into a
 * database that is not empty.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportToPostgres } from '../../src/export-to-postgres.ts';
import type { Database } from '../../src/db/database.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { buildApp } from '../../src/http/app.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import type { WorkerPool } from '../../src/jobs/worker.ts';
import { type TestSource, startTestSource } from '../connectors/test-connector-source.ts';
import { testConnector } from '../connectors/test-connector.ts';
import { connect, FAST_SOURCE_HTTP, FAST_WORKERS, runSyncJob, waitForJob } from '../jobs/helpers.ts';
import {
  composeTestService,
  freshDatabase,
  startTestApp,
  testConfig,
  type TestApp,
} from '../support/harness.ts';
import { hashEmbedder } from '../support/hash-embedder.ts';
import { kb } from './helpers.ts';

/** Rows per table of the public schema (every table, whatever the migrations created). */
async function tableCounts(db: Database): Promise<Record<string, number>> {
  const tables = await db.query<{ t: string }>(
    "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
  );
  const out: Record<string, number> = {};
  for (const { t } of tables)
    out[t] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${t}"`))[0]!.n;
  return out;
}

const QUERIES = ['gamma rays and delta', 'alpha document'];

describe('kb export-to-postgres', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'kb-export-'));
  const encryptionKey = randomBytes(32).toString('base64');
  const embedder = hashEmbedder();
  let source: TestSource;
  let keys: { a: string; b: string };
  let before_: { counts: Record<string, number>; hits: Array<Array<{ id: unknown[]; distance: number }>> };
  let target: { db: Database; url?: string; drop(): Promise<void> };
  const config = () => ({
    KB_ENCRYPTION_KEY: encryptionKey,
    KB_CRAWL_ALLOW_PRIVATE: 'true',
    KB_DOCS_SPACE_BASE_URL: source.url,
  });
  const search = async (t: Pick<TestApp, 'call'>, key: string) => {
    const hits: Array<Array<{ id: unknown[]; distance: number }>> = [];
    for (const query of QUERIES) {
      const res = await t.call('POST', '/api/consume/search', {
        key,
        body: { query, limit: 5, mode: 'hybrid' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      hits.push(
        res.body.result.map((h: any) => ({
          id: [h.item_id, h.chunk_index, h.embedding],
          distance: h.distance,
        })),
      );
    }
    return hits;
  };

  before(async () => {
    source = await startTestSource();
    source.put('a1', 'Alpha document', 'Alpha rays are helium nuclei. '.repeat(40));
    source.put('a2', 'Gamma', 'Gamma rays are photons of high energy; delta rays are electrons. '.repeat(30));
    source.put('a3', 'Beta', 'Beta particles are electrons or positrons.');
    // The embedded service's data, as it stores it: PGlite in <dataDir>/pgdata, and the credentials' key
    // in <dataDir>/encryption.key (what resolveEncryptionKey writes on the first start).
    writeFileSync(path.join(dataDir, 'encryption.key'), `${encryptionKey}\n`, { mode: 0o600 });
    const t = await startTestApp('pglite', {
      pgliteDir: path.join(dataDir, 'pgdata'),
      config: config(),
      parts: { connectors: [testConnector], sourceHttp: FAST_SOURCE_HTTP },
    });
    keys = { a: t.orgA.key, b: t.orgB.key };
    const pool = t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
    try {
      await connect(t);
      await connect(t, {}, t.orgB.key);
      assert.equal((await waitForJob(t, await runSyncJob(t))).status, 'succeeded');
      const res = await t.call('POST', '/api/connect/run-sync', {
        body: { type: 'docs_space', jobType: 'sync' },
        key: t.orgB.key,
      });
      assert.equal(res.status, 200);
      await t.service.embedding.use(embedder);
      // Wait for org B's job too (its own organization's view), then embed everything.
      for (let i = 0; i < 200; i++) {
        const [{ n } = { n: 1 }] = await t.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM jobs WHERE status IN ('pending', 'running')",
        );
        if (n === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Indexer(t.db, embedder).drain();
      before_ = { counts: await tableCounts(t.db), hits: await search(t, keys.a) };
    } finally {
      await pool.stop();
      await t.close();
    }
    assert.ok(
      before_.counts['chunks']! > 6 &&
        before_.counts['connections'] === 2 &&
        before_.counts['api_keys'] === 2,
    );
    target = await freshDatabase('postgres');
  });
  after(async () => {
    await target?.drop();
    await source?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('refuses while the data directory is open, before touching the target', async () => {
    const open = await openPglite(path.join(dataDir, 'pgdata'));
    try {
      await assert.rejects(
        exportToPostgres({ dataDir, databaseUrl: target.url! }),
        new RegExp(
          `^DataDirInUseError: the embedded database ${path.join(dataDir, 'pgdata')} is open in process ${process.pid} `,
        ),
      );
      assert.deepEqual(await tableCounts(target.db), {}, 'the target was not migrated');
    } finally {
      await open.close();
    }
  });

  test('moves every table; the server-mode service answers as the embedded one did', async () => {
    const run = await kb(['export-to-postgres', target.url!, '--data-dir', dataDir], {
      url: 'http://127.0.0.1:9',
      key: null,
      env: { KB_ENCRYPTION_KEY: null, DATABASE_URL: null, KB_DATA_DIR: null },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^chunks\t\d+ rows -> \d+$/m);
    assert.match(run.stdout, /encryption\.key: start the server-mode service with KB_ENCRYPTION_KEY/);
    assert.ok(
      !run.stdout.includes(encryptionKey) && !run.stderr.includes(encryptionKey),
      'the key was printed',
    );

    const db = await openPostgres(target.url!, { max: 4 });
    const service = composeTestService(db, testConfig(config(), [testConnector]), {
      connectors: [testConnector],
      sourceHttp: FAST_SOURCE_HTTP,
    });
    const app = await buildApp(service.appDeps, { logger: false });
    let pool: WorkerPool | null = null;
    try {
      assert.deepEqual(await tableCounts(db), before_.counts);
      await service.embedding.use(embedder);
      const t = {
        async call(method: 'POST' | 'GET', url: string, o: { key: string; body?: unknown }) {
          const res = await app.inject({
            method,
            url,
            headers: { authorization: `Bearer ${o.key}`, 'content-type': 'application/json' },
            ...(o.body ? { payload: JSON.stringify(o.body) } : {}),
          });
          return { status: res.statusCode, body: res.json(), headers: res.headers };
        },
      };
      // Same hits in the same order with the same vectors: nothing was re-embedded. The distances agree to
      // float precision only (PGlite's WASM and the native server's SIMD sum in different orders).
      const after_ = await search(t, keys.a);
      assert.deepEqual(
        after_.map((q) => q.map((h) => h.id)),
        before_.hits.map((q) => q.map((h) => h.id)),
      );
      const distances = before_.hits.flat().map((h) => h.distance);
      for (const [i, h] of after_.flat().entries()) assert.ok(Math.abs(h.distance - distances[i]!) < 1e-5);
      // Organization B's key authenticates and sees its own items only.
      const listed = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        key: keys.b,
        body: {},
      });
      assert.equal(listed.status, 200);
      assert.equal(listed.body.pagination.total ?? listed.body.items.length, 3);
      // The credentials decrypt with the same key: a sync against the fake source succeeds, and its job
      // comes after the exported ones in creation order (sequences carried over; job ids are random).
      source.put('a4', 'Delta', 'Delta is a new document.');
      pool = service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
      const res = await t.call('POST', '/api/connect/run-sync', {
        key: keys.a,
        body: { type: 'docs_space', jobType: 'sync' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const [created] = await db.query<{ seq: number }>('SELECT seq FROM jobs WHERE id = $1', [
        res.body.jobId,
      ]);
      assert.ok(created!.seq > before_.counts['jobs']!);
      for (let i = 0; ; i++) {
        const [job] = await db.query<{ status: string; error: string | null }>(
          'SELECT status, error FROM jobs WHERE id = $1',
          [res.body.jobId],
        );
        if (job && !['pending', 'running'].includes(job.status)) {
          assert.equal(job.status, 'succeeded', JSON.stringify(job));
          break;
        }
        assert.ok(i < 600, 'sync did not finish');
        await new Promise((r) => setTimeout(r, 25));
      }
    } finally {
      await pool?.stop();
      await app.close();
      await service.close();
      await db.close();
    }
  });

  test('refuses a target that is not empty; kb says so in one line with exit code 2 (usage)', async () => {
    await assert.rejects(exportToPostgres({ dataDir, databaseUrl: target.url! }), /not empty/);
    const run = await kb(['export-to-postgres', target.url!, '--data-dir', dataDir], {
      url: 'http://127.0.0.1:9',
      key: null,
      env: { KB_ENCRYPTION_KEY: null, DATABASE_URL: null, KB_DATA_DIR: null },
    });
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr.trimEnd().split('\n').at(-1)!,
      /^kb: the target database is not empty \(table \w+ has \d+ rows\): export into a new database$/,
    );
  });
});
