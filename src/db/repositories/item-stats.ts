import type { Queryable } from '../database.ts';
import type { IndexingStatus, ItemSourceType } from './items.ts';

/** The window the indexing rate is measured over. */
export const RATE_WINDOW_SECONDS = 300;

/**
 * Items indexed in the last $1 seconds and the seconds the indexer spent on them: the union of their
 * [indexing_started_at, indexed_at] intervals (gaps and islands: an interval starting after every earlier
 * one ended opens an island), clipped to the window. Idle time between bursts of work is no part of it, so
 * 30 items stored after five quiet minutes get the rate the indexer works at, not one diluted by the quiet.
 * Items indexed before indexing_started_at existed are left out.
 */
const BUSY_RATE_SQL = `
  WITH done AS (
    SELECT greatest(indexing_started_at, now() - make_interval(secs => $1)) AS s, indexed_at AS e
      FROM items
     WHERE indexed_at > now() - make_interval(secs => $1) AND indexing_started_at IS NOT NULL
       AND indexing_started_at <= indexed_at
  ),
  ordered AS (
    SELECT s, e, max(e) OVER (ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS ended_before
      FROM done
  ),
  islands AS (
    SELECT s, e, count(*) FILTER (WHERE ended_before IS NULL OR s > ended_before) OVER (ORDER BY s, e) AS island
      FROM ordered
  )
  SELECT coalesce(sum(n), 0)::int AS n, coalesce(sum(seconds), 0)::float8 AS busy
    FROM (SELECT count(*) AS n, extract(epoch FROM max(e) - min(s)) AS seconds FROM islands GROUP BY island) AS i`;

/** Shortest busy time a rate is worked out from: a single quick item says little about the next thousand. */
const MIN_BUSY_SECONDS = 0.5;

interface ConnectionItemCounts {
  connectionId: string;
  type: string;
  total: number;
  byIndexingStatus: Record<IndexingStatus, number>;
}

interface ItemStats {
  total: number;
  byIndexingStatus: Record<IndexingStatus, number>;
  bySourceType: Record<ItemSourceType, number>;
  byConnection: ConnectionItemCounts[];
  chunks: number;
  indexer: {
    /**
     * Items indexed per second of the indexer's work, service-wide, over the last {@link RATE_WINDOW_SECONDS}
     * ({@link BUSY_RATE_SQL}); null when too few.
     */
    ratePerSecond: number | null;
    /** Pending items (every organization's) the indexer takes before this organization's last one. */
    queuedAhead: number;
    /** Seconds until this organization's pending items are indexed at that rate; 0 when none; null unknown. */
    etaSeconds: number | null;
  };
}

const STATUSES: IndexingStatus[] = ['pending', 'indexed', 'failed'];
const SOURCE_TYPES: ItemSourceType[] = ['integration', 'crawl', 'upload'];
const zeroes = <K extends string>(keys: K[]) =>
  Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

/**
 * Pending items (anyone's) the indexer takes no later than organization $1's last one, in the order its
 * lease takes them (src/ingest/indexer.ts): queues per organization and source, oldest change first
 * within a queue, taken in turns (each queue's first, then each queue's second...), a turn oldest first.
 * The organization's last item is the last of its longest queue: turn D, the queue's newest change. Ahead
 * of it (itself included): each queue's items of the turns before D, and the D-th items changed no
 * later. Items in flight count as waiting and new ones will cut in by turn, so it is an estimate. Cost:
 * one pass over the pending items in the order of items_indexing_queue_idx, then up to D index steps in
 * each queue as long as D.
 */
const QUEUED_AHEAD_SQL = `
  WITH queues AS (
    SELECT organization_id AS org, source_type AS source, coalesce(connection_id, '') AS conn,
           count(*)::int AS len, max(updated_at) AS newest
      FROM items WHERE indexing_status = 'pending'
     GROUP BY organization_id, source_type, coalesce(connection_id, '')
  ),
  mine AS (
    SELECT len AS turn, newest FROM queues WHERE org = $1 ORDER BY len DESC, newest DESC LIMIT 1
  )
  SELECT ((SELECT coalesce(sum(least(q.len, m.turn - 1)), 0) FROM queues AS q)
          + (SELECT count(*) FROM queues AS q CROSS JOIN LATERAL (
               SELECT i.updated_at FROM items AS i
                WHERE i.indexing_status = 'pending' AND i.organization_id = q.org AND i.source_type = q.source
                  AND coalesce(i.connection_id, '') = q.conn
                ORDER BY i.updated_at OFFSET m.turn - 1 LIMIT 1) AS d
              WHERE q.len >= m.turn AND d.updated_at <= m.newest))::int AS n
    FROM mine AS m`;

/**
 * The organization's items counted by indexing state, source type and connection; its chunks; and the
 * indexer's progress. The indexer is shared by every organization, so the estimate counts what is queued
 * ahead of this organization's last pending item, whoever's it is ({@link QUEUED_AHEAD_SQL}), and
 * reports only that number and the rate, never another's items.
 */
export async function itemStats(q: Queryable, organizationId: string): Promise<ItemStats> {
  const groups = await q.query<{
    source_type: ItemSourceType;
    connection_id: string | null;
    indexing_status: IndexingStatus;
    n: number;
  }>(
    `SELECT source_type, connection_id, indexing_status, count(*)::int AS n
       FROM items WHERE organization_id = $1
      GROUP BY source_type, connection_id, indexing_status`,
    [organizationId],
  );
  const connections = await q.query<{ id: string; type: string }>(
    'SELECT id, type FROM connections WHERE organization_id = $1 ORDER BY type, id',
    [organizationId],
  );
  const [chunks] = await q.query<{ n: number }>(
    // Searchable ones: not those of a generation the indexer is still writing (src/search/search.ts).
    `SELECT count(*)::int AS n FROM chunks AS c
      WHERE c.organization_id = $1 AND c.generation NOT IN (SELECT generation FROM chunk_staging)`,
    [organizationId],
  );
  const [rate] = await q.query<{ n: number; busy: number }>(BUSY_RATE_SQL, [RATE_WINDOW_SECONDS]);
  const [ahead] = await q.query<{ n: number }>(QUEUED_AHEAD_SQL, [organizationId]);

  const byIndexingStatus = zeroes(STATUSES);
  const bySourceType = zeroes(SOURCE_TYPES);
  const perConnection = new Map(
    connections.map((c) => [
      c.id,
      { connectionId: c.id, type: c.type, total: 0, byIndexingStatus: zeroes(STATUSES) },
    ]),
  );
  let total = 0;
  for (const g of groups) {
    total += g.n;
    byIndexingStatus[g.indexing_status] += g.n;
    bySourceType[g.source_type] += g.n;
    const c = g.connection_id === null ? undefined : perConnection.get(g.connection_id);
    if (c) {
      c.total += g.n;
      c.byIndexingStatus[g.indexing_status] += g.n;
    }
  }

  const ratePerSecond = rate && rate.n >= 2 && rate.busy >= MIN_BUSY_SECONDS ? rate.n / rate.busy : null;
  const queuedAhead = ahead?.n ?? 0;
  const etaSeconds =
    byIndexingStatus.pending === 0 ? 0 : ratePerSecond ? Math.ceil(queuedAhead / ratePerSecond) : null;
  return {
    total,
    byIndexingStatus,
    bySourceType,
    byConnection: [...perConnection.values()],
    chunks: chunks?.n ?? 0,
    indexer: { ratePerSecond, queuedAhead, etaSeconds },
  };
}
