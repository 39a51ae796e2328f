/**
 * OAuth token-life benchmark (`node bench/oauth-token-life.ts`): prints a table, writes
 * bench/results/oauth-token-life.json.
 *
 * A support_desk sync over OAuth against the Zendesk fakes (test/fakes/zendesk.ts and zendesk-oauth.ts:
 * 30-minute access tokens, 30-day refresh tokens spent once used) that outlives three token lifetimes:
 * the test clock moves on by BENCH_TOKEN_MINUTES_PER_REQUEST (default 4) with every API request, so a
 * first sync of BENCH_TOKEN_DOCS articles (default 2,000, export pages of 100) spans well over 90 minutes
 * of token time. Reported: API requests, token refreshes, requests refused (401), wall time; and the same
 * sync with a clock that stands still (no refresh needed) for comparison. Request pacing is off.
 *
 * Options: BENCH_TOKEN_DOCS, BENCH_TOKEN_MINUTES_PER_REQUEST, BENCH_STORAGE (`pglite` default, or `postgres`).
 */
import { randomBytes } from 'node:crypto';
import { bearerToken } from '../test/fakes/fake-server.ts';
import { startZendeskAuth, zendeskOAuthSettings } from '../test/fakes/zendesk-oauth.ts';
import { FakeZendeskAccount, startFakeZendesk } from '../test/fakes/zendesk.ts';
import { FAST_WORKERS, waitForJob } from '../test/jobs/helpers.ts';
import { type StorageMode, startTestApp } from '../test/support/harness.ts';
import { printTable, writeResult } from './lib.ts';

const DOCS = Number(process.env['BENCH_TOKEN_DOCS'] ?? 2_000);
const MINUTES_PER_REQUEST = Number(process.env['BENCH_TOKEN_MINUTES_PER_REQUEST'] ?? 4);
const STORAGE = (process.env['BENCH_STORAGE'] ?? 'pglite') as StorageMode;
const CLIENT_ID = 'kb-bench-client';
const CLIENT_SECRET = `bench-${randomBytes(8).toString('hex')}`;

interface Row {
  clock: string;
  requests: number;
  refreshes: number;
  refused401: number;
  tokenMinutes: number;
  seconds: number;
}

async function run(minutesPerRequest: number): Promise<Row> {
  const clock = { offset: 0, now: () => Date.now() + clock.offset };
  const account = new FakeZendeskAccount();
  const section = account.addSection(account.addCategory('Guides'), 'All');
  for (let n = 1; n <= DOCS; n++) {
    account.addArticle({ section, title: `Item ${n}`, body: `<p>Article ${n} ${'text '.repeat(40)}</p>` });
  }
  account.articleExportPageSize = 100;
  const zendesk = await startFakeZendesk({ account });
  const auth = await startZendeskAuth(zendesk, {
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    now: clock.now,
  });
  const t = await startTestApp(STORAGE, {
    config: zendeskOAuthSettings({
      zendeskUrl: zendesk.url,
      authUrl: auth.url,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      publicUrl: 'https://kb.example.test',
    }),
    parts: {
      sourceHttp: { maxAttempts: 5, baseDelayMs: 50, maxDelayMs: 1_000, requestsPerSecond: 1_000_000 },
      tokenClock: clock.now,
    },
  });
  const pool = t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
  try {
    const init = await t.call('POST', '/api/connect/oauth/initiate', {
      body: { type: 'support_desk', subdomain: 'acme' },
    });
    const granted = await fetch(init.body.consentUrl, { redirect: 'manual' });
    const callback = new URL(granted.headers.get('location')!);
    await t.call('GET', callback.pathname + callback.search, { key: null });
    const created = await t.call('POST', '/api/connect/connection', {
      body: { source: { type: 'support_desk', subdomain: 'acme' } },
    });
    if (created.status !== 200) throw new Error(JSON.stringify(created.body));

    let requests = 0;
    let refused = 0;
    account.onRequest = (req) => {
      const token = bearerToken(req);
      if (token === undefined) return undefined;
      requests++;
      if (!auth.accepts(token)) refused++;
      clock.offset += minutesPerRequest * 60_000;
      return undefined;
    };
    const refreshesBefore = auth.counts.refreshes;
    const started = performance.now();
    const res = await t.call('POST', '/api/connect/run-sync', { body: { type: 'support_desk' } });
    const job = await waitForJob(t, res.body.jobId as number, undefined, 3_600_000);
    const seconds = (performance.now() - started) / 1000;
    if (job.status !== 'succeeded') throw new Error(`sync ${job.status}: ${job.error}`);
    return {
      clock: minutesPerRequest > 0 ? `+${minutesPerRequest} min a request` : 'standing still',
      requests,
      refreshes: auth.counts.refreshes - refreshesBefore,
      refused401: refused,
      tokenMinutes: Math.round(clock.offset / 60_000),
      seconds: Math.round(seconds * 100) / 100,
    };
  } finally {
    await pool.stop();
    await t.close();
    await zendesk.close();
    await auth.close();
  }
}

const rows = [await run(MINUTES_PER_REQUEST), await run(0)];
printTable(
  `support_desk over OAuth, ${DOCS} articles, 30-minute access tokens (${STORAGE})`,
  rows.map((r) => ({
    clock: r.clock,
    'token time (min)': String(r.tokenMinutes),
    requests: String(r.requests),
    refreshes: String(r.refreshes),
    '401s': String(r.refused401),
    'wall (s)': r.seconds.toFixed(2),
  })),
);
writeResult('oauth-token-life', { docs: DOCS, storage: STORAGE, rows });
