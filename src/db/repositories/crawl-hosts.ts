/**
 * Per-host politeness shared by every worker process on one Postgres (`crawl_hosts`, migration 014): a
 * host's slots in use (leased, so a killed process's slot ends with its lease), the start of its last
 * request, a pause, its robots.txt Crawl-delay and which process is next in line. Each statement is one round trip on one row; the database's
 * clock is the only clock, so processes on different machines agree on the delay. Commits nothing.
 */
import type { Queryable } from '../database.ts';

/** What a process asks for: its settings (every process of a service runs with the same ones). */
interface HostSlotRequest {
  host: string;
  /** Names this slot in `leases`; unique per acquisition. */
  token: string;
  /** Names the asking process (`next_in_line`). */
  holder: string;
  /** Requests in flight per host (1 while the host has a Crawl-delay). */
  concurrency: number;
  /** Least time between two request starts to the host (the Crawl-delay when larger). */
  minDelayMs: number;
  /** How long the slot is kept unless renewed (its process died) or released. */
  leaseMs: number;
}

/**
 * A slot, or how long until the host may have one: its next start, or the end of the earliest lease, and
 * whether the asker is next in line (the next free slot is kept for it for a second).
 */
export type HostSlotAnswer =
  | { granted: true /** The start recorded, on the database's clock (epoch ms). */; startedAtMs: number }
  | { granted: false; startInMs: number; leaseEndsInMs: number | null; inLine: boolean };

// The database's clock in epoch milliseconds, read where it is used: in ON CONFLICT ... DO UPDATE that is
// after the row's lock was taken, so a grant that waited for another one counts its delay from its own start.
const NOW_MS = '(extract(epoch FROM clock_timestamp())::float8 * 1000)';
const LIVE_LEASES = `(SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
    FROM jsonb_each(h.leases) e WHERE e.value::float8 > ${NOW_MS})`;
const LIVE_COUNT = `(SELECT count(*) FROM jsonb_each(h.leases) e WHERE e.value::float8 > ${NOW_MS})`;
const MS = "* interval '1 millisecond'";
/** When the host's next request may start; `$3` is the process's least delay. */
const READY_AT = `GREATEST(h.last_start_at + GREATEST($3::float8, coalesce(h.crawl_delay_ms, 0)) ${MS}, h.paused_until)`;

/** Another process is next in line for the host's next free slot (`$6`: the asker). */
const OTHER_IN_LINE = `(h.next_in_line IS NOT NULL AND h.next_in_line <> $6 AND h.next_in_line_until > clock_timestamp())`;

/**
 * Takes a slot on the host when one is free and the delay since its last start has passed (and no pause
 * holds it, and no other process is next in line), recording this start, in one statement; expired leases
 * are dropped on the way. Otherwise says how long to wait, and when all slots are taken puts the asker's
 * process next in line unless another is: the process that just gave a slot back and asks again at once
 * would otherwise take it every time, and a process that only polls would wait for the other's whole crawl.
 */
