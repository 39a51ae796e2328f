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
import { after, test } from 'node:test';
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

test('each rule reports the import that breaks it', async () => {
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
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
    writeFileSync(path.join(scratch, file), text);
  }
  const found = await violations(scratch);
  const rules = new Set(found.map((v) => v.split(':')[0]));
  for (const rule of [
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
