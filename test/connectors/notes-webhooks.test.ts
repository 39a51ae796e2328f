/**
 * Notion's integration webhooks on the notes connector: the handshake, the signature (valid, wrong
 * token, tampered body, stale), the events read into the documents they name (and those ignored), the
 * workspace a connection learns at its credential check, and `syncChanged` reading exactly the named
 * documents against the fake Notion API, rendered as the sync renders them.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it, test } from 'node:test';
import { checkCredentials, createConnectorContext } from '../../src/connectors/context.ts';
import { notesConnector } from '../../src/connectors/notes/index.ts';
import type { NotesCursor } from '../../src/connectors/notes/sync.ts';
import { REPLAY_WINDOW_MS } from '../../src/connectors/notes/webhooks.ts';
import type { ChangedDocument, SourceDocument, WebhookRequest } from '../../src/connectors/types.ts';
import { AppError } from '../../src/lib/errors.ts';
import { type NotionEventBody, NotionWebhookSender, signNotionBody } from '../fakes/notion-webhooks.ts';
import {
  type FakeNotion,
  NOTION_GOOD_TOKEN,
  NotionWorkspace,
  nb,
  np,
  type SampleIds,
  sampleWorkspace,
  startFakeNotion,
} from '../fakes/notion.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, itemTitles, waitForJob } from '../jobs/helpers.ts';
import { withSearch } from '../support/embedding.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const hooks = notesConnector.webhooks!;
const TOKEN = 'secret_FAKE_notion_verification_token_for_tests';
const ADMIN_TOKEN = 'admin-token-for-notes-webhook-tests-0123';

/** A request as the route hands it over: the body's bytes, signed with `token` unless told otherwise. */
function request(body: unknown, opts: { token?: string; signature?: string | null } = {}): WebhookRequest {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const signature = opts.signature === undefined ? signNotionBody(raw, opts.token ?? TOKEN) : opts.signature;
  return {
    headers: signature === null ? {} : { 'x-notion-signature': signature },
    rawBody: Buffer.from(raw, 'utf8'),
  };
}

/** Events are built by the fake's sender (never posted here), so they have Notion's shape. */
function sender(workspace = sampleWorkspace().workspace): NotionWebhookSender {
  const transport = () => Promise.reject(new Error('these tests build events without sending them'));
  return new NotionWebhookSender({ workspace, transport, verificationToken: TOKEN });
}

