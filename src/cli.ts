import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, loadDotEnv } from './config.ts';
import { MissingExtensionError } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { openDatabase } from './db/open.ts';
import {
  createApiKey,
  createOrganization,
  findOrganization,
  listApiKeys,
  revokeApiKey,
} from './db/repositories/organizations.ts';
import { createEmbedder } from './embedding/index.ts';
import { embedderConfigFrom } from './embedding/from-config.ts';
import { Indexer } from './ingest/indexer.ts';
import { runWorkerProcess } from './worker-process.ts';
import { resetForModel } from './search/vector-index.ts';
import { startServer } from './server.ts';

const USAGE = `usage: kb <command>

  serve                  run the API and workers (same as npm start)
  worker                 run job workers only (KB_WORKERS loops; scale out in server mode)
  migrate                apply database migrations and exit
  org create <name>      create an organization; prints its id
  key create <org>       create an API key for an organization (id or name); prints the key on the last line
  key list <org>         list an organization's keys (ids, dates; never the keys)
  key revoke <key id>    revoke a key
  reembed                re-embed every item with the configured model (after changing models), with progress

Settings come from the environment (and .env): DATABASE_URL, KB_DATA_DIR, PORT, HOST, ... (see README).`;

class UsageError extends Error {}

async function withDb<T>(fn: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}

async function run(argv: string[]): Promise<void> {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: {} });
  const [command, sub, arg] = positionals;
  switch (command) {
    case 'serve':
      await startServer(loadConfig(), { workers: true });
      return;
    case 'worker':
      await runWorkerProcess(loadConfig());
      return;
    case 'migrate': {
      const config = loadConfig();
      const db = await openDatabase(config);
      try {
        const applied = await migrate(db);
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      } finally {
        await db.close();
      }
      return;
    }
    case 'org':
      if (sub !== 'create' || !arg) throw new UsageError('usage: kb org create <name>');
      await withDb(async (db) => {
        if (await findOrganization(db, arg)) throw new UsageError(`an organization named "${arg}" exists already`);
        const org = await createOrganization(db, arg);
        console.log(org.id);
      });
      return;
    case 'key':
      if (!arg) throw new UsageError('usage: kb key create|list <org> | kb key revoke <key id>');
      await withDb(async (db) => {
        if (sub === 'revoke') {
          if (!(await revokeApiKey(db, arg))) throw new UsageError(`no live key with id ${arg}`);
          console.log(`revoked ${arg}`);
          return;
        }
        const org = await findOrganization(db, arg);
        if (!org) throw new UsageError(`no organization "${arg}"`);
        if (sub === 'create') {
          const key = await createApiKey(db, org.id);
          console.log(`key id ${key.id} for organization ${org.name} (${org.id}); shown once:`);
          console.log(key.apiKey);
        } else if (sub === 'list') {
          for (const k of await listApiKeys(db, org.id)) {
            console.log(`${k.id}\tcreated ${k.created_at}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`);
          }
        } else throw new UsageError('usage: kb key create|list <org> | kb key revoke <key id>');
      });
      return;
    case 'reembed':
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
      return;
    default:
      throw new UsageError(USAGE);
  }
}

await loadDotEnv();
try {
  await run(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError || err instanceof ConfigError || err instanceof MissingExtensionError) {
    console.error(`kb: ${err.message}`);
    process.exit(2);
  }
  throw err;
}
