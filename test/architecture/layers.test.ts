/**
 * The layer rules of `.dependency-cruiser.cjs` bite: a small tree that breaks each rule is reported rule
 * by rule, so a rule with a typo in its path cannot pass silently. (That src/ keeps them is checked by
 * `npm run deps`, part of `npm test`.)
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cruise, type IRuleSetType } from 'dependency-cruiser';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ruleSet = createRequire(import.meta.url)(path.join(ROOT, '.dependency-cruiser.cjs')) as IRuleSetType & {
  options: object;
};

async function violations(baseDir: string): Promise<string[]> {
  // The rule file's own options, less its tsconfig path (the scratch tree has none).
  const { tsConfig: _tsConfig, ...options } = ruleSet.options as { tsConfig?: unknown };
  const result = await cruise(['src'], { baseDir, ruleSet, validate: true, ...options });
  const output = result.output as {
    summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
  };
  return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
}

const scratch = mkdtempSync(path.join(tmpdir(), 'kb-layers-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A small src/ tree with one breaking import per rule, and imports the rules must allow beside them. */
const files: Record<string, string> = {
  'src/config.ts': 'export const x = 1;\n',
  'src/lib/a.ts': "import { y } from '../net/b.ts';\nexport const x = y;\n",
  'src/net/b.ts': 'export const y = 1;\n',
  'src/db/repo.ts': "import { k } from '../jobs/kind.ts';\nexport const r = k;\n",
  'src/jobs/kind.ts': "import { h } from '../http/route.ts';\nexport const k = h;\n",
  'src/http/route.ts': 'export const h = 1;\n',
  'src/connectors/c.ts': "import { r } from '../db/repo.ts';\nexport const c = r;\n",
  'src/search/s.ts': "import { i } from '../ingest/i.ts';\nexport const s = i;\n",
  'src/ingest/i.ts': "import { x } from '../config.ts';\nexport const i = x;\n",
  'src/db/m.ts': "import { y } from '../net/b.ts';\nexport const m = y;\n",
  'src/embedding/e.ts': "import { m } from '../db/m.ts';\nexport const e = m;\n",
  'src/connectors/c2.ts': 'export const c2 = 1;\n',
  'src/net/n.ts': "import { c2 } from '../connectors/c2.ts';\nexport const n = c2;\n",
  'src/crawler/q2.ts': 'export const q2 = 1;\n',
  'src/ingest/j.ts': "import { q2 } from '../crawler/q2.ts';\nexport const j = q2;\n",
  'src/crawler/p.ts': "import { q } from './q.ts';\nexport const p = q;\n",
  'src/crawler/q.ts': "import { p } from './p.ts';\nexport const q = p;\n",
  'src/lib/plain.ts': 'export const plain = 1;\n',
  'src/client/k.ts': "import { plain } from '../lib/plain.ts';\nexport const k = plain;\n",
  'src/mcp/tool.ts': "import { m } from '../db/m.ts';\nexport const tool = m;\n",
  'src/jobs/calls-client.ts': "import { k } from '../client/k.ts';\nexport const cc = k;\n",
};
// The surfaces and the entry files: what each may import of the others.
const surfaces: Record<string, string> = {
  'src/cli/remote.ts': "import { u } from '../mcp/url.ts';\nexport const remote = u;\n",
  'src/mcp/url.ts': 'export const u = 1;\n',
  'src/mcp/server.ts': 'export const mcpServer = 1;\n',
  'src/mcp/stdio.ts': "import { mcpServer } from './server.ts';\nexport const stdio = mcpServer;\n",
  'src/console/page.ts': "import { remote } from '../cli/remote.ts';\nexport const page = remote;\n",
  'src/http/routes/mcp.ts':
    "import { mcpServer } from '../../mcp/server.ts';\nexport const route = mcpServer;\n",
  'src/http/routes/stdio.ts': "import { stdio } from '../../mcp/stdio.ts';\nexport const bad = stdio;\n",
  'src/kb.ts':
    "import { remote } from './cli/remote.ts';\nimport { stdio } from './mcp/stdio.ts';\n" +
    "import { route } from './http/routes/mcp.ts';\nexport const cli = [remote, stdio, route];\n",
  'src/server.ts':
    "import { route } from './http/routes/mcp.ts';\nimport { mcpServer } from './mcp/server.ts';\n" +
    'export const server = [route, mcpServer];\n',
  'src/export-to-postgres.ts': "import { remote } from './cli/remote.ts';\nexport const exp = remote;\n",
};

let found: string[] = [];
before(async () => {
  for (const [file, text] of Object.entries({ ...files, ...surfaces })) {
    mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
    writeFileSync(path.join(scratch, file), text);
  }
  found = await violations(scratch);
});

test('each rule reports the import that breaks it', () => {
  const rules = new Set(found.map((v) => v.split(':')[0]));
  for (const rule of [
    ...SURFACE_RULES,
    'client-stands-alone',
    'surfaces-use-the-public-api',
    'surfaces-only-from-entry-and-http',
    'lib-imports-nothing-of-ours',
    'net-uses-lib-only',
    'db-uses-lib',
    'embedding-uses-net-and-lib',
    'ingest-below-crawler',
    'jobs-only-from-http-and-entry',
    'http-only-from-entry',
    'connectors-stay-pure',
    'search-never-imports-ingest',
    'entry-is-the-top',
    'no-circular',
  ]) {
    assert.ok(rules.has(rule), `${rule} was not reported; got:\n${found.join('\n')}`);
  }
});

const SURFACE_RULES = new Set([
  'surfaces-stay-apart',
  'http-hosts-only-the-mcp-server',
  'cli-entry-starts-the-cli',
  'server-entry-starts-http',
  'other-entries-start-no-surface',
]);

test('surface rules: imports between surfaces are reported; the mounts of the entries and http are not', () => {
  // Allowed beside them: src/kb.ts starting the CLI and `kb mcp` (mcp/stdio.ts), server.ts building http,
  // http/routes/mcp.ts mounting the MCP server, and a surface importing its own folder.
  assert.deepEqual(
    found.filter((v) => SURFACE_RULES.has(v.split(':')[0] ?? '')),
    [
      'cli-entry-starts-the-cli: src/kb.ts -> src/http/routes/mcp.ts',
      'http-hosts-only-the-mcp-server: src/http/routes/stdio.ts -> src/mcp/stdio.ts',
      'other-entries-start-no-surface: src/export-to-postgres.ts -> src/cli/remote.ts',
      'server-entry-starts-http: src/server.ts -> src/mcp/server.ts',
      'surfaces-stay-apart: src/cli/remote.ts -> src/mcp/url.ts',
      'surfaces-stay-apart: src/console/page.ts -> src/cli/remote.ts',
    ],
  );
});
