import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import pg from 'pg';
import {
  cpuSummary,
  NativePostgresPreflightError,
  nativePostgresAvailable,
  nativePostgresInstall,
  preflightNativePostgres,
  startNativePostgres,
} from '../support/native-postgres.ts';
import {
  describeHits,
  ensureTool,
  isAvx512Instruction,
  scanForAvx512,
} from '../support/native-postgres-portability.ts';

// On CI the fixture must work, so an unavailable fixture fails there instead of skipping.
const available = process.env['CI'] ? true : await nativePostgresAvailable();
const skip = available ? false : 'native postgres fixture unavailable here';

const MODULE_URL = new URL('../support/native-postgres.ts', import.meta.url).href;

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  // A server that dies mid-query resets the connection; without a listener the client's 'error' event
  // would be thrown past this function instead of answering false (seen once: read ECONNRESET).
  client.on('error', () => {});
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
    assert.ok(major > 0 || minor >= 8, `pgvector ${ext[0]?.extversion} is older than 0.8`);
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
    // Each is ready when started; the wait only absorbs a connect timing out on a loaded machine (CI once
    // failed here with the fuzz test beside it, without saying which step).
    for (const [name, server] of Object.entries({ a, b, other })) {
      assert.ok(
        await waitUntil(() => canConnect(server.url), 30_000),
        `server ${name} should accept connections`,
      );
    }
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    // SIGKILL cannot run exit hooks; the parent-death signal must still take the server down.
    other.kill();
  }
  assert.ok(
    await waitUntil(async () => !(await canConnect(other.url)), 30_000),
    'orphaned server should die once its parent is killed',
  );
});

test('a process that exits without stop() takes its server and temp dir with it', { skip }, async () => {
  const { url, dir } = await childWithServer('exit');
  assert.ok(await waitUntil(async () => !(await canConnect(url)), 10_000), 'server should be gone');
  assert.ok(await waitUntil(async () => !existsSync(dir), 5000), 'temp dir should be removed');
});

test('the AVX-512 scan tells EVEX instructions from VEX ones', () => {
  // Bytes and text as objdump prints them; the scan is only as good as this decision.
  assert.equal(
    isAvx512Instruction(['62', 'f1', 'fe', '48', '6f', '0c', '06'], 'vmovdqu64 (%rsi,%rax,1),%zmm1'),
    true,
  );
  // EVEX with xmm registers only (AVX-512F's unsigned conversion): no zmm in sight, still AVX-512.
  assert.equal(
    isAvx512Instruction(['62', 'f1', 'fe', '08', '7b', 'c8'], 'vcvtusi2ss %rax,%xmm0,%xmm1'),
    true,
  );
  // AVX2 (VEX prefix c5/c4) is fine on a Haswell.
  assert.equal(isAvx512Instruction(['c5', 'fc', '10', '06'], 'vmovups (%rsi),%ymm0'), false);
  assert.equal(isAvx512Instruction(['c4', 'e2', '7d', '18', 'c0'], 'vbroadcastss %xmm0,%ymm0'), false);
  // A call whose target's name mentions zmm is no AVX-512 instruction.
  assert.equal(isAvx512Instruction(['e8', '00', '00', '00', '00'], 'call 1234 <zmm_regs_available>'), false);
});

test('pgvector and postgres use AVX-512 only in functions chosen at run time', { skip }, async (t) => {
  // objdump comes from binutils; a bare CI machine gets it installed here (as root), others are told how.
  const missing = await ensureTool('objdump', 'binutils');
  assert.equal(missing, null, `the instruction scan cannot run: ${missing}`);
  const install = await nativePostgresInstall();
  t.diagnostic(`${install.postgresVersion}, pgvector ${install.pgvectorVersion}; this CPU: ${cpuSummary()}`);
  for (const file of [install.vectorLibrary, install.postgres]) {
    const scan = await scanForAvx512(file);
    t.diagnostic(
      `${file}: ${scan.instructions} instructions; AVX-512 in dispatched functions: ` +
        ([...scan.dispatched.keys()].join(', ') || 'none'),
    );
    assert.ok(
      scan.instructions > 10_000,
      `objdump decoded too little of ${file} for the scan to mean anything`,
    );
    assert.equal(
      scan.undispatched.size,
      0,
      `${file} has AVX-512 instructions outside run-time-dispatched functions, so it dies (SIGILL) on CPUs ` +
        `without AVX-512:\n${describeHits(scan.undispatched)}`,
    );
    if (file === install.vectorLibrary) {
      // pgvector's *Avx512Popcount kernels exist and are found: the scan sees AVX-512 where there is some.
      assert.ok(scan.dispatched.size > 0, "the scan found none of pgvector's dispatched AVX-512 kernels");
    }
  }
});

