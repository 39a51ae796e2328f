/**
 * `kb sync <type> --wait` against a running service with a fake source (the test
 * connector in the docs_space slot), and the CLI's failures: a wrong key, no key, an unknown connection,
 * a re-embedding with no model. The key never appears in anything the CLI prints.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect, type SyncApp, startSyncApp } from '../jobs/helpers.ts';
import { withSearch } from '../support/embedding.ts';
import { allOutput, hasStackTrace, jsonLines, kb, keySecret, listen, startKb, waitUntil } from './helpers.ts';

describe('kb sync', () => {
  let s: SyncApp;
  let url: string;
  let key: string;
  const run = (args: string[], o: { key?: string | null } = {}) =>
    kb(args, { url, key: o.key === undefined ? key : o.key });
  const apiJob = async (jobId: number) => {
    const res = await s.t.call('GET', '/api/connect/connection-sync-jobs?type=docs_space&limit=100');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return (res.body.data as Array<{ jobId: number }>).find((j) => j.jobId === jobId) as Record<string, any>;
  };

  before(async () => {
    s = await startSyncApp('pglite');
    url = await listen(s.t);
    key = s.t.orgA.key;
    await connect(s.t);
  });
  after(async () => {
    await s?.close();
  });

  test('--wait --json ends with the job in its final state, its documents as the API reports them', async () => {
    s.source.seed(7);
    const res = await run(['sync', 'docs_space', '--wait', '--job-only', '--json', '--interval', '0.1']);
    assert.equal(res.code, 0, res.stderr);
    const lines = jsonLines(res.stdout);
    const result = lines.at(-1)!;
    assert.equal(result['type'], 'result');
    assert.ok(
      lines.slice(0, -1).every((l) => l['type'] === 'progress'),
      'progress lines before the result',
    );
    const job = result['job'];
    assert.equal(job.status, 'succeeded');
    assert.deepEqual(job.documents, { seen: 7, stored: 7, unchanged: 0, deleted: 0, failed: 0 });
    const reported = await apiJob(job.jobId);
    assert.deepEqual(
      [job.status, job.documents, job.rowsSynced, job.finishedAt],
      [reported['status'], reported['documents'], reported['rowsSynced'], reported['finishedAt']],
      'the CLI reports the job as the API does',
    );
    assert.equal(result['items'].total, 7, "the connection's items, from /stats");
    assert.equal(res.stderr, '', '--json writes nothing else');
  });

  test('off a terminal it prints plain progress lines while the sync runs, then a summary', async () => {
    s.source.seed(3, 'slow');
    // The source holds every page until the CLI has shown the running job: no timing involved.
    const release = s.source.hold();
    let released = false;
    try {
      const p = startKb(['sync', 'docs_space', '--wait', '--job-only', '--interval', '0.1'], { url, key });
      await waitUntil(() => / running: /.test(p.stderr()), 'a progress line of the running job');
      release();
      released = true;
      const res = await p.done;
      assert.equal(res.code, 0, res.stderr);
      const progress = res.stderr.trim().split('\n');
      for (const line of progress) {
        assert.match(
          line,
          /^\d+:\d\d sync docs_space \(job \d+\) (pending|running|succeeded): \d+\/\d+ items searchable · \d+ seen, \d+ stored, \d+ unchanged, \d+ deleted, \d+ failed · \d+ chunks/,
        );
      }
      assert.ok(!(res.stderr + res.stdout).includes('\u001b'), 'no terminal escapes when not on a terminal');
      assert.match(res.stdout, /^sync docs_space \(job \d+\) succeeded in /m);
      assert.match(res.stdout, /^ {2}documents {2}3 seen, 3 stored, 0 unchanged, 0 deleted, 0 failed$/m);
    } finally {
      if (!released) release();
    }
  });

  test('a sync with failed documents ends incomplete (exit 3) and lists them', async () => {
    s.source.put('bad1', 'Broken page');
    s.source.breakDoc('bad1');
    const res = await run(['sync', 'docs_space', '--wait', '--job-only', '--interval', '0.1']);
    assert.equal(res.code, 3, res.stdout + res.stderr);
    assert.match(res.stdout, /^sync docs_space \(job \d+\) incomplete in /m);
    assert.match(res.stdout, /failures {3}bad1 \(docs_space_pages\): document bad1 cannot be exported/);
    s.source.breakDoc('bad1', false);
  });

  test('without --wait it answers the job at once; --wait while it runs follows that job', async () => {
    const release = s.source.hold();
    try {
      s.source.put('x1', 'Another page');
      const queued = await run(['sync', 'docs_space', '--json']);
      assert.equal(queued.code, 0, queued.stderr);
      const { jobId } = JSON.parse(queued.stdout) as { jobId: number };
      const p = startKb(['sync', 'docs_space', '--wait', '--job-only', '--json', '--interval', '0.1'], {
        url,
        key,
      });
      await waitUntil(() => p.stdout().includes('"type":"progress"'), 'the second kb to follow');
      release();
      const res = await p.done;
      assert.equal(res.code, 0, res.stderr);
      assert.equal(jsonLines(res.stdout).at(-1)!['job'].jobId, jobId, 'it followed the running job');
    } finally {
      release();
    }
  });

  test('a wrong key: exit 1, the API’s message on stderr, no stack trace, no key', async () => {
    const wrong = `${key.slice(0, -6)}abcdef`;
    const res = await run(['sync', 'docs_space', '--wait'], { key: wrong });
    assert.equal(res.code, 1);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^kb: .+ \(401 unauthorized\)\n$/);
    const apiMessage = (await s.t.call('GET', '/api/connect/connections', { key: wrong })).body
      .message as string;
    assert.ok(res.stderr.includes(apiMessage), `the API's own message "${apiMessage}": ${res.stderr}`);
    assert.ok(!hasStackTrace(res.stderr), res.stderr);
    assert.ok(!res.stderr.includes(wrong.slice(20)), 'the key is not printed');
  });

  test('no key, an unknown connection, an unreachable service, a bad option: one line each', async () => {
    const noKey = await run(['stats'], { key: null });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /^kb: set KB_API_KEY/);
    const unknown = await run(['sync', 'wiki']);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^kb: No wiki connection exists in this organization\. \(404 not_found\)\n$/,
    );
    const nowhere = await kb(['stats'], { url: 'http://127.0.0.1:9', key });
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.stderr, /^kb: cannot reach the service at http:\/\/127\.0\.0\.1:9 /);
    const badOption = await run(['sync', 'docs_space', '--frobnicate']);
    assert.equal(badOption.code, 2);
    assert.match(badOption.stderr, /^kb: unknown option '--frobnicate'/);
    for (const r of [noKey, unknown, nowhere, badOption]) assert.ok(!hasStackTrace(r.stderr), r.stderr);
  });

  test('kb reembed on a service without a model: the API’s 503 message, exit 1', async () => {
    const res = await run(['reembed']);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /^kb: The embedding model is not loaded.* \(503 unavailable\)\n$/);
  });

  test('the key appears in no output of any run', () => {
    assert.ok(allOutput.length >= 20, 'every run was collected');
    const secret = keySecret(key);
    for (const out of allOutput) assert.ok(!out.includes(secret), 'an output holds the key');
  });
  // Last: it gives the service a model, which the tests above rely on it not having.
  test('--wait follows the sync past its end until its items are searchable', async () => {
    s.source.seed(4, 'searchable');
    const p = startKb(['sync', 'docs_space', '--wait', '--json', '--interval', '0.1'], { url, key });
    // Nothing indexes until the CLI has reported the job's end with items still pending: it must not stop there.
    await waitUntil(
      () =>
        jsonLines(p.stdout()).some(
          (l) => l['type'] === 'progress' && l['status'] === 'succeeded' && l['done'] < l['total'],
        ),
      'a progress line of the ended job with items not yet searchable',
    );
    await (await withSearch(s.t)).drain();
    const res = await p.done;
    assert.equal(res.code, 0, res.stderr);
    const result = jsonLines(res.stdout).at(-1)!;
    assert.equal(result['job'].status, 'succeeded');
    assert.equal(result['items'].byIndexingStatus.pending, 0, 'every item searchable when it returns');
  });
});
