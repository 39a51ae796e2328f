/**
 * The `kb` command (bin/kb.js, `npm run kb`, `./dev.sh kb`). Two kinds of commands:
 *
 * - on this machine, with the service's settings (environment and .env): `serve`, `worker`, `migrate`,
 *   `org`, `key`, `reembed-local`. They open the database themselves, so they load the service's modules,
 *   and only when run (a remote command starts without them).
 * - against a running service, over its public API through the typed client (src/cli/, one file per
 *   group): `sync`, `crawl`, `search`, `items`, `stats`, `reembed`. --url or KB_URL says where it is,
 *   KB_API_KEY is the key (never a flag: it would land in the shell's history and in `ps`).
 *
 * Parsing is commander's. Failures print one line, `kb: <why>`, on stderr (an API refusal with the API's own
 * message), and exit with the codes of src/cli/errors.ts; no stack trace unless KB_DEBUG is set.
 */
import { existsSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import * as crawlCommands from './cli/crawl.ts';
import { describeFailure, EXIT, UsageError } from './cli/errors.ts';
import * as itemsCommands from './cli/items.ts';
import * as searchCommands from './cli/search.ts';
import * as statsCommands from './cli/stats.ts';
import * as syncCommands from './cli/sync.ts';
import * as webhooksCommands from './cli/webhooks.ts';

const AFTER_HELP = `
Remote commands reach a running service: --url or KB_URL (default http://127.0.0.1:$PORT, port 8080),
with the API key in KB_API_KEY. --json prints JSON only (JSON lines while following a job).
Local commands read the service's settings from the environment and .env (docs/configuration.md).
Exit codes: 0 done, 1 failed (an API refusal, a job failed or cancelled), 2 usage, 3 a sync ended
incomplete, 130 interrupted while following (the job goes on).`;

/**
 * Runs a local command, turning the service's own start-up refusals into one-line usage errors. In
 * embedded mode each of them opens the data directory itself, which one process at a time may do: beside a
 * running service they are refused (DataDirInUseError, src/db/data-dir-lock.ts) before anything is read or
 * written, and the refusal says to stop the service or to use its API.
 */
function local<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args) => {
    try {
      await fn(...args);
    } catch (err) {
      const [{ ConfigError }, { MissingExtensionError }, { DataDirInUseError }] = await Promise.all([
        import('./config.ts'),
        import('./db/database.ts'),
        import('./db/data-dir-lock.ts'),
      ]);
      if (
        err instanceof ConfigError ||
        err instanceof MissingExtensionError ||
        err instanceof DataDirInUseError
      )
        throw new UsageError(err.message);
      throw err;
    }
  };
}

/** Opens the configured database (migrated), runs `fn`, closes it. */
async function withDb<T>(
  fn: (db: Awaited<ReturnType<typeof import('./db/open.ts').openDatabase>>) => Promise<T>,
): Promise<T> {
  const [{ loadConfig }, { openDatabase }, { migrate }] = await Promise.all([
    import('./config.ts'),
    import('./db/open.ts'),
    import('./db/migrate.ts'),
  ]);
  const db = await openDatabase(loadConfig());
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}

const repositories = () => import('./db/repositories/organizations.ts');

/** Registers the local commands, in the order the help lists them. */
function registerLocalCommands(program: Command): void {
  program.commandsGroup('Service (on this machine, with its settings):');
  registerServiceCommands(program);
  registerOrgCommands(program);
  registerKeyCommands(program);
  registerExportToPostgres(program);
  registerReembedLocal(program);
}