export async function tryTakeHostSlot(q: Queryable, r: HostSlotRequest): Promise<HostSlotAnswer> {
  const taken = await q.query<{ started_at_ms: number }>(
    `INSERT INTO crawl_hosts AS h (host, last_start_at, leases)
     VALUES ($1, clock_timestamp(), jsonb_build_object($2::text, ${NOW_MS} + $5::float8))
     ON CONFLICT (host) DO UPDATE SET
       last_start_at = clock_timestamp(),
       leases = ${LIVE_LEASES} || jsonb_build_object($2::text, ${NOW_MS} + $5::float8),
       next_in_line = CASE WHEN h.next_in_line = $6 THEN NULL ELSE h.next_in_line END
     WHERE ${READY_AT} <= clock_timestamp()
       AND ${LIVE_COUNT} < CASE WHEN h.crawl_delay_ms IS NULL THEN $4::int ELSE 1 END
       AND NOT ${OTHER_IN_LINE}
     RETURNING extract(epoch FROM h.last_start_at)::float8 * 1000 AS started_at_ms`,
    [r.host, r.token, r.minDelayMs, r.concurrency, r.leaseMs, r.holder],
  );
  if (taken[0]) return { granted: true, startedAtMs: taken[0].started_at_ms };
  // This statement's parameters: $2 the least delay, $3 the concurrency, $4 the asker.
  const otherInLine = OTHER_IN_LINE.replaceAll('$6', '$4');
  const [row] = await q.query<{ start_in_ms: number; lease_ends_in_ms: number | null; in_line: boolean }>(
    `WITH queued AS (
       UPDATE crawl_hosts h SET next_in_line = $4, next_in_line_until = clock_timestamp() + interval '1 second'
       WHERE h.host = $1 AND NOT ${otherInLine}
         AND ${LIVE_COUNT} >= CASE WHEN h.crawl_delay_ms IS NULL THEN $3::int ELSE 1 END
       RETURNING 1)
     SELECT extract(epoch FROM GREATEST(${READY_AT.replaceAll('$3', '$2')}, clock_timestamp()) - clock_timestamp())::float8
         * 1000 AS start_in_ms,
       (SELECT min(e.value::float8) FROM jsonb_each(h.leases) e) - ${NOW_MS} AS lease_ends_in_ms,
       EXISTS (SELECT 1 FROM queued) OR h.next_in_line IS NOT DISTINCT FROM $4::text AS in_line
     FROM crawl_hosts h WHERE h.host = $1`,
    [r.host, r.minDelayMs, r.concurrency, r.holder],
  );
  // The row exists (the INSERT above found it); were it deleted meanwhile, trying again at once is right.
  return {
    granted: false,
    startInMs: row?.start_in_ms ?? 0,
    leaseEndsInMs: row?.lease_ends_in_ms ?? null,
    inLine: row?.in_line ?? false,
  };
}

/** Gives a slot back (a no-op when its lease already ended and another acquisition dropped it). */
export async function releaseHostSlot(q: Queryable, host: string, token: string): Promise<void> {
  await q.query('UPDATE crawl_hosts SET leases = leases - $2::text WHERE host = $1', [host, token]);
}

/**
 * Extends the leases of slots a live process still holds (those another acquisition already dropped as
 * expired stay dropped), so a lease can be short whatever a request's length.
 */
export async function renewHostSlots(
  q: Queryable,
  host: string,
  tokens: string[],
  leaseMs: number,
): Promise<void> {
  await q.query(
    `UPDATE crawl_hosts h SET leases = h.leases || (
       SELECT coalesce(jsonb_object_agg(t, ${NOW_MS} + $3::float8), '{}'::jsonb)
       FROM unnest($2::text[]) t WHERE h.leases ? t)
     WHERE h.host = $1`,
    [host, tokens, leaseMs],
  );
}

/** Holds every process's next request to the host back for `ms` (a 429 or 503 with Retry-After). */
export async function pauseHost(q: Queryable, host: string, ms: number): Promise<void> {
  await q.query(
    `INSERT INTO crawl_hosts AS h (host, paused_until) VALUES ($1, clock_timestamp() + $2::float8 ${MS})
     ON CONFLICT (host) DO UPDATE SET paused_until = GREATEST(h.paused_until, EXCLUDED.paused_until)`,
    [host, ms],
  );
}

/** Records the host's robots.txt Crawl-delay for every process; null clears it. */
export async function setHostCrawlDelay(
  q: Queryable,
  host: string,
  crawlDelayMs: number | null,
): Promise<void> {
  await q.query(
    `INSERT INTO crawl_hosts AS h (host, crawl_delay_ms) VALUES ($1, $2::int)
     ON CONFLICT (host) DO UPDATE SET crawl_delay_ms = EXCLUDED.crawl_delay_ms
     WHERE h.crawl_delay_ms IS DISTINCT FROM EXCLUDED.crawl_delay_ms`,
    [host, crawlDelayMs],
  );
}
