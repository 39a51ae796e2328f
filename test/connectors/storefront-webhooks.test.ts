/**
 * Shopify change notifications through `POST /api/connect/webhooks/storefront`, in both storage modes:
 * the fake store signs deliveries as Shopify does; the route verifies, stores and answers; the
 * `source-changes` job reads the named product again and commits it as a sync would.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Indexer } from '../../src/ingest/indexer.ts';
import { sourceChangesTask } from '../../src/jobs/source-changes-job.ts';
import type { WorkerPool } from '../../src/jobs/worker.ts';
import {
  FakeShopifyStore,
  type FakeShopify,
  SHOPIFY_CLIENT_ID,
  SHOPIFY_CLIENT_SECRET,
  SHOPIFY_GOOD_TOKEN,
  SHOPIFY_SHOP,
  startFakeShopify,
} from '../fakes/shopify.ts';
import { hashEmbedder } from '../support/hash-embedder.ts';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitFor, waitForJob } from '../jobs/helpers.ts';

const CLIENT_CREDENTIALS = {
  type: 'shopify',
  shop: SHOPIFY_SHOP,
  client_id: SHOPIFY_CLIENT_ID,
  client_secret: SHOPIFY_CLIENT_SECRET,
};

function store(): FakeShopifyStore {
  const s = new FakeShopifyStore();
  s.addProduct({ title: 'Trail Running Shoe', descriptionHtml: '<p>A grippy lugged sole.</p>' });
  s.addProduct({ title: 'Storm Shell Jacket', descriptionHtml: '<p>Three-layer shell.</p>' });
  s.addProduct({ title: 'Camp Stove', descriptionHtml: '<p>Boils a liter in three minutes.</p>' });
  s.addPage({ title: 'Shipping', body: '<p>We ship in two days.</p>' });
  return s;
}

interface Item {
  id: string;
  title: string;
  source_url: string;
  source_table_name: string;
}

async function items(t: TestApp, key?: string): Promise<Item[]> {
  const res = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { limit: 100 }, key });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.items as Item[];
}

async function countRows(t: TestApp, sql: string, params: unknown[] = []): Promise<number> {
  const rows = await t.db.query<{ n: string | number }>(sql, params);
  return Number(rows[0]?.n ?? 0);
}

/** Product `nodes` queries the fake answered that asked for `gid`. */
function fetchesOf(fake: FakeShopify, gid: string): number {
  return fake.store.queries.filter(
    (q) => q.roots.includes('nodes') && Array.isArray(q.variables['ids']) && q.variables['ids'].includes(gid),
  ).length;
}

function deliver(
  t: TestApp,
  delivery: { headers: Record<string, string>; body: string },
  type = 'storefront',
) {
  return t.call('POST', `/api/connect/webhooks/${type}`, {
    key: null,
    headers: delivery.headers,
    body: delivery.body,
  });
}

