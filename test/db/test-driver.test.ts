/**
 * The test driver (scripts/run-tests.ts) always ends and says what failed: a file that never ends is
 * killed on its wall-clock limit and named, a file whose process dies counts as failed, each file's output
 * is printed whole, and the last line carries the totals CI reads. The driver runs for real here, on the
 * small files in test/db/fixtures/ (their names lack `.test.ts`, so the suite itself never runs them).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nativePostgresAvailable } from '../support/native-postgres.ts';
import { runNode } from '../support/run-node.ts';

// The driver starts a native Postgres before anything else; without the fixture it cannot run.
const available = process.env['CI'] ? true : await nativePostgresAvailable();
const skip = available ? false : 'native postgres fixture unavailable here';

const FIXTURES = {
  passes: 'test/db/fixtures/driver-passes.ts',
  neverEnds: 'test/db/fixtures/driver-never-ends.ts',
  crashes: 'test/db/fixtures/driver-crashes.ts',
};
const TOTALS = /^(\d+) passed, (\d+) failed, (\d+) skipped$/;

/** Runs the driver on `files` and collects what it printed. */
function runDriver(files: string[], env: Record<string, string>) {
  // The driver's own limits should end it; the guard only keeps a broken driver from hanging this file.
  return runNode(['scripts/run-tests.ts', ...files], { env, killAfterMs: 90_000, killSignal: 'SIGTERM' });
}

/** The lines of one file's block: from its `━━ <file>` header to its status line. */
function block(out: string, file: string): string[] {
  const lines = out.split('\n');
  const start = lines.indexOf(`━━ ${file}`);
  assert.ok(start >= 0, `no output block for ${file}:\n${out}`);
  const end = lines.findIndex((l, i) => i > start && /^[✔✖] /.test(l) && l.includes(`${file}: `));
  assert.ok(end > start, `no status line for ${file}:\n${out}`);
  return lines.slice(start, end + 1);
}

// The two runs are independent; side by side they take the time of the longer one.
describe('the test driver', { concurrency: true, skip }, () => {
  test('a file that never ends is killed on its limit and named; a crashed file fails; totals come last', async (t) => {
    const { code, out, ms } = await runDriver([FIXTURES.passes, FIXTURES.neverEnds, FIXTURES.crashes], {
      KB_TEST_FILE_TIMEOUT_S: '6',
    });
    t.diagnostic(`driver ended after ${Math.round(ms)} ms with status ${code}`);
    assert.equal(code, 1, `a failed run exits non-zero:\n${out}`);
    assert.ok(ms < 60_000, 'the limit, not the hanging file, decides when the run ends');

    const lines = out.trimEnd().split('\n');
    const totals = TOTALS.exec(lines.at(-1)!);
    assert.ok(totals, `the last line is the totals line, got ${JSON.stringify(lines.at(-1))}`);
    const [passed, failed, skipped] = totals.slice(1).map(Number);
    // driver-passes: 1 passed, 1 skipped; driver-never-ends: 1 passed, then killed (>= 1 failed);
    // driver-crashes: its process dies (>= 1 failed; its first pass may die with it, unreported).
    assert.equal(skipped, 1);
    assert.ok(passed! >= 2 && passed! <= 3, `passed ${passed}`);
    assert.ok(failed! >= 2, `failed ${failed}`);

    const failedFiles = lines.slice(lines.indexOf('failed files:'));
    assert.ok(
      failedFiles.some((l) => l.includes(FIXTURES.neverEnds) && l.includes('timed out after 6.0 s')),
      `the hanging file is named as timed out:\n${out}`,
    );
    assert.ok(
      failedFiles.some((l) => l.includes(FIXTURES.crashes)),
      `the crashed file is named:\n${out}`,
    );
    assert.ok(!failedFiles.some((l) => l.includes(FIXTURES.passes)), 'the passing file is not named');

    // Each file's output is one uninterrupted block holding only its own tests.
    const passesBlock = block(out, FIXTURES.passes).join('\n');
    assert.match(passesBlock, /✔ passes/);
    assert.doesNotMatch(passesBlock, /before the hang|before the crash/);
    const hangBlock = block(out, FIXTURES.neverEnds).join('\n');
    assert.match(hangBlock, /✔ passes before the hang/);
    assert.doesNotMatch(hangBlock, /is skipped|before the crash/);
  });

  test('a run where everything passes exits 0 and says so on its last line', async () => {
    const { code, out } = await runDriver([FIXTURES.passes], {});
    assert.equal(code, 0, out);
    assert.equal(out.trimEnd().split('\n').at(-1), '1 passed, 0 failed, 1 skipped');
  });
});
