/**
 * The shared stage of the host gate (fetch-page.ts `HostGate`) in server mode: per-host slots and start
 * times in Postgres (`crawl_hosts`, src/db/repositories/crawl-hosts.ts), so that the per-host concurrency,
 * the delay between request starts and a robots.txt Crawl-delay hold across every worker process on one
 * database, not in each process alone.
 *
 * A slot is taken by one statement; when none can be, the answer says when to ask again: at the host's
 * next start when the delay is what holds it back (known exactly), else by polling, since a slot freed by
 * another process gives no sign here. Polls start short and back off to `maxPollMs`, jittered, so waiting
 * processes neither hammer the database nor ask in step; a process that found every slot taken is next in
 * line (the next free slot is kept for it) and polls at the shortest interval. A slot is leased, and the lease renewed every
 * third of it while the request runs: a killed process's slot is taken back once its lease ends, a few
 * seconds, whatever the request deadline.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../db/database.ts';
import {
  type HostSlotAnswer,
  pauseHost,
  releaseHostSlot,
  renewHostSlots,
  setHostCrawlDelay,
  tryTakeHostSlot,
} from '../db/repositories/crawl-hosts.ts';
import type { HostPace, SharedHostSlots } from './fetch-page.ts';

interface DatabaseHostSlotsOptions {
  /** How long a slot outlives a process that died holding it; renewed every third of it meanwhile. */
  leaseMs: number;
  /** First wait for a slot held by others; doubles up to `maxPollMs`. Default 10. */
  minPollMs?: number;
  /** Default 200. */
  maxPollMs?: number;
}

export class DatabaseHostSlots implements SharedHostSlots {
  readonly #db: Queryable;
  readonly #opts: Required<DatabaseHostSlotsOptions>;
  /** Names this process's slots in the table (`<random>:<pid>:<n>`), for whoever reads it. */
  readonly #tokenPrefix = `${randomBytes(4).toString('hex')}:${process.pid}`;
  #seq = 0;
  /** Slots this process holds, per host: what the renewal extends. */
  readonly #held = new Map<string, Set<string>>();
  #renewal: NodeJS.Timeout | undefined;

  constructor(db: Queryable, opts: DatabaseHostSlotsOptions) {
    this.#db = db;
    this.#opts = {
      minPollMs: 10,
      maxPollMs: 200,
      ...opts,
    };
  }

  /**
   * A slot on `host` at the asking crawl's pace: its concurrency counts every process's slots on the host,
   * its delay runs from the host's last start by any process (the host's Crawl-delay when larger).
   */
  async acquire(host: string, pace: HostPace, signal?: AbortSignal): Promise<() => Promise<void>> {
    const token = `${this.#tokenPrefix}:${++this.#seq}`;
    const { leaseMs } = this.#opts;
    const concurrency = Math.max(1, pace.concurrency);
    const minDelayMs = Math.max(0, pace.delayMs);
    let poll = this.#opts.minPollMs;
    for (;;) {
      signal?.throwIfAborted();
      const holder = this.#tokenPrefix;
      const answer = await tryTakeHostSlot(this.#db, {
        host,
        token,
        holder,
        concurrency,
        minDelayMs,
        leaseMs,
      });
      if (answer.granted) {
        this.#hold(host, token);
        return () => {
          this.#drop(host, token);
          return releaseHostSlot(this.#db, host, token);
        };
      }
      // Next in line: the next free slot is kept for this process, and only for a second unless it asks.
      if (answer.inLine) poll = this.#opts.minPollMs;
      const wait = this.#wait(answer, poll);
      if (!answer.inLine && answer.startInMs <= 0) poll = Math.min(poll * 2, this.#opts.maxPollMs);
      try {
        await sleep(wait, undefined, { signal });
      } catch (err) {
        // The gate's callers expect the signal's own reason, as the in-process stage gives it.
        throw signal?.aborted ? signal.reason : err;
      }
    }
  }

  #hold(host: string, token: string): void {
    let tokens = this.#held.get(host);
    if (!tokens) {
      tokens = new Set();
      this.#held.set(host, tokens);
    }
    tokens.add(token);
    if (!this.#renewal) {
      const every = Math.max(50, this.#opts.leaseMs / 3);
      this.#renewal = setInterval(() => void this.#renew(), every);
      this.#renewal.unref();
    }
  }

  #drop(host: string, token: string): void {
    const tokens = this.#held.get(host);
    tokens?.delete(token);
    if (tokens?.size === 0) this.#held.delete(host);
    if (this.#held.size === 0 && this.#renewal) {
      clearInterval(this.#renewal);
      this.#renewal = undefined;
    }
  }

  /** One statement per host with slots held. A failed renewal is retried at the next turn, well within the lease. */
  async #renew(): Promise<void> {
    await Promise.all(
      [...this.#held].map(([host, tokens]) =>
        renewHostSlots(this.#db, host, [...tokens], this.#opts.leaseMs).catch(() => {}),
      ),
    );
  }

  #wait(answer: Extract<HostSlotAnswer, { granted: false }>, poll: number): number {
    // A little more, at random: processes that were refused together do not come back together.
    if (answer.startInMs > 0) return answer.startInMs + Math.random() * this.#opts.minPollMs;
    // All slots taken: poll, but no later than the earliest lease ends (a dead process's slot).
    const leaseEnd = answer.leaseEndsInMs ?? Number.POSITIVE_INFINITY;
    return Math.max(1, Math.min(poll * (1 + Math.random() / 2), leaseEnd + 1));
  }

  pause(host: string, ms: number): Promise<void> {
    return pauseHost(this.#db, host, ms);
  }

  setCrawlDelay(host: string, crawlDelayMs: number | undefined): Promise<void> {
    return setHostCrawlDelay(this.#db, host, crawlDelayMs ?? null);
  }
}
