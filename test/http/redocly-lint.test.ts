/**
 * The served /openapi.json passes Redocly's recommended rules (`@redocly/cli lint`, redocly.yaml) with no
 * error, and every warning it still gives is one docs/api.md explains ("For generators"): a new kind of
 * warning fails here until it is fixed or explained there. Runs offline, with Redocly's telemetry off.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../support/harness.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
const REDOCLY = path.join(REPO, 'node_modules/@redocly/cli/bin/cli.js');

/** The warnings docs/api.md explains, each with where it may appear (a JSON pointer's start). */
const EXPLAINED_WARNINGS: Record<string, RegExp> = {
  // The credential fields' one-of rules: `required` in anyOf/not beside the properties they name.
  'no-required-schema-properties-undefined':
    /^#\/paths\/~1api~1connect~1(connection\/post|oauth~1initiate\/post)\/requestBody\//,
  // GET and DELETE /mcp answer only 405 (and 401): a stateless MCP server offers neither.
  'operation-2xx-response': /^#\/paths\/~1mcp\/(get|delete)\/responses$/,
  // The project declares no license.
  'info-license': /^#\/info$/,
};

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: Array<{ pointer: string }>;
}
interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: LintProblem[];
}

let t: TestApp;
let dir: string;
before(async () => {
  t = await startTestApp('pglite');
  dir = await mkdtemp(path.join(tmpdir(), 'kb-redocly-'));
});
after(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Lints the served document in a folder of its own, with the repository's config and ignore file. */
async function lintServedDocument(): Promise<LintReport> {
  const res = await t.call('GET', '/openapi.json', { key: null });
  assert.equal(res.status, 200);
  await writeFile(path.join(dir, 'openapi.json'), JSON.stringify(res.body, null, 2));
  await writeFile(path.join(dir, 'redocly.yaml'), await readFile(path.join(REPO, 'redocly.yaml')));
  // The ignore file names the checked-in copy; here the same entries apply to the served one.
  const ignored = await readFile(path.join(REPO, '.redocly.lint-ignore.yaml'), 'utf8');
  assert.match(ignored, /^src\/client\/openapi\.json:$/m);
  await writeFile(
    path.join(dir, '.redocly.lint-ignore.yaml'),
    ignored.replace(/^src\/client\/openapi\.json:$/m, 'openapi.json:'),
  );
  const run = await promisify(execFile)(
    process.execPath,
    [REDOCLY, 'lint', 'openapi.json', '--format', 'json'],
    {
      cwd: dir,
      // A hang guard, not a timing: the lint takes about a second.
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
      env: {
        ...process.env,
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      },
    },
  ).catch((err: { stdout?: string; stderr?: string }) => {
    // A failed lint exits 1 with its report on stdout; anything else is a failure of the run itself.
    if (err.stdout?.trimStart().startsWith('{')) return { stdout: err.stdout };
    throw new Error(`redocly lint did not run: ${err.stderr ?? String(err)}`);
  });
  return JSON.parse(run.stdout) as LintReport;
}

test("the served OpenAPI document passes Redocly's recommended rules; the warnings left are the explained ones", async () => {
  const report = await lintServedDocument();
  const describe = (p: LintProblem) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`;
  const errors = report.problems.filter((p) => p.severity === 'error');
  assert.deepEqual(errors.map(describe), [], 'no errors');
  assert.equal(report.totals.ignored, 1, 'one ignored error: the seed’s crawl path ends in a slash');
  const unexplained = report.problems.filter((p) => {
    const where = EXPLAINED_WARNINGS[p.ruleId];
    return !where || !p.location.some((l) => where.test(l.pointer));
  });
  assert.deepEqual(unexplained.map(describe), [], 'every warning is one docs/api.md explains');
});
