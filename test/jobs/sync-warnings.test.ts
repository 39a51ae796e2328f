/**
 * A permission the source's credentials lack is on the sync job as a warning, in both storage modes: a
 * Shopify token without `read_legal_policies` syncs the rest (the job ends `incomplete`, the policies'
 * failure listed as before) and the job list, the CLI summary and the job carry `permission_missing`
 * naming the scope to grant.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { syncSummary } from '../../src/cli/sync.ts';
import type { ItemStats, SyncJob } from '../../src/client/index.ts';
import {
  type FakeShopify,
  FakeShopifyStore,
  SHOPIFY_GOOD_TOKEN,
  SHOPIFY_SHOP,
  startFakeShopify,
} from '../fakes/shopify.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from './helpers.ts';

interface Warning {
  code: string;
  message: string;
  subject: string;
  count: number;
}

function deniedStore(): FakeShopifyStore {
  const store = new FakeShopifyStore();
  store.bucket.restoreRate = 1_000_000;
  store.setPolicy('REFUND_POLICY', '<p>You have 30 days to request a return.</p>');
  store.addProduct({
    title: 'Trail Running Shoe',
    variants: [{ title: '9', sku: 'TRS-9', price: '129.00' }],
    descriptionHtml: '<p>A lightweight shoe with a grippy sole.</p>',
  });
  store.deny('shopPolicies', 'read_legal_policies');
  return store;
}

for (const mode of STORAGE_MODES) {
  describe(`sync job warnings (${mode})`, () => {
    let fake: FakeShopify;
    let t: TestApp;
    before(async () => {
      fake = await startFakeShopify({ store: deniedStore() });
      t = await startTestApp(mode, {
        config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_STOREFRONT_BASE_URL: fake.url },
        parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
      });
      t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    test('a missing permission at the source is a warning on the job', async () => {
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'shopify', shop: SHOPIFY_SHOP, access_token: SHOPIFY_GOOD_TOKEN } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      let jobId = created.body.jobId as number | undefined;
      if (jobId === undefined) {
        const run = await t.call('POST', '/api/connect/run-sync', { body: { type: 'storefront' } });
        assert.equal(run.status, 200, JSON.stringify(run.body));
        jobId = run.body.jobId as number;
      }
      const done = await waitForJob(t, jobId, undefined, 60_000);
      assert.equal(done.status, 'incomplete', JSON.stringify(done));

      const list = await t.call('GET', '/api/connect/connection-sync-jobs?type=storefront');
      assert.equal(list.status, 200, JSON.stringify(list.body));
      const job = (list.body.data as Array<SyncJob & { warnings: Warning[]; warningCount: number }>).find(
        (j) => j.jobId === jobId,
      );
      assert.ok(job);
      assert.equal(job.failureCount, 1, 'the failure is listed as before');
      assert.deepEqual(
        job.warnings.map((w) => [w.code, w.subject, w.count]),
        [['permission_missing', 'storefront_policies', 1]],
      );
      assert.match(job.warnings[0]!.message, /Grant the app the read_legal_policies access scope/);
      assert.equal(job.warningCount, 1);
      assert.ok(!job.warnings[0]!.message.includes(SHOPIFY_GOOD_TOKEN), 'no secret in a warning');

      const stats = await t.call('GET', '/api/connect/knowledgebase-items/stats');
      assert.equal(stats.status, 200, JSON.stringify(stats.body));
      const summary = syncSummary('sync storefront', job, stats.body as ItemStats);
      assert.match(summary, /^ {2}warnings {3}permission_missing: .*read_legal_policies/m, summary);
    });
  });
}