for (const mode of STORAGE_MODES) {
  describe(`storefront webhooks (${mode})`, () => {
    let fake: FakeShopify;
    let t: TestApp;
    let pool: WorkerPool | null = null;
    let connectionId: string;
    const startPool = () => {
      // With the task that queues work no job is queued for (an event that came as a job was ending).
      pool = t.service.startWorkers({
        concurrency: 1,
        ...FAST_WORKERS,
        periodicTasks: [sourceChangesTask(t.db, t.service.jobs, { everyMs: 200 })],
        listenUrl: null,
      });
    };
    const productId = (title: string) => [...fake.store.products.values()].find((p) => p.title === title)!.id;
    const itemTitled = async (title: string, key?: string) =>
      (await items(t, key)).find((i) => i.title === title);

    before(async () => {
      fake = await startFakeShopify({ store: store() });
      t = await startTestApp(mode, {
        config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_STOREFRONT_BASE_URL: fake.url },
        parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
      });
      startPool();
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: CLIENT_CREDENTIALS },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      connectionId = created.body.connectionId;
      const first = await waitForJob(t, created.body.jobId);
      assert.equal(first.status, 'succeeded', JSON.stringify(first));
      assert.equal((await items(t)).length, 4);
    });
    after(async () => {
      await pool?.stop();
      await t?.close();
      await fake?.close();
    });

    test('a signed products/update is stored before the 200 and the product is read again', async () => {
      const gid = productId('Camp Stove');
      fake.store.editProduct(gid, { title: 'Camp Stove Pro' });
      const res = await deliver(t, fake.store.webhookDelivery('products/update', gid));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { success: true });
      assert.equal(
        await countRows(t, 'SELECT count(*) AS n FROM source_events WHERE connection_id = $1', [
          connectionId,
        ]),
        1,
      );
      await waitFor(async () => Boolean(await itemTitled('Camp Stove Pro')), 30_000, 'the edited title');
      assert.equal(await itemTitled('Camp Stove'), undefined);
    });

    test('a wrong secret, a missing signature or an unknown shop is 401 and stores nothing', async () => {
      const gid = productId('Trail Running Shoe');
      const before = await countRows(t, 'SELECT count(*) AS n FROM source_events');
      const jobsBefore = await countRows(t, `SELECT count(*) AS n FROM jobs WHERE kind = 'source-changes'`);
      const wrong = fake.store.webhookDelivery('products/update', gid, {
        secret: 'shpss_someone_elses_secret',
      });
      expectError(await deliver(t, wrong), 401, 'unauthorized');
      const missing = fake.store.webhookDelivery('products/update', gid);
      delete missing.headers['x-shopify-hmac-sha256'];
      expectError(await deliver(t, missing), 401, 'unauthorized');
      const tampered = fake.store.webhookDelivery('products/update', gid);
      expectError(
        await deliver(t, { ...tampered, body: tampered.body.replace('}', ',"x":1}') }),
        401,
        'unauthorized',
      );
      const otherShop = fake.store.webhookDelivery('products/update', gid);
      otherShop.headers['x-shopify-shop-domain'] = 'someone-else.myshopify.com';
      const denied = await deliver(t, otherShop);
      expectError(denied, 401, 'unauthorized');
      assert.ok(!JSON.stringify(denied.body).includes(SHOPIFY_CLIENT_SECRET));
      expectError(
        await deliver(t, fake.store.webhookDelivery('products/update', gid), 'no_such_source'),
        404,
        'not_found',
      );
      const huge = fake.store.webhookDelivery('products/update', gid);
      const tooLarge = await deliver(t, {
        ...huge,
        body: huge.body.replace('}', `,"pad":"${'x'.repeat(1_100_000)}"}`),
      });
      assert.equal(tooLarge.status, 413, JSON.stringify(tooLarge.body));
      assert.equal(await countRows(t, 'SELECT count(*) AS n FROM source_events'), before);
      assert.equal(await countRows(t, 'SELECT count(*) AS n FROM source_document_work'), 0);
      assert.equal(
        await countRows(t, `SELECT count(*) AS n FROM jobs WHERE kind = 'source-changes'`),
        jobsBefore,
      );
    });

    test('a replayed event id is stored once and makes no second fetch', async () => {
      const gid = productId('Storm Shell Jacket');
      fake.store.editProduct(gid, { title: 'Storm Shell Jacket II' });
      const delivery = fake.store.webhookDelivery('products/update', gid);
      assert.equal((await deliver(t, delivery)).status, 200);
      await waitFor(async () => Boolean(await itemTitled('Storm Shell Jacket II')), 30_000, 'the edit');
      const fetches = fetchesOf(fake, gid);
      const jobs = await countRows(t, `SELECT count(*) AS n FROM jobs WHERE kind = 'source-changes'`);
      // Shopify's retry after a timeout: same X-Shopify-Event-Id.
      const retry = await deliver(t, delivery);
      assert.equal(retry.status, 200);
      const events = await countRows(
        t,
        'SELECT count(*) AS n FROM source_events WHERE vendor_event_id = $1',
        [delivery.headers['x-shopify-event-id']],
      );
      assert.equal(events, 1);
      assert.equal(await countRows(t, 'SELECT count(*) AS n FROM source_document_work'), 0);
      assert.equal(await countRows(t, `SELECT count(*) AS n FROM jobs WHERE kind = 'source-changes'`), jobs);
      assert.equal(fetchesOf(fake, gid), fetches);
    });

    test('ten events for one product while no worker runs: kept across a restart, read once', async () => {
      await pool?.stop();
      pool = null;
      const gid = productId('Trail Running Shoe');
      fake.store.editProduct(gid, { title: 'Trail Running Shoe v2' });
      const fetchesBefore = fetchesOf(fake, gid);
      for (let i = 0; i < 10; i++) {
        const res = await deliver(t, fake.store.webhookDelivery('products/update', gid));
        assert.equal(res.status, 200, JSON.stringify(res.body));
      }
      const work = await t.db.query<{ revision: string | number }>(
        'SELECT revision FROM source_document_work WHERE connection_id = $1',
        [connectionId],
      );
      assert.equal(work.length, 1, 'ten events for one document are one piece of work');
      assert.equal(Number(work[0]!.revision), 10);
      // The service went down after answering: nothing was fetched; a new worker picks the work up.
      assert.equal(fetchesOf(fake, gid), fetchesBefore);
      startPool();
      await waitFor(
        async () => Boolean(await itemTitled('Trail Running Shoe v2')),
        30_000,
        'the edit after restart',
      );
      await waitFor(
        async () => (await countRows(t, 'SELECT count(*) AS n FROM source_document_work')) === 0,
        30_000,
        'the work to be done',
      );
      assert.equal(fetchesOf(fake, gid) - fetchesBefore, 1, 'one fetch for ten events');
      assert.equal(
        await countRows(
          t,
          `SELECT count(*) AS n FROM source_events WHERE connection_id = $1 AND state = 'queued'`,
          [connectionId],
        ),
        0,
      );
    });

    test('an event that arrives while its product is being read makes one more read', async () => {
      const gid = productId('Trail Running Shoe v2');
      const fetchesBefore = fetchesOf(fake, gid);
      let during: Promise<{ status: number; body: unknown }> | undefined;
      fake.store.onQuery = (roots, variables) => {
        const ids = variables['ids'];
        if (during || !roots.includes('nodes') || !Array.isArray(ids) || !ids.includes(gid)) return;
        // Shopify sends the next edit's event while the service is reading the product.
        during = deliver(t, fake.store.webhookDelivery('products/update', gid));
      };
      try {
        assert.equal((await deliver(t, fake.store.webhookDelivery('products/update', gid))).status, 200);
        await waitFor(() => during !== undefined, 30_000, 'the read to start');
        const answer = await during!;
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        await waitFor(
          async () => (await countRows(t, 'SELECT count(*) AS n FROM source_document_work')) === 0,
          30_000,
          'the work to be done',
        );
      } finally {
        fake.store.onQuery = undefined;
      }
      assert.equal(fetchesOf(fake, gid) - fetchesBefore, 2, 'the event during the read made one more read');
    });

    test('products/delete removes the item', async () => {
      const gid = productId('Storm Shell Jacket II');
      assert.ok(await itemTitled('Storm Shell Jacket II'));
      fake.store.deleteProduct(gid);
      assert.equal((await deliver(t, fake.store.webhookDelivery('products/delete', gid))).status, 200);
      await waitFor(async () => !(await itemTitled('Storm Shell Jacket II')), 30_000, 'the deletion');
    });

    test('a page edit arrives by pages/update; the next sync reads nothing again', async () => {
      const page = [...fake.store.pages.values()].find((p) => p.title === 'Shipping')!;
      fake.store.editPage(page.id, { title: 'Shipping & Returns' });
      assert.equal((await deliver(t, fake.store.webhookDelivery('pages/update', page.id))).status, 200);
      await waitFor(async () => Boolean(await itemTitled('Shipping & Returns')), 30_000, 'the page edit');
      const queriesBefore = fake.store.queries.length;
      const run = await t.call('POST', '/api/connect/run-sync', { body: { type: 'storefront' } });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      const job = await waitForJob(t, run.body.jobId);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.equal(job.rowsSynced, 0, 'what the events brought is not written again');
      const bodies = fake.store.queries.slice(queriesBefore).filter((q) => q.roots.includes('nodes'));
      assert.deepEqual(bodies, [], 'no document is fetched again by id');
    });

    test("an event for org A's shop never touches org B's items (same shop)", async () => {
      // Org B holds the same shop through a fixed token: no secret the service knows signs for it.
      const created = await t.call('POST', '/api/connect/connection', {
        key: t.orgB.key,
        body: { source: { type: 'shopify', shop: SHOPIFY_SHOP, access_token: SHOPIFY_GOOD_TOKEN } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const bConnection = created.body.connectionId as string;
      await waitFor(async () => (await items(t, t.orgB.key)).length === 3, 30_000, "org B's first sync");

      const gid = productId('Camp Stove Pro');
      fake.store.editProduct(gid, { title: 'Camp Stove Max' });
      assert.equal((await deliver(t, fake.store.webhookDelivery('products/update', gid))).status, 200);
      await waitFor(async () => Boolean(await itemTitled('Camp Stove Max')), 30_000, "org A's update");
      assert.ok(await itemTitled('Camp Stove Pro', t.orgB.key), "org B's item is as its last sync left it");
      assert.equal(
        await countRows(t, 'SELECT count(*) AS n FROM source_events WHERE connection_id = $1', [bConnection]),
        0,
      );
    });

    test('an edit at the store is searchable through the webhook path', async () => {
      await t.service.embedding.use(hashEmbedder());
      const indexer = new Indexer(t.db, hashEmbedder());
      await indexer.drain();
      const gid = productId('Trail Running Shoe v2');
      fake.store.editProduct(gid, { descriptionHtml: '<p>Now with a zephyrine rock plate.</p>' });
      assert.equal((await deliver(t, fake.store.webhookDelivery('products/update', gid))).status, 200);
      await waitFor(
        async () => {
          await indexer.drain();
          const res = await t.call('POST', '/api/consume/search', {
            body: { query: 'zephyrine rock plate', limit: 1, includeEmbedding: false },
          });
          return res.status === 200 && res.body.result[0]?.title === 'Trail Running Shoe v2';
        },
        30_000,
        'the edit to be searchable',
      );
    });
  });
}

