import { composeService } from './compose.ts';
import type { Config } from './config.ts';
import { buildApp } from './http/app.ts';
import { closeGracefully } from './http/graceful-close.ts';
import { createProcessLogger } from './lib/logger.ts';
import { openStorage } from './service.ts';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Boot: storage → HTTP (+ workers). On SIGTERM/SIGINT: stop accepting, let in-flight requests finish,
 * stop workers, close the database cleanly (PGlite flushes its data directory), exit.
 */
export async function startServer(config: Config, opts: { workers: boolean }): Promise<RunningServer> {
  const storage = await openStorage(config, { createDefaultOrg: config.storage === 'pglite' });
  const log = createProcessLogger({ level: config.KB_LOG_LEVEL });
  const service = composeService({
    config,
    db: storage.db,
    cipher: storage.cipher,
    parts: { runIndexer: opts.workers, log },
  });
  const app = await buildApp(service.appDeps, { logger: log });
  await app.listen({ port: config.PORT, host: config.HOST });
  // Job workers in this process (KB_WORKERS loops; 0 leaves the jobs to `kb worker` processes).
  if (opts.workers && config.KB_WORKERS > 0) service.startWorkers({ concurrency: config.KB_WORKERS });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  const url = `http://${host}:${port}`;
  // Plain stdout lines for people; the JSON logs go to the same stream for machines.
  console.log(`kb: listening on ${url} (storage: ${config.storage}${config.storage === 'pglite' ? `, data: ${config.dataDir}` : ''})`);
  console.log(`kb: API docs at ${url}/docs`);
  if (storage.firstStartKey) {
    console.log('kb: first start: created organization "default". Its API key (shown once, store it now):');
    console.log(storage.firstStartKey);
  }

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      await closeGracefully(app);
      await service.close();
      await storage.db.close();
    })();
    return closing;
  };
  const onSignal = (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    close()
      .then(() => process.exit(0))
      .catch((err) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  return { url, close };
}
