/**
 * The notes (Notion) content sync against the fake Notion API: enumeration by search and by walking,
 * pagination boundaries, retries, failures of one document, revoked tokens, change and deletion
 * detection between syncs (edits, the boundary minute, moves, trash, unshare, deletion), reset, cancel.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { notesConnector } from '../../src/connectors/notes/index.ts';
import type { NotesCursor } from '../../src/connectors/notes/sync.ts';
import { AppError } from '../../src/lib/errors.ts';
import type { RecordedRequest } from '../fakes/fake-server.ts';
import {
  type FakeNotion,
  NOTION_GOOD_TOKEN,
  NotionWorkspace,
  nb,
  notionError,
  np,
  type SampleIds,
  sampleWorkspace,
  startFakeNotion,
} from '../fakes/notion.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const INPUT = { access_token: NOTION_GOOD_TOKEN };

/** Ids whose children were asked for in `requests`. */
function childrenAsked(requests: readonly RecordedRequest[]): string[] {
  return requests.flatMap((r) => {
    const m = /^\/v1\/blocks\/([^/]+)\/children$/.exec(r.path);
    return m ? [m[1]!] : [];
  });
}

function titles(docs: ReadonlyArray<{ title: string }>): string[] {
  return docs.map((d) => d.title).sort();
}

describe('notes sync: first pass', () => {
  let fake: FakeNotion;
  let ids: SampleIds;
  before(async () => {
    const sample = sampleWorkspace();
    ids = sample.ids;
    fake = await startFakeNotion({ workspace: sample.workspace });
  });
  after(() => fake.close());

  it('finds pages by search and by walking, rows through their data source, each once', async () => {
    const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
    const out = await set.sync();
    assert.deepEqual(out.failures, []);
    assert.deepEqual(titles(out.documents), [
      'Billing',
      'Column notes',
      'Deep dive',
      'Engineering handbook',
      'First week',
      'Gateway',
      'Onboarding guide',
      'Release notes',
      'Runbook',
      'Search API',
    ]);
    assert.equal(
      new Set(out.documents.map((d) => d.externalId)).size,
      out.documents.length,
      'no document twice',
    );

    // Search did not list these: only the walk (child pages) and the query (rows) found them.
    const searched = await fetch(`${fake.url}/v1/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${NOTION_GOOD_TOKEN}`, 'notion-version': '2025-09-03' },
      body: '{}',
    }).then((r) => r.json() as Promise<{ results: Array<{ id: string }> }>);
    const listed = new Set(searched.results.map((r) => r.id));
    for (const hidden of [ids.deepDive, ids.runbook, ids.gatewayRow]) assert.ok(!listed.has(hidden));

    const byTitle = new Map(out.documents.map((d) => [d.title, d]));
    const handbook = byTitle.get('Engineering handbook')!;
    assert.equal(handbook.table, 'notes_pages');
    assert.equal(handbook.visibility, 'private');
    assert.equal(handbook.url, fake.workspace.urlOf(ids.handbook));
    assert.match(handbook.url, /^https:\/\/www\.notion\.so\/Engineering-handbook-[0-9a-f]{32}$/);
    assert.deepEqual(handbook.tags, ['notes']);
    assert.match(handbook.version!, /^2024-05-20T08:42:00\.000Z\|/);
    assert.deepEqual(byTitle.get('Deep dive')!.tags, ['notes', 'Engineering handbook']);
    assert.deepEqual(byTitle.get('Runbook')!.tags, ['notes', 'Deep dive']);
    assert.deepEqual(
      byTitle.get('Column notes')!.tags,
      ['notes', 'Engineering handbook'],
      'parent is a column',
    );

    const row = byTitle.get('Search API')!;
    assert.equal(row.table, 'notes_database_rows');
    assert.deepEqual(row.tags, ['notes', 'Services']);
    assert.equal(row.url, fake.workspace.urlOf(ids.searchRow));
    assert.match(
      row.markdown,
      /^\| Property \| Value \|\n\| --- \| --- \|\n\| Status \| Live \|\n\| Tier \| 1 \|/,
    );
    assert.match(row.markdown, /\| Notes \| Answers queries \\\| fast \|/);
    assert.match(row.markdown, /\n\nThe search API answers semantic and keyword queries\.$/);

    // A synced copy is read from its original; child pages and databases are never entered as content.
    const deepDive = byTitle.get('Deep dive')!;
    assert.match(deepDive.markdown, /Shared status: all systems operational\./);
    const asked = childrenAsked(fake.requests);
    assert.ok(asked.includes(ids.syncedOriginal));
    assert.ok(!asked.includes(ids.database), 'a child database is not read as blocks');
    assert.equal(asked.filter((id) => id === ids.syncedOriginal).length, 2, 'once per page that shows it');
    assert.equal(out.cursor?.dataSources.length, 1);
    assert.match(out.cursor!.since!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/);
  });
});