describe('storefront webhook subscriptions (pglite)', () => {
  let fake: FakeShopify;
  let t: TestApp;
  const publicUrl = 'https://kb.example.com';
  before(async () => {
    fake = await startFakeShopify({ store: store() });
    t = await startTestApp('pglite', {
      config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_STOREFRONT_BASE_URL: fake.url, KB_PUBLIC_URL: publicUrl },
      parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
    });
  });
  after(async () => {
    await t?.close();
    await fake?.close();
  });

  test('a new connection subscribes each topic; disconnecting unsubscribes', async () => {
    fake.store.webhookTopics.delete('ARTICLES_CREATE'); // a topic the API version lacks is skipped
    const created = await t.call('POST', '/api/connect/connection', {
      body: { source: CLIENT_CREDENTIALS, sync: false },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const subs = [...fake.store.webhookSubscriptions.values()];
    assert.equal(subs.length, 8);
    assert.ok(subs.every((s) => s.uri === `${publicUrl}/api/connect/webhooks/storefront`));
    assert.ok(
      subs.some((s) => s.topic === 'PRODUCTS_UPDATE') && subs.some((s) => s.topic === 'PRODUCTS_DELETE'),
    );
    const stored = await t.db.query<{ ids: string[]; secret: string | null }>(
      'SELECT subscription_ids AS ids, secret_encrypted AS secret FROM source_webhook_subscriptions',
    );
    assert.equal(stored[0]?.ids.length, 8);

    const deleted = await t.call('DELETE', '/api/connect/connection', { body: { type: 'storefront' } });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal(fake.store.webhookSubscriptions.size, 0);
  });

  test('a subscription Shopify refuses never fails the create', async () => {
    fake.store.webhookTopics.clear();
    const created = await t.call('POST', '/api/connect/connection', {
      body: { source: CLIENT_CREDENTIALS, sync: false },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(await countRows(t, 'SELECT count(*) AS n FROM source_webhook_subscriptions'), 0);
  });
});
