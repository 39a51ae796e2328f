/**
 * The API fuzzer at benchmark scale (`node bench/fuzz.ts`): the schema-driven fuzzer of
 * test/support/fuzz.ts (the one test/ops/fuzz.test.ts runs with 2,000 requests per route on PGlite) with
 * 20,000 requests per route, in both storage modes, through app.inject. Prints, per mode, a table of
 * route, requests, answers by class (4xx by status), 5xx and time, then every failure (seed, route and
 * the exact request); writes bench/results/fuzz.json. Exits non-zero when anything failed.
 *
 * Options (environment): BENCH_FUZZ_RUNS (requests per route, default 20000), BENCH_STORAGE (`pglite`,
 * `postgres`, or both: the default), KB_FUZZ_SEED (default the fixed seed of the test), KB_FUZZ_ROUTES
 * (`METHOD path`, comma-separated: only those). Embedded mode runs PGlite on a data directory on disk, as
 * the service does; server mode a native Postgres (the test fixture, started here).
 */
import os from 'node:os';
import type { StorageMode } from '../test/support/harness.ts';
import { describeFailure, fuzzRouteFilter, fuzzSeed, runFuzz, statsRows } from '../test/support/fuzz.ts';
import { printTable, writeResult } from './lib.ts';

const runs = Number(process.env['BENCH_FUZZ_RUNS'] ?? 20_000);
if (!Number.isSafeInteger(runs) || runs < 1)
  throw new Error(`BENCH_FUZZ_RUNS must be a positive integer, not ${process.env['BENCH_FUZZ_RUNS']}`);
const storage = process.env['BENCH_STORAGE'];
const modes: StorageMode[] =
  storage === undefined || storage === '' || storage === 'both'
    ? ['pglite', 'postgres']
    : storage.split(',').map((m) => {
        if (m !== 'pglite' && m !== 'postgres')
          throw new Error(`BENCH_STORAGE: pglite, postgres or both, not ${m}`);
        return m;
      });
const seed = fuzzSeed();
const routes = fuzzRouteFilter();

console.log(
  `API fuzzer: ${runs} requests per route, seed ${seed}, ${modes.join(' and ')}; ` +
    `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`,
);
const results: unknown[] = [];
let failed = 0;
for (const mode of modes) {
  const started = performance.now();
  const result = await runFuzz({
    mode,
    runs,
    seed,
    routes,
    pglitePersistent: true,
    maxFailures: 50,
    onRoute: (s) => console.log(`  ${mode}: ${s.route} ${s.requests} requests in ${Math.round(s.ms)} ms`),
  });
  const wallS = (performance.now() - started) / 1000;
  const rows = statsRows(result.stats);
  const total = result.stats.reduce((n, s) => n + s.requests, 0);
  const t = result.timing;
  printTable(
    `${mode}: ${total} requests over ${rows.length} routes in ${wallS.toFixed(0)} s (the app ${(t.injectMs / 1000).toFixed(0)} s, ` +
      `fingerprints ${(t.fingerprintMs / 1000).toFixed(0)} s, generation ${(t.generateMs / 1000).toFixed(0)} s, fixtures ${(t.fixturesMs / 1000).toFixed(0)} s)`,
    rows,
  );
  for (const [route, statuses] of result.undocumented) {
    console.log(
      `note: ${route} answered ${[...statuses].join(', ')} to valid requests; its OpenAPI entry does not list it`,
    );
  }
  const count = result.failures.length + result.moreFailures;
  failed += count;
  console.log(`${mode}: ${count} failure${count === 1 ? '' : 's'}`);
  for (const f of result.failures) console.log(`\n${describeFailure(f)}`);
  if (result.moreFailures) console.log(`\n... and ${result.moreFailures} more`);
  results.push({
    mode,
    runs,
    seed,
    wallS,
    timing: t,
    rows,
    failures: result.failures,
    moreFailures: result.moreFailures,
  });
}
writeResult('fuzz', results);
process.exitCode = failed ? 1 : 0;