describe('notes webhooks: handshake and signature', () => {
  it('reads the verification request as a handshake carrying its token, from no account', () => {
    const req = request({ verification_token: TOKEN }, { signature: null });
    assert.equal(hooks.accountOf(req), null);
    assert.deepEqual(hooks.parse(req), { kind: 'handshake', secret: TOKEN });
  });

  it('accepts an event signed with the verification token, and its retries', () => {
    const s = sender();
    const event = s.event('page.content_updated', s.workspace.liveDocuments()[0]!);
    const now = Date.parse(event.timestamp);
    assert.equal(hooks.verify(request(event), TOKEN, { now }), 'valid');
    // A retry is the same event with the next attempt number, signed again.
    assert.equal(hooks.verify(request(s.retry(event)), TOKEN, { now: now + 3_600_000 }), 'valid');
  });

  it('refuses a wrong token, a tampered body, and a missing or malformed signature', () => {
    const s = sender();
    const event = s.event('page.content_updated', s.workspace.liveDocuments()[0]!);
    const now = Date.parse(event.timestamp);
    assert.equal(hooks.verify(request(event, { token: 'secret_other' }), TOKEN, { now }), 'bad_signature');

    const raw = JSON.stringify(event);
    const tampered: WebhookRequest = {
      headers: { 'x-notion-signature': signNotionBody(raw, TOKEN) },
      rawBody: Buffer.from(raw.replace(event.entity.id, s.workspace.liveDocuments()[1]!), 'utf8'),
    };
    assert.equal(hooks.verify(tampered, TOKEN, { now }), 'bad_signature');
    // Re-serialized JSON (spaces) is not the body Notion signed.
    const reformatted: WebhookRequest = {
      headers: { 'x-notion-signature': signNotionBody(raw, TOKEN) },
      rawBody: Buffer.from(JSON.stringify(event, null, 1), 'utf8'),
    };
    assert.equal(hooks.verify(reformatted, TOKEN, { now }), 'bad_signature');

    assert.equal(hooks.verify(request(event, { signature: null }), TOKEN, { now }), 'bad_signature');
    assert.equal(hooks.verify(request(event, { signature: 'sha256=zz' }), TOKEN, { now }), 'bad_signature');
    const bare = signNotionBody(raw, TOKEN).slice('sha256='.length);
    assert.equal(hooks.verify(request(event, { signature: bare }), TOKEN, { now }), 'bad_signature');
  });

  it('calls a correctly signed event older than the replay window stale, and one from the future too', () => {
    const s = sender();
    const event = s.event('page.content_updated', s.workspace.liveDocuments()[0]!);
    const at = Date.parse(event.timestamp);
    assert.equal(hooks.verify(request(event), TOKEN, { now: at + REPLAY_WINDOW_MS - 1000 }), 'valid');
    assert.equal(hooks.verify(request(event), TOKEN, { now: at + REPLAY_WINDOW_MS + 1000 }), 'stale');
    assert.equal(hooks.verify(request(event), TOKEN, { now: at - 3_600_000 }), 'stale');
    // The signature is checked first: a stranger learns nothing about the window.
    assert.equal(
      hooks.verify(request(event, { token: 'secret_other' }), TOKEN, { now: at + 2 * REPLAY_WINDOW_MS }),
      'bad_signature',
    );
  });

  it('tries the connection’s own token first, then the handshakes’, each once', () => {
    const secrets = hooks.signingSecrets({
      credentials: { access_token: NOTION_GOOD_TOKEN, webhook_verification_token: 'secret_own' },
      subscription: null,
      settings: {},
      handshakeSecrets: ['secret_new', 'secret_own', 'secret_old'],
    });
    assert.deepEqual(secrets, ['secret_own', 'secret_new', 'secret_old']);
    assert.deepEqual(
      hooks.signingSecrets({ credentials: {}, subscription: null, settings: {}, handshakeSecrets: [] }),
      [],
    );
  });

  it('names the workspace of an event as a connection’s credentials name it', () => {
    const s = sender();
    const event = s.event('page.created', s.workspace.liveDocuments()[0]!);
    const upper = { ...event, workspace_id: event.workspace_id.replace(/-/g, '').toUpperCase() };
    assert.equal(hooks.accountOf(request(upper)), event.workspace_id);
    assert.equal(hooks.connectionAccount({ workspace_id: event.workspace_id }), event.workspace_id);
    // A connection checked before webhooks existed has no workspace yet: it matches no event.
    assert.equal(hooks.connectionAccount({ access_token: NOTION_GOOD_TOKEN }), '');
    assert.equal(hooks.accountOf(request('not json')), null);
  });
});