test('the fixture serves pgvector on an emulated CPU without AVX-512 (qemu -cpu Haswell)', {
  skip,
}, async (t) => {
  // qemu's TCG implements no AVX-512 at all, and `-cpu Haswell` (AVX2, FMA, BMI2: the fixture's floor,
  // x86-64-v3) makes pgvector's run-time checks choose their portable code. Any AVX-512 instruction that
  // runs kills the backend with SIGILL, and the pre-flight of startNativePostgres reports it.
  const missing = await ensureTool('qemu-x86_64', 'qemu-user');
  if (missing) {
    t.skip(`qemu-x86_64 unavailable (${missing}); the instruction scan above still ran`);
    return;
  }
  const started = performance.now();
  const db = await startNativePostgres({ wrapper: ['qemu-x86_64', '-cpu', 'Haswell'] });
  const client = new pg.Client({
    connectionString: db.url,
    connectionTimeoutMillis: 30_000,
    query_timeout: 120_000,
  });
  try {
    t.diagnostic(`emulated start + pre-flight: ${Math.round(performance.now() - started)} ms`);
    await client.connect();
    // Beyond the pre-flight: the other code paths the old fixture died in (IVFFlat k-means centers, sums,
    // half-precision and sparse vectors, bit vectors whose Hamming distance has an AVX-512 variant).
    await client.query('CREATE EXTENSION vector');
    await client.query(`CREATE TABLE v AS
      SELECT g AS id, ARRAY(SELECT cos(g * i) FROM generate_series(1, 96) AS i)::vector(96) AS e
      FROM generate_series(1, 500) AS g`);
    await client.query('CREATE INDEX ON v USING ivfflat (e vector_l2_ops) WITH (lists = 8)');
    // The HNSW index the service builds (src/search/vector-index.ts): an expression over vector, cosine.
    // Not over halfvec, which the service does not use: under qemu 7.2 (Debian 12) building that one
    // crashed the backend with SIGSEGV in 6 of 16 runs of this test ("qemu: uncaught target signal 11"),
    // never natively (0 of 100) and never with SIGILL, the fault this test exists to catch.
    await client.query(
      'CREATE INDEX ON v USING hnsw ((e::vector(96)) vector_cosine_ops) WITH (m = 16, ef_construction = 200)',
    );
    const { rows } = await client.query<{ n: number; s: number; hv: number; sv: number; ham: number }>(`
      SELECT count(*)::int AS n,
             vector_dims(sum(e))::int + vector_dims(avg(e))::int AS s,
             min(e::halfvec <=> '[${Array(96).fill(1).join(',')}]'::halfvec)::float8 AS hv,
             min(l2_normalize(e::sparsevec) <-> e::sparsevec)::float8 AS sv,
             max(binary_quantize(e) <~> binary_quantize(l2_normalize(e)))::float8 AS ham
      FROM v`);
    assert.equal(rows[0]!.n, 500);
    assert.equal(rows[0]!.s, 192);
    assert.equal(rows[0]!.ham, 0, 'normalizing keeps the signs, so the bit vectors are equal');
    await client.query('SET enable_seqscan = off');
    const near = await client.query<{ id: number }>(
      'SELECT id FROM v ORDER BY e <-> (SELECT e FROM v WHERE id = 42) LIMIT 1',
    );
    assert.deepEqual(
      near.rows.map((r) => r.id),
      [42],
    );
  } finally {
    await client.end().catch(() => {});
    await db.stop();
  }
});

test('the pre-flight names the failed step, the binary, the versions and the CPU', { skip }, async () => {
  // A database where CREATE EXTENSION cannot succeed (it exists already) stands in for a broken pgvector:
  // the message must still carry everything needed to tell the cause without reading the test output.
  const db = await startNativePostgres();
  const client = new pg.Client({ connectionString: db.url });
  try {
    await client.connect();
    await client.query('CREATE EXTENSION vector');
    const install = await nativePostgresInstall();
    await assert.rejects(preflightNativePostgres(db.url), (err: Error) => {
      assert.ok(err instanceof NativePostgresPreflightError);
      assert.match(
        err.message,
        /pre-flight failed at "CREATE EXTENSION vector": extension "vector" already exists/,
      );
      assert.ok(err.message.includes(install.postgres), 'names the binary');
      assert.ok(err.message.includes(install.pgvectorVersion), 'names the pgvector version');
      assert.match(err.message, /PostgreSQL\) 18\./);
      assert.match(err.message, /CPU: .*avx2 (yes|no).*avx512f (yes|no)/);
      return true;
    });
  } finally {
    await client.end();
    await db.stop();
  }
});
