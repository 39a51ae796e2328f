/**
 * Outbound webhooks benchmark (`node bench/webhooks-out.ts`): deliveries per second from the Postgres
 * queue to receivers on loopback, signed, with each endpoint's order kept (one request in flight per
 * endpoint). Emits BENCH_EVENTS events (default 2000) to BENCH_ENDPOINTS endpoints of one organization
 * (default 1, then 8), then times the delivery task until every delivery is recorded as succeeded.
 * Prints a table, writes bench/results/webhooks-out.json.
 *
 * Options: --storage pglite,postgres (default both), BENCH_EVENTS, BENCH_ENDPOINT_COUNTS (e.g. 1,8).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { emitWebhookEvent } from '../src/db/repositories/webhooks.ts';
import { deliverDueWebhooks } from '../src/jobs/webhook-delivery.ts';
import { startTestApp } from '../test/support/harness.ts';
import { loadAverage, printTable, sizeList, storageModes, writeResult } from './lib.ts';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 2000);
const ENDPOINT_COUNTS = sizeList(process.env['BENCH_ENDPOINT_COUNTS'] ?? '1,8');
const storageArg = process.argv.indexOf('--storage');
const MODES = storageModes(storageArg > 0 ? process.argv[storageArg + 1]! : 'pglite,postgres');

async function startReceiver(): Promise<{ url: string; received: () => number; close(): Promise<void> }> {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const rows: Array<Record<string, string>> = [];
const raw: unknown[] = [];

for (const mode of MODES) {
  for (const endpoints of ENDPOINT_COUNTS) {
    const receiver = await startReceiver();
    const t = await startTestApp(mode, { config: { KB_CRAWL_ALLOW_PRIVATE: 'true' } });
    for (let i = 0; i < endpoints; i++) {
      const res = await t.call('POST', '/api/connect/webhook-endpoints', { body: { url: receiver.url } });
      if (res.status !== 200) throw new Error(`endpoint: ${JSON.stringify(res.body)}`);
    }
    // Events as a sync's batches write them: 100 per transaction.
    for (let i = 0; i < EVENTS; i += 100) {
      await t.db.transaction(async (tx) => {
        for (let j = i; j < Math.min(EVENTS, i + 100); j++) {
          await emitWebhookEvent(tx, t.orgA.id, 'items.indexed', { count: 1, items: [{ id: `item-${j}` }] });
        }
      });
    }
    const deliveries = EVENTS * endpoints;
    const started = performance.now();
    let delivered = 0;
    while (delivered < deliveries) {
      const outcome = await deliverDueWebhooks(t.service.webhooks);
      if (outcome.failed > 0) throw new Error(`${outcome.failed} deliveries failed`);
      delivered += outcome.delivered;
    }
    const seconds = (performance.now() - started) / 1000;
    const perSecond = deliveries / seconds;
    rows.push({
      storage: mode,
      endpoints: String(endpoints),
      deliveries: String(deliveries),
      seconds: seconds.toFixed(2),
      'deliveries/s': perSecond.toFixed(0),
      'per endpoint/s': (perSecond / endpoints).toFixed(0),
      received: String(receiver.received()),
      load: loadAverage(),
    });
    raw.push({ mode, endpoints, deliveries, seconds, perSecond });
    await t.close();
    await receiver.close();
  }
}

printTable(
  'Outbound webhooks: deliveries per second (signed, in order per endpoint, loopback receiver)',
  rows,
);
writeResult('webhooks-out', raw);