describe('notes sync: pagination at the page-size boundary', () => {
  let fake: FakeNotion;
  let ws: NotionWorkspace;
  let exactly5: string;
  let six: string;
  before(async () => {
    ws = new NotionWorkspace();
    ws.maxPageSize = 5;
    const at = '2024-01-01T00:00:00.000Z';
    exactly5 = ws.addPage({
      title: 'Five blocks',
      edited: at,
      blocks: [1, 2, 3, 4, 5].map((n) => nb.paragraph(`Paragraph ${n}.`)),
    });
    six = ws.addPage({
      title: 'Six blocks',
      edited: at,
      blocks: [1, 2, 3, 4, 5, 6].map((n) => nb.paragraph(`Line ${n}.`)),
    });
    for (let i = 0; i < 6; i++)
      ws.addPage({ title: `Note ${i}`, edited: at, blocks: [nb.paragraph(`Note ${i}.`)] });
    const home = ws.addPage({ title: 'Tasks home', edited: at });
    const { dataSourceId } = ws.addDatabase({
      title: 'Tasks',
      parent: home,
      edited: at,
      schema: [
        ['Task', 'title'],
        ['Done', 'checkbox'],
      ],
    });
    for (let i = 0; i < 5; i++)
      ws.addRow(dataSourceId, { title: `Task ${i}`, edited: at, props: { Done: np.checkbox(i % 2 === 0) } });
    fake = await startFakeNotion({ workspace: ws });
  });
  after(() => fake.close());

  it('reads every page of search, children and queries, and stops at a full last page', async () => {
    // Search lists 9 pages, 1 data source and 5 rows: 15 results, three full pages of 5.
    const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
    const start = fake.requests.length;
    const out = await set.sync();
    const sent = fake.requests.slice(start);
    assert.deepEqual(out.failures, []);
    assert.equal(out.documents.length, 14);
    assert.equal(sent.filter((r) => r.path === '/v1/search').length, 3, 'no fourth search request');
    const searchBodies = sent.filter((r) => r.path === '/v1/search').map((r) => JSON.parse(r.body));
    assert.equal(searchBodies[0].page_size, 100);
    assert.equal(searchBodies[0].start_cursor, undefined);
    assert.ok(searchBodies[1].start_cursor && searchBodies[2].start_cursor !== searchBodies[1].start_cursor);
    const asked = childrenAsked(sent);
    assert.equal(asked.filter((id) => id === exactly5).length, 1, 'exactly five blocks: one request');
    assert.equal(asked.filter((id) => id === six).length, 2, 'six blocks: two requests');
    assert.equal(sent.filter((r) => r.path.endsWith('/query')).length, 1, 'five rows: one query request');
    const sixDoc = out.documents.find((d) => d.title === 'Six blocks')!;
    assert.equal(sixDoc.markdown, [1, 2, 3, 4, 5, 6].map((n) => `Line ${n}.`).join('\n\n'));
    assert.equal(out.documents.filter((d) => d.table === 'notes_database_rows').length, 5);
  });

  it('throws on a cursor Notion gives twice', async () => {
    const loop = {
      status: 200,
      body: {
        object: 'list',
        results: [],
        next_cursor: 'c2FtZQ',
        has_more: true,
        type: 'page_or_data_source',
        page_or_data_source: {},
      },
    };
    fake.failNext(2, loop);
    const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
    await assert.rejects(set.sync(), /pagination stopped/);
  });
});

