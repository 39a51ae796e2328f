-- Politeness across processes: the per-host concurrency and delay between request
-- starts hold across every worker process on one Postgres, so their state lives here and not in each
-- process (src/crawler/host-slots.ts, src/db/repositories/crawl-hosts.ts). The embedded service is one
-- process: it keeps the in-process gate alone and never writes this table.
--
-- One row per host (`host` as in a URL: name and port, lower case):
--   last_start_at   when the host's last request was let start, on the database's clock (the one clock every
--                   process shares); the next may start the delay after it (the delay as it is then: a
--                   Crawl-delay learnt since counts from the last start too);
--   paused_until    no request starts before it (a 429/503 with Retry-After);
--   crawl_delay_ms  the robots.txt Crawl-delay one process read; while set, one request at a time and at
--                   least that delay, for every process, including one that has not read robots.txt yet;
--   leases          the slots in use, {token: lease end in epoch milliseconds}. A process releases its slot
--                   when the request ends and renews the lease while it runs; a killed process's slot is
--                   dropped once its lease has ended (10 s by default);
--   next_in_line    the process (`next_in_line_until`: for a second, renewed while it keeps asking) that
--                   found every slot taken: the next free slot is kept for it. Without it, the process that
--                   gives a slot back and asks again at once would take it every time, and a process that
--                   can only poll would wait for the other's whole crawl.
--
-- A slot is taken and last_start_at set by one INSERT ... ON CONFLICT DO UPDATE ... WHERE, decided
-- under the row's lock on its newest version: two processes can neither both take the last slot nor both
-- take the same start. Slots are a map in the row rather than rows of their own because the slot check
-- and the start-time advance must be one atomic decision; slot rows would need the host row locked anyway.
CREATE TABLE crawl_hosts (
  host            text PRIMARY KEY,
  last_start_at   timestamptz NOT NULL DEFAULT '-infinity',
  paused_until    timestamptz NOT NULL DEFAULT '-infinity',
  crawl_delay_ms  integer CHECK (crawl_delay_ms > 0),
  leases          jsonb NOT NULL DEFAULT '{}'::jsonb,
  next_in_line        text,
  next_in_line_until  timestamptz
);
