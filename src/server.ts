import { composeService } from './compose.ts';
import { logEmbeddedCeiling } from './db/embedded-ceiling.ts';
import { buildApp } from './http/app.ts';
import { closeGracefully, trackConnections } from './http/graceful-close.ts';
import { startBanner } from './lib/banner.ts';
import { chooseLogFormat, createProcessLogger } from './lib/logger.ts';
import { type Config, unknownSettingWarning } from './config.ts';
import { openStorage } from './storage.ts';

interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Boot: storage → HTTP (+ workers). On SIGTERM/SIGINT: /readyz turns 503 at once, the listener keeps
 * accepting for KB_SHUTDOWN_GRACE_MS (a load balancer polling /readyz stops sending meanwhile), then stops
 * accepting; every request that reached the process is answered, then workers stop and the database
 * closes cleanly (PGlite flushes its data directory), exit 0 (src/http/graceful-close.ts).
 *
 * A second signal during the stop ends the grace at once and nothing else: requests in flight are still
 * answered and the database still closes, so an impatient Ctrl-C twice loses nothing. Only SIGKILL stops
 * the process without that (a crash, which loses no acknowledged write either).
 */
export async function startServer(config: Config, opts: { workers: boolean }): Promise<RunningServer> {
  const storage = await openStorage(config, { createDefaultOrg: config.storage === 'pglite' });
  const logFormat = chooseLogFormat(config.KB_LOG_FORMAT, {
    isTTY: Boolean(process.stdout.isTTY),
    nodeEnv: process.env['NODE_ENV'],
  });
  const log = createProcessLogger({ level: config.KB_LOG_LEVEL, format: logFormat });
  for (const unknown of config.unknownSettings)
    log.warn({ setting: unknown.name }, unknownSettingWarning(unknown));
  // Says at start when the data directory nears embedded mode's measured ceiling.
  await logEmbeddedCeiling(storage.db, log);
  const service = composeService({
    config,
    db: storage.db,
    cipher: storage.cipher,
    parts: { runIndexer: opts.workers, log },
  });
  const app = await buildApp(service.appDeps, { logger: log });
  // From the first connection on: a shutdown waits for a connection accepted before it to send its request.
  trackConnections(app.server);
  await app.listen({ port: config.PORT, host: config.HOST });
  // Job workers in this process (KB_WORKERS loops; 0 leaves the jobs to `kb worker` processes).
  if (opts.workers && config.KB_WORKERS > 0) service.startWorkers({ concurrency: config.KB_WORKERS });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  const url = `http://${host}:${port}`;
  // For people, on stdout beside the log lines; shaped to stand out from them (src/lib/banner.ts).
  process.stdout.write(
    startBanner(
      { url, storage: config.storage, dataDir: config.dataDir, firstStartKey: storage.firstStartKey },
      { format: logFormat, color: process.stdout.hasColors?.() ?? false },
    ),
  );

  const endGrace = new AbortController();
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      await closeGracefully(app, { graceMs: config.KB_SHUTDOWN_GRACE_MS, endGrace: endGrace.signal });
      await service.close();
      await storage.db.close();
    })();
    return closing;
  };
  const onSignal = (signal: string) => {
    if (closing) {
      if (!endGrace.signal.aborted)
        app.log.info({ signal }, 'second signal: grace ended, answering requests in flight');
      endGrace.abort();
      return;
    }
    app.log.info({ signal, graceMs: config.KB_SHUTDOWN_GRACE_MS }, 'shutting down');
    close()
      .then(() => process.exit(0))
      .catch((err) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  // `on`, not `once`: without a listener a second SIGINT would kill the process mid-drain.
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return { url, close };
}
