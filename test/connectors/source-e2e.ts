/**
 * The end-to-end scenario every content source must pass, through the HTTP API and the job engine, in
 * both storage modes: create connection → run-sync → job succeeds → items listed with the right fields →
 * a search finds a sentence from a synced page → a second sync with no change writes no row and asks the
 * source for a small fraction of what the first asked.
 *
 * A source's test file calls {@link describeSourceEndToEnd} with its fake and what it expects.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RecordedRequest } from '../fakes/fake-server.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from '../jobs/helpers.ts';
import { withSearch } from '../support/embedding.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

/** A fake source API on loopback, as the scenario needs it. */
export interface SourceFakeHandle {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** One item the first sync must produce, found by title. */
export interface ExpectedItem {
  title: string;
  source_url: string;
  source_table_name: string;
  visibility: 'public' | 'private';
  /** Tags the item must carry (it may carry more). */
  tags: string[];
}

export interface SourceEndToEnd {
  /** Names the describe block, e.g. `notes (Notion)`. */
  name: string;
  /** The connector's base-URL setting (`KB_NOTES_BASE_URL`): pointed at the fake. */
  baseUrlSetting: string;
  startFake(): Promise<SourceFakeHandle>;
  /** The `source` of the create-connection request (type or alias included). */
  source(fake: SourceFakeHandle): Record<string, unknown>;
  /** How many items the first sync must produce. */
  itemCount: number;
  expected: ExpectedItem[];
  /** A search query and the title of the item whose chunk must rank first. */
  search: { query: string; topTitle: string };
  /**
   * Largest share of the first sync's requests an unchanged second sync may make (default 0.2). The
   * test prints the real numbers.
   */
  maxIncrementalShare?: number;
}

interface ItemRow {
  id: string;
  title: string;
  source_url: string;
  source_table_name: string;
  source_type: string;
  visibility: string;
  tags: string[];
}

export function describeSourceEndToEnd(spec: SourceEndToEnd): void {
  for (const mode of STORAGE_MODES) {
    describe(`${spec.name} end to end through the API (${mode})`, () => {
      let fake: SourceFakeHandle;
      let t: TestApp;
      let search: Awaited<ReturnType<typeof withSearch>>;
      before(async () => {
        fake = await spec.startFake();
        t = await startTestApp(mode, {
          config: { KB_CRAWL_ALLOW_PRIVATE: 'true', [spec.baseUrlSetting]: fake.url },
          // No pacing against a local fake: the tests would only wait.
          parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
        });
        search = await withSearch(t);
        t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
      });
      after(async () => {
        await t?.close();
        await fake?.close();
      });

      test('connect, sync, list, search; an unchanged second sync writes nothing', async () => {
        // The test counts each sync's requests, so it starts the first one itself.
        const created = await t.call('POST', '/api/connect/connection', {
          body: { source: spec.source(fake), sync: false },
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const type = String(spec.source(fake).type);

        const firstStart = fake.requests.length;
        const first = await runAndWait(t, type);
        assert.equal(first.status, 'succeeded', JSON.stringify(first));
        const firstRequests = fake.requests.length - firstStart;

        const items = await allItems(t);
        assert.equal(items.length, spec.itemCount, items.map((i) => i.title).join(' | '));
        assert.equal(first.rowsSynced, spec.itemCount, 'rowsSynced counts the documents created');
        assert.ok(first.bytesSynced > 0, 'bytesSynced counts what the source sent');
        for (const want of spec.expected) {
          const got = items.find((i) => i.title === want.title);
          assert.ok(got, `an item titled ${JSON.stringify(want.title)}`);
          assert.equal(got.source_type, 'integration');
          assert.equal(got.source_url, want.source_url, want.title);
          assert.equal(got.source_table_name, want.source_table_name, want.title);
          assert.equal(got.visibility, want.visibility, want.title);
          for (const tag of want.tags)
            assert.ok(got.tags.includes(tag), `${want.title} tagged ${tag}: ${got.tags}`);
        }

        await search.drain();
        const res = await t.call('POST', '/api/consume/search', {
          body: { query: spec.search.query, limit: 3, includeEmbedding: false },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(
          res.body.result[0]?.title,
          spec.search.topTitle,
          JSON.stringify(res.body.result.map((r: { title: string }) => r.title)),
        );

        const versions = await rowVersions(t);
        const secondStart = fake.requests.length;
        const second = await runAndWait(t, type);
        assert.equal(second.status, 'succeeded', JSON.stringify(second));
        const secondRequests = fake.requests.length - secondStart;
        assert.equal(second.rowsSynced, 0);
        assert.deepEqual(await rowVersions(t), versions, 'no item row was rewritten');
        const share = secondRequests / firstRequests;
        console.log(
          `# ${spec.name} (${mode}): first sync ${firstRequests} requests, unchanged second sync ${secondRequests} (${(share * 100).toFixed(1)}%)`,
        );
        assert.ok(
          share <= (spec.maxIncrementalShare ?? 0.2),
          `the unchanged sync asked ${secondRequests} requests against ${firstRequests}`,
        );
      });
    });
  }
}

async function runAndWait(t: TestApp, type: string) {
  const run = await t.call('POST', '/api/connect/run-sync', { body: { type } });
  assert.equal(run.status, 200, JSON.stringify(run.body));
  return waitForJob(t, run.body.jobId as number, undefined, 60_000);
}

async function allItems(t: TestApp): Promise<ItemRow[]> {
  const out: ItemRow[] = [];
  for (let page = 1; ; page++) {
    const res = await t.call('POST', '/api/connect/knowledgebase-items/query', {
      body: { limit: 100, page },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const items = res.body.items as ItemRow[];
    out.push(...items);
    if (items.length < 100) return out;
  }
}

/** Each item's row version (`xmin`): it changes whenever the row is written, even with equal values. */
async function rowVersions(t: TestApp): Promise<Record<string, string>> {
  const rows = await t.db.query<{ id: string; v: string }>(
    'SELECT id, xmin::text AS v FROM items ORDER BY id',
  );
  return Object.fromEntries(rows.map((r) => [r.id, r.v]));
}
