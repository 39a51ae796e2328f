/**
 * The notes (Notion) sync against what Notion's API holds back: the per-query row cap of data-source
 * queries (`request_status` incomplete, read past by `created_time` windows), a wiki's data sources that
 * answer child data sources among their rows, and synced blocks whose original the integration cannot
 * read (a 404 for those children only). The fake models each; the cap is lowered so a small workspace
 * crosses it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { notesConnector } from '../../src/connectors/notes/index.ts';
import type { NotesCursor } from '../../src/connectors/notes/sync.ts';
import type { RecordedRequest } from '../fakes/fake-server.ts';
import {
  type FakeNotion,
  NOTION_GOOD_TOKEN,
  NotionWorkspace,
  nb,
  np,
  startFakeNotion,
} from '../fakes/notion.ts';
import { SyncedSet } from './helpers.ts';

const INPUT = { access_token: NOTION_GOOD_TOKEN };
const EDITED = '2024-05-20T08:42:00.000Z';

function queries(requests: readonly RecordedRequest[], dataSourceId: string): RecordedRequest[] {
  return requests.filter((r) => r.path === `/v1/data_sources/${dataSourceId}/query`);
}

/** `minute` minutes after 2024-01-01T00:00Z, as Notion stamps `created_time` (to the minute). */
function minute(n: number): string {
  return new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString();
}

describe('notes sync: a data source past the per-query row cap', () => {
  let fake: FakeNotion;
  let ws: NotionWorkspace;
  let dataSourceId: string;
  const rows: string[] = [];
  before(async () => {
    ws = new NotionWorkspace();
    ws.setTime('2025-06-02T10:00:20.000Z');
    ws.queryCap = 10;
    ws.maxPageSize = 5;
    const home = ws.addPage({ title: 'Tracker home', edited: EDITED });
    ({ dataSourceId } = ws.addDatabase({
      title: 'Tickets',
      parent: home,
      edited: EDITED,
      schema: [
        ['Name', 'title'],
        ['Status', 'select'],
      ],
    }));
    // 25 rows against a cap of 10, two created in each minute: window boundaries fall between rows that
    // share a `created_time`. Search does not list them: only the query reaches them.
    for (let r = 0; r < 25; r++) {
      rows.push(
        ws.addRow(dataSourceId, {
          title: `Ticket ${r}`,
          created: minute(Math.floor(r / 2)),
          edited: EDITED,
          searchable: false,
          props: { Status: np.select('Open') },
          blocks: [nb.paragraph(`Ticket ${r} body.`)],
        }),
      );
    }
    fake = await startFakeNotion({ workspace: ws });
  });
  after(() => fake.close());

  it('the fake caps one query and says so only in request_status', async () => {
    const res = await fetch(`${fake.url}/v1/data_sources/${dataSourceId}/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${NOTION_GOOD_TOKEN}`, 'notion-version': '2025-09-03' },
      body: JSON.stringify({ start_cursor: undefined, page_size: 100 }),
    });
    const first = (await res.json()) as { results: unknown[]; has_more: boolean; request_status?: unknown };
    assert.equal(first.results.length, 5);
    let body = first as {
      results: unknown[];
      has_more: boolean;
      next_cursor: string | null;
      request_status?: unknown;
    };
    let seen = body.results.length;
    while (body.has_more) {
      assert.deepEqual(body.request_status, {
        type: 'incomplete',
        incomplete_reason: 'query_result_limit_reached',
      });
      body = (await fetch(`${fake.url}/v1/data_sources/${dataSourceId}/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${NOTION_GOOD_TOKEN}`, 'notion-version': '2025-09-03' },
        body: JSON.stringify({ start_cursor: body.next_cursor }),
      }).then((r) => r.json())) as typeof body;
      seen += body.results.length;
    }
    assert.equal(seen, 10, 'pagination ends at the cap');
    assert.equal(body.next_cursor, null);
    assert.deepEqual(body.request_status, {
      type: 'incomplete',
      incomplete_reason: 'query_result_limit_reached',
    });
  });

  let firstRequests = 0;
  const set = () => new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
  let synced: SyncedSet<NotesCursor>;

  it('reads every row through created_time windows, each row once', async () => {
    synced = set();
    const start = fake.requests.length;
    const out = await synced.sync();
    assert.deepEqual(out.failures, []);
    const rowIds = out.documents.filter((d) => d.table === 'notes_database_rows').map((d) => d.externalId);
    assert.equal(rowIds.length, 25, 'all 25 rows, not the first 10');
    assert.equal(new Set(rowIds).size, 25, 'no row twice');
    assert.deepEqual([...rowIds].sort(), [...rows].sort());

    const sent = queries(fake.requests.slice(start), dataSourceId).map((r) => JSON.parse(r.body!));
    for (const body of sent) {
      assert.deepEqual(body.sorts, [{ timestamp: 'created_time', direction: 'ascending' }]);
    }
    const windows = sent.filter((b) => b.start_cursor === undefined);
    assert.deepEqual(
      windows.map((b) => b.filter ?? null),
      [
        null,
        { timestamp: 'created_time', created_time: { on_or_after: minute(4) } },
        { timestamp: 'created_time', created_time: { on_or_after: minute(8) } },
      ],
      'a fresh query from the last created_time seen, until one is complete',
    );
    firstRequests = out.requests;
  });

  it('an unchanged sync costs under a quarter of the first', async () => {
    ws.advance(5 * 60_000);
    const out = await synced.sync();
    assert.equal(out.documents.length, 0);
    assert.equal(out.deleted.length, 0);
    assert.deepEqual(out.failures, []);
    assert.ok(out.requests * 4 <= firstRequests, `${out.requests} against ${firstRequests}`);
    console.log(
      `# notes capped data source: first sync ${firstRequests} requests, unchanged ${out.requests}`,
    );
  });

  it('more rows in one created_time than the cap: a failure naming it, the rows before it kept', async () => {
    const crowd = new NotionWorkspace();
    crowd.queryCap = 5;
    const home = crowd.addPage({ title: 'Import home', edited: EDITED });
    const { dataSourceId: imported } = crowd.addDatabase({
      title: 'Imported',
      parent: home,
      edited: EDITED,
      schema: [['Name', 'title']],
    });
    for (let r = 0; r < 3; r++)
      crowd.addRow(imported, { title: `Early ${r}`, created: minute(r), edited: EDITED });
    // A CSV import: eight rows stamped with one minute.
    for (let r = 0; r < 8; r++)
      crowd.addRow(imported, { title: `Bulk ${r}`, created: minute(10), edited: EDITED });
    const server = await startFakeNotion({ workspace: crowd });
    try {
      const out = await new SyncedSet<NotesCursor>(notesConnector, INPUT, server.url).sync();
      const rowTitles = out.documents.filter((d) => d.table === 'notes_database_rows').map((d) => d.title);
      assert.ok(rowTitles.includes('Early 0') && rowTitles.includes('Bulk 0'));
      assert.equal(out.failures.length, 1);
      const failure = out.failures[0]!;
      assert.equal(failure.externalId, undefined, 'no document id: a reset keeps the rows it did not reach');
      assert.equal(failure.retryable, false);
      assert.match(failure.error.message, new RegExp(`data source ${imported}.*${minute(10)}`));
    } finally {
      await server.close();
    }
  });
});

