/**
 * The test suite's driver (`npm test` runs lint and type-check, then this):
 * 1. fetch the fixtures (embedding model, native Postgres) into .cache/ when missing: the model beside the
 *    first test files, since only some files need it;
 * 2. start one native Postgres with pgvector for the whole run (each test makes its own database), and
 *    build the images embedded-mode test databases start from (test/support/pglite-image.ts); Postgres's
 *    pre-flight proves pgvector works on this CPU, or the run stops here with one message naming the cause;
 * 3. run the test files, two at a time, each in its own `node --test` process group under a wall-clock
 *    limit, and print each file's output whole when it ends (no interleaving);
 * 4. stop the server, name the files that failed or timed out, and end with the totals line
 *    `N passed, N failed, N skipped` (CI reads that last line); exit non-zero when anything failed.
 *
 * Why not one `node --test --test-concurrency=2 <files>`: node's runner has no wall clock per file, so a
 * file that never ends (a test waiting on a dead database, a leaked handle after the last test) hangs the
 * whole suite without saying which file it is.
 *
 * Env: KB_TEST_FILE_TIMEOUT_S (default 600) is the limit per file: a guard against a file that hangs,
 * set well above the slowest file's time on a machine whose cores are busy with other work;
 * KB_TEST_CONCURRENCY (default 2) how many files run at once.
 *
 * This module is also the reporter that counts results: each `node --test` child loads it with
 * `--test-reporter=scripts/run-tests.ts` and it appends one line per finished test to the file named by
 * KB_TEST_COUNTS_FILE, synchronously, so the counts of a file killed on its limit survive the kill.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestEvent } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

const COUNTS_ENV = 'KB_TEST_COUNTS_FILE';

/** The counting reporter (see the module comment); it writes nothing to its own destination. */
export default async function* countingReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const out = process.env[COUNTS_ENV];
  if (!out) return;
  const write = (kind: string, nesting: number, name: string) =>
    appendFileSync(out, `${kind}\t${nesting}\t${name.replaceAll('\n', ' ')}\n`);
  for await (const event of source) {
    if (event.type === 'test:start') {
      // Starts let the driver name the tests still running when it kills a file.
      write('start', event.data.nesting, event.data.name);
    } else if (event.type === 'test:pass' || event.type === 'test:fail') {
      const { data } = event;
      // Suites are counted through their tests; a suite that fails without a failing test (a failing
      // `before` hook) still fails its file through the exit status (see runFile).
      const outcome =
        data.details.type === 'suite'
          ? 'suite'
          : data.todo !== undefined || data.skip !== undefined
            ? 'skip'
            : event.type === 'test:fail'
              ? 'fail'
              : 'pass';
      write(outcome, data.nesting, data.name);
    }
  }
}

interface FileResult {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  ms: number;
  /** Why the file failed beyond its failed tests (timeout, crash, exit status), if it did. */
  problem?: string;
  output: string;
}

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return findTests(p);
    return name.endsWith('.test.ts') ? [p] : [];
  });
}

function seconds(ms: number): string {
  return ms >= 60_000
    ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
    : `${(ms / 1000).toFixed(1)} s`;
}

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`run-tests: ${name}=${raw} is not a positive number`);
    process.exit(2);
  }
  return n;
}

