/**
 * Postgres LISTEN on the jobs channel, so worker processes start a queued job (or stop a cancelled one)
 * within milliseconds instead of at their next poll. Best effort: polling and heartbeats stay the source
 * of truth, so a lost connection only costs latency; it reconnects with a growing delay.
 */
import pg from 'pg';
import { JOBS_CHANNEL } from './queue.ts';
import type { Logger } from '../lib/logger.ts';

export interface JobListener {
  close(): Promise<void>;
}

export function listenForJobs(url: string, onMessage: (payload: string) => void, log: Logger): JobListener {
  let client: pg.Client | null = null;
  let closed = false;
  let retryMs = 500;
  let timer: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    if (closed) return;
    const c = new pg.Client({ connectionString: url, application_name: 'kb-worker-listen' });
    c.on('notification', (msg) => {
      if (msg.channel === JOBS_CHANNEL && msg.payload) onMessage(msg.payload);
    });
    c.on('error', (err) => {
      log.warn({ err: err.message }, 'job listener connection lost; reconnecting');
      void c.end().catch(() => {});
      if (client === c) client = null;
      schedule();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${JOBS_CHANNEL}`);
      if (closed) {
        await c.end();
        return;
      }
      client = c;
      retryMs = 500;
      // Anything queued while we were away is found by the next poll; wake now to find it sooner.
      onMessage('wake');
    } catch (err) {
      void c.end().catch(() => {});
      log.warn({ err: (err as Error).message }, 'job listener could not connect; retrying');
      schedule();
    }
  };
  const schedule = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, retryMs);
    retryMs = Math.min(retryMs * 2, 30_000);
  };

  void connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
