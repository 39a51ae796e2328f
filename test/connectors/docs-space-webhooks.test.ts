/**
 * GitBook's content-update notifications on the docs_space connector: the signature (valid, wrong secret,
 * tampered body, stale, malformed), the events read into the revision they name (and those ignored), and
 * `syncChanged` expanding a revision into exactly the pages it changed against the fake GitBook API,
 * rendered and versioned as the sync does. End to end through the public route in both storage modes.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it, test } from 'node:test';
import { createConnectorContext } from '../../src/connectors/context.ts';
import { BROAD_CHANGE_MAX_PAGES } from '../../src/connectors/docs-space/changes.ts';
import { docsSpaceConnector } from '../../src/connectors/docs-space/index.ts';
import type { DocsSpaceCursor } from '../../src/connectors/docs-space/sync.ts';
import { DOCS_SPACE_REVISIONS, REPLAY_WINDOW_MS } from '../../src/connectors/docs-space/webhooks.ts';
import type { ChangedDocument, SourceDocument, WebhookRequest } from '../../src/connectors/types.ts';
import { AppError } from '../../src/lib/errors.ts';
import {
  type FakeGitbook,
  GITBOOK_DEFAULT_REUSABLE,
  GITBOOK_GOOD_TOKEN,
  GITBOOK_SPACE_ID,
  startFakeGitbook,
} from '../fakes/gitbook.ts';
import { type GitbookEventBody, GitbookWebhookSender, signGitbookBody } from '../fakes/gitbook-webhooks.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, itemTitles, waitForJob } from '../jobs/helpers.ts';
import { withSearch } from '../support/embedding.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const hooks = docsSpaceConnector.webhooks!;
const SECRET = 'Vh3kq_P0wX8yZ2aB4cD6eF8gH0iJ2kL4mN6oP8qR0sT';
const NOW = Date.parse('2026-11-27T10:00:00.000Z');
const T = Math.floor(NOW / 1000);

const event = (over: Partial<GitbookEventBody> = {}): GitbookEventBody => ({
  eventId: 'evt_2345678901bcdefg',
  type: 'space_content_updated',
  spaceId: GITBOOK_SPACE_ID,
  installationId: 'inst_def456',
  revisionId: 'rev0001Qm7Lz2aWv3E',
  ...over,
});

/** A request as the route hands it over: the body's bytes, signed at `t` with `secret` unless told otherwise. */
function request(
  body: unknown,
  opts: { secret?: string; t?: number; signature?: string | null } = {},
): WebhookRequest {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const signature =
    opts.signature === undefined ? signGitbookBody(raw, opts.secret ?? SECRET, opts.t ?? T) : opts.signature;
  return {
    headers: signature === null ? {} : { 'x-gitbook-signature': signature },
    rawBody: Buffer.from(raw, 'utf8'),
  };
}