/** Kills a child's whole process group (it was started detached, so it leads one). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

const running = new Set<ChildProcess>();

function runFile(
  file: string,
  env: NodeJS.ProcessEnv,
  limitMs: number,
  countsDir: string,
): Promise<FileResult> {
  const started = performance.now();
  const countsFile = path.join(
    countsDir,
    `${path.basename(file)}-${Math.random().toString(36).slice(2)}.counts`,
  );
  // A stuck test is cancelled by node itself a little before the file's limit, so it is named with its
  // test; the limit then only catches what node cannot (a file that does not end after its last test).
  const perTestMs = Math.max(1000, Math.round(limitMs - Math.min(30_000, limitMs / 5)));
  const reporter = fileURLToPath(import.meta.url);
  const child = spawn(
    process.execPath,
    [
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${reporter}`,
      '--test-reporter-destination=stderr',
      `--test-timeout=${perTestMs}`,
      file,
    ],
    // detached: its own process group, so a kill reaches everything it started (servers, workers).
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, [COUNTS_ENV]: countsFile } },
  );
  running.add(child);
  const chunks: string[] = [];
  child.stdout!.setEncoding('utf8').on('data', (c: string) => chunks.push(c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => chunks.push(c));

  return new Promise((resolve) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, limitMs);
    let settled = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      running.delete(child);
      // Whatever the file left behind in its group goes with it.
      killGroup(child);
      child.stdout!.destroy();
      child.stderr!.destroy();
      const counts = { pass: 0, fail: 0, skip: 0 };
      // Tests started and not finished, keyed by nesting and name (the same name can repeat).
      const open = new Map<string, number>();
      let lines: string[] = [];
      try {
        lines = readFileSync(countsFile, 'utf8').split('\n');
      } catch {
        // No test started before the file ended.
      }
      for (const line of lines) {
        const tab = line.indexOf('\t');
        const kind = line.slice(0, tab);
        const key = line.slice(tab + 1);
        if (kind === 'pass' || kind === 'fail' || kind === 'skip') counts[kind]++;
        if (kind === 'start') open.set(key, (open.get(key) ?? 0) + 1);
        else if (open.get(key)) open.set(key, open.get(key)! - 1);
      }
      const { pass: passed, skip: skipped } = counts;
      let failed = counts.fail;
      let problem: string | undefined;
      if (timedOut) {
        const stuck = [...open].filter(([, n]) => n > 0).map(([key]) => JSON.stringify(key.split('\t')[1]));
        problem =
          `timed out after ${seconds(limitMs)} (KB_TEST_FILE_TIMEOUT_S); killed with its process group` +
          (stuck.length > 0 ? `; still running: ${stuck.join(', ')}` : '');
      } else if (signal) problem = `killed by ${signal}`;
      else if (code !== 0 && failed === 0) problem = `exited with status ${code} without a failed test`;
      // A file that timed out or crashed counts as (at least) one failure.
      if (problem && failed === 0) failed = 1;
      resolve({
        file,
        passed,
        failed,
        skipped,
        ms: performance.now() - started,
        problem,
        output: chunks.join(''),
      });
    };
    child.once('close', finish);
    // 'close' waits for the pipes; a grandchild that escaped the group could hold them open forever.
    child.once('exit', (code, signal) => setTimeout(() => finish(code, signal), 2000).unref());
  });
}

function printFile(r: FileResult): void {
  const status = r.problem ?? (r.failed > 0 ? `${r.failed} failed` : 'ok');
  const mark = r.problem || r.failed > 0 ? '✖' : '✔';
  const line = `${mark} ${r.file}: ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped (${seconds(r.ms)}) ${status}`;
  process.stdout.write(`\n━━ ${r.file}\n${r.output.trimEnd()}\n${line}\n`);
}

function totalsLine(results: FileResult[], extraFailed = 0): string {
  const sum = (k: 'passed' | 'failed' | 'skipped') => results.reduce((n, r) => n + r[k], 0);
  return `${sum('passed')} passed, ${sum('failed') + extraFailed} failed, ${sum('skipped')} skipped`;
}

/** Lines kept per failed file in the closing summary: enough for an assertion and its stack's top. */
const FAILURE_DETAIL_LINES = 60;

/** The spec reporter's "failing tests" section of a file's output (what failed and why), capped. */
function failureDetail(output: string): string | undefined {
  const at = output.lastIndexOf('✖ failing tests:');
  if (at < 0) return undefined;
  const lines = output.slice(at).trimEnd().split('\n');
  const kept = lines.slice(0, FAILURE_DETAIL_LINES);
  if (lines.length > kept.length)
    kept.push(`  … ${lines.length - kept.length} more lines in the file's output above`);
  return kept.join('\n');
}

/** Prints the closing summary and exits; the totals are always the last line. */
function finish(results: FileResult[], wallMs: number, notes: string[] = [], extraFailed = 0): never {
  const bad = results.filter((r) => r.problem || r.failed > 0);
  const lines = ['', `━━ ${results.length} files in ${seconds(wallMs)}`, ...notes];
  if (bad.length > 0) {
    // CI shows only the tail of the output, so each failure's own message is repeated here, near the end.
    for (const r of bad) {
      const detail = failureDetail(r.output);
      if (detail) lines.push(`━━ why ${r.file} failed`, detail);
    }
    lines.push('failed files:');
    for (const r of bad) lines.push(`  ${r.file}: ${r.problem ?? `${r.failed} failed`}`);
  }
  lines.push(totalsLine(results, extraFailed));
  const failed = bad.length > 0 || extraFailed > 0;
  // Writes to stdout are synchronous on Linux (files, pipes, terminals), so nothing is lost by exiting.
  process.stdout.write(`${lines.join('\n')}\n`);
  process.exit(failed ? 1 : 0);
}

/**
 * Files started first, so the longest run beside the rest instead of after them (the suite's wall time
 * is otherwise set by whichever slow file happens to come last). Listed by how long they take, which a
 * busy machine stretches but does not reorder much.
 */
const SLOW_FILES = [
  // Those that need no model first: the model fixture may still be building (see main).
  'test/crawler/budget.test.ts',
  'test/ops/fuzz.test.ts',
  'test/crawler/render.test.ts',
  'test/ops/shutdown.test.ts',
  'test/crawler/politeness-pace.test.ts',
  'test/ops/local-commands.test.ts',
  'test/db/native-postgres-fixture.test.ts',
  'test/ops/crash.test.ts',
  'test/console/console.test.ts',
  'test/readme/readme.test.ts',
];