/** `serve`, `worker`, `migrate`: the service's own processes. */
function registerServiceCommands(program: Command): void {
  program
    .command('serve')
    .description('run the API and workers (same as npm start)')
    .action(
      local(async () => {
        const [{ loadConfig }, { startServer }] = await Promise.all([
          import('./config.ts'),
          import('./server.ts'),
        ]);
        await startServer(loadConfig(), { workers: true });
      }),
    );
  program
    .command('worker')
    .description('run job workers only (KB_WORKERS loops; scale out in server mode)')
    .action(
      local(async () => {
        const [{ loadConfig }, { runWorkerProcess }] = await Promise.all([
          import('./config.ts'),
          import('./worker-process.ts'),
        ]);
        await runWorkerProcess(loadConfig());
      }),
    );
  program
    .command('migrate')
    .description('apply database migrations and exit')
    .action(
      local(async () => {
        const [{ loadConfig }, { openDatabase }, { migrate }] = await Promise.all([
          import('./config.ts'),
          import('./db/open.ts'),
          import('./db/migrate.ts'),
        ]);
        const db = await openDatabase(loadConfig());
        try {
          const applied = await migrate(db);
          console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
        } finally {
          await db.close();
        }
      }),
    );
}

function registerOrgCommands(program: Command): void {
  const org = program.command('org').description('organizations');
  org
    .command('create')
    .description('create an organization; prints its id')
    .argument('<name>')
    .action(
      local(async (name: string) => {
        const { createOrganization, findOrganization } = await repositories();
        await withDb(async (db) => {
          if (await findOrganization(db, name))
            throw new UsageError(`an organization named "${name}" exists already`);
          console.log((await createOrganization(db, name)).id);
        });
      }),
    );
}

function registerKeyCommands(program: Command): void {
  const key = program.command('key').description("an organization's API keys");
  key
    .command('create')
    .description('create an API key for an organization; prints the key alone on the last line (shown once)')
    .argument('<org>', 'organization id or name')
    .action(
      local(async (orgRef: string) => {
        const { createApiKey, findOrganization } = await repositories();
        await withDb(async (db) => {
          const org = await findOrganization(db, orgRef);
          if (!org) throw new UsageError(`no organization "${orgRef}"`);
          const created = await createApiKey(db, org.id);
          console.log(`key id ${created.id} for organization ${org.name} (${org.id}); shown once:`);
          console.log(created.apiKey);
        });
      }),
    );
  key
    .command('list')
    .description("list an organization's keys (ids and dates, never the keys)")
    .argument('<org>', 'organization id or name')
    .action(
      local(async (orgRef: string) => {
        const { findOrganization, listApiKeys } = await repositories();
        await withDb(async (db) => {
          const org = await findOrganization(db, orgRef);
          if (!org) throw new UsageError(`no organization "${orgRef}"`);
          for (const k of await listApiKeys(db, org.id)) {
            console.log(
              `${k.id}\tcreated ${k.created_at}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`,
            );
          }
        });
      }),
    );
  key
    .command('revoke')
    .description('revoke a key')
    .argument('<key id>')
    .action(
      local(async (keyId: string) => {
        const { revokeApiKey } = await repositories();
        await withDb(async (db) => {
          if (!(await revokeApiKey(db, keyId))) throw new UsageError(`no live key with id ${keyId}`);
          console.log(`revoked ${keyId}`);
        });
      }),
    );
}

function registerExportToPostgres(program: Command): void {
  program
    .command('export-to-postgres')
    .description(
      'move the embedded data directory (service stopped) to a server Postgres with pgvector: every table, vectors as they are (src/export-to-postgres.ts)',
    )
    .argument('<DATABASE_URL>', 'the target, an empty database')
    .option('--data-dir <dir>', 'the embedded data directory (default KB_DATA_DIR)')
    .action(local(exportDataDirToPostgres));
}

async function exportDataDirToPostgres(url: string, opts: { dataDir?: string }): Promise<void> {
  const [{ loadConfig }, { exportToPostgres, encryptionKeyAdvice, ExportRefused }] = await Promise.all([
    import('./config.ts'),
    import('./export-to-postgres.ts'),
  ]);
  const config = loadConfig();
  const dataDir = opts.dataDir ?? config.dataDir;
  const report = await exportToPostgres({
    dataDir,
    databaseUrl: url,
    progress: (l) => process.stderr.write(`${l}\n`),
  }).catch((err: unknown) => {
    throw err instanceof ExportRefused ? new UsageError(err.message) : err;
  });
  for (const t of report.tables) console.log(`${t.table}\t${t.source} rows -> ${t.target}`);
  console.log(
    `sequences set: ${report.sequences}; HNSW index ${report.vectorIndex ? 'built' : 'not needed (no model yet)'}`,
  );
  console.log(encryptionKeyAdvice(dataDir, { envKeySet: Boolean(config.KB_ENCRYPTION_KEY) }));
}

