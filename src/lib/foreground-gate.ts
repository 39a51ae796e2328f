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
 *
 * While requests keep coming (one running, or one ended less than {@link RECENT_REQUEST_MS} ago),
 * background work also pauses after each step for as long as that step took (at most
 * {@link MAX_PAUSE_MS}): half of the database thread's time and of the cores is left for reads. Without
 * the pause, a writer that never waits (vectors faster than the database takes them) kept PGlite's thread
 * and a core busy all the time, and reads of other organizations ran at twice their time alone; with
 * nobody reading, the writer goes at full speed.
 */
export const RECENT_REQUEST_MS = 1_000;
export const MAX_PAUSE_MS = 50;

export interface ForegroundGateOptions {
  /** The clock (ms); tests drive it. */
  now?: () => number;
  /** How a pause is waited for; tests resolve it themselves. */
  sleep?: (ms: number) => Promise<void>;
}

export class ForegroundGate {
  #running = 0;
  #waiting = new Set<() => void>();
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  /** When the last request ended (-Infinity: none yet). */
  #lastRequestEnd = Number.NEGATIVE_INFINITY;
  /** When background work last went ahead: the start of its step in progress. */
  #stepStart: number | null = null;

  constructor(opts: ForegroundGateOptions = {}) {
    this.#now = opts.now ?? (() => performance.now());
    this.#sleep =
      opts.sleep ??
      ((ms) =>
        new Promise<void>((resolve) => {
          setTimeout(resolve, ms).unref?.();
        }));
  }

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
      this.#lastRequestEnd = this.#now();
      if (this.#running === 0) for (const wake of [...this.#waiting]) wake();
    };
  }

  /**
   * Resolves when background work may take its next step: after the pause its previous step earned while
   * requests keep coming, then when no request is running, or after `maxWaitMs` at most.
   */
  async quiet(maxWaitMs: number): Promise<void> {
    const pause = this.#pauseAfterStep();
    if (pause > 0) await this.#sleep(pause);
    if (this.#running > 0) await this.#untilNoRequest(maxWaitMs);
    this.#stepStart = this.#now();
  }

  /** The previous step's duration while requests keep coming, capped; 0 when nobody reads. */
  #pauseAfterStep(): number {
    const now = this.#now();
    const stepStart = this.#stepStart;
    this.#stepStart = null;
    if (stepStart === null) return 0;
    const reading = this.#running > 0 || now - this.#lastRequestEnd < RECENT_REQUEST_MS;
    return reading ? Math.min(Math.max(0, now - stepStart), MAX_PAUSE_MS) : 0;
  }

  #untilNoRequest(maxWaitMs: number): Promise<void> {
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