describe('notes webhooks: events', () => {
  let s: NotionWebhookSender;
  let ids: SampleIds;
  before(() => {
    const sample = sampleWorkspace();
    ids = sample.ids;
    s = sender(sample.workspace);
  });

  function changesOf(event: NotionEventBody): {
    eventId?: string;
    changes?: ChangedDocument[];
    kind: string;
  } {
    const message = hooks.parse(request(event));
    return message;
  }

  it('turns each page event into its page, and page.deleted into a deletion to confirm', () => {
    for (const type of [
      'page.created',
      'page.content_updated',
      'page.properties_updated',
      'page.moved',
      'page.undeleted',
    ]) {
      const event = s.event(type, ids.handbook);
      assert.deepEqual(
        hooks.parse(request(event)),
        {
          kind: 'changes',
          eventId: event.id,
          occurredAt: event.timestamp,
          changes: [{ table: 'notes_pages', externalId: ids.handbook, deleted: false }],
        },
        type,
      );
    }
    const deleted = s.event('page.deleted', ids.deepDive);
    assert.deepEqual(changesOf(deleted).changes, [
      { table: 'notes_pages', externalId: ids.deepDive, deleted: true },
    ]);
  });

  it('files a row’s event under the rows table, its id written as the API writes ids', () => {
    const event = s.event('page.properties_updated', ids.searchRow);
    const undashed = { ...event, entity: { ...event.entity, id: ids.searchRow.replace(/-/g, '') } };
    assert.deepEqual(changesOf(undashed).changes, [
      { table: 'notes_database_rows', externalId: ids.searchRow, deleted: false },
    ]);
  });

  it('reads a data source’s content event into the rows it lists, or the data source when it lists none', () => {
    const withRows = s.event('data_source.content_updated', ids.dataSource, {
      entityType: 'data_source',
      data: {
        parent: { id: ids.database, type: 'database' },
        updated_blocks: [
          { id: ids.billingRow, type: 'page' },
          { id: ids.gatewayRow, type: 'page' },
          { id: 'b1c2d3e4-0000-4000-8000-000000000001', type: 'block' },
        ],
      },
    });
    assert.deepEqual(changesOf(withRows).changes, [
      { table: 'notes_database_rows', externalId: ids.billingRow, deleted: false },
      { table: 'notes_database_rows', externalId: ids.gatewayRow, deleted: false },
    ]);
    const bare = s.event('database.content_updated', ids.dataSource, {
      entityType: 'database',
      data: { parent: { id: ids.handbook, type: 'page' }, updated_blocks: [] },
    });
    assert.deepEqual(changesOf(bare).changes, [
      { table: 'notes_data_sources', externalId: ids.dataSource, deleted: false },
    ]);
  });

  it('acknowledges what changes no document by itself, with its event id', () => {
    const ignored: Array<[string, string, string]> = [
      ['comment.created', 'comment', ids.handbook],
      ['comment.deleted', 'comment', ids.handbook],
      ['page.locked', 'page', ids.handbook],
      ['page.unlocked', 'page', ids.handbook],
      ['database.schema_updated', 'database', ids.database],
      ['data_source.schema_updated', 'data_source', ids.dataSource],
      ['database.created', 'database', ids.database],
      ['data_source.deleted', 'data_source', ids.dataSource],
      ['view.created', 'view', ids.database],
      ['file_upload.completed', 'file_upload', ids.handbook],
      // A linked database is a block: its content event names another data source's rows.
      ['database.content_updated', 'block', ids.database],
    ];
    for (const [type, entityType, id] of ignored) {
      const event = s.event(type, id, { entityType, data: { parent: { id: ids.handbook, type: 'page' } } });
      assert.deepEqual(hooks.parse(request(event)), { kind: 'ignored', eventId: event.id }, type);
    }
  });

  it('refuses a body that is not Notion’s, saying what it expected', () => {
    for (const body of ['not json', '{"type": "page.created"}', '[]', '{"verification_token": 5}']) {
      assert.throws(
        () => hooks.parse(request(body)),
        (err: unknown) =>
          err instanceof AppError && err.code === 'invalid_request' && /Notion/.test(err.message),
        body,
      );
    }
  });
});

describe('notes webhooks: the connection’s workspace and token', () => {
  let fake: FakeNotion;
  before(async () => {
    fake = await startFakeNotion({ workspace: new NotionWorkspace() });
  });
  after(() => fake.close());

  it('learns the workspace id at the credential check and keeps the given verification token', async () => {
    const credentials = notesConnector.normalize({
      access_token: NOTION_GOOD_TOKEN,
      webhook_verification_token: ` ${TOKEN} `,
    });
    const stored = await checkCredentials({
      connector: notesConnector,
      credentials,
      fetch: plainFetch,
      baseUrlTemplate: fake.url,
      http: fastHttp(),
    });
    assert.deepEqual(stored, {
      access_token: NOTION_GOOD_TOKEN,
      webhook_verification_token: TOKEN,
      workspace_id: fake.workspace.workspaceId,
    });
    assert.equal(hooks.connectionAccount(stored), fake.workspace.workspaceId);
  });
});