describe('notes sync: a wiki whose data source holds databases', () => {
  let fake: FakeNotion;
  let ws: NotionWorkspace;
  let wikiSource: string;
  let nestedSource: string;
  let nestedRows: string[];
  before(async () => {
    ws = new NotionWorkspace();
    const home = ws.addPage({ title: 'Company home', edited: EDITED });
    ({ dataSourceId: wikiSource } = ws.addDatabase({
      title: 'Wiki',
      parent: home,
      edited: EDITED,
      schema: [['Page', 'title']],
    }));
    ws.addRow(wikiSource, { title: 'Welcome', edited: EDITED, blocks: [nb.paragraph('Start here.')] });
    // A database inside the wiki, which search does not list: only the wiki's query names it.
    const nested = ws.addDatabase({
      title: 'Policies',
      parent: { dataSource: wikiSource },
      edited: EDITED,
      searchable: false,
      schema: [
        ['Name', 'title'],
        ['Owner', 'rich_text'],
      ],
    });
    nestedSource = nested.dataSourceId;
    nestedRows = ['Travel', 'Expenses'].map((title) =>
      ws.addRow(nestedSource, {
        title,
        edited: EDITED,
        searchable: false,
        props: { Owner: np.text('Finance') },
        blocks: [nb.paragraph(`${title} policy.`)],
      }),
    );
    ws.addRow(wikiSource, { title: 'Benefits', edited: EDITED, blocks: [nb.paragraph('Health and more.')] });
    fake = await startFakeNotion({ workspace: ws });
  });
  after(() => fake.close());

  it('the fake answers the nested data source among the wiki rows', async () => {
    const body = (await fetch(`${fake.url}/v1/data_sources/${wikiSource}/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${NOTION_GOOD_TOKEN}`, 'notion-version': '2025-09-03' },
      body: '{}',
    }).then((r) => r.json())) as { results: Array<{ object: string; id: string }>; type: string };
    assert.equal(body.type, 'page_or_data_source');
    assert.deepEqual(
      body.results.map((r) => r.object),
      ['page', 'data_source', 'page'],
    );
    assert.equal(body.results[1]!.id, nestedSource);
  });

  it('follows the child data source into its rows, without a failure', async () => {
    const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
    const out = await set.sync();
    assert.deepEqual(out.failures, []);
    assert.deepEqual(set.titles(), ['Benefits', 'Company home', 'Expenses', 'Travel', 'Welcome']);
    for (const id of nestedRows) {
      const row = set.doc(id)!;
      assert.equal(row.table, 'notes_database_rows');
      assert.deepEqual(row.tags, ['notes', 'Policies']);
      assert.match(row.markdown, /\| Owner \| Finance \|/);
    }
    assert.ok(out.cursor!.dataSources.includes(nestedSource), 'remembered for the next sync');

    // The next sync: nothing changed, nothing failed.
    ws.advance(10 * 60_000);
    const again = await set.sync();
    assert.deepEqual(again.failures, []);
    assert.equal(again.documents.length, 0);
    assert.equal(again.deleted.length, 0);
  });
});

