import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CLI = path.resolve('src/kb.ts');

describe('kb command line', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'kb-cli-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const kb = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [CLI, ...args], {
      env: { ...process.env, KB_DATA_DIR: dataDir, DATABASE_URL: '' },
    });
    return stdout.trim().split('\n');
  };

  test('creates an organization and keys, lists them without secrets, and revokes', async () => {
    const [orgId] = await kb('org', 'create', 'acme');
    assert.match(orgId!, /^[0-9a-f-]{36}$/);
    const created = await kb('key', 'create', 'acme');
    const key = created.at(-1)!;
    assert.match(key, /^kb_[0-9a-f]{16}_[A-Za-z0-9_-]{32}$/);
    const keyId = key.split('_')[1]!;
    const listed = await kb('key', 'list', orgId!);
    assert.equal(listed.length, 1);
    assert.match(listed[0]!, new RegExp(`^${keyId}\\s.*active$`));
    assert.ok(!listed.join('\n').includes(key.slice('kb_'.length + 17)));
    await kb('key', 'revoke', keyId);
    assert.match((await kb('key', 'list', 'acme'))[0]!, /revoked/);
    await assert.rejects(kb('org', 'create', 'acme'), /exists already/);
    await assert.rejects(kb('frobnicate'), /usage: kb/);
  });

  test('the help lists the local commands and the ones over the API, each group under its heading', async () => {
    const help = (await kb('--help')).join('\n');
    assert.match(help, /^Service \(on this machine[^\n]*\n(?:\s+\S.*\n)*?\s+reembed-local\s/m);
    assert.match(help, /^Knowledge base \(over the API[^\n]*\n(?:\s+\S.*\n)*?\s+reembed \[options\]\s/m);
    for (const command of [
      'serve',
      'worker',
      'migrate',
      'org',
      'key',
      'sync',
      'crawl',
      'search',
      'items',
      'stats',
      'reembed',
      'reembed-local',
      'export-to-postgres',
      'mcp',
    ]) {
      assert.match(help, new RegExp(`^  ${command}\\b`, 'm'), command);
    }
    await assert.rejects(kb('key', 'create'), /missing required argument 'org'/);
  });
});
