import { readlinkSync } from 'node:fs';
import os from 'node:os';

/**
 * The scheduling niceness of background threads (chunking, page extraction): on a machine with fewer
 * cores than busy threads, the kernel then runs the threads that answer requests (the event loop,
 * PGlite's thread) first whenever they have work, and background threads take what they leave. Threads
 * created afterwards by the same thread inherit it.
 */
export const BACKGROUND_NICENESS = 10;

/**
 * Lowers the calling thread's scheduling priority (raises its niceness) to `niceness`, where the system
 * allows it: Linux keeps a niceness per thread, addressed by the thread's id, which `/proc/thread-self`
 * names. Elsewhere (or where the system refuses) it does nothing and answers false: priorities only
 * order the work, so nothing depends on them.
 *
 * Lowering is one-way for an unprivileged process (raising a thread back needs CAP_SYS_NICE), so only
 * threads that do background work alone call this: never the main thread or PGlite's thread, which
 * serve requests as well as background writes.
 */
export function lowerThisThreadPriority(niceness: number = BACKGROUND_NICENESS): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const tid = threadId();
    if (tid === null || os.getPriority(tid) >= niceness) return false;
    os.setPriority(tid, niceness);
    return true;
  } catch {
    return false;
  }
}

/** The kernel's id of the calling thread: `/proc/thread-self` links to `<pid>/task/<tid>`. */
function threadId(): number | null {
  const match = /\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'));
  return match ? Number(match[1]) : null;
}

/** The calling thread's niceness where the system tells it (Linux), for tests and benchmarks. */
export function thisThreadNiceness(): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const tid = threadId();
    return tid === null ? null : os.getPriority(tid);
  } catch {
    return null;
  }
}