describe('docs_space webhooks: signature', () => {
  it('accepts an event signed with the installation secret, and its retry with the same signature', () => {
    const req = request(event());
    assert.equal(hooks.verify(req, SECRET, { now: NOW }), 'valid');
    // GitBook retries with the same `t` and signature, seconds later.
    assert.equal(hooks.verify(req, SECRET, { now: NOW + 5_000 }), 'valid');
  });

  it('refuses a wrong secret, a tampered body, a re-signed time, and a missing or malformed signature', () => {
    assert.equal(hooks.verify(request(event(), { secret: 'other' }), SECRET, { now: NOW }), 'bad_signature');
    const raw = JSON.stringify(event());
    const signature = signGitbookBody(raw, SECRET, T);
    const tampered: WebhookRequest = {
      headers: { 'x-gitbook-signature': signature },
      rawBody: Buffer.from(raw.replace('rev0001', 'rev0002'), 'utf8'),
    };
    assert.equal(hooks.verify(tampered, SECRET, { now: NOW }), 'bad_signature');
    // The time is signed: moving `t` forward breaks the signature.
    const moved = signature.replace(`t=${T}`, `t=${T + 600}`);
    assert.equal(hooks.verify(request(event(), { signature: moved }), SECRET, { now: NOW }), 'bad_signature');
    const reformatted: WebhookRequest = {
      headers: { 'x-gitbook-signature': signature },
      rawBody: Buffer.from(JSON.stringify(event(), null, 1), 'utf8'),
    };
    assert.equal(hooks.verify(reformatted, SECRET, { now: NOW }), 'bad_signature');
    for (const bad of [null, '', 'sha256=abc', `t=${T}`, `v1=${signature.split('v1=')[1]}`, 't=x,v1=zz']) {
      assert.equal(hooks.verify(request(event(), { signature: bad }), SECRET, { now: NOW }), 'bad_signature');
    }
  });

  it('calls a correctly signed event older than the replay window stale, and one from the future too', () => {
    const req = request(event());
    assert.equal(hooks.verify(req, SECRET, { now: NOW + REPLAY_WINDOW_MS - 1000 }), 'valid');
    assert.equal(hooks.verify(req, SECRET, { now: NOW + REPLAY_WINDOW_MS + 1000 }), 'stale');
    assert.equal(hooks.verify(req, SECRET, { now: NOW - 3_600_000 }), 'stale');
    // The signature is checked first: a stranger learns nothing about the window.
    assert.equal(
      hooks.verify(request(event(), { secret: 'other' }), SECRET, { now: NOW + 2 * REPLAY_WINDOW_MS }),
      'bad_signature',
    );
  });

  it("tries the connection's own secret, then the operator's, each once", () => {
    const creds = { access_token: GITBOOK_GOOD_TOKEN, space_id: GITBOOK_SPACE_ID };
    const opts = { subscription: null, handshakeSecrets: [] };
    assert.deepEqual(
      hooks.signingSecrets({
        ...opts,
        credentials: { ...creds, webhook_secret: 'own' },
        settings: { webhookSecret: 'op' },
      }),
      ['own', 'op'],
    );
    assert.deepEqual(
      hooks.signingSecrets({ ...opts, credentials: creds, settings: { webhookSecret: '' } }),
      [],
    );
  });

  it('names the space of an event as a connection names its space', () => {
    assert.equal(hooks.accountOf(request(event())), GITBOOK_SPACE_ID);
    assert.equal(
      hooks.connectionAccount({ access_token: GITBOOK_GOOD_TOKEN, space_id: GITBOOK_SPACE_ID }),
      GITBOOK_SPACE_ID,
    );
    assert.equal(hooks.accountOf(request('not json')), null);
    assert.equal(hooks.accountOf(request({ ...event(), spaceId: '../other' })), null);
  });
});

describe('docs_space webhooks: events', () => {
  it('reads a content update into the revision it names', () => {
    assert.deepEqual(hooks.parse(request(event())), {
      kind: 'changes',
      eventId: 'evt_2345678901bcdefg',
      changes: [{ table: DOCS_SPACE_REVISIONS, externalId: 'rev0001Qm7Lz2aWv3E', deleted: false }],
    });
  });

  it('acknowledges site views and page feedback, with their event id', () => {
    const view = { eventId: 'evt_1', type: 'site_view', siteId: 'site_abc123', installationId: 'i' };
    assert.deepEqual(hooks.parse(request(view)), { kind: 'ignored', eventId: 'evt_1' });
    const feedback = { ...event({ eventId: 'evt_3', type: 'page_feedback' }), pageId: 'pgDocInstall' };
    assert.deepEqual(hooks.parse(request(feedback)), { kind: 'ignored', eventId: 'evt_3' });
  });

  it("refuses a body that is not GitBook's, saying what it expected", () => {
    const invalid = (err: unknown) =>
      err instanceof AppError && err.code === 'invalid_request' && /GitBook|revisionId/.test(err.message);
    assert.throws(() => hooks.parse(request('not json')), invalid);
    assert.throws(() => hooks.parse(request({ type: 'space_content_updated' })), invalid);
    const { revisionId: _omitted, ...noRevision } = event();
    assert.throws(() => hooks.parse(request(noRevision)), invalid);
  });
});

