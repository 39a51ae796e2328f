/**
 * `kb items` (upload, list, get, retitle, tag, delete), `kb search`, `kb stats` and
 * `kb reembed` against a running service with the real model and a background indexer, on two tiny
 * documents. Every answer is compared with what the API itself says.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Indexer } from '../../src/ingest/indexer.ts';
import { withSearch } from '../support/embedding.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { allOutput, jsonLines, kb, keySecret, listen } from './helpers.ts';

describe('kb items, search, stats and reembed', () => {
  let t: TestApp;
  let indexer: Indexer;
  let url: string;
  let key: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'kb-cli-items-'));
  const run = (args: string[], stdin?: string) =>
    kb(args, { url, key, ...(stdin === undefined ? {} : { stdin }) });
  const apiItems = async () => {
    const res = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { limit: 100 } });
    assert.equal(res.status, 200);
    return res.body.items as Array<{ id: string; title: string; tags: string[]; indexing_status: string }>;
  };
  let walrus: string;
  let penguin: string;

  before(async () => {
    t = await startTestApp('pglite');
    ({ indexer } = await withSearch(t));
    // In the background, as in the service: `--wait` follows it through /stats.
    indexer.start();
    url = await listen(t);
    key = t.orgA.key;
    writeFileSync(
      path.join(dir, 'walrus.md'),
      '# Walrus care\n\nWalruses need cold water and a lot of clams every single day.\n',
    );
    writeFileSync(
      path.join(dir, 'penguins.txt'),
      'Emperor penguins huddle together through the long polar winter.\n',
    );
  });
  after(async () => {
    await indexer?.stop();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('upload --wait: both files become items, searchable when it returns', async () => {
    const res = await run([
      'items',
      'upload',
      path.join(dir, 'walrus.md'),
      path.join(dir, 'penguins.txt'),
      '--tag',
      'zoo',
      '--wait',
      '--json',
      '--interval',
      '0.2',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const result = jsonLines(res.stdout).at(-1)! as {
      uploaded: Array<{ id: string; title: string }>;
      failed: unknown[];
    };
    assert.deepEqual(
      result.uploaded.map((i) => i.title),
      ['Walrus care', 'penguins'],
      'titles: the # heading, else the file name',
    );
    assert.deepEqual(result.failed, []);
    [walrus, penguin] = result.uploaded.map((i) => i.id) as [string, string];
    const items = await apiItems();
    assert.deepEqual(
      items.map((i) => i.indexing_status),
      ['indexed', 'indexed'],
      'searchable when --wait returns',
    );
    assert.ok(items.every((i) => i.tags.includes('zoo')));
  });

  test('upload from stdin needs a title; with one it is an item', async () => {
    const refused = await run(['items', 'upload', '-'], 'no title');
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^kb: give --title/);
    const res = await run(['items', 'upload', '-', '--title', 'Scratch note'], 'A note from stdin.');
    assert.equal(res.code, 0, res.stderr);
    const [, id] = /^uploaded (\S+) {2}Scratch note$/m.exec(res.stdout) ?? [];
    assert.ok(id, res.stdout);
    const del = await run(['items', 'delete', id]);
    assert.equal(del.code, 0, del.stderr);
  });

  test('search: nearest first, for people and as JSON; filters and modes reach the API', async () => {
    const human = await run(['search', 'animals', 'in', 'cold', 'water', 'eating', 'clams']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout.split('\n')[0]!, /^1\. 0\.\d{3} {2}Walrus care {2}upload$/);
    assert.match(human.stdout, /^ {3}Walruses need cold water/m);
    const json = await run([
      'search',
      'penguins in winter',
      '--mode',
      'hybrid',
      '--limit',
      '1',
      '--tag',
      'zoo',
      '--json',
    ]);
    assert.equal(json.code, 0, json.stderr);
    const { result } = JSON.parse(json.stdout) as { result: Array<{ item_id: string; embedding?: string }> };
    assert.deepEqual(
      result.map((r) => r.item_id),
      [penguin],
    );
    assert.equal(result[0]!.embedding, undefined, 'no vectors in the CLI’s answers');
    const none = await run(['search', 'penguins', '--tag', 'nowhere', '--json']);
    assert.deepEqual(JSON.parse(none.stdout).result, []);
    const badMode = await run(['search', 'x', '--mode', 'fuzzy']);
    assert.equal(badMode.code, 2);
    assert.match(badMode.stderr, /^kb: --mode must be one of semantic, hybrid, keyword/);
  });

  test('list and get show what the API has', async () => {
    const listed = await run(['items', 'list', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout).items, await apiItems());
    const table = await run(['items', 'list', '--limit', '1']);
    assert.match(table.stdout, /^ID +STATUS +SOURCE +UPDATED +TITLE$/m);
    assert.match(table.stdout, /^page 1 of 2, 2 items; --page 2 for more$/m);
    const got = await run(['items', 'get', walrus]);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /^Walrus care\nid {7}[\w-]+\n/);
    assert.match(got.stdout, /Walruses need cold water and a lot of clams every single day\./);
    const missing = await run(['items', 'get', 'no-such-item']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /\(404 not_found\)\n$/);
  });

  test('retitle and tag change the item; an unknown id fails', async () => {
    const retitled = await run(['items', 'retitle', walrus, 'Walrus', 'care', 'guide']);
    assert.equal(retitled.code, 0, retitled.stderr);
    const tagged = await run(['items', 'tag', walrus, '--add', 'marine', '--remove', 'zoo']);
    assert.equal(tagged.code, 0, tagged.stderr);
    const item = (await apiItems()).find((i) => i.id === walrus)!;
    assert.equal(item.title, 'Walrus care guide');
    assert.deepEqual(item.tags, ['marine']);
    const set = await run(['items', 'tag', walrus, 'a', 'b']);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual((await apiItems()).find((i) => i.id === walrus)!.tags, ['a', 'b']);
    const unknown = await run(['items', 'retitle', 'no-such-item', 'x']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^kb: no item with id no-such-item/);
  });

  test('stats: as the API reports them', async () => {
    const res = await run(['stats', '--json']);
    assert.equal(res.code, 0, res.stderr);
    const api = (await t.call('GET', '/api/connect/knowledgebase-items/stats')).body;
    const cli = JSON.parse(res.stdout);
    assert.deepEqual(
      [cli.total, cli.byIndexingStatus, cli.bySourceType, cli.chunks],
      [api.total, api.byIndexingStatus, api.bySourceType, api.chunks],
    );
    const human = await run(['stats']);
    assert.match(human.stdout, /^items {8}2 \(2 searchable, 0 pending, 0 failed\)$/m);
  });

  test('reembed: every item embedded again, followed until done', async () => {
    const before = await t.db.query<{ id: string }>('SELECT id FROM chunks WHERE organization_id = $1', [
      t.orgA.id,
    ]);
    const res = await run(['reembed', '--json', '--interval', '0.2']);
    assert.equal(res.code, 0, res.stderr);
    const result = jsonLines(res.stdout).at(-1)!;
    assert.deepEqual(
      [result['type'], result['marked'], result['reembedded'], result['failed']],
      ['result', 2, 2, 0],
    );
    const items = await apiItems();
    assert.deepEqual(
      items.map((i) => i.indexing_status),
      ['indexed', 'indexed'],
    );
    const afterChunks = await t.db.query<{ id: string }>('SELECT id FROM chunks WHERE organization_id = $1', [
      t.orgA.id,
    ]);
    assert.equal(afterChunks.length, before.length);
    assert.ok(
      afterChunks.every((c) => !before.some((b) => b.id === c.id)),
      'every chunk was written again',
    );
    // Another organization's re-embedding marks none of these.
    const other = await kb(['reembed', '--json', '--no-wait'], { url, key: t.orgB.key });
    assert.deepEqual(JSON.parse(other.stdout), { success: true, marked: 0, pending: 0 });
  });

  test('delete: gone from the API; deleting it again fails', async () => {
    const res = await run(['items', 'delete', penguin]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'deleted 1 item\n');
    assert.ok(!(await apiItems()).some((i) => i.id === penguin));
    const again = await run(['items', 'delete', penguin]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^kb: 1 of 1 ids were not found in this organization\n$/);
  });

  test('the key appears in no output', () => {
    const secret = keySecret(key);
    assert.ok(allOutput.length >= 30);
    for (const out of allOutput) assert.ok(!out.includes(secret));
  });
});
