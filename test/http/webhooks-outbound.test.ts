/**
 * Outbound webhooks, in both storage modes: an organization registers endpoints (secret shown once,
 * private targets refused, other organizations see nothing), the state changes of syncs, crawls,
 * connections and indexing become events in the same transaction, and the delivery task sends them
 * signed per Standard Webhooks, in order per endpoint, filtered, retried on the published schedule (an
 * endpoint down for an hour gets them after, on a clock the test moves), and disables an endpoint that
 * keeps failing. A receiver on loopback records what arrives.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { markConnectionConsentNeeded, upsertConnection } from '../../src/db/repositories/connections.ts';
import { claimJob, finishJob } from '../../src/jobs/queue.ts';
import { enqueueSyncJob } from '../../src/jobs/sync-job.ts';
import { deliverDueWebhooks, flushIndexedItems } from '../../src/jobs/webhook-delivery.ts';
import type { Logger } from '../../src/lib/logger.ts';
import { verifyWebhookSignature } from '../../src/lib/webhook-signature.ts';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A loopback receiver: records every request; answers `status` (tests take it down and up). */
async function startReceiver() {
  const received: Received[] = [];
  const state = { status: 200 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.statusCode = state.status;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    received,
    state,
    url: (path: string) => `${base}${path}`,
    at: (path: string) => received.filter((r) => r.path === path),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A logger that keeps every line, to check that no secret reaches the log. */
function recordingLogger(lines: string[]): Logger {
  const keep = (o: object, m: string) => lines.push(`${m} ${JSON.stringify(o)}`);
  return { info: keep, warn: keep, error: keep };
}

const HOUR = 3_600_000;

for (const mode of STORAGE_MODES) {
  describe(`outbound webhooks (${mode})`, () => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const logLines: string[] = [];
    // The delivery task's clock runs `offset` ahead of the real one: moving it hours ahead stands for
    // hours passing; the slack covers the real milliseconds between two attempts.
    const clock = { offset: 0 };
    const now = () => Date.now() + clock.offset;
    const later = (ms: number) => {
      clock.offset += ms + 1_000;
    };
    const secrets: string[] = [];

    before(async () => {
      receiver = await startReceiver();
      t = await startTestApp(mode, {
        config: { KB_CRAWL_ALLOW_PRIVATE: 'true' },
        parts: { log: recordingLogger(logLines), webhooks: { now: () => new Date(now()) } },
      });
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    const deliver = () => deliverDueWebhooks(t.service.webhooks);

    const createEndpoint = async (path: string, extra: Record<string, unknown> = {}, key?: string) => {
      const res = await t.call('POST', '/api/connect/webhook-endpoints', {
        body: { url: receiver.url(path), ...extra },
        ...(key ? { key } : {}),
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      secrets.push(res.body.secret);
      return res.body as { id: string; secret: string };
    };

    /** A connection of `org` and a sync job run through the engine's own claim and finish. */
    const runSync = async (org: string, type: string) => {
      const { id: connectionId } = await t.db.transaction((tx) =>
        upsertConnection(tx, {
          organizationId: org,
          type,
          encrypt: (id) => t.service.sources.encryptCredentials(id, { access_token: 'source-token' }),
        }),
      );
      const jobId = (await t.db.transaction((tx) =>
        enqueueSyncJob(tx, { organizationId: org, connectionId, jobType: 'sync', trigger: 'api' }),
      ))!;
      const job = (await claimJob(t.db, { kinds: ['sync'], workerId: 'test' }))!;
      assert.equal(job.id, jobId);
      await finishJob(t.db, job.id, job.leaseToken, 'succeeded', null);
      return { connectionId, jobId };
    };

    test('a secret is answered once; private targets are refused; other organizations see nothing', async () => {
      const created = await createEndpoint('/first', { description: 'first' });
      assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      const list = await t.call('GET', '/api/connect/webhook-endpoints');
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.endpoints.map((e: { id: string }) => e.id),
        [created.id],
      );
      assert.ok(!JSON.stringify(list.body).includes(created.secret.slice(6)));
      const [stored] = await t.db.query<{ secret_encrypted: string }>(
        'SELECT secret_encrypted FROM webhook_endpoints WHERE id = $1',
        [created.id],
      );
      assert.ok(
        !stored!.secret_encrypted.includes(created.secret.slice(6)),
        'the secret is stored encrypted',
      );

      const other = { key: t.orgB.key };
      assert.deepEqual((await t.call('GET', '/api/connect/webhook-endpoints', other)).body.endpoints, []);
      expectError(
        await t.call('DELETE', `/api/connect/webhook-endpoints/${created.id}`, other),
        404,
        'not_found',
      );
      expectError(
        await t.call('PATCH', `/api/connect/webhook-endpoints/${created.id}`, {
          ...other,
          body: { enabled: false },
        }),
        404,
        'not_found',
      );
      expectError(
        await t.call('GET', `/api/connect/webhook-endpoints/${created.id}/deliveries`, other),
        404,
        'not_found',
      );
      expectError(
        await t.call('POST', '/api/connect/webhook-endpoints', {
          body: { url: receiver.url('/x'), events: ['nope'] },
        }),
        400,
        'invalid_request',
      );
      assert.equal((await t.call('DELETE', `/api/connect/webhook-endpoints/${created.id}`)).status, 200);
    });

    test('the guard refuses private, loopback and metadata targets unless the operator allows them', async () => {
      const guarded = await startTestApp(mode);
      try {
        for (const url of [
          'http://127.0.0.1:9/hook',
          'http://10.1.2.3/hook',
          'http://169.254.169.254/latest',
          'http://[::1]/hook',
          'http://localhost:8080/hook',
        ]) {
          const res = await guarded.call('POST', '/api/connect/webhook-endpoints', { body: { url } });
          expectError(res, 400, 'invalid_request');
          assert.match(res.body.message, /public address/);
        }
        assert.deepEqual((await guarded.call('GET', '/api/connect/webhook-endpoints')).body.endpoints, []);
      } finally {
        await guarded.close();
      }
    });

    test('events are signed, filtered, in order per endpoint, and never reach another organization', async () => {
      const all = await createEndpoint('/all');
      const syncsOnly = await createEndpoint('/syncs', { events: ['sync.started', 'sync.finished'] });
      await createEndpoint('/org-b', {}, t.orgB.key);

      const { connectionId, jobId } = await runSync(t.orgA.id, 'notes');
      await markConnectionConsentNeeded(
        t.db,
        connectionId,
        'Connect notes again: the source refused the refresh.',
      );
      const upload = await t.call('POST', '/api/connect/knowledgebase-items', {
        body: { title: 'Doc', content: 'A document of our own.' },
      });
      assert.equal(upload.status, 200, JSON.stringify(upload.body));
      const item = upload.body.item as { id: string };
      await t.db.query(`UPDATE items SET indexing_status = 'indexed' WHERE id = $1`, [item.id]);
      assert.equal(await flushIndexedItems(t.db, { itemsPerEvent: 100 }), 1);

      const outcome = await deliver();
      assert.equal(outcome.failed, 0);
      const types = (path: string) => receiver.at(path).map((r) => JSON.parse(r.body).type);
      assert.deepEqual(types('/all'), [
        'sync.started',
        'sync.finished',
        'connection.needs_consent',
        'items.indexed',
      ]);
      assert.deepEqual(types('/syncs'), ['sync.started', 'sync.finished']);
      assert.deepEqual(types('/org-b'), [], "org A's events never reach org B");

      const finished = JSON.parse(receiver.at('/all')[1]!.body);
      assert.equal(finished.data.jobId, jobId);
      assert.equal(finished.data.status, 'succeeded');
      assert.equal(finished.data.connectionId, connectionId);
      assert.equal(typeof finished.data.rowsSynced, 'number');
      assert.deepEqual(JSON.parse(receiver.at('/all')[3]!.body).data, {
        count: 1,
        items: [{ id: item.id, sourceType: 'upload', connectionId: null, crawlId: null }],
      });

      for (const r of receiver.at('/all')) {
        const headers = {
          id: String(r.headers['webhook-id']),
          timestamp: String(r.headers['webhook-timestamp']),
          signature: String(r.headers['webhook-signature']),
        };
        // The specification's algorithm, written out: HMAC-SHA256 keyed with the decoded secret.
        const key = Buffer.from(all.secret.slice('whsec_'.length), 'base64');
        const mac = createHmac('sha256', key)
          .update(`${headers.id}.${headers.timestamp}.${r.body}`)
          .digest('base64');
        assert.equal(headers.signature, `v1,${mac}`);
        assert.match(headers.id, /^msg_/);
        assert.ok(
          verifyWebhookSignature({ secret: all.secret, headers, body: r.body, nowSeconds: now() / 1000 }),
        );
        assert.ok(
          !verifyWebhookSignature({
            secret: syncsOnly.secret,
            headers,
            body: r.body,
            nowSeconds: now() / 1000,
          }),
          "another endpoint's secret does not verify",
        );
      }
      const log = await t.call('GET', `/api/connect/webhook-endpoints/${all.id}/deliveries`);
      assert.equal(log.status, 200);
      assert.equal(log.body.deliveries.length, 4);
      assert.ok(
        log.body.deliveries.every((d: { status: string; attempts: number }) => d.status === 'succeeded'),
      );
      for (const e of [all, syncsOnly]) {
        await t.call('DELETE', `/api/connect/webhook-endpoints/${e.id}`);
      }
    });

    test('an endpoint down for an hour gets every event after, in order', async () => {
      const endpoint = await createEndpoint('/down');
      receiver.state.status = 503;
      await runSync(t.orgA.id, 'wiki');
      await runSync(t.orgA.id, 'storefront');
      // Attempts at 0, 5 s, 5 min and 35 min fail; the events behind the first wait for it.
      for (const wait of [0, 5_000, 300_000, 1_800_000]) {
        later(wait);
        await deliver();
      }
      assert.equal(receiver.at('/down').length, 4);
      assert.ok(receiver.at('/down').every((r) => JSON.parse(r.body).type === 'sync.started'));
      const pending = (await t.call('GET', `/api/connect/webhook-endpoints/${endpoint.id}/deliveries`)).body
        .deliveries;
      const head = pending[pending.length - 1];
      assert.equal(head.attempts, 4);
      assert.equal(head.lastStatusCode, 503);
      assert.equal(head.status, 'pending');
      assert.ok(head.nextAttemptAt);

      receiver.state.status = 200;
      later(30 * 60_000); // an hour after the first attempt it is back up; the next attempt is 2 h after the 4th
      await deliver();
      assert.equal(receiver.at('/down').length, 4);
      later(2 * HOUR - 30 * 60_000);
      await deliver();
      const bodies = receiver
        .at('/down')
        .slice(4)
        .map((r) => JSON.parse(r.body));
      assert.deepEqual(
        bodies.map((b) => `${b.type}:${b.data.sourceType}`),
        ['sync.started:wiki', 'sync.finished:wiki', 'sync.started:storefront', 'sync.finished:storefront'],
      );
      const ids = receiver.at('/down').map((r) => r.headers['webhook-id']);
      assert.equal(new Set(ids.slice(0, 5)).size, 1, 'a retry carries the same webhook-id');
      await t.call('DELETE', `/api/connect/webhook-endpoints/${endpoint.id}`);
    });

    test('an endpoint that fails every attempt for a day is disabled, and sends again once enabled', async () => {
      const endpoint = await createEndpoint('/broken');
      receiver.state.status = 500;
      await runSync(t.orgA.id, 'support_desk');
      let disabled: string[] = [];
      for (const wait of [0, 5_000, 300_000, 1_800_000, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]) {
        later(wait);
        disabled = (await deliver()).disabled;
        if (disabled.length > 0) break;
      }
      assert.deepEqual(disabled, [endpoint.id]);
      const [shown] = (await t.call('GET', '/api/connect/webhook-endpoints')).body.endpoints.filter(
        (e: { id: string }) => e.id === endpoint.id,
      );
      assert.equal(shown.enabled, false);
      assert.match(shown.disabledReason, /every delivery attempt failed for 24 h/);
      assert.ok(logLines.some((l) => l.includes('webhook endpoint disabled') && l.includes(endpoint.id)));

      // The head was given up (its retries spent); the event behind it is still pending, and is sent
      // once the owner enables the endpoint again.
      receiver.state.status = 200;
      const before = receiver.at('/broken').length;
      await deliver();
      assert.equal(receiver.at('/broken').length, before, 'a disabled endpoint is not sent to');
      const enabled = await t.call('PATCH', `/api/connect/webhook-endpoints/${endpoint.id}`, {
        body: { enabled: true },
      });
      assert.equal(enabled.status, 200);
      assert.equal(enabled.body.enabled, true);
      assert.equal(enabled.body.disabledReason, null);
      await deliver();
      assert.deepEqual(
        receiver
          .at('/broken')
          .slice(before)
          .map((r) => JSON.parse(r.body).type),
        ['sync.finished'],
      );
    });

    test('no secret appears in any answer after creation or in the log', async () => {
      const answers = JSON.stringify([
        (await t.call('GET', '/api/connect/webhook-endpoints')).body,
        await t.db.query('SELECT last_error FROM webhook_deliveries'),
      ]);
      for (const secret of secrets) {
        const raw = secret.slice('whsec_'.length);
        assert.ok(!answers.includes(raw));
        assert.ok(!logLines.some((l) => l.includes(raw)));
      }
    });
  });
}