// Changing the embedding model is offline work: the service refuses to start on vectors of another
// model, so this runs in its own process against the database (the remote `kb reembed` cannot).
function registerReembedLocal(program: Command): void {
  program
    .command('reembed-local')
    .description(
      "after changing the embedding model: re-embed every organization's items in this process, against the database (service stopped)",
    )
    .action(local(reembedLocal));
}

async function reembedLocal(): Promise<void> {
  const [{ loadConfig }, { createEmbedder }, { embedderConfigFrom }, { Indexer }, { resetForModel }] =
    await Promise.all([
      import('./config.ts'),
      import('./embedding/index.ts'),
      import('./embedding/from-config.ts'),
      import('./ingest/indexer.ts'),
      import('./search/vector-index.ts'),
    ]);
  await withDb(async (db) => {
    const embedder = await createEmbedder(embedderConfigFrom(loadConfig()));
    const total = await resetForModel(db, { id: embedder.modelId, dimensions: embedder.dimensions });
    console.log(`re-embedding ${total} items with ${embedder.modelId}`);
    let done = 0;
    const started = Date.now();
    const indexer = new Indexer(db, embedder, {
      onProgress: (n) => {
        done += n;
        const rate = done / ((Date.now() - started) / 1000);
        process.stdout.write(`\r${done}/${total} items (${rate.toFixed(1)}/s)   `);
      },
    });
    await indexer.drain();
    process.stdout.write('\n');
    await embedder.close();
  });
}

function registerRemoteCommands(program: Command): void {
  program.commandsGroup('Knowledge base (over the API of a running service):');
  syncCommands.register(program);
  crawlCommands.register(program);
  searchCommands.register(program);
  itemsCommands.register(program);
  statsCommands.register(program);
  webhooksCommands.register(program);
  // `kb mcp` (the MCP server on stdio, src/mcp/) is dispatched at the top of main(), before parsing, so that
  // its arguments pass through untouched; it is declared here only to be listed in the help.
  program
    .command('mcp')
    .description('the MCP server on stdio for AI clients, over the API of a running service (kb mcp --help)')
    .helpOption(false)
    .allowUnknownOption();
}

/** The `kb` program with every command registered (exported for the test that its help lists them all). */
export function buildProgram(): Command {
  const program = new Command('kb')
    .description('Knowledge-base connector service: run it, and work with its knowledge base')
    .usage('<command> [options]')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`kb: ${text.replace(/^error: /, '')}`) })
    .showHelpAfterError(
      'usage: kb <command> [options]  (kb --help lists the commands, kb <command> --help their options)',
    )
    .addHelpText('after', AFTER_HELP);
  registerLocalCommands(program);
  registerRemoteCommands(program);
  return program;
}

/** The same as config.ts's loadDotEnv, without loading the service's modules for a remote command. */
async function loadEnvFile(): Promise<void> {
  if (!existsSync('.env')) return;
  (await import('dotenv')).config({ quiet: true });
}

/** Runs `kb` with the given arguments (bin/kb.js; `node src/kb.ts` runs it itself). */
export async function main(argv: string[]): Promise<void> {
  await loadEnvFile();
  try {
    // `kb mcp`: the MCP server on stdio (src/mcp/stdio.ts), which parses its own options.
    if (argv[0] === 'mcp') return (await import('./mcp/stdio.ts')).runMcpStdio(argv.slice(1));
    await buildProgram().parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed the message (or the help).
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    const { message, exitCode } = describeFailure(err);
    process.stderr.write(`kb: ${message}\n`);
    if (process.env['KB_DEBUG'] && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    process.exitCode = exitCode;
  }
}

if (import.meta.main) await main(process.argv.slice(2));
