import { ConfigError, loadConfig, loadDotEnv } from './config.ts';
import { DataDirInUseError } from './db/data-dir-lock.ts';
import { MissingExtensionError } from './db/database.ts';
import { startServer } from './server.ts';

/** `npm start`: API and workers in one process on the configured storage. */
async function main(): Promise<void> {
  await loadDotEnv();
  try {
    const config = loadConfig();
    await startServer(config, { workers: true });
  } catch (err) {
    if (
      err instanceof ConfigError ||
      err instanceof MissingExtensionError ||
      err instanceof DataDirInUseError
    ) {
      console.error(`kb: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

await main();
