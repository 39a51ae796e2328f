import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeFailure, fuzzRouteFilter, fuzzSeed, runFuzz, statsRows } from '../support/fuzz.ts';

/**
 * The schema-driven fuzzer (test/support/fuzz.ts) over every route: a seeded sample of KB_FUZZ_RUNS
 * requests per route (default 200; the same requests on every run unless KB_FUZZ_SEED says otherwise),
 * through app.inject. No 5xx, every error in the API's shape, and no rejected request changes the
 * database. KB_FUZZ_ROUTES='POST /api/consume/search,...' narrows it to some routes (to reproduce a
 * failure).
 *
 * The sample is small so the suite stays quick and passes on a machine whose cores are busy with other
 * work; volume (20,000 requests per route, both storage modes) is `bench/fuzz.ts`'s job.
 *
 * One storage mode is enough here: what is fuzzed is the HTTP layer (validation, error handling, the
 * text and body guards), which is the same code on both, and the statements behind valid requests run
 * in both modes in their own tests. `bench/fuzz.ts` fuzzes both modes with 20,000 requests per route.
 */
const runs = Number(process.env['KB_FUZZ_RUNS'] ?? 200);

const seed = fuzzSeed();

test(`fuzz every route with ${runs} requests (pglite, seed ${seed})`, async () => {
  const result = await runFuzz({ mode: 'pglite', runs, seed, routes: fuzzRouteFilter() });
  const total = result.stats.reduce((n, s) => n + s.requests, 0);
  const t = result.timing;
  console.log(
    `${total} requests over ${result.stats.length} routes (seed ${seed}): app ${Math.round(t.injectMs)} ms, ` +
      `fingerprints ${Math.round(t.fingerprintMs)} ms, generation ${Math.round(t.generateMs)} ms, fixtures ${Math.round(t.fixturesMs)} ms`,
  );
  for (const r of statsRows(result.stats)) console.log(`  ${Object.values(r).join(' | ')}`);
  for (const [route, statuses] of result.undocumented) {
    console.log(
      `  note: ${route} answered ${[...statuses].join(', ')} to valid requests; its OpenAPI entry does not list it`,
    );
  }
  const failures = result.failures.length + result.moreFailures;
  assert.equal(
    failures,
    0,
    `${failures} fuzz failures (seed ${seed}):\n\n${result.failures.map(describeFailure).join('\n\n')}`,
  );
  for (const s of result.stats) assert.equal(s.requests, runs, s.route);
});
