/**
 * One process at a time on an embedded database directory.
 *
 * PGlite has no guard of its own: a second process (`kb key create` beside a running service, say) opens
 * the same directory with its own copy of Postgres in memory; what it writes is lost or damages the files
 * the first one keeps writing, and when it closes it removes the first one's postmaster.pid. So every
 * opener of a PGlite directory takes this lock before PGlite touches the directory (openPglite,
 * openPgliteThread), and a second opener is refused with one sentence that says who holds it.
 *
 * The lock is an operating-system lock: SQLite's advisory lock (node:sqlite, built into Node) on the file
 * `<dir>.lock` beside the directory, held by an exclusive transaction left open. The kernel drops it when
 * the holder's process ends, however it ends (kill -9 included), so a dead holder never needs cleaning up
 * and a reused pid can never pass for a live holder; nothing is ever removed, so no process can remove the
 * holder's lock. SQLite tracks its locks per file across the whole process, so a second opener in the same
 * process (another thread, a test that opens the directory twice) is refused as well.
 * Rejected: a pid file created with O_EXCL, because taking over a dead holder's file depends on a liveness
 * check that pid reuse can fool, and two openers taking it over at once can each remove the other's;
 * proper-lockfile, because it judges a lock stale by its age (the holder touches it on a timer), so a
 * holder whose event loop stalls past the limit on a busy machine loses the lock while it still has the
 * directory open, and after a kill -9 the next opener must wait the limit out.
 *
 * Such a lock belongs to the process and is dropped when the process closes any descriptor of the file:
 * nothing but this module may open `<dir>.lock` in a process that holds it (copying a data directory
 * that the same process has open would). Who holds the lock is written to `<dir>.lock.pid` by the holder,
 * for the refusal's message only.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { z } from 'zod';

/** The lock file of a PGlite directory: beside it, so PGlite's own directory holds only its files. */
export function dataDirLockFile(dir: string): string {
  return `${path.resolve(dir)}.lock`;
}

/** The file that names the holder's pid (informative: the lock itself is the OS lock on the lock file). */
function holderFile(dir: string): string {
  return `${dataDirLockFile(dir)}.pid`;
}

/** A second opener of a directory that a process holds: the refusal, with who holds it and what to do. */
export class DataDirInUseError extends Error {
  readonly dir: string;
  /** The holder's process id, when its pid file could be read. */
  readonly holderPid: number | null;
  constructor(dir: string, holderPid: number | null) {
    super(
      `the embedded database ${dir} is open in ${holderPid ? `process ${holderPid}` : 'another process'} ` +
        '(a running service or another kb command), and only one process may open it: stop that process ' +
        'first, or while the service runs work through its API instead (the remote kb commands; ' +
        'organizations and keys through /api/admin/... with KB_ADMIN_TOKEN)',
    );
    this.name = 'DataDirInUseError';
    this.dir = dir;
    this.holderPid = holderPid;
  }
}

export interface DataDirLock {
  /** The directory it guards (absolute). */
  readonly dir: string;
  /** Gives the directory up (after PGlite has closed it); once only, later calls do nothing. */
  release(): void;
}

/** SQLite's "database is locked": another connection, in this process or another, holds the lock. */
const SQLITE_BUSY = 5;

const HolderPid = z.coerce.number().int().positive();

/**
 * Takes `dir`'s lock, or throws DataDirInUseError at once (no waiting) when a live process holds it. The
 * lock of a process that died is free: the next opener takes it.
 */
export function lockDataDir(dir: string): DataDirLock {
  const absolute = path.resolve(dir);
  mkdirSync(path.dirname(absolute), { recursive: true });
  const lock = new DatabaseSync(dataDirLockFile(absolute), { timeout: 0 });
  try {
    // Nothing is ever written: the rollback journal in memory, not a file beside the lock that a kill -9 leaves.
    lock.exec('PRAGMA journal_mode = MEMORY; BEGIN EXCLUSIVE');
  } catch (err) {
    lock.close();
    if ((err as { errcode?: unknown }).errcode === SQLITE_BUSY)
      throw new DataDirInUseError(absolute, readHolderPid(absolute));
    throw err;
  }
  try {
    writeFileSync(holderFile(absolute), `${process.pid}\n`);
  } catch (err) {
    lock.close();
    throw err;
  }
  let released = false;
  return {
    dir: absolute,
    release() {
      if (released) return;
      released = true;
      // The pid file first: once the lock is free it is the next holder's to write.
      rmSync(holderFile(absolute), { force: true });
      lock.close(); // ends the open transaction and drops the lock
    },
  };
}

function readHolderPid(dir: string): number | null {
  try {
    const parsed = HolderPid.safeParse(readFileSync(holderFile(dir), 'utf8').trim());
    return parsed.success ? parsed.data : null;
  } catch {
    return null; // the holder has not written it yet, or is giving the lock up
  }
}
