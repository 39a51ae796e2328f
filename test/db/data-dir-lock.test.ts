/**
 * The embedded database directory's lock (src/db/data-dir-lock.ts): one process at a time, real processes
 * and real files. A second opener, in this process or another, is refused at once with a sentence that
 * names the directory and the holder's pid, and leaves the holder's files alone; a holder killed with
 * SIGKILL leaves nothing to clean up; and every way the code opens a PGlite directory goes through it.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { DataDirInUseError, dataDirLockFile, lockDataDir } from '../../src/db/data-dir-lock.ts';
import { openDatabase } from '../../src/db/open.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { openPgliteThread } from '../../src/db/pglite-thread.ts';

const LOCK_MODULE = new URL('../../src/db/data-dir-lock.ts', import.meta.url).href;

/** A child process that takes `dir`'s lock and keeps it until killed (it prints `locked` once it holds it). */
async function holdInChild(dir: string): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { lockDataDir } from ${JSON.stringify(LOCK_MODULE)};
       lockDataDir(${JSON.stringify(dir)});
       console.log('locked');
       setInterval(() => {}, 60_000);`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (out.includes('locked')) resolve();
    });
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
    });
    void exited.then(() => reject(new Error(`the holder exited: ${out}`)));
  });
  return { child, exited };
}

/** A child process's attempt to take `dir`'s lock: what it printed and its exit code. */
async function tryInChild(dir: string): Promise<{ code: number | null; out: string }> {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { lockDataDir } from ${JSON.stringify(LOCK_MODULE)};
       try { lockDataDir(${JSON.stringify(dir)}); console.log('locked'); }
       catch (err) { console.log(err.name, err.holderPid, err.message); process.exitCode = 2; }`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, out };
}

function refusedBy(dir: string, pid: number) {
  return (err: unknown) => {
    assert.ok(err instanceof DataDirInUseError, String(err));
    assert.equal(err.holderPid, pid);
    assert.equal(err.dir, path.resolve(dir));
    assert.match(err.message, new RegExp(`${path.resolve(dir)} is open in process ${pid}\\b`));
    assert.match(err.message, /stop that process first/);
    assert.match(err.message, /\/api\/admin\/\.\.\. with KB_ADMIN_TOKEN/);
    return true;
  };
}

describe('the data directory lock', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'kb-lock-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  test('a second opener, in this process or another, is refused at once and the holder keeps its lock', async () => {
    const dir = path.join(root, 'a', 'pgdata');
    const held = lockDataDir(dir);
    try {
      // The same directory however it is written (relative, trailing slash): one lock.
      const relative = `${path.relative(process.cwd(), dir)}/`;
      assert.throws(() => lockDataDir(relative), refusedBy(dir, process.pid));
      const other = await tryInChild(dir);
      assert.equal(other.code, 2, other.out);
      assert.match(other.out, new RegExp(`^DataDirInUseError ${process.pid} the embedded database ${dir} `));
      // The refusals removed nothing: the holder's files are there and it still holds the lock.
      assert.ok(existsSync(dataDirLockFile(dir)));
      assert.equal(readFileSync(`${dataDirLockFile(dir)}.pid`, 'utf8').trim(), String(process.pid));
      assert.equal((await tryInChild(dir)).code, 2);
    } finally {
      held.release();
    }
    held.release(); // a second release does nothing
    const next = await tryInChild(dir);
    assert.equal(next.code, 0, next.out);
    assert.match(next.out, /^locked$/m);
    // That child exited without releasing: the OS dropped its lock with it.
    lockDataDir(dir).release();
  });

  test('a holder killed with SIGKILL leaves nothing to clean up: the next opener takes the directory over', async () => {
    const dir = path.join(root, 'b', 'pgdata');
    const holder = await holdInChild(dir);
    try {
      assert.throws(() => lockDataDir(dir), refusedBy(dir, holder.child.pid!));
    } finally {
      holder.child.kill('SIGKILL');
      await holder.exited;
    }
    // Its files are still there (nothing removes them but a holder's release), and they stop nobody.
    assert.ok(existsSync(dataDirLockFile(dir)));
    assert.equal(readFileSync(`${dataDirLockFile(dir)}.pid`, 'utf8').trim(), String(holder.child.pid));
    const taken = lockDataDir(dir);
    assert.equal(readFileSync(`${dataDirLockFile(dir)}.pid`, 'utf8').trim(), String(process.pid));
    taken.release();
  });

  test("every opener of a PGlite directory takes it, and a refused one leaves PGlite's files alone", async () => {
    const dir = path.join(root, 'c', 'pgdata');
    const db = await openPgliteThread(dir);
    try {
      await db.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (1)');
      const postmasterPid = readFileSync(path.join(dir, 'postmaster.pid'), 'utf8');
      await assert.rejects(openPglite(dir), refusedBy(dir, process.pid));
      await assert.rejects(openPgliteThread(dir), refusedBy(dir, process.pid));
      await assert.rejects(
        openDatabase({ dataDir: path.dirname(dir), DATABASE_URL: '' }),
        refusedBy(dir, process.pid),
      );
      const other = await tryInChild(dir);
      assert.equal(other.code, 2, other.out);
      // PGlite's own marker is untouched, and the first opener still works.
      assert.equal(readFileSync(path.join(dir, 'postmaster.pid'), 'utf8'), postmasterPid);
      assert.deepEqual(await db.query('SELECT n FROM kept'), [{ n: 1 }]);
    } finally {
      await db.close();
    }
    // Closed, the directory is free again: the next opener sees what the first one wrote.
    const again = await openPglite(dir);
    try {
      await assert.rejects(openPgliteThread(dir), DataDirInUseError);
      assert.deepEqual(await again.query('SELECT n FROM kept'), [{ n: 1 }]);
    } finally {
      await again.close();
    }
    lockDataDir(dir).release();
  });

  test('a directory whose opening fails is given up again', async () => {
    // A file where the directory should be: PGlite cannot open it, and the lock does not outlive that.
    const dir = path.join(root, 'd', 'pgdata');
    mkdirSync(path.dirname(dir));
    writeFileSync(dir, 'not a directory');
    await assert.rejects(openPgliteThread(dir));
    await assert.rejects(openPglite(dir));
    lockDataDir(dir).release();
  });
});
