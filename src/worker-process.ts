/**
 * `kb worker`: a process that only runs workers (and the embedding indexer for what they write), for
 * scaling out in server mode: start any number of them against the same DATABASE_URL.
 */
import { composeService } from './compose.ts';
import { type Config, unknownSettingWarning } from './config.ts';
import { createProcessLogger } from './lib/logger.ts';
import { openStorage } from './storage.ts';

/** Runs until SIGTERM/SIGINT; then finishes or hands back its jobs and closes the database. */
export async function runWorkerProcess(config: Config): Promise<void> {
  const log = createProcessLogger({ level: config.KB_LOG_LEVEL, format: config.KB_LOG_FORMAT });
  for (const unknown of config.unknownSettings)
    log.warn({ setting: unknown.name }, unknownSettingWarning(unknown));
  const storage = await openStorage(config, { createDefaultOrg: false });
  const service = composeService({ config, db: storage.db, cipher: storage.cipher, parts: { log } });
  const concurrency = Math.max(1, config.KB_WORKERS);
  const pool = service.startWorkers({ concurrency });
  console.log(
    `kb: worker ${pool.workerId} running ${concurrency} job loop${concurrency === 1 ? '' : 's'} (storage: ${config.storage})`,
  );

  let closing = false;
  const onSignal = (signal: string) => {
    // A second signal changes nothing: the jobs in hand are being finished or handed back and the
    // database closed; only SIGKILL stops at once (another worker then takes the jobs back).
    if (closing) {
      log.info({ signal }, 'already shutting down');
      return;
    }
    closing = true;
    log.info({ signal }, 'shutting down');
    void (async () => {
      await service.close();
      await storage.db.close();
    })()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  // `on`, not `once`: without a listener a second SIGINT (Ctrl-C twice) would kill the process mid-stop.
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
