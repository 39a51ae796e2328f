/**
 * How the HTTP routes reach the job workers of their process: `wake` after queueing (claim now rather
 * than at the next poll) and `cancel` after cancelling in the database (abort the handlers now if they
 * run here). The routes are built before the workers start, and a process may run none (`KB_WORKERS=0`),
 * so the routes hold a relay that forwards to whichever pool is attached.
 */
export interface JobSignals {
  wake(): void;
  cancel(jobIds: readonly number[]): void;
}

export interface JobSignalRelay extends JobSignals {
  /** Forward to `target` from now on (null: forward nowhere). */
  attach(target: JobSignals | null): void;
}

export function createJobSignalRelay(): JobSignalRelay {
  let target: JobSignals | null = null;
  return {
    wake: () => target?.wake(),
    cancel: (ids) => target?.cancel(ids),
    attach(t) {
      target = t;
    },
  };
}
