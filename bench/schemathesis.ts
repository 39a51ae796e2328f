/**
 * Schemathesis over the service (`node bench/schemathesis.ts`): the contract test from outside. The
 * service's own /openapi.json is handed to Schemathesis (scripts/fixtures/schemathesis.sh: a pinned
 * version in a throw-away venv under .cache/), which generates valid and invalid requests for every
 * operation and runs every check it has (all are on by default but max_response_time, which needs a limit: no 5xx, statuses, content types, headers and
 * bodies as documented, valid data accepted, invalid data rejected, 405 with `Allow` for undocumented
 * methods, auth not ignored, ...) against a real server on loopback, in each storage mode. The few rules
 * that OpenAPI cannot state are exceptions in bench/schemathesis.toml, one operation and one check each.
 *
 * Each mode gets a fresh service (embedded PGlite, or native Postgres from the test fixture) on
 * 127.0.0.1 with the admin API on; an organization and its key are created through the admin API. No
 * job worker runs, so syncs and crawls only queue; a deterministic hashing embedder stands in for the model
 * (search, re-embedding and /readyz work as with one loaded). Every source's base URL points at a loopback stub
 * that accepts any credentials (the run tests the API's contract, not a vendor's), and every OAuth
 * source has an app configured.
 *
 * Prints, per mode: operations, test cases, failures by check (and the first lines of each distinct
 * failure); writes bench/results/schemathesis.json and Schemathesis's own reports under
 * bench/results/schemathesis-<mode>/. Exits non-zero when any check failed.
 *
 * Options (environment): BENCH_STORAGE (`pglite`, `postgres`, or both: the default), ST_MAX_EXAMPLES
 * (test cases per operation and phase, default 25), ST_SEED (default 20260413), ST_WORKERS (default 2),
 * ST_PHASES (default all four: examples, coverage, fuzzing, stateful).
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type FakeServer, startFakeServer } from '../test/fakes/fake-server.ts';
import { HashingEmbedder, sourceSettings } from '../test/support/fuzz.ts';
import { type StorageMode, startTestApp } from '../test/support/harness.ts';
import { printTable, storageModes, writeResult } from './lib.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const storage = process.env['BENCH_STORAGE'] ?? 'both';
const modes = storageModes(storage === 'both' ? 'pglite,postgres' : storage);
const maxExamples = Number(process.env['ST_MAX_EXAMPLES'] ?? 25);
const seed = Number(process.env['ST_SEED'] ?? 20_260_413);
const workers = Number(process.env['ST_WORKERS'] ?? 2);
const phases = process.env['ST_PHASES'] ?? 'examples,coverage,fuzzing,stateful';
const ADMIN_TOKEN = 'schemathesis-admin-token-0123456789abcdef';

/**
 * The sources' side: every credential check succeeds (each connector's check endpoint answers with the
 * shape it expects), and the token endpoint grants any code.
 */
function startAcceptingSource(): Promise<FakeServer> {
  return startFakeServer((req) => {
    if (req.method === 'POST' && req.path.endsWith('/oauth/token')) {
      return {
        status: 200,
        body: {
          access_token: 'stub-access-token-0123456789',
          token_type: 'bearer',
          refresh_token: null,
          bot_id: 'b3414d65-1224-4ff7-8ffa-c06674a8f8a2',
          workspace_name: 'Stub',
          workspace_id: '9f1b5b4e-4d58-4a3b-9e69-0a3c2d2e7f11',
          owner: { type: 'workspace', workspace: true },
        },
      };
    }
    if (req.path === '/v1/users/me') return { status: 200, body: { object: 'user', id: 'stub-user' } };
    if (req.path === '/api/v2/users/me.json')
      return { status: 200, body: { user: { id: 1, role: 'admin' } } };
    if (req.path === '/wiki/rest/api/user/current')
      return { status: 200, body: { type: 'known', accountId: 'stub' } };
    if (req.path.endsWith('/graphql.json'))
      return { status: 200, body: { data: { shop: { name: 'Stub' } } } };
    const space = /^\/v1\/spaces\/([^/]+)$/.exec(req.path);
    if (space) return { status: 200, body: { object: 'space', id: decodeURIComponent(space[1]!) } };
    return { status: 404, body: { message: 'not found' } };
  });
}

function schemathesisBin(): string {
  const out = execFileSync(path.join(repo, 'scripts/fixtures/schemathesis.sh'), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return out.trim().split('\n').pop()!;
}

interface ModeResult {
  mode: StorageMode;
  operations: number;
  testCases: number;
  failuresByCheck: Record<string, number>;
  errors: number;
  wallS: number;
  exitCode: number | null;
  examples: string[];
}

function run(bin: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      bin,
      args,
      { cwd, maxBuffer: 256 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1', COLUMNS: '160' } },
      (err, stdout) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout });
      },
    );
  });
}