describe('docs_space webhooks: syncChanged reads the pages a revision changed', () => {
  let fake: FakeGitbook;
  let set: SyncedSet<DocsSpaceCursor>;
  const input = { access_token: GITBOOK_GOOD_TOKEN, space_id: GITBOOK_SPACE_ID };
  before(async () => {
    fake = await startFakeGitbook();
    set = new SyncedSet<DocsSpaceCursor>(docsSpaceConnector, input, fake.url);
    await set.sync();
  });
  after(() => fake.close());
  beforeEach(() => {
    fake.requests.length = 0;
  });

  async function changed(changes: ChangedDocument[]) {
    const ctx = createConnectorContext({
      connector: docsSpaceConnector,
      credentials: docsSpaceConnector.normalize(input),
      fetch: plainFetch,
      signal: new AbortController().signal,
      baseUrlTemplate: fake.url,
      http: { ...fastHttp(), requestsPerSecond: 100_000 },
    });
    const out = { documents: [] as SourceDocument[], deleted: [] as string[], failures: [] as string[] };
    for await (const e of docsSpaceConnector.syncChanged!(ctx, changes)) {
      if (e.kind === 'document') out.documents.push(e.doc);
      else if (e.kind === 'deleted') out.deleted.push(e.externalId);
      else if (e.kind === 'failure') out.failures.push(`${e.externalId}: ${e.error.message}`);
      else assert.fail('syncChanged yields no checkpoints');
    }
    return out;
  }
  const revision = (id: string): ChangedDocument => ({
    table: DOCS_SPACE_REVISIONS,
    externalId: id,
    deleted: false,
  });
  const pageReads = () =>
    fake.requests.map((r) => /\/page\/([^/]+)$/.exec(r.path)?.[1]).filter((id): id is string => !!id);

  it('reads only the edited page, as the sync renders and versions it; the next sync fetches nothing', async () => {
    fake.space.edit('pgDocConfig1', {
      markdown: '# Configuration\n\nWebhook edit: set ACME_REGION to eu-west-2.\n',
    });
    const out = await changed([revision(fake.space.revision)]);
    assert.deepEqual(out.failures, []);
    assert.deepEqual(out.deleted, []);
    assert.deepEqual(
      out.documents.map((d) => d.externalId),
      ['pgDocConfig1'],
    );
    assert.deepEqual(pageReads(), ['pgDocConfig1']);
    const doc = out.documents[0]!;
    assert.match(doc.markdown, /ACME_REGION to eu-west-2/);
    assert.equal(doc.url, 'https://docs.acme.com/guides/configuration');
    assert.equal(doc.visibility, 'public');

    // The scheduled sync sees the new revision but the same version: it fetches no page again...
    set.hold(doc);
    fake.requests.length = 0;
    const synced = await set.sync();
    assert.deepEqual(synced.documents, []);
    assert.deepEqual(pageReads(), []);
    // ...and, read in full, renders the page exactly as the change did.
    const full = await set.sync('full');
    const again = full.documents.find((d) => d.externalId === 'pgDocConfig1')!;
    assert.equal(again.markdown, doc.markdown);
    assert.equal(again.version, doc.version);
    assert.deepEqual(again.tags, doc.tags);
  });

  it('reads a moved page and the pages below it; deletes a removed page and one now noIndex', async () => {
    const first = fake.space.revision;
    fake.space.move('pgDocGuides1', 'pgGrpRefs001');
    const moved = fake.space.revision;
    fake.space.remove('pgDocRestApi');
    const removed = fake.space.revision;
    fake.space.edit('pgDocQuick01', { noIndex: true });
    const out = await changed([revision(moved), revision(removed), revision(fake.space.revision)]);
    assert.deepEqual(out.failures, []);
    assert.deepEqual(out.deleted.sort(), ['pgDocQuick01', 'pgDocRestApi']);
    assert.deepEqual(
      out.documents.map((d) => d.externalId).sort(),
      ['pgDocConfig1', 'pgDocDeploy1', 'pgDocGuides1'].sort(),
      'the moved page and its children, with their new paths',
    );
    assert.ok(out.documents.every((d) => d.url.startsWith('https://docs.acme.com/reference/guides')));
    assert.notEqual(first, moved);
  });

  it('re-reads a small space whole when a reusable content changed (the diff names no page)', async () => {
    fake.space.editReusable(GITBOOK_DEFAULT_REUSABLE.id, [
      { type: 'paragraph', text: 'Call +1 555 0100 at any hour.' },
    ]);
    const out = await changed([revision(fake.space.revision)]);
    assert.deepEqual(out.failures, []);
    assert.ok(fake.space.indexableIds().length <= BROAD_CHANGE_MAX_PAGES);
    assert.deepEqual(out.documents.map((d) => d.externalId).sort(), fake.space.indexableIds().sort());
    // The page that still includes it (the first test rewrote Configuration without it) has the new text.
    assert.deepEqual(
      out.documents.filter((d) => d.markdown.includes('+1 555 0100')).map((d) => d.externalId),
      ['pgDocDeploy1'],
    );
  });

  it('puts the revision back when a page fails for a passing cause, and reads a revision it cannot diff whole', async () => {
    fake.space.edit('pgDocInstall', { description: 'Install in one minute' });
    fake.space.pageReplies.set('pgDocInstall', {
      status: 503,
      body: { error: { code: 503, message: 'down' } },
    });
    const out = await changed([revision(fake.space.revision)]);
    fake.space.pageReplies.clear();
    assert.equal(out.documents.length, 0);
    assert.ok(
      out.failures.some((f) => f.startsWith('pgDocInstall:')),
      out.failures.join('\n'),
    );
    assert.ok(
      out.failures.some((f) => f.startsWith(`${fake.space.revision}:`)),
      out.failures.join('\n'),
    );

    const unknown = await changed([revision('revUnknown000000')]);
    assert.deepEqual(unknown.failures, []);
    assert.deepEqual(unknown.documents.map((d) => d.externalId).sort(), fake.space.indexableIds().sort());
  });
});

