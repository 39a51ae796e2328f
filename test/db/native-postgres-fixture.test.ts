import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import pg from 'pg';
import { nativePostgresAvailable, startNativePostgres } from '../support/native-postgres.ts';

// On CI the fixture must work, so an unavailable fixture fails there instead of skipping.
const available = process.env['CI'] ? true : await nativePostgresAvailable();
const skip = available ? false : 'native postgres fixture unavailable here';

const MODULE_URL = new URL('../support/native-postgres.ts', import.meta.url).href;

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Runs a child node process that starts a server, prints its url and dir, then does `then`. */
function childWithServer(then: 'exit' | 'hang'): Promise<{ url: string; dir: string; kill(): void }> {
  const script = `
    import { startNativePostgres } from ${JSON.stringify(MODULE_URL)};
    const db = await startNativePostgres();
    console.log(JSON.stringify({ url: db.url, dir: db.dir }));
    if (${JSON.stringify(then)} === 'exit') process.exit(0);
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        const info = JSON.parse(line) as { url: string; dir: string };
        resolve({ ...info, kill: () => child.kill('SIGKILL') });
      }
    });
    child.once('exit', (code) => {
      if (!out.includes('{')) reject(new Error(`child exited with ${code} before starting a server`));
    });
  });
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

test('native postgres serves pgvector with an HNSW index', { skip }, async (t) => {
  const startedAt = performance.now();
  const db = await startNativePostgres();
  t.diagnostic(
    `server start (initdb + boot + CREATE DATABASE): ${Math.round(performance.now() - startedAt)} ms`,
  );
  const client = new pg.Client({ connectionString: db.url });
  try {
    assert.match(db.url, /^postgres:\/\/kb:[^@]+@127\.0\.0\.1:\d+\/kb$/);
    await client.connect();
    await client.query('CREATE EXTENSION vector');
    const { rows: ext } = await client.query<{ extversion: string }>(
      "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
    );
    const [major = 0, minor = 0] = (ext[0]?.extversion ?? '0.0').split('.').map(Number);
    assert.ok(major > 0 || minor >= 7, `pgvector ${ext[0]?.extversion} is older than 0.7`);
    t.diagnostic(`pgvector ${ext[0]?.extversion}`);

    await client.query('CREATE TABLE items (id int PRIMARY KEY, embedding vector(3) NOT NULL)');
    await client.query(
      "INSERT INTO items VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0.9,0.1,0]'), (4, '[0,0,1]')",
    );
    await client.query('CREATE INDEX items_embedding_hnsw ON items USING hnsw (embedding vector_cosine_ops)');
    await client.query('SET enable_seqscan = off');
    const query = "SELECT id FROM items ORDER BY embedding <=> '[1,0,0]' LIMIT 2";
    const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${query}`);
    assert.ok(
      plan.rows.some((r) => r['QUERY PLAN'].includes('items_embedding_hnsw')),
      'the query should use the HNSW index',
    );
    const { rows } = await client.query<{ id: number }>(query);
    assert.deepEqual(
      rows.map((r) => r.id),
      [1, 3],
    );
  } finally {
    await client.end();
    await db.stop();
  }
  assert.equal(existsSync(db.dir), false, 'stop() removes the temp dir');
  assert.equal(await canConnect(db.url), false, 'stop() shuts the server down');
  await db.stop(); // idempotent
});

test('separate servers run side by side, in this process and another', { skip }, async () => {
  const [a, b, other] = await Promise.all([
    startNativePostgres(),
    startNativePostgres(),
    childWithServer('hang'),
  ]);
  try {
    const urls = new Set([a.url, b.url, other.url].map((u) => new URL(u).port));
    assert.equal(urls.size, 3, 'each server has its own port');
    assert.ok(await canConnect(a.url));
    assert.ok(await canConnect(b.url));
    assert.ok(await canConnect(other.url));
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    // SIGKILL cannot run exit hooks; the parent-death signal must still take the server down.
    other.kill();
  }
  assert.ok(
    await waitUntil(async () => !(await canConnect(other.url)), 10_000),
    'orphaned server should die',
  );
});

test('a process that exits without stop() takes its server and temp dir with it', { skip }, async () => {
  const { url, dir } = await childWithServer('exit');
  assert.ok(await waitUntil(async () => !(await canConnect(url)), 10_000), 'server should be gone');
  assert.ok(await waitUntil(async () => !existsSync(dir), 5000), 'temp dir should be removed');
});