describe('notes sync: a synced block whose original the integration cannot read', () => {
  let fake: FakeNotion;
  let ws: NotionWorkspace;
  let shared: string;
  let original: string;
  let copy: string;
  before(async () => {
    ws = new NotionWorkspace();
    const status = nb.syncedOriginal([nb.paragraph('Private status: the migration slipped a week.')]);
    original = status.id;
    const hidden = ws.addPage({ title: 'Leadership notes', edited: EDITED, blocks: [status] });
    const synced = nb.syncedCopy(original);
    copy = synced.id;
    shared = ws.addPage({
      title: 'Team update',
      edited: EDITED,
      blocks: [
        nb.paragraph('Sprint 12 is done.'),
        synced,
        nb.toggle('Details', [nb.paragraph('Three bugs fixed.')]),
      ],
    });
    ws.addPage({ title: 'Retro', parent: shared, edited: EDITED, blocks: [nb.paragraph('What went well.')] });
    ws.unshare(hidden);
    fake = await startFakeNotion({ workspace: ws });
  });
  after(() => fake.close());

  it('the fake answers 404 naming the original for the copy, and reads the page', async () => {
    const headers = { authorization: `Bearer ${NOTION_GOOD_TOKEN}`, 'notion-version': '2025-09-03' };
    const res = await fetch(`${fake.url}/v1/blocks/${copy}/children`, { headers });
    assert.equal(res.status, 404);
    const body = (await res.json()) as { code: string; message: string };
    assert.equal(body.code, 'object_not_found');
    assert.match(body.message, new RegExp(original));
    assert.equal((await fetch(`${fake.url}/v1/blocks/${shared}/children`, { headers })).status, 200);
  });

  it('costs only that block: the page is synced, the block named in a failure that is a note', async () => {
    const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
    const out = await set.sync();
    const page = set.doc(shared);
    assert.ok(page, 'the page is synced');
    assert.match(page.markdown, /Sprint 12 is done\./);
    assert.match(page.markdown, /Three bugs fixed\./, 'blocks after the unreadable one are kept');
    assert.doesNotMatch(page.markdown, /Private status/);
    assert.deepEqual(set.titles(), ['Retro', 'Team update'], 'the child page too');

    assert.equal(out.failures.length, 1, 'one failure: the block');
    const note = out.failures[0]!;
    assert.equal(note.externalId, shared);
    assert.equal(note.retryable, false);
    assert.match(note.error.message, new RegExp(`block ${copy}`));
    assert.match(note.error.message, new RegExp(original));
    assert.match(note.error.message, /not shared with the integration/);

    // A reset keeps the page (it is read, and the note names it).
    const reset = await set.sync('full');
    assert.ok(set.doc(shared));
    assert.equal(reset.failures.length, 1);
    assert.equal(reset.deleted.length, 0);
  });
});

describe('notes sync: a search answer marked incomplete', () => {
  it('ends in a failure without a document id, so a reset keeps what search did not list', async () => {
    const ws = new NotionWorkspace();
    const guide = ws.addPage({ title: 'Guide', edited: EDITED, blocks: [nb.paragraph('Read me.')] });
    ws.addPage({ title: 'FAQ', edited: EDITED, blocks: [nb.paragraph('Ask me.')] });
    const fake = await startFakeNotion({ workspace: ws });
    try {
      const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
      await set.sync();
      // Notion documents no cap on search; its lists share `request_status`, so the sync must not take a
      // cut search for the whole workspace.
      ws.injectFault(
        (r) => r.path === '/v1/search',
        {
          status: 200,
          body: {
            object: 'list',
            results: [],
            next_cursor: null,
            has_more: false,
            type: 'page_or_data_source',
            page_or_data_source: {},
            request_status: { type: 'incomplete', incomplete_reason: 'query_result_limit_reached' },
          },
        },
        1,
      );
      ws.unshare(guide);
      const out = await set.sync('full');
      assert.equal(out.failures.length, 1);
      assert.equal(out.failures[0]!.externalId, undefined);
      assert.match(out.failures[0]!.error.message, /search said its result was incomplete/);
      assert.deepEqual(set.titles(), ['FAQ'], 'known pages are still asked about one by one');
    } finally {
      await fake.close();
    }
  });
});
