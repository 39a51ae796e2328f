/**
 * Adaptive back-off per host: the gap the host gate keeps between request starts beyond the crawl's own
 * `delayMs`, widened when the host says it is overloaded (429 or 503) or answers slower than it did at
 * its best, and narrowed again answer by answer once it recovers. A pure function of the previous state
 * and one answer: the gate holds the state, tests feed it answers.
 *
 * Retry-After itself is not here: the retry pauses the whole host for it (HostGate.pause); this gap is
 * what the host gets after the pause, so the crawl does not come back at full speed into the same wall.
 */

export interface HostBackoff {
  /** Least time between two request starts that the host's answers call for, in ms (0: none). */
  gapMs: number;
  /** Response time, smoothed over the last answers (ms); null before the first. */
  latencyMs: number | null;
  /** The lowest smoothed response time seen: the host at its best. */
  baselineMs: number | null;
}

export const NO_BACKOFF: HostBackoff = { gapMs: 0, latencyMs: null, baselineMs: null };

/** One answer of the host: its status (null: no answer, a timeout or a reset) and how long it took. */
export interface HostAnswer {
  status: number | null;
  latencyMs: number;
}

/** The first gap after a 429 or 503; each further one doubles it. */
export const THROTTLED_GAP_MS = 1000;
/** Weight of the newest answer in the smoothed response time. */
const LATENCY_WEIGHT = 0.3;
/**
 * A host is slow once its smoothed response time is at least twice its best and 50 ms above it: noise on
 * a host answering in 2 ms (4 ms, 6 ms) is not slowness, a host going from 40 ms to 400 ms is.
 */
const SLOW_FACTOR = 2;
const SLOW_MARGIN_MS = 50;
/** A gap that is not called for shrinks by this factor per answer, and ends under 10 ms. */
const RECOVERY = 0.75;
const NEGLIGIBLE_GAP_MS = 10;

/**
 * The host's back-off after one more answer. A 429 or 503 doubles the gap (at least
 * {@link THROTTLED_GAP_MS}); a slow answer widens it to the time the host now takes beyond its best; any
 * other answer lets it shrink. Never above `maxGapMs`.
 */
export function nextBackoff(prev: HostBackoff, answer: HostAnswer, opts: { maxGapMs: number }): HostBackoff {
  if (answer.status === 429 || answer.status === 503) {
    return { ...prev, gapMs: Math.min(opts.maxGapMs, Math.max(THROTTLED_GAP_MS, 2 * prev.gapMs)) };
  }
  const latencyMs =
    prev.latencyMs === null
      ? answer.latencyMs
      : (1 - LATENCY_WEIGHT) * prev.latencyMs + LATENCY_WEIGHT * answer.latencyMs;
  const baselineMs = Math.min(prev.baselineMs ?? latencyMs, latencyMs);
  const excess = latencyMs - baselineMs;
  const slowGap = latencyMs >= SLOW_FACTOR * baselineMs && excess >= SLOW_MARGIN_MS ? excess : 0;
  let gapMs = slowGap >= prev.gapMs ? slowGap : Math.max(slowGap, prev.gapMs * RECOVERY);
  if (gapMs < NEGLIGIBLE_GAP_MS) gapMs = 0;
  return { gapMs: Math.min(opts.maxGapMs, gapMs), latencyMs, baselineMs };
}
