/**
 * Does a stop answer every request that reached the machine? The embedded service as users start it
 * (`src/main.ts` in a child process), requests spread over the last milliseconds before SIGTERM, counted
 * by what each client saw: an answer, a refused connection (the request never reached the service), or a
 * reset (the request reached it and was dropped: the failure this measures).
 *
 *   node bench/shutdown-resets.ts [--runs 3] [--requests 32] [--spread-ms 20] [--grace-ms 0,1000] [--after-ms N]
 *
 * Per grace (the service's KB_SHUTDOWN_GRACE_MS; a build without the setting ignores it) and run, two
 * starts of the service:
 * - new connections: `--requests` requests, each on a connection of its own, sent evenly over the
 *   `--spread-ms` before the signal;
 * - kept-alive connections: as many connections opened and left idle first (as a load balancer holds
 *   them), then one request on each, sent over the same window.
 * After the signal, one `GET /healthz` on a new connection about every millisecond (the next one sent
 * when a 1 ms timer fires) for `--after-ms` (default: the grace + 300 ms), across the moment the listener
 * stops accepting: those are answered or refused; a reset there is a connection the kernel completed in
 * the instant the listener closed.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedService } from '../test/support/embedded-service.ts';
import { printTable, writeResult } from './lib.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    requests: { type: 'string', default: '32' },
    'spread-ms': { type: 'string', default: '20' },
    'grace-ms': { type: 'string', default: '0,1000' },
    'after-ms': { type: 'string' },
  },
});
const runs = Number(values.runs);
const requests = Number(values.requests);
const spreadMs = Number(values['spread-ms']);
const graces = values['grace-ms'].split(',').map(Number);

type Outcome = 'answered' | 'refused' | 'reset';

/** One request; what the client saw. */
function send(
  url: string,
  agent: http.Agent | false,
  method: string,
  headers: Record<string, string>,
  body?: string,
) {
  return new Promise<{ outcome: Outcome; detail: string }>((resolve) => {
    const req = http.request(url, { method, agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ outcome: 'answered', detail: String(res.statusCode) }));
      res.on('error', (err: NodeJS.ErrnoException) =>
        resolve({ outcome: 'reset', detail: err.code ?? err.message }),
      );
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({
        outcome: err.code === 'ECONNREFUSED' ? 'refused' : 'reset',
        detail: err.code ?? err.message,
      }),
    );
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function oneRun(kind: 'new' | 'kept-alive', graceMs: number, afterMs: number) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'kb-bench-stop-'));
  const svc = await startEmbeddedService(dataDir, { KB_SHUTDOWN_GRACE_MS: String(graceMs) });
  try {
    await sleep(200);
    const lines = svc.output().split('\n');
    const key = lines[lines.findIndex((l) => l.includes('first start')) + 1]!.trim();
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ title: 'in flight at SIGTERM', content: 'y'.repeat(20_000) });
    const itemsUrl = `${svc.url}/api/connect/knowledgebase-items`;
    const agent = kind === 'kept-alive' ? new http.Agent({ keepAlive: true, maxSockets: requests }) : false;
    if (agent)
      await Promise.all(Array.from({ length: requests }, () => send(`${svc.url}/healthz`, agent, 'GET', {})));
    const pending: Array<Promise<{ outcome: Outcome; detail: string }>> = [];
    const before = new Promise<void>((resolve) => {
      for (let i = 0; i < requests; i++) {
        setTimeout(
          () => pending.push(send(itemsUrl, agent, 'POST', headers, body)),
          (i * spreadMs) / requests,
        );
      }
      setTimeout(() => {
        svc.child.kill('SIGTERM');
        resolve();
      }, spreadMs);
    });
    await before;
    const after: Array<Promise<{ outcome: Outcome; detail: string }>> = [];
    for (let t = 0; t < afterMs; t++) {
      after.push(send(`${svc.url}/healthz`, false, 'GET', {}));
      await sleep(1);
    }
    const exitCode = await svc.exited;
    if (agent) agent.destroy();
    return { before: await Promise.all(pending), after: await Promise.all(after), exitCode };
  } finally {
    if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const rows: Array<Record<string, string>> = [];
const raw: unknown[] = [];
const count = (list: Array<{ outcome: Outcome }>, o: Outcome) =>
  String(list.filter((x) => x.outcome === o).length);
for (const graceMs of graces) {
  const afterMs = values['after-ms'] === undefined ? graceMs + 300 : Number(values['after-ms']);
  for (const kind of ['new', 'kept-alive'] as const) {
    for (let run = 1; run <= runs; run++) {
      const r = await oneRun(kind, graceMs, afterMs);
      rows.push({
        'grace ms': String(graceMs),
        connections: kind,
        run: String(run),
        'before: sent': String(r.before.length),
        'before: answered': count(r.before, 'answered'),
        'before: refused': count(r.before, 'refused'),
        'before: reset': count(r.before, 'reset'),
        'after: sent': String(r.after.length),
        'after: answered': count(r.after, 'answered'),
        'after: refused': count(r.after, 'refused'),
        'after: reset': count(r.after, 'reset'),
        exit: String(r.exitCode),
      });
      raw.push({ graceMs, afterMs, kind, run, ...r });
    }
  }
}
printTable(
  `SIGTERM with ${requests} requests spread over the ${spreadMs} ms before it ("before"), then a stream of new connections across the listener's close ("after")`,
  rows,
);
writeResult('shutdown-resets', { runs, requests, spreadMs, graces, raw });
process.exit(0);