async function main(): Promise<void> {
  const wallStart = performance.now();
  const limitMs = positiveNumber('KB_TEST_FILE_TIMEOUT_S', 600) * 1000;
  const concurrency = Math.floor(positiveNumber('KB_TEST_CONCURRENCY', 2));

  // The model fixture is built beside the first files (on a fresh clone it is a download and an export
  // of about 40 s on one core): only files that embed with the model wait for it, on its lock
  // (test/support/model.ts runs the same script, which waits for the build in progress and reuses it).
  const modelFixture = runFixtureAside('scripts/fixtures/model.sh');
  const postgresFixture = 'scripts/fixtures/postgres.sh';
  if (existsSync(postgresFixture)) {
    const r = spawnSync('bash', [postgresFixture], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) {
      finish(
        [],
        performance.now() - wallStart,
        [`run-tests: ${postgresFixture} failed (exit ${r.status}); no test ran`],
        1,
      );
    }
  }

  const args = process.argv.slice(2).filter((a) => a !== '--');
  const files = args.length > 0 ? args : findTests('test').sort();

  // Imported here, not at the top: the reporter role of this module must stay light.
  const { startNativePostgres } = await import('../test/support/native-postgres.ts');
  let pg: Awaited<ReturnType<typeof startNativePostgres>>;
  try {
    pg = await startNativePostgres();
  } catch (err) {
    finish(
      [],
      performance.now() - wallStart,
      [
        `run-tests: the native Postgres for the server-mode tests did not start; no test ran.`,
        (err as Error).message,
      ],
      1,
    );
  }
  // The test databases' starting images (test/support/pglite-image.ts), built once here rather than by
  // the first files at once.
  const { pgliteImageFile } = await import('../test/support/pglite-image.ts');
  try {
    await Promise.all([pgliteImageFile('empty'), pgliteImageFile('migrated')]);
  } catch (err) {
    await pg.stop();
    finish(
      [],
      performance.now() - wallStart,
      [`run-tests: no PGlite image was built; no test ran.`, String(err)],
      1,
    );
  }
  const env: NodeJS.ProcessEnv = { ...process.env, KB_TEST_DATABASE_URL: pg.url };
  // Set when this driver itself runs inside a node test; it would make each `node --test` child stream
  // raw events to us instead of running its reporters.
  delete env['NODE_TEST_CONTEXT'];
  const countsDir = mkdtempSync(path.join(tmpdir(), 'kb-test-counts-'));

  const results: FileResult[] = [];
  const stopAll = async (signal: NodeJS.Signals) => {
    for (const child of running) killGroup(child);
    await pg.stop();
    rmSync(countsDir, { recursive: true, force: true });
    finish(results, performance.now() - wallStart, [`run-tests: interrupted by ${signal}`], 1);
  };
  process.once('SIGINT', () => void stopAll('SIGINT'));
  process.once('SIGTERM', () => void stopAll('SIGTERM'));

  // The slow files in SLOW_FILES's order, then the rest.
  const rank = (f: string): number => {
    const i = SLOW_FILES.indexOf(path.normalize(f));
    return i < 0 ? SLOW_FILES.length : i;
  };
  const queue = files
    .map((f, i) => ({ f, i }))
    .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
    .map((x) => x.f);
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const result = await runFile(file, env, limitMs, countsDir);
      results.push(result);
      printFile(result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));

  await pg.stop();
  rmSync(countsDir, { recursive: true, force: true });
  const model = await modelFixture;
  if (model.ok) finish(results, performance.now() - wallStart);
  else finish(results, performance.now() - wallStart, [`run-tests: ${model.problem}`], 1);
}

/**
 * Run a fixture script without waiting for it; its output is printed when it ends (not between the
 * files' outputs). Resolves with whether it succeeded.
 */
function runFixtureAside(script: string): Promise<{ ok: true } | { ok: false; problem: string }> {
  if (!existsSync(script)) return Promise.resolve({ ok: true });
  const started = performance.now();
  const child = spawn('bash', [script], { stdio: ['ignore', 'ignore', 'pipe'] });
  const err: Buffer[] = [];
  child.stderr.on('data', (b: Buffer) => err.push(b));
  return new Promise((resolve) => {
    child.once('error', (e) => resolve({ ok: false, problem: `${script} did not start: ${e.message}` }));
    child.once('close', (code) => {
      const text = Buffer.concat(err).toString().trimEnd();
      if (code === 0) {
        if (text) process.stdout.write(`\n━━ ${script} (${seconds(performance.now() - started)})\n${text}\n`);
        resolve({ ok: true });
      } else {
        process.stdout.write(`\n━━ ${script} failed (exit ${code})\n${text}\n`);
        resolve({
          ok: false,
          problem: `${script} failed (exit ${code}); the files that embed with the model failed with it`,
        });
      }
    });
  });
}

if (import.meta.main) await main();