describe('notes webhooks: syncChanged reads exactly the named documents', () => {
  let fake: FakeNotion;
  let ids: SampleIds;
  let set: SyncedSet<NotesCursor>;
  before(async () => {
    const sample = sampleWorkspace();
    ids = sample.ids;
    fake = await startFakeNotion({ workspace: sample.workspace });
    set = new SyncedSet<NotesCursor>(notesConnector, { access_token: NOTION_GOOD_TOKEN }, fake.url);
    await set.sync();
  });
  after(() => fake.close());
  beforeEach(() => {
    fake.requests.length = 0;
  });

  async function changed(changes: ChangedDocument[]) {
    const ctx = createConnectorContext({
      connector: notesConnector,
      credentials: notesConnector.normalize({ access_token: NOTION_GOOD_TOKEN }),
      fetch: plainFetch,
      signal: new AbortController().signal,
      baseUrlTemplate: fake.url,
      http: { ...fastHttp(), requestsPerSecond: 100_000 },
    });
    const out = { documents: [] as SourceDocument[], deleted: [] as string[], failures: [] as string[] };
    for await (const event of notesConnector.syncChanged!(ctx, changes)) {
      if (event.kind === 'document') out.documents.push(event.doc);
      else if (event.kind === 'deleted') out.deleted.push(`${event.table}:${event.externalId}`);
      else if (event.kind === 'failure') out.failures.push(event.error.message);
      else assert.fail('syncChanged yields no checkpoints');
    }
    return out;
  }

  const page = (externalId: string, deleted = false): ChangedDocument => ({
    table: 'notes_pages',
    externalId,
    deleted,
  });

  it('renders an edited page as the sync does, without reading its child pages', async () => {
    fake.workspace.edit(ids.handbook, { append: [nb.paragraph('Webhook edit: the on-call rota moved.')] });
    const out = await changed([page(ids.handbook)]);
    assert.deepEqual(out.failures, []);
    assert.equal(out.documents.length, 1);
    const doc = out.documents[0]!;
    assert.match(doc.markdown, /Webhook edit: the on-call rota moved\./);

    // The sync, reading the same page now, writes the same document and the same version.
    const synced = await set.sync();
    const again = synced.documents.find((d) => d.externalId === ids.handbook);
    assert.ok(again);
    assert.equal(doc.markdown, again.markdown);
    assert.equal(doc.version, again.version);
    assert.deepEqual(doc.tags, again.tags);
    assert.equal(doc.table, again.table);

    fake.requests.length = 0;
    await changed([page(ids.handbook)]);
    const paths = fake.requests.map((r) => r.path);
    assert.ok(paths.includes(`/v1/pages/${ids.handbook}`), paths.join('\n'));
    for (const child of [ids.deepDive, ids.runbook, ids.inColumn]) {
      assert.ok(
        !paths.some((p) => p.includes(child)),
        `child page ${child} was not read: ${paths.join(', ')}`,
      );
    }
    assert.ok(!paths.some((p) => p.endsWith('/query') || p === '/v1/search'), 'no enumeration');
  });

  it('reads a row with its properties', async () => {
    fake.workspace.editRow(ids.billingRow, { Status: np.status('Deprecated') });
    const out = await changed([{ table: 'notes_database_rows', externalId: ids.billingRow, deleted: false }]);
    assert.equal(out.documents.length, 1);
    assert.equal(out.documents[0]!.table, 'notes_database_rows');
    assert.match(out.documents[0]!.markdown, /Deprecated/);
  });

  it('deletes a trashed page and an unshared one, and keeps a page an event wrongly called deleted', async () => {
    fake.workspace.trash(ids.releaseNotes);
    fake.workspace.unshare(ids.firstWeek);
    const out = await changed([
      page(ids.releaseNotes, true),
      page(ids.firstWeek),
      page(ids.onboarding, true),
    ]);
    assert.deepEqual(out.failures, []);
    assert.deepEqual(
      out.deleted.sort(),
      [
        `notes_database_rows:${ids.firstWeek}`,
        `notes_database_rows:${ids.releaseNotes}`,
        `notes_pages:${ids.firstWeek}`,
        `notes_pages:${ids.releaseNotes}`,
      ].sort(),
    );
    assert.deepEqual(
      out.documents.map((d) => d.externalId),
      [ids.onboarding],
      'the source is read, the event not trusted',
    );
  });

  it('reads a data source named without its rows: the rows edited lately, newest first, bounded', async () => {
    fake.workspace.editRow(ids.searchRow, { Status: np.status('Beta') });
    const out = await changed([{ table: 'notes_data_sources', externalId: ids.dataSource, deleted: false }]);
    assert.deepEqual(out.failures, []);
    assert.deepEqual(
      out.documents.map((d) => d.externalId).sort(),
      [ids.billingRow, ids.searchRow].sort(),
      'the two rows edited in this run; the gateway row was last edited long ago',
    );
    const queries = fake.requests.filter((r) => r.path.endsWith('/query'));
    assert.equal(queries.length, 1, 'one query, no pagination');
    assert.deepEqual(JSON.parse(queries[0]!.body).sorts, [
      { timestamp: 'last_edited_time', direction: 'descending' },
    ]);
    assert.ok(JSON.parse(queries[0]!.body).page_size <= 25);
  });
});

