/**
 * Lets background work give way to requests. Requests `enter` while they run; background work awaits
 * `quiet` before each step, which resolves once no request is running, or after a bounded wait so that
 * background work never starves under constant traffic.
 *
 * Why: embedded mode's PGlite runs one statement at a time for everyone. A request makes several
 * statements one after the other (its key, its query, its rows), and each of them waited behind whatever
 * background statement had started meanwhile, so one organization's large document made every other
 * organization's search several write statements slower. With the gate, a background statement starts
 * only between requests, and a request waits for at most the one that was already running when it came.
 */
export class ForegroundGate {
  #running = 0;
  #waiting = new Set<() => void>();

  /** Requests running now. */
  get running(): number {
    return this.#running;
  }

  /** A request started; call the returned function once when it ends (extra calls do nothing). */
  enter(): () => void {
    this.#running++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#running--;
      if (this.#running === 0) for (const wake of [...this.#waiting]) wake();
    };
  }

  /** Resolves when no request is running, or after `maxWaitMs` at most. */
  quiet(maxWaitMs: number): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, maxWaitMs);
      this.#waiting.add(wake);
    });
  }
}
