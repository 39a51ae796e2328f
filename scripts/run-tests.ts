/**
 * The test suite's driver (`npm test` runs lint and type-check, then this):
 * 1. fetch the fixtures (embedding model, native Postgres) into .cache/ when missing;
 * 2. start one native Postgres with pgvector for the whole run (each test makes its own database);
 * 3. run every test file with node's test runner; 4. stop the server, exit with the runner's status.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { startNativePostgres } from '../test/support/native-postgres.ts';

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return findTests(p);
    return name.endsWith('.test.ts') ? [p] : [];
  });
}

for (const script of ['scripts/fixtures/model.sh', 'scripts/fixtures/pgserver.sh']) {
  if (!existsSync(script)) continue;
  const r = spawnSync('bash', [script], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) {
    console.error(`run-tests: ${script} failed (exit ${r.status})`);
    process.exit(1);
  }
}

const args = process.argv.slice(2).filter((a) => a !== '--');
const files = args.length > 0 ? args : findTests('test').sort();
const pg = await startNativePostgres();
const child = spawn(
  process.execPath,
  ['--test', '--test-reporter=spec', '--test-concurrency=2', '--test-timeout=300000', ...files],
  { stdio: 'inherit', env: { ...process.env, KB_TEST_DATABASE_URL: pg.url } },
);
const code: number = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await pg.stop();
process.exit(code);