for (const mode of STORAGE_MODES) {
  describe(`notes webhooks end to end through the API (${mode})`, () => {
    let fake: FakeNotion;
    let ids: SampleIds;
    let t: TestApp;
    let search: Awaited<ReturnType<typeof withSearch>>;
    let notion: NotionWebhookSender;
    before(async () => {
      const sample = sampleWorkspace();
      ids = sample.ids;
      fake = await startFakeNotion({ workspace: sample.workspace });
      t = await startTestApp(mode, {
        config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_NOTES_BASE_URL: fake.url, KB_ADMIN_TOKEN: ADMIN_TOKEN },
        parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
      });
      search = await withSearch(t);
      t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
      // Notion's deliveries reach the public route: no API key, the body as sent.
      notion = new NotionWebhookSender({
        workspace: sample.workspace,
        transport: (body, headers) =>
          t.call('POST', '/api/connect/webhooks/notion', { key: null, body, headers }),
      });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    test('handshake, then an edit is searchable and a trashed page leaves; a bad signature is refused', async () => {
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'notion', access_token: NOTION_GOOD_TOKEN }, sync: false },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const run = await t.call('POST', '/api/connect/run-sync', { body: { type: 'notes' } });
      assert.equal((await waitForJob(t, run.body.jobId as number)).status, 'succeeded');

      // The subscription is created in Notion's settings: Notion posts its token, unsigned.
      const handshake = await notion.handshake();
      assert.equal(handshake.status, 200, JSON.stringify(handshake.body));
      // The operator takes the token (to paste into Notion's Verify form), which makes it trusted.
      const taken = await t.call('POST', '/api/admin/source-webhooks/notion/verification-token', {
        key: ADMIN_TOKEN,
      });
      assert.equal(taken.status, 200, JSON.stringify(taken.body));
      assert.equal(taken.body.verificationToken, notion.verificationToken);

      const sentence = 'Webhook edits reach search: the pager rotation now starts on Tuesdays.';
      fake.workspace.edit(ids.handbook, { append: [nb.paragraph(sentence)] });
      const forged = await notion.deliver(notion.event('page.content_updated', ids.handbook), {
        token: 'secret_not_the_verification_token',
      });
      assert.equal(forged.status, 401, JSON.stringify(forged.body));
      const unsigned = await notion.deliver(notion.event('page.content_updated', ids.handbook), {
        signature: null,
      });
      assert.equal(unsigned.status, 401, JSON.stringify(unsigned.body));
      const event = notion.event('page.content_updated', ids.handbook);
      const delivered = await notion.deliver(event);
      assert.equal(delivered.status, 200, JSON.stringify(delivered.body));
      // Notion's retry of the same event (same id, next attempt number) is accepted too.
      assert.equal((await notion.deliver(notion.retry(event))).status, 200);
      await until(
        async () => (await itemText(t, 'Engineering handbook')).includes(sentence),
        'the edit stored',
      );
      await search.drain();
      const found = await t.call('POST', '/api/consume/search', {
        body: { query: 'which day does the pager rotation start?', limit: 3, includeEmbedding: false },
      });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.result[0]?.title, 'Engineering handbook');

      fake.workspace.trash(ids.releaseNotes);
      assert.equal((await notion.send('page.deleted', ids.releaseNotes)).status, 200);
      await until(async () => !(await itemTitles(t)).includes('Release notes'), 'the trashed page removed');

      // Another organization's connection never sees the first one's items.
      assert.deepEqual(await itemTitles(t, t.orgB.key), []);
    });
  });
}

/** The stored markdown of the organization's item titled `title` ('' when there is none). */
async function itemText(t: TestApp, title: string): Promise<string> {
  const rows = await t.db.query<{ content: string }>(
    'SELECT content FROM items WHERE organization_id = $1 AND title = $2',
    [t.orgA.id, title],
  );
  return rows[0]?.content ?? '';
}

/** Waits for `check` (the work runs in the job engine); gives up after 30 s. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
