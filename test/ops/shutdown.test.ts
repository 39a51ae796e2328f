import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { startEmbeddedService } from '../support/embedded-service.ts';

describe('embedded service lifecycle', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'kb-life-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('first start prints a key once; SIGTERM finishes in-flight requests and leaves a healthy data dir', async () => {
    const first = await startEmbeddedService(dataDir);
    // The first-start key is the line after the announcement.
    await new Promise((r) => setTimeout(r, 200));
    const lines = first.output().split('\n');
    const at = lines.findIndex((l) => l.includes('first start'));
    assert.ok(at >= 0, first.output());
    const key = lines[at + 1]!.trim();
    assert.match(key, /^kb_/);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

    const up = await fetch(`${first.url}/api/connect/knowledgebase-items`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: 'Survives restarts', content: 'durable content' }),
    });
    assert.equal(up.status, 200);
    assert.equal((await fetch(`${first.url}/healthz`)).status, 200);
    // Not ready: no embedding model at this path, and /readyz says why.
    const ready = await fetch(`${first.url}/readyz`);
    assert.equal(ready.status, 503);
    const readiness = (await ready.json()) as { checks: Record<string, string> };
    assert.equal(readiness.checks['database'], 'ok');
    assert.match(readiness.checks['embedding_model']!, /No embedding model in \/nonexistent-model/);

    // A burst of requests in flight when SIGTERM arrives: every one of them completes.
    const inflight = Array.from({ length: 20 }, (_, i) =>
      fetch(`${first.url}/api/connect/knowledgebase-items`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ title: `burst ${i}`, content: 'x'.repeat(50_000) }),
      }).then((r) => r.status),
    );
    await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGTERM');
    const statuses = await Promise.allSettled(inflight);
    assert.equal(await first.exited, 0, first.output());
    const accepted = statuses.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<number>).value);
    assert.ok(accepted.every((s) => s === 200), `statuses: ${accepted.join(',')}`);

    // Restart on the same directory: no new key, the data is all there.
    const second = await startEmbeddedService(dataDir);
    try {
      assert.ok(!second.output().includes('first start'));
      const res = await fetch(`${second.url}/api/connect/knowledgebase-items/query`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ limit: 100 }),
      });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { items: Array<{ title: string }> };
      const titles = body.items.map((i) => i.title);
      assert.ok(titles.includes('Survives restarts'));
      // Requests accepted before shutdown were committed.
      assert.equal(titles.filter((t) => t.startsWith('burst')).length, accepted.length);
    } finally {
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0);
    }
  });
});

describe('SIGTERM under load', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'kb-term-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  /** One request through `agent`; resolves with the status, or the socket error's code. */
  const send = (agent: http.Agent, url: string, method: string, headers: Record<string, string>, body?: string) =>
    new Promise<number | string>((resolve) => {
      const req = http.request(url, { method, agent, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.end(body);
    });

  test('every request already sent on an open keep-alive connection is answered; the process then exits', async () => {
    const svc = await startEmbeddedService(dataDir);
    await new Promise((r) => setTimeout(r, 200));
    const lines = svc.output().split('\n');
    const key = lines[lines.findIndex((l) => l.includes('first start')) + 1]!.trim();
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const clients = 32;
    const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
    try {
      // 32 open keep-alive connections, idle, as a load balancer or a busy client holds them.
      const warm = await Promise.all(Array.from({ length: clients }, () => send(agent, `${svc.url}/healthz`, 'GET', {})));
      assert.ok(warm.every((s) => s === 200), `warm-up: ${warm}`);
      const sockets = Object.values(agent.freeSockets).flat().length;
      assert.equal(sockets, clients, 'each client holds its own idle connection');

      // The signal and the requests cross: the requests reach the sockets while the service begins to
      // shut down, before it has parsed them. Each was written on an accepted connection: each is answered.
      const body = JSON.stringify({ title: 'in flight at SIGTERM', content: 'y'.repeat(20_000) });
      svc.child.kill('SIGTERM');
      const inflight = Array.from({ length: clients }, () =>
        send(agent, `${svc.url}/api/connect/knowledgebase-items`, 'POST', headers, body),
      );
      const statuses = await Promise.all(inflight);
      assert.deepEqual(
        statuses.filter((s) => s !== 200),
        [],
        `every request sent before SIGTERM is answered 200 (got ${statuses.join(',')})`,
      );
      assert.equal(await svc.exited, 0, svc.output());
    } finally {
      agent.destroy();
      if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
    }
  });
});
