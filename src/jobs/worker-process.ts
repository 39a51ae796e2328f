/**
 * `kb worker`: a process that only runs workers (and the embedding indexer for what they write), for
 * scaling out in server mode: start any number of them against the same DATABASE_URL.
 */
import type { Config } from '../config.ts';
import type { AppContext } from '../http/context.ts';
import { EmbeddingRuntime } from '../runtime.ts';
import { openStorage } from '../service.ts';
import type { JobLogger } from './registry.ts';
import { startWorkerPool } from './worker.ts';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

/** JSON lines on stdout, like the server's logs, at or above KB_LOG_LEVEL. Never pass secrets. */
export function jsonLogger(level: Config['KB_LOG_LEVEL']): JobLogger {
  const min = level === 'silent' ? Number.POSITIVE_INFINITY : LEVELS.indexOf(level);
  const write = (lvl: (typeof LEVELS)[number]) => (obj: Record<string, unknown>, msg: string) => {
    if (LEVELS.indexOf(lvl) < min) return;
    const fields = Object.fromEntries(
      Object.entries(obj).map(([k, v]) => [k, v instanceof Error ? { message: v.message, name: v.name } : v]),
    );
    process.stdout.write(
      `${JSON.stringify({ level: lvl, time: Date.now(), pid: process.pid, ...fields, msg })}\n`,
    );
  };
  return { info: write('info'), warn: write('warn'), error: write('error') };
}

/** Runs until SIGTERM/SIGINT; then finishes or hands back its jobs and closes the database. */
export async function runWorkerProcess(config: Config): Promise<void> {
  const log = jsonLogger(config.KB_LOG_LEVEL);
  const storage = await openStorage(config, { createDefaultOrg: false });
  const ctx: AppContext = { config, db: storage.db, cipher: storage.cipher };
  const embedding = new EmbeddingRuntime(config, storage.db, log, { runIndexer: true });
  ctx.onItemsChanged = () => embedding.notify();
  const concurrency = Math.max(1, config.KB_WORKERS);
  const pool = startWorkerPool(ctx, { concurrency, log });
  ctx.jobs = pool;
  console.log(
    `kb: worker ${pool.workerId} running ${concurrency} job loop${concurrency === 1 ? '' : 's'} (storage: ${config.storage})`,
  );

  let closing = false;
  const onSignal = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    void (async () => {
      await pool.stop();
      await embedding.close();
      await storage.db.close();
    })()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
