import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { type EmbeddedService, startEmbeddedService } from '../support/embedded-service.ts';

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
    const accepted = statuses
      .filter((s) => s.status === 'fulfilled')
      .map((s) => (s as PromiseFulfilledResult<number>).value);
    assert.ok(
      accepted.every((s) => s === 200),
      `statuses: ${accepted.join(',')}`,
    );

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

  interface Answer {
    /** The status, or the socket error's code (ECONNRESET: the request reached the service and was dropped). */
    status: number | string;
    connection: string | undefined;
  }
  /** One request through `agent` (false: a connection of its own); `written` once its bytes are sent. */
  const send = (
    agent: http.Agent | false,
    url: string,
    method: string,
    headers: Record<string, string>,
    body?: string,
  ) => {
    let written!: () => void;
    const whenWritten = new Promise<void>((resolve) => {
      written = resolve;
    });
    const answer = new Promise<Answer>((resolve) => {
      const req = http.request(url, { method, agent, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      });
      req.on('error', (err: NodeJS.ErrnoException) =>
        resolve({ status: err.code ?? err.message, connection: undefined }),
      );
      req.on('finish', written);
      req.end(body);
    });
    return Object.assign(answer, { written: whenWritten });
  };

  /** The first start on the data directory prints the key with its `listening on` line; later ones reuse it. */
  let key = '';
  const rememberKey = (svc: EmbeddedService) => {
    const lines = svc.output().split('\n');
    const at = lines.findIndex((l) => l.includes('first start'));
    if (at >= 0) key = lines[at + 1]!.trim();
    assert.match(key, /^kb_/, svc.output());
  };
  /** The uploads each test had answered, by title: all of them must be in the data directory. */
  const answeredUploads = new Map<string, number>();
  const headers = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
  const upload = (title: string) => JSON.stringify({ title, content: 'y'.repeat(20_000) });
  const itemsUrl = (svc: EmbeddedService) => `${svc.url}/api/connect/knowledgebase-items`;
  const statusesOf = (answers: Answer[]) => answers.map((a) => a.status);

  /**
   * The kernel's view of the service's port (Linux): the listening socket's accept queue (connections
   * the kernel completed that the process has not taken in), and the bytes waiting unread on each
   * accepted connection, by the client's port.
   */
  const kernelView = (port: number) => {
    let acceptQueue = 0;
    const unreadByClientPort = new Map<number, number>();
    for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
      if (!existsSync(file)) continue;
      for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f.length < 5) continue;
        const localPort = Number.parseInt(f[1]!.split(':')[1]!, 16);
        if (localPort !== port) continue;
        const rxQueue = Number.parseInt(f[4]!.split(':')[1]!, 16);
        if (f[3] === '0A') acceptQueue += rxQueue;
        else if (f[3] === '01') unreadByClientPort.set(Number.parseInt(f[2]!.split(':')[1]!, 16), rxQueue);
      }
    }
    return { acceptQueue, unreadByClientPort };
  };

  // The worst case, made exact: the process is stopped while the requests arrive, so the kernel holds
  // every new connection in its accept queue and every request unread, and the signal lands together
  // with all of them. Grace 0: the listener closes as soon as the process has taken them in.
  test('requests that reached the machine just before SIGTERM, on new and on kept-alive connections, are all answered', {
    skip: !existsSync('/proc/net/tcp') && 'reads the accept queue from /proc/net/tcp (Linux)',
  }, async () => {
    const svc = await startEmbeddedService(dataDir, { KB_SHUTDOWN_GRACE_MS: '0' });
    const port = Number(new URL(svc.url).port);
    const clients = 16;
    const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
    try {
      rememberKey(svc);
      // Idle keep-alive connections, as a load balancer or a busy client holds them.
      const warm = await Promise.all(
        Array.from({ length: clients }, () => send(agent, `${svc.url}/healthz`, 'GET', {})),
      );
      assert.deepEqual(new Set(statusesOf(warm)), new Set([200]));
      const keptPorts = Object.values(agent.freeSockets)
        .flat()
        .map((socket) => socket!.localPort!);
      assert.equal(keptPorts.length, clients, 'each client holds its own idle connection');

      svc.child.kill('SIGSTOP');
      const onKept = Array.from({ length: clients }, () =>
        send(agent, itemsUrl(svc), 'POST', headers(), upload('kept-alive')),
      );
      const onNew = Array.from({ length: clients }, () =>
        send(false, itemsUrl(svc), 'POST', headers(), upload('new connection')),
      );
      await Promise.all([...onKept, ...onNew].map((r) => r.written));
      // Every new connection is in the accept queue and every kept-alive one has its request unread.
      for (let attempt = 0; ; attempt++) {
        const view = kernelView(port);
        if (view.acceptQueue === clients && keptPorts.every((p) => (view.unreadByClientPort.get(p) ?? 0) > 0))
          break;
        assert.ok(attempt < 3000, `the kernel holds them all (accept queue ${view.acceptQueue})`);
        await new Promise((r) => setTimeout(r, 10));
      }
      svc.child.kill('SIGTERM');
      svc.child.kill('SIGCONT');

      const statuses = statusesOf(await Promise.all([...onKept, ...onNew]));
      assert.deepEqual(
        statuses.filter((s) => s !== 200),
        [],
        `every request is answered 200 (got ${statuses.join(',')})`,
      );
      assert.equal(await svc.exited, 0, svc.output());
      answeredUploads.set('kept-alive', clients).set('new connection', clients);
    } finally {
      agent.destroy();
      if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
    }
  });

  // A grace far longer than the test, ended by a second signal once everything is answered: nothing
  // below depends on how fast this machine is.
  test('requests in the last 20 ms before SIGTERM are answered; during the grace /readyz is 503 and the rest is served; a second signal loses nothing', async () => {
    const svc = await startEmbeddedService(dataDir, { KB_SHUTDOWN_GRACE_MS: '600000' });
    const clients = 16;
    const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
    const held = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      rememberKey(svc);
      const ready = await send(false, `${svc.url}/readyz`, 'GET', {});
      assert.equal(ready.status, 503, 'no embedding model in this test');
      const warm = await Promise.all(
        Array.from({ length: clients }, () => send(agent, `${svc.url}/healthz`, 'GET', {})),
      );
      assert.deepEqual(new Set(statusesOf(warm)), new Set([200]));
      // And one more kept-alive connection, left idle until the grace.
      assert.equal((await send(held, `${svc.url}/healthz`, 'GET', {})).connection, 'keep-alive');

      // One request on a new and one on a kept-alive connection every 20/16 ms, then the signal.
      const before = await new Promise<Array<Promise<Answer>>>((resolve) => {
        const sent: Array<Promise<Answer>> = [];
        for (let i = 0; i < clients; i++) {
          setTimeout(
            () => {
              sent.push(send(false, itemsUrl(svc), 'POST', headers(), upload('last ms, new connection')));
              sent.push(send(agent, itemsUrl(svc), 'POST', headers(), upload('last ms, kept-alive')));
            },
            (i * 20) / clients,
          );
        }
        setTimeout(() => {
          svc.child.kill('SIGTERM');
          resolve(sent);
        }, 20);
      });
      const statuses = statusesOf(await Promise.all(before));
      assert.equal(statuses.length, clients * 2);
      assert.deepEqual(
        statuses.filter((s) => s !== 200),
        [],
        `every request is answered 200 (got ${statuses.join(',')})`,
      );

      // /readyz says so as soon as the process has read the signal; each try is a new connection, accepted.
      let shutdownCheck: string | undefined;
      for (let attempt = 0; attempt < 500 && shutdownCheck === undefined; attempt++) {
        const res = await fetch(`${svc.url}/readyz`);
        assert.equal(res.status, 503);
        shutdownCheck = ((await res.json()) as { checks: Record<string, string> }).checks['shutdown'];
        if (shutdownCheck === undefined) await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(shutdownCheck, 'shutting down');

      // Still serving, on new connections and on one kept alive from before, each answer closing its connection.
      assert.deepEqual(await send(false, `${svc.url}/healthz`, 'GET', {}), {
        status: 200,
        connection: 'close',
      });
      const onNew = await send(
        false,
        itemsUrl(svc),
        'POST',
        headers(),
        upload('during grace, new connection'),
      );
      assert.deepEqual(onNew, { status: 200, connection: 'close' });
      const onKept = await send(held, itemsUrl(svc), 'POST', headers(), upload('during grace, kept-alive'));
      assert.deepEqual(onKept, { status: 200, connection: 'close' });

      // A second signal (Ctrl-C twice) ends the grace; a request written before it is still answered,
      // the database closes cleanly and the exit is 0, not a kill by the signal.
      const last = send(false, itemsUrl(svc), 'POST', headers(), upload('before the second signal'));
      await last.written;
      svc.child.kill('SIGINT');
      assert.equal((await last).status, 200);
      assert.equal(await svc.exited, 0, svc.output());
      answeredUploads
        .set('last ms, new connection', clients)
        .set('last ms, kept-alive', clients)
        .set('during grace, new connection', 1)
        .set('during grace, kept-alive', 1)
        .set('before the second signal', 1);
    } finally {
      agent.destroy();
      held.destroy();
      if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
    }

    // Every upload answered in this describe is in the data directory.
    const again = await startEmbeddedService(dataDir, { KB_SHUTDOWN_GRACE_MS: '0' });
    try {
      const res = await fetch(`${itemsUrl(again)}/query`, {
        method: 'POST',
        headers: headers(),
        body: JSON.stringify({ limit: 100 }),
      });
      assert.equal(res.status, 200);
      const titles = ((await res.json()) as { items: Array<{ title: string }> }).items.map((i) => i.title);
      const stored = new Map(
        [...answeredUploads.keys()].map((t) => [t, titles.filter((x) => x === t).length]),
      );
      assert.deepEqual(stored, answeredUploads);
    } finally {
      again.child.kill('SIGTERM');
      assert.equal(await again.exited, 0);
    }
  });
});