async function runMode(bin: string, mode: StorageMode): Promise<ModeResult> {
  const stub = await startAcceptingSource();
  const t = await startTestApp(mode, {
    config: {
      KB_ADMIN_TOKEN: ADMIN_TOKEN,
      KB_CRAWL_ALLOW_PRIVATE: 'true',
      KB_RATE_LIMIT_PER_MINUTE: '0',
      ...sourceSettings(stub.url),
    },
  });
  // A deterministic embedder, so search, re-embedding and readiness answer as with a model loaded.
  await t.service.embedding.use(new HashingEmbedder());
  const work = mkdtempSync(path.join(tmpdir(), 'kb-schemathesis-'));
  const reports = path.join(repo, 'bench/results', `schemathesis-${mode}`);
  rmSync(reports, { recursive: true, force: true });
  mkdirSync(reports, { recursive: true });
  try {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const created = await fetch(`${address}/api/admin/organizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `schemathesis-${mode}` }),
    });
    if (created.status !== 200)
      throw new Error(`creating the organization: ${created.status} ${await created.text()}`);
    const { apiKey } = (await created.json()) as { apiKey: string };
    // The run's config: bench/schemathesis.toml (the per-operation exceptions, each with its reason) plus
    // the keys, in a file of the run's own (not on the command line, not printed, not in the repository).
    const config = path.join(work, 'schemathesis.toml');
    writeFileSync(
      config,
      `${readFileSync(path.join(repo, 'bench/schemathesis.toml'), 'utf8')}\n` +
        `[auth.openapi.apiKey]\nbearer = "${apiKey}"\n\n[auth.openapi.adminToken]\nbearer = "${ADMIN_TOKEN}"\n`,
      { mode: 0o600 },
    );
    const started = performance.now();
    const { code, stdout } = await run(
      bin,
      [
        '--config-file',
        config,
        'run',
        `${address}/openapi.json`,
        '--max-examples',
        String(maxExamples),
        '--seed',
        String(seed),
        '--workers',
        String(workers),
        '--phases',
        phases,
        '--generation-database',
        'none',
        '--request-timeout',
        '60',
        '--report',
        'ndjson',
        '--report-ndjson-path',
        path.join(reports, 'events.ndjson'),
        '--output-sanitize',
        'true',
      ],
      work,
    );
    const wallS = (performance.now() - started) / 1000;
    writeFileSync(path.join(reports, 'output.txt'), stdout);
    return { mode, ...summarize(stdout), wallS, exitCode: code };
  } finally {
    await t.close();
    await stub.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Figures from Schemathesis's own summary: operations tested, test cases generated, failures by check
 * (its codes and titles), and each distinct failure as (operation, check).
 */
function summarize(stdout: string): Omit<ModeResult, 'mode' | 'wallS' | 'exitCode'> {
  const tested = /API Operations:\s*\n\s*Selected: \d+\/\d+\s*\n\s*Tested: (\d+)/.exec(stdout);
  const cases = /Test cases:\s*\n\s*(\d+) generated/.exec(stdout);
  const failuresByCheck: Record<string, number> = {};
  const summary = stdout.slice(stdout.lastIndexOf('SUMMARY'));
  for (const m of summary.matchAll(/❌ (ST\d+ [^:\n]+): (\d+)/g)) failuresByCheck[m[1]!] = Number(m[2]);
  // Errors (the tool's own, such as a crash while generating) are listed as `<mark> <kind>: <count>`.
  const errorLines = /Errors:\s*\n((?:[ \t]+\S[^\n]*\n)+)/.exec(summary)?.[1]?.split('\n') ?? [];
  const errors = errorLines.reduce((n, l) => n + Number(/: (\d+)\s*$/.exec(l)?.[1] ?? 0), 0);
  // The FAILURES section: `____ METHOD /path ____` then `- STxxx Title` per failure.
  const examples: string[] = [];
  let operation = '';
  const failures = stdout.slice(stdout.indexOf('FAILURES'), stdout.lastIndexOf('SUMMARY'));
  for (const line of failures.split('\n')) {
    const op = /^_+ (.+?) _+$/.exec(line.trim());
    if (op) operation = op[1]!;
    const check = /^- (ST\d+ .+)$/.exec(line.trim());
    if (check) examples.push(`${operation}: ${check[1]}`);
    const answer = /^\[(\d{3})\] [^:]+:$/.exec(line.trim());
    if (answer && examples.length) examples[examples.length - 1] += ` (answered ${answer[1]})`;
  }
  return {
    operations: Number(tested?.[1] ?? 0),
    testCases: Number(cases?.[1] ?? 0),
    failuresByCheck,
    errors,
    examples: [...new Set(examples)],
  };
}

const bin = schemathesisBin();
const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
console.log(
  `Schemathesis (${version}): every check, exceptions from bench/schemathesis.toml, ${maxExamples} examples per operation, seed ${seed}, ${workers} workers, ` +
    `phases ${phases}; ${modes.join(' and ')}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`,
);
const results: ModeResult[] = [];
for (const mode of modes) {
  const r = await runMode(bin, mode);
  results.push(r);
  console.log(
    `${mode}: ${r.operations} operations, ${r.testCases} test cases in ${r.wallS.toFixed(0)} s (exit ${r.exitCode})`,
  );
}
printTable(
  'Schemathesis: operations tested, test cases generated, failures by check (unique failures, as Schemathesis counts them)',
  results.map((r) => ({
    mode: r.mode,
    operations: String(r.operations),
    'test cases': String(r.testCases),
    failures: String(Object.values(r.failuresByCheck).reduce((a, b) => a + b, 0)),
    'by check':
      Object.entries(r.failuresByCheck)
        .map(([k, n]) => `${k}: ${n}`)
        .join('; ') || '-',
    errors: String(r.errors),
    s: r.wallS.toFixed(0),
  })),
);
for (const r of results) {
  if (r.examples.length)
    console.log(
      `\n${r.mode}: each failure (operation: check (status)); bench/results/schemathesis-${r.mode}/output.txt has the requests\n  ${r.examples.join('\n  ')}`,
    );
}
writeResult('schemathesis', {
  version,
  maxExamples,
  seed,
  workers,
  phases,
  results: results.map(({ examples, ...r }) => r),
});
process.exitCode = results.some((r) => Object.keys(r.failuresByCheck).length > 0 || r.exitCode !== 0) ? 1 : 0;