for (const mode of STORAGE_MODES) {
  describe(`docs_space webhooks end to end through the API (${mode})`, () => {
    let fake: FakeGitbook;
    let t: TestApp;
    let search: Awaited<ReturnType<typeof withSearch>>;
    let gitbook: GitbookWebhookSender;
    before(async () => {
      fake = await startFakeGitbook();
      t = await startTestApp(mode, {
        config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_DOCS_SPACE_BASE_URL: fake.url },
        parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
      });
      search = await withSearch(t);
      t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
      // GitBook's deliveries reach the public route: no API key, the body as sent.
      gitbook = new GitbookWebhookSender({
        space: fake.space,
        secret: SECRET,
        transport: (body, headers) =>
          t.call('POST', '/api/connect/webhooks/gitbook', { key: null, body, headers }),
      });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    test('an edit is searchable, a removed page leaves, a forged event is refused, the other org untouched', async () => {
      const source = { type: 'gitbook', access_token: GITBOOK_GOOD_TOKEN, space_id: GITBOOK_SPACE_ID };
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { ...source, webhook_secret: SECRET }, sync: false },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.ok(!JSON.stringify(created.body).includes(SECRET), 'the secret is never answered');
      // The other organization reads the same space with its own installation's secret.
      const other = await t.call('POST', '/api/connect/connection', {
        key: t.orgB.key,
        body: { source: { ...source, webhook_secret: 'a-different-installation-secret' }, sync: false },
      });
      assert.equal(other.status, 200, JSON.stringify(other.body));
      const run = await t.call('POST', '/api/connect/run-sync', { body: { type: 'docs_space' } });
      assert.equal((await waitForJob(t, run.body.jobId as number)).status, 'succeeded');

      const sentence = 'Webhook edits reach search: set ACME_REGION to eu-west-2 for Frankfurt.';
      fake.space.edit('pgDocConfig1', { markdown: `# Configuration\n\n${sentence}\n` });
      const forged = await gitbook.deliver(gitbook.contentUpdated(), {
        secret: 'not-the-installation-secret',
      });
      assert.equal(forged.status, 401, JSON.stringify(forged.body));
      const unsigned = await gitbook.deliver(gitbook.contentUpdated(), { signature: null });
      assert.equal(unsigned.status, 401, JSON.stringify(unsigned.body));
      const stale = await gitbook.deliver(gitbook.contentUpdated(), {
        timestamp: Math.floor((Date.now() - 2 * REPLAY_WINDOW_MS) / 1000),
      });
      assert.equal(stale.status, 401, JSON.stringify(stale.body));

      const update = gitbook.contentUpdated();
      const delivered = await gitbook.deliver(update);
      assert.equal(delivered.status, 200, JSON.stringify(delivered.body));
      // GitBook's retry of the same delivery is accepted too (recorded once).
      assert.equal((await gitbook.deliver(update)).status, 200);
      await until(async () => (await itemText(t, 'Configuration')).includes(sentence), 'the edit stored');
      await search.drain();
      const found = await t.call('POST', '/api/consume/search', {
        body: { query: 'which region for Frankfurt?', limit: 3, includeEmbedding: false },
      });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.result[0]?.title, 'Configuration');

      fake.space.remove('pgDocRoadmap');
      assert.equal((await gitbook.sendContentUpdated()).status, 200);
      await until(async () => !(await itemTitles(t)).includes('Internal roadmap'), 'the removed page left');

      // The other organization's connection accepted none of it: it holds nothing.
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
