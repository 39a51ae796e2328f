/**
 * notes (Notion) through the API and the job engine, in both storage modes, where Notion holds things
 * back: a data source past the per-query row cap (lowered here), a wiki whose data source holds a
 * database, and a page showing a synced block whose original the integration cannot read. Every row
 * becomes an item, and the unreadable block is the job's one failure: a note naming the page, whose item
 * is there all the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type FakeNotion, NOTION_GOOD_TOKEN, NotionWorkspace, nb, startFakeNotion } from '../fakes/notion.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from '../jobs/helpers.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

const EDITED = '2024-05-20T08:42:00.000Z';

function workspace() {
  const ws = new NotionWorkspace();
  ws.queryCap = 4;
  const home = ws.addPage({ title: 'Ops home', edited: EDITED, blocks: [nb.paragraph('Where ops lives.')] });
  const { dataSourceId: tickets } = ws.addDatabase({
    title: 'Tickets',
    parent: home,
    edited: EDITED,
    schema: [['Name', 'title']],
  });
  for (let r = 0; r < 10; r++) {
    ws.addRow(tickets, {
      title: `Ticket ${r}`,
      created: new Date(Date.UTC(2024, 0, 1, 0, r)).toISOString(),
      edited: EDITED,
      searchable: false,
    });
  }
  const { dataSourceId: wiki } = ws.addDatabase({
    title: 'Wiki',
    parent: home,
    edited: EDITED,
    schema: [['Page', 'title']],
  });
  const { dataSourceId: policies } = ws.addDatabase({
    title: 'Policies',
    parent: { dataSource: wiki },
    edited: EDITED,
    searchable: false,
    schema: [['Name', 'title']],
  });
  ws.addRow(policies, { title: 'Travel policy', edited: EDITED, searchable: false });
  const original = nb.syncedOriginal([nb.paragraph('Board minutes.')]);
  const board = ws.addPage({ title: 'Board', edited: EDITED, blocks: [original] });
  const update = ws.addPage({
    title: 'Team update',
    edited: EDITED,
    blocks: [nb.paragraph('Sprint 12 is done.'), nb.syncedCopy(original.id)],
  });
  ws.unshare(board);
  return { ws, update };
}

for (const mode of STORAGE_MODES) {
  describe(`notes (Notion) what Notion holds back, through the job engine (${mode})`, () => {
    let fake: FakeNotion;
    let t: TestApp;
    let update: string;
    before(async () => {
      const built = workspace();
      update = built.update;
      fake = await startFakeNotion({ workspace: built.ws });
      t = await startTestApp(mode, {
        config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_NOTES_BASE_URL: fake.url },
        parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
      });
      t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    test('every row is an item; the unreadable block is a note of the job, not a lost page', async () => {
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'notion', access_token: NOTION_GOOD_TOKEN } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      // The connection's first sync, queued by the create.
      const job = await waitForJob(t, created.body.jobId as number);

      const items = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { limit: 100 } });
      const titles = (items.body.items as Array<{ title: string }>).map((i) => i.title).sort();
      const tickets = Array.from({ length: 10 }, (_, r) => `Ticket ${r}`);
      assert.deepEqual(titles, ['Ops home', 'Team update', 'Travel policy', ...tickets].sort());

      assert.equal(job.status, 'incomplete', JSON.stringify(job));
      assert.equal(job.failureCount, 1);
      const note = job.failures[0]!;
      assert.equal(note.externalId, update);
      assert.equal(note.table, 'notes_pages');
      assert.equal(note.retryable, false);
      assert.match(note.message, /was synced without synced block .* not shared with the integration/);
      // Sharing the original's page is a permission someone can grant: the job says so among its warnings.
      const warnings = job.warnings as Array<{ code: string; subject: string; message: string }>;
      assert.deepEqual(
        warnings.map((w) => [w.code, w.subject]),
        [['permission_missing', 'notes_pages']],
      );
      assert.match(warnings[0]!.message, new RegExp(`Notion page ${update}`));
    });
  });
}