describe('notes sync: retries, failures of one document, revoked tokens, cancel', () => {
  let fake: FakeNotion;
  let ids: SampleIds;
  before(async () => {
    const sample = sampleWorkspace();
    ids = sample.ids;
    fake = await startFakeNotion({ workspace: sample.workspace });
  });
  after(() => fake.close());

  it('waits out a 429 burst with Retry-After and a 500, then succeeds', async () => {
    const delays: number[] = [];
    const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url, {
      ...fastHttp(delays),
      requestsPerSecond: 100_000,
    });
    fake.rateLimitNext(2, 1);
    // A 500 in the middle of the pass, on the data source query.
    fake.workspace.injectFault(
      (r) => r.path.endsWith('/query'),
      notionError(500, 'internal_server_error', 'Unexpected error.'),
      1,
    );
    const out = await set.sync();
    assert.deepEqual(out.failures, []);
    assert.equal(out.documents.length, 10);
    assert.deepEqual(delays.slice(0, 2), [1000, 1000], 'Retry-After: 1 honoured twice');
    assert.equal(delays.length, 3, 'and one backoff for the 500');
    const statuses = fake.requests.filter((r) => r.path.endsWith('/query'));
    assert.equal(statuses.length, 2, 'the query was asked again');
  });

  it('turns a malformed page and a malformed block into failures of those pages; the rest lands', async () => {
    const ws = fake.workspace;
    ws.corrupt(ids.releaseNotes);
    ws.edit(ids.firstWeek, {
      append: [nb.raw({ object: 'block', id: '3f0a9b1e-0000-4000-8000-00000000bad1', has_children: false })],
    });
    try {
      const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
      const out = await set.sync();
      const failed = out.failures.map((f) => f.externalId).sort();
      assert.deepEqual(failed, [ids.firstWeek, ids.releaseNotes].sort());
      assert.ok(out.failures.every((f) => f.retryable === false));
      assert.match(out.failures.find((f) => f.externalId === ids.firstWeek)!.error.message, /block shape/);
      assert.equal(out.documents.length, 8);
      assert.ok(!titles(out.documents).includes('Release notes'));
    } finally {
      ws.edit(ids.firstWeek, { replace: [nb.paragraph('Meet your buddy and ship a small fix.')] });
      ws.corrupt(ids.releaseNotes, false);
    }
  });

  it('a 404 below a page costs that block (a note naming it), a 5xx that keeps failing the page (retryable)', async () => {
    const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
    await set.sync();
    const before = set.docs.size;
    const ws = fake.workspace;
    ws.injectFault(
      (r) => r.path === `/v1/blocks/${ids.syncedOriginal}/children`,
      notionError(404, 'object_not_found', `Could not find block with ID: ${ids.syncedOriginal}.`),
      2,
    );
    ws.injectFault(
      (r) => r.path === `/v1/blocks/${ids.onboarding}/children`,
      notionError(502, 'bad_gateway', 'Bad gateway.'),
      3,
    );
    const out = await set.sync('full');
    const byId = new Map(out.failures.map((f) => [f.externalId, f]));
    assert.equal(byId.get(ids.handbook)?.retryable, false);
    assert.equal(byId.get(ids.deepDive)?.retryable, false);
    assert.equal(byId.get(ids.onboarding)?.retryable, true);
    assert.equal(out.failures.length, 3);
    for (const id of [ids.handbook, ids.deepDive]) {
      assert.match(
        byId.get(id)!.error.message,
        new RegExp(`without (synced block|the content of block) .*${ids.syncedOriginal}`),
      );
      const doc = out.documents.find((d) => d.externalId === id);
      assert.ok(doc, 'the page is synced without the block');
      assert.doesNotMatch(doc.markdown, /Shared status/);
    }
    assert.ok(!out.documents.some((d) => d.externalId === ids.onboarding), 'the 5xx page is not');
    assert.equal(out.deleted.length, 0, 'a failed page is not taken for a deleted one');
    assert.equal(set.docs.size, before, 'failed pages are kept through a reset');
    assert.ok(titles(out.documents).includes('First week'), 'the child of a failed page is still synced');
  });

  it('throws a clear error naming the source for a revoked token, without the token', async () => {
    const set = new SyncedSet<NotesCursor>(
      notesConnector,
      { access_token: 'ntn_revoked_token_998877' },
      fake.url,
    );
    const err = await set.sync().then(
      () => assert.fail('the sync should throw'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'source_auth_failed');
    assert.match(err.message, /^Notion \(notes\) rejected the token \(HTTP 401: API token is invalid\.\)/);
    assert.doesNotMatch(err.message, /ntn_revoked_token_998877/);
  });

  it('throws for a 403 in the middle of a pass, not one failure per page', async () => {
    fake.workspace.injectFault(
      (r) => r.path === `/v1/blocks/${ids.deepDive}/children`,
      notionError(403, 'restricted_resource', 'API token does not have access to this resource.'),
      1,
    );
    const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
    await assert.rejects(set.sync(), (e: unknown) => e instanceof AppError && /HTTP 403/.test(e.message));
  });

  it('stops promptly when the signal aborts', async () => {
    const controller = new AbortController();
    let seen = 0;
    let abortedAt = -1;
    // Aborts while Notion is answering the second children request; the answer itself is normal.
    fake.workspace.injectFault(
      (r) => {
        if (r.path.endsWith('/children') && ++seen === 2) {
          controller.abort();
          abortedAt = fake.requests.length;
        }
        return false;
      },
      { status: 200 },
    );
    const set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
    await assert.rejects(set.sync('incremental', { signal: controller.signal }), (e: unknown) => {
      return e instanceof Error && e.name === 'AbortError';
    });
    assert.ok(abortedAt > 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(fake.requests.length, abortedAt, 'no request after the abort');
    assert.ok(set.docs.size < 10, 'the pass did not run to its end');
  });
});

describe('notes sync: changes between syncs', () => {
  let fake: FakeNotion;
  let ws: NotionWorkspace;
  let ids: SampleIds;
  let set: SyncedSet<NotesCursor>;
  let firstRequests = 0;
  before(async () => {
    const sample = sampleWorkspace();
    ws = sample.workspace;
    ids = sample.ids;
    ws.setTime('2025-06-02T10:00:20.000Z');
    fake = await startFakeNotion({ workspace: ws });
    set = new SyncedSet<NotesCursor>(notesConnector, INPUT, fake.url);
  });
  after(() => fake.close());

  /** One sync; the requests it sent. */
  async function sync(mode: 'incremental' | 'full' = 'incremental') {
    const start = fake.requests.length;
    const out = await set.sync(mode);
    return { out, sent: fake.requests.slice(start) };
  }

  it('first sync', async () => {
    const { out } = await sync();
    assert.equal(out.documents.length, 10);
    firstRequests = out.requests;
    assert.equal(
      out.cursor!.since,
      '2025-06-02T09:59:00.000Z',
      "the minute before Notion's clock at the start",
    );
  });

  it('an unchanged workspace: no document, a few requests', async () => {
    ws.advance(5 * 60_000);
    const { out, sent } = await sync();
    assert.equal(out.documents.length, 0);
    assert.equal(out.deleted.length, 0);
    // Search, the query, and one GET for each of the two pages search does not list.
    assert.deepEqual(
      sent.map((r) => `${r.method} ${r.path}`).sort(),
      [
        'GET /v1/pages/' + ids.deepDive,
        'GET /v1/pages/' + ids.runbook,
        `POST /v1/data_sources/${ids.dataSource}/query`,
        'POST /v1/search',
      ].sort(),
    );
    assert.ok(out.requests * 5 <= firstRequests, `${out.requests} against ${firstRequests}`);
    console.log(`# notes sync: first sync ${firstRequests} requests, unchanged second sync ${out.requests}`);
  });

  it('an edit: only that page is read again and yielded', async () => {
    ws.advance(60_000);
    ws.edit(ids.onboarding, { append: [nb.paragraph('Bring your own mug.')] });
    const { out, sent } = await sync();
    assert.deepEqual(titles(out.documents), ['Onboarding guide']);
    assert.match(out.documents[0]!.markdown, /Bring your own mug\./);
    assert.deepEqual(childrenAsked(sent), [ids.onboarding]);
  });

  it('an edit in the minute the page was last read is not lost (the boundary minute)', async () => {
    ws.setTime('2025-06-02T10:20:10.000Z');
    ws.edit(ids.runbook, { append: [nb.paragraph('Check the queue depth first.')] });
    let { out } = await sync();
    assert.deepEqual(titles(out.documents), ['Runbook']);
    const stored = set.docs.get(ids.runbook)!.version!;
    assert.match(stored, /^2025-06-02T10:20:00\.000Z\|/);

    ws.setTime('2025-06-02T10:20:40.000Z');
    ws.edit(ids.runbook, { append: [nb.paragraph('Then restart.')] });
    ({ out } = await sync());
    assert.deepEqual(titles(out.documents), ['Runbook'], 'same last_edited_time, still read again');
    assert.match(out.documents[0]!.markdown, /Then restart\./);

    // Unchanged, but still in the boundary: read again, found equal, not yielded.
    ws.setTime('2025-06-02T10:21:30.000Z');
    let sent: RecordedRequest[];
    ({ out, sent } = await sync());
    assert.equal(out.documents.length, 0);
    assert.deepEqual(childrenAsked(sent), [ids.runbook]);

    // Past the boundary: nothing is read again.
    ws.setTime('2025-06-02T10:30:00.000Z');
    ({ out, sent } = await sync());
    assert.equal(out.documents.length, 0);
    assert.deepEqual(childrenAsked(sent), []);
  });

  it('a row edit: only that row is yielded', async () => {
    ws.advance(60_000);
    ws.editRow(ids.billingRow, { Status: np.select('Deprecated') });
    const { out, sent } = await sync();
    assert.deepEqual(titles(out.documents), ['Billing']);
    assert.match(out.documents[0]!.markdown, /\| Status \| Deprecated \|/);
    assert.deepEqual(childrenAsked(sent), [ids.billingRow]);
  });

  it('a new page nested under a page search does not list is found by walking', async () => {
    ws.advance(60_000);
    const added = ws.addPage({
      title: 'Postmortems',
      parent: ids.runbook,
      searchable: false,
      blocks: [nb.paragraph('What went wrong in March.')],
    });
    const { out } = await sync();
    assert.deepEqual(titles(out.documents), ['Postmortems', 'Runbook']);
    assert.deepEqual(set.docs.get(added)!.tags, ['notes', 'Runbook']);
  });

  it('a move: the page keeps its document, with its new parent, though its own time did not change', async () => {
    ws.advance(60_000);
    const before = set.docs.get(ids.firstWeek)!.version!.split('|')[0];
    ws.move(ids.firstWeek, ids.releaseNotes);
    const { out } = await sync();
    // The two parents' bodies changed (a child page link left one and joined the other).
    assert.deepEqual(titles(out.documents), ['First week', 'Onboarding guide', 'Release notes']);
    const moved = set.docs.get(ids.firstWeek)!;
    assert.deepEqual(moved.tags, ['notes', 'Release notes']);
    assert.equal(moved.version!.split('|')[0], before, 'Notion did not change its last_edited_time');
    assert.equal(out.deleted.length, 0);
  });

  it('trash, unshare and deletion each remove the documents they take away', async () => {
    ws.advance(60_000);
    const postmortem = [...set.docs.values()].find((d) => d.title === 'Postmortems')!.externalId;
    ws.trash(ids.onboarding);
    ws.unshare(ids.deepDive);
    ws.remove(ids.billingRow);
    ws.trash(ids.gatewayRow);
    const { out } = await sync();
    assert.deepEqual(
      out.deleted.map((d) => d.externalId).sort(),
      [ids.onboarding, ids.deepDive, ids.runbook, postmortem, ids.billingRow, ids.gatewayRow].sort(),
    );
    const rows = new Set([ids.billingRow, ids.gatewayRow]);
    for (const d of out.deleted)
      assert.equal(d.table, rows.has(d.externalId) ? 'notes_database_rows' : 'notes_pages');
    assert.equal(out.failures.length, 0);
    // Release notes was last read in the minute of its last edit (the move), so it is checked again; its
    // link to the trashed guide lost the guide's title, so it changed.
    assert.deepEqual(titles(out.documents), ['Release notes']);
    assert.match(out.documents[0]!.markdown, /\[Linked page\]\(https:\/\/www\.notion\.so\/[0-9a-f]{32}\)/);
  });

  it('a trashed database takes its rows with it', async () => {
    ws.advance(60_000);
    ws.trash(ids.database);
    const { out } = await sync();
    assert.deepEqual(
      out.deleted.map((d) => d.externalId),
      [ids.searchRow],
    );
  });

  it('reset re-reads everything and ends with exactly the source set', async () => {
    ws.advance(60_000);
    const live = ws.liveDocuments();
    const { out, sent } = await sync('full');
    assert.equal(out.failures.length, 0);
    assert.deepEqual([...set.docs.keys()].sort(), [...live].sort());
    assert.deepEqual(
      out.documents.map((d) => d.externalId).sort(),
      [...live].sort(),
      'every document yielded',
    );
    for (const id of live) assert.ok(childrenAsked(sent).includes(id), `${ws.titleOf(id)} read again`);
  });
});
