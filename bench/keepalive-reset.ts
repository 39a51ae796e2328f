/**
 * The cause of the embedded failure at 200k items with trigram indexes (bench/items-query.ts), isolated.
 *
 *   node bench/keepalive-reset.ts [--seconds 80]
 *
 * bench/items-query.ts is client and server in one process. It sent requests, then loaded items through
 * PGlite (with trigram indexes the load of 180k more items took 17 minutes), then sent the next request on
 * the connection its fetch had kept alive: `TypeError: fetch failed`, cause `read ECONNRESET`, with RSS
 * and the WASM heap flat. This script does the same with nothing else: one request, then the process
 * waits `--seconds` (more than the server's keep-alive timeout, 72 s) either with its event loop free
 * (a timer) or held (Atomics.wait), then a second request. Held is what PGlite does: its calls run
 * synchronously in WASM and resolve as microtasks, so a chain of awaited queries (a load, a scan) never
 * lets the event loop reach its timers or sockets; the first part below shows that.
 */
import { parseArgs } from 'node:util';
import { migrate } from '../src/db/migrate.ts';
import { openPglite } from '../src/db/pglite.ts';
import { createApiKey, createOrganization } from '../src/db/repositories/organizations.ts';
import { buildApp } from '../src/http/app.ts';
import { composeTestService } from '../test/support/harness.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '80' } } });
const seconds = Number(values.seconds);
const db = await openPglite(null);
await migrate(db);
const org = await createOrganization(db, 'probe');
const key = (await createApiKey(db, org.id)).apiKey;
const app = await buildApp(composeTestService(db).appDeps, { logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
{
  let fired = 0;
  const interval = setInterval(() => {
    fired++;
  }, 10);
  const t0 = performance.now();
  let queries = 0;
  while (performance.now() - t0 < 3000) {
    await db.query('SELECT count(*) FROM generate_series(1, 20000)');
    queries++;
  }
  clearInterval(interval);
  console.log(`${queries} awaited PGlite queries in 3 s: a 10 ms interval fired ${fired} times`);
}
console.log(`server keepAliveTimeout ${app.server.keepAliveTimeout} ms`);
const post = () =>
  fetch(`http://127.0.0.1:${port}/api/connect/knowledgebase-items/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  }).then((r) => String(r.status));
for (const mode of ['event loop free', 'event loop held']) {
  const first = await post();
  if (mode === 'event loop free') await new Promise((r) => setTimeout(r, seconds * 1000));
  else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);
  const second = await post().catch(
    (e) => `failed: ${(e as { cause?: { code?: string } }).cause?.code ?? e}`,
  );
  console.log(`${mode}: first request ${first}, after ${seconds} s ${second}`);
}
await app.close();
await db.close();
process.exit(0);
