/**
 * The content sync of `wiki` (Confluence Cloud) against the fake site: enumeration and pagination,
 * rendering, retries, failures of one document, revoked credentials, change and deletion detection
 * between syncs, reset, resume and cancel. The job engine and the database are the e2e file's business.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createConnectorContext } from '../../src/connectors/context.ts';
import { BLOGPOSTS_TABLE, PAGES_TABLE, type WikiCursor } from '../../src/connectors/wiki/sync.ts';
import { wikiConnector } from '../../src/connectors/wiki/index.ts';
import type { SourceDocument, SyncEvent } from '../../src/connectors/types.ts';
import { AppError } from '../../src/lib/errors.ts';
import {
  CONFLUENCE_GOOD,
  type FakeConfluence,
  FakeConfluenceSite,
  type FakeContent,
  startFakeConfluence,
} from '../fakes/confluence.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const input = { domain_name: 'acme', ...CONFLUENCE_GOOD };

/** A small site: two current spaces with a page tree and blog posts, plus everything that must not sync. */
function buildSite() {
  const site = new FakeConfluenceSite();
  site.addSpace('ENG', 'Engineering');
  site.addSpace('OPS', 'Operations');
  site.addSpace('OLD', 'Legacy');
  const home = site.addPage({
    space: 'ENG',
    title: 'Engineering Home',
    storage: '<p>Welcome to engineering.</p>',
  });
  const onboarding = site.addPage({
    space: 'ENG',
    title: 'Onboarding guide',
    storage:
      '<h2>Getting started</h2><p>Install the CLI:</p><ac:structured-macro ac:name="code" ac:schema-version="1"><ac:parameter ac:name="language">bash</ac:parameter><ac:plain-text-body><![CDATA[npm i -g acme]]></ac:plain-text-body></ac:structured-macro>',
  });
  const runbook = site.addPage({
    space: 'ENG',
    title: 'Deploy runbook',
    storage: '<p>Roll out with care.</p>',
  });
  const child = site.addPage({
    space: 'ENG',
    title: 'Rollback steps',
    parent: runbook.id,
    storage: '<ol><li>Stop</li><li>Revert</li></ol>',
  });
  const opsHome = site.addPage({
    space: 'OPS',
    title: 'Operations Home',
    storage: '<p>On-call lives here.</p>',
  });
  const oncall = site.addPage({ space: 'OPS', title: 'On-call rota', storage: '<p>Weekly rotation.</p>' });
  const post = site.addBlogPost({ space: 'ENG', title: 'Launch week', storage: '<p>We shipped it.</p>' });
  const opsPost = site.addBlogPost({
    space: 'OPS',
    title: 'Quarterly review',
    storage: '<p>Numbers went up.</p>',
  });
  const legacy = site.addPage({ space: 'OLD', title: 'Legacy Home', storage: '<p>Old things.</p>' });
  // None of these may sync: archived, trashed, draft, restricted, in an archived space.
  site.addPage({ space: 'ENG', title: 'Archived page', status: 'archived' });
  site.addPage({ space: 'ENG', title: 'Trashed page', status: 'trashed' });
  site.addPage({ space: 'ENG', title: 'Draft page', status: 'draft' });
  site.addBlogPost({ space: 'ENG', title: 'Trashed post', status: 'trashed' });
  const secret = site.addPage({ space: 'ENG', title: 'Restricted page' });
  site.restrict(secret.id);
  const archivedSpace = site.addSpace('ARC', 'Archive');
  site.addPage({ space: 'ARC', title: 'Page of an archived space' });
  site.archiveSpace(archivedSpace.key);
  return { site, home, onboarding, runbook, child, opsHome, oncall, post, opsPost, legacy };
}

const CURRENT_TITLES = [
  'Deploy runbook',
  'Engineering Home',
  'Launch week',
  'Legacy Home',
  'On-call rota',
  'Onboarding guide',
  'Operations Home',
  'Quarterly review',
  'Rollback steps',
];

let fake: FakeConfluence | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start(
  site: FakeConfluenceSite,
  opts: { prefix?: boolean; delays?: number[]; maxAttempts?: number } = {},
) {
  fake = await startFakeConfluence({ site });
  const http = {
    ...fastHttp(opts.delays ?? []),
    requestsPerSecond: 100_000,
    ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}),
  };
  const set = new SyncedSet<WikiCursor>(
    wikiConnector,
    input,
    opts.prefix ? `${fake.url}/{domain_name}` : fake.url,
    http,
  );
  return { fake, set };
}

/** Requests since `from` whose path ends in `suffix` (a listing or one document's path). */
function requestsTo(f: FakeConfluence, from: number, test: (path: string) => boolean): number {
  return f.requests.slice(from).filter((r) => test(r.path)).length;
}

const isBodyFetch = (path: string) => /\/wiki\/api\/v2\/(pages|blogposts)\/\d+$/.test(path);

function byTitle(docs: SourceDocument[], title: string): SourceDocument {
  const doc = docs.find((d) => d.title === title);
  assert.ok(doc, `a document titled ${title}: ${docs.map((d) => d.title).join(' | ')}`);
  return doc;
}

describe('wiki (Confluence) content sync', () => {
  it('syncs every current page and blog post of the current spaces, with URL, tags, table and version', async () => {
    const s = buildSite();
    const { fake, set } = await start(s.site);
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    assert.deepEqual(first.deleted, []);
    assert.deepEqual(first.documents.map((d) => d.title).sort(), CURRENT_TITLES);
    // Spaces, pages and blog posts listed once each, then one body per document.
    assert.equal(first.requests, 3 + CURRENT_TITLES.length);
    assert.equal(requestsTo(fake, 0, isBodyFetch), CURRENT_TITLES.length);

    const page = byTitle(first.documents, 'Rollback steps');
    assert.equal(page.externalId, s.child.id);
    assert.equal(page.url, `https://acme.atlassian.net/wiki/spaces/ENG/pages/${s.child.id}/Rollback+steps`);
    assert.equal(page.table, PAGES_TABLE);
    assert.equal(page.visibility, 'private');
    assert.deepEqual(page.tags, ['wiki', 'ENG', 'Engineering', 'Deploy runbook']);
    assert.equal(page.updatedAt, s.child.modifiedAt);
    assert.match(page.version ?? '', /^1:[0-9a-f]{12}$/);
    assert.equal(page.markdown, '1. Stop\n2. Revert');

    const post = byTitle(first.documents, 'Quarterly review');
    assert.equal(post.table, BLOGPOSTS_TABLE);
    assert.equal(post.url, s.site.url(s.opsPost));
    assert.match(post.url, /\/wiki\/spaces\/OPS\/blog\/\d{4}\/\d{2}\/\d{2}\/\d+\/Quarterly\+review$/);
    assert.deepEqual(post.tags, ['wiki', 'OPS', 'Operations']);
    assert.equal(
      byTitle(first.documents, 'Engineering Home').tags.length,
      3,
      'a root page has no parent tag',
    );

    assert.equal(
      byTitle(first.documents, 'Onboarding guide').markdown,
      '## Getting started\n\nInstall the CLI:\n\n```bash\nnpm i -g acme\n```',
    );
    assert.deepEqual(first.cursor, { after: null });

    // Asked the v2 way: current content only, by id, 250 a page, bodies in storage format.
    const listing = fake.requests.find((r) => r.path === '/wiki/api/v2/pages')!;
    assert.deepEqual(
      [
        listing.query.get('status'),
        listing.query.get('sort'),
        listing.query.get('limit'),
        listing.query.get('body-format'),
      ],
      ['current', 'id', '250', null],
    );
    const body = fake.requests.find((r) => isBodyFetch(r.path))!;
    assert.equal(body.query.get('body-format'), 'storage');
    const basic = Buffer.from(`${input.email}:${input.api_token}`).toString('base64');
    assert.ok(fake.requests.every((r) => r.headers.authorization === `Basic ${basic}`));
  });

  it('follows _links.next across pages that end exactly at the page size, behind a base-URL path prefix', async () => {
    const site = new FakeConfluenceSite();
    site.maxPageSize = 4;
    for (const key of ['A', 'B', 'C', 'D']) site.addSpace(key, `Space ${key}`);
    const ids: string[] = [];
    for (let i = 1; i <= 8; i++) ids.push(site.addPage({ space: 'A', title: `Page ${i}` }).id);
    site.addPage({ space: 'A', title: 'In the trash', status: 'trashed' });
    for (let i = 1; i <= 4; i++) site.addBlogPost({ space: 'B', title: `Post ${i}` });
    const { fake, set } = await start(site, { prefix: true });

    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    assert.equal(first.documents.length, 12);
    const prefix = '/acme.atlassian.net/wiki/api/v2';
    const lists = (what: string) => fake.requests.filter((r) => r.path === `${prefix}/${what}`);
    // 4 + 4 + an empty page for pages and for spaces; 4 + empty for posts: a full page names a next one.
    assert.equal(lists('spaces').length, 2);
    assert.equal(lists('pages').length, 3);
    assert.equal(lists('blogposts').length, 2);
    for (const follow of [
      ...lists('pages').slice(1),
      ...lists('spaces').slice(1),
      ...lists('blogposts').slice(1),
    ]) {
      assert.ok(follow.query.get('cursor'), 'a followed page carries the cursor of _links.next');
      assert.equal(follow.query.get('status'), 'current', 'and the parameters of the first request');
    }
    assert.ok(
      fake.requests.every((r) => r.path.startsWith(prefix)),
      'every request keeps the path prefix',
    );
    assert.deepEqual(
      first.documents.filter((d) => d.table === PAGES_TABLE).map((d) => d.externalId),
      ids,
      'pages yielded in listing (id) order',
    );

    const again = await set.sync();
    assert.equal(again.documents.length, 0);
    assert.equal(again.requests, 7, 'an unchanged site costs its listing pages only');
  });

  it('an unchanged second sync yields nothing and makes only the listing requests', async () => {
    const s = buildSite();
    const { set } = await start(s.site);
    const first = await set.sync();
    const second = await set.sync();
    assert.deepEqual([second.documents, second.deleted, second.failures], [[], [], []]);
    assert.equal(first.requests, 12);
    assert.equal(second.requests, 3);
    console.log(`# wiki: first sync ${first.requests} requests, unchanged second sync ${second.requests}`);
    assert.deepEqual(set.titles(), CURRENT_TITLES);
  });

  it('between two syncs: an edit, a purge, trash, restriction, archiving, moves and an archived space', async () => {
    const s = buildSite();
    const { fake, set } = await start(s.site);
    await set.sync();
    const held = new Map([...set.docs.values()].map((d) => [d.externalId, d]));

    s.site.edit(s.onboarding.id, { storage: '<p>Install the <strong>new</strong> CLI.</p>' });
    s.site.purge(s.home.id); // deleted from the trash: gone (its child pages stay)
    s.site.setStatus(s.post.id, 'trashed');
    s.site.restrict(s.oncall.id);
    s.site.setStatus(s.opsHome.id, 'archived');
    s.site.move(s.child.id, { parent: s.onboarding.id }); // a new parent, no new version
    s.site.move(s.runbook.id, { space: 'OPS' }); // another space
    s.site.archiveSpace('OLD');
    const mark = fake.requests.length;

    const second = await set.sync();
    assert.deepEqual(second.failures, []);
    assert.deepEqual(second.documents.map((d) => d.title).sort(), [
      'Deploy runbook',
      'Onboarding guide',
      'Rollback steps',
    ]);
    assert.equal(requestsTo(fake, mark, isBodyFetch), 3, 'only the changed documents are fetched again');
    assert.equal(second.requests, 3 + 3);
    assert.deepEqual(
      second.deleted.map((d) => d.externalId).sort(),
      [s.home.id, s.post.id, s.oncall.id, s.opsHome.id, s.legacy.id].sort(),
    );
    assert.equal(second.deleted.find((d) => d.externalId === s.post.id)?.table, BLOGPOSTS_TABLE);

    const edited = byTitle(second.documents, 'Onboarding guide');
    assert.equal(edited.markdown, 'Install the **new** CLI.');
    assert.match(edited.version ?? '', /^2:/);
    const moved = byTitle(second.documents, 'Rollback steps');
    assert.deepEqual(moved.tags, ['wiki', 'ENG', 'Engineering', 'Onboarding guide']);
    assert.match(moved.version ?? '', /^1:/, 'a move makes no new version');
    assert.notEqual(moved.version, held.get(s.child.id)?.version, 'but a new change token');
    const otherSpace = byTitle(second.documents, 'Deploy runbook');
    assert.equal(
      otherSpace.url,
      `https://acme.atlassian.net/wiki/spaces/OPS/pages/${s.runbook.id}/Deploy+runbook`,
    );
    assert.deepEqual(otherSpace.tags, ['wiki', 'OPS', 'Operations']);

    assert.deepEqual(set.titles(), [
      'Deploy runbook',
      'Onboarding guide',
      'Quarterly review',
      'Rollback steps',
    ]);
    const third = await set.sync();
    assert.deepEqual([third.documents.length, third.deleted.length, third.requests], [0, 0, 3]);
  });

  it('reset (full) re-reads everything and ends with exactly the source set', async () => {
    const s = buildSite();
    const { set } = await start(s.site);
    await set.sync();
    s.site.purge(s.oncall.id);
    s.site.addPage({ space: 'OPS', title: 'Incident log', storage: '<p>Nothing yet.</p>' });
    s.site.edit(s.opsPost.id, { storage: '<p>Numbers went down.</p>' });

    const reset = await set.sync('full');
    const expected = [...CURRENT_TITLES.filter((t) => t !== 'On-call rota'), 'Incident log'].sort();
    assert.deepEqual(reset.documents.map((d) => d.title).sort(), expected, 'every document is read again');
    assert.equal(reset.requests, 3 + expected.length);
    assert.deepEqual(reset.deleted, [], 'a full pass leaves removal to the sweep');
    assert.deepEqual(set.titles(), expected);
    assert.equal(byTitle([...set.docs.values()], 'Quarterly review').markdown, 'Numbers went down.');
  });

  it('waits out a 429 burst with Confluence rate-limit headers and a 500, then succeeds', async () => {
    const s = buildSite();
    const delays: number[] = [];
    const { fake, set } = await start(s.site, { delays, maxAttempts: 5 });
    fake.rateLimitNext(2, 3);
    fake.failNext(1, {
      status: 500,
      body: {
        errors: [
          { status: 500, code: 'INTERNAL_SERVER_ERROR', title: 'Internal Server Error', detail: null },
        ],
      },
    });
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    assert.deepEqual(set.titles(), CURRENT_TITLES);
    assert.deepEqual(delays.slice(0, 2), [3000, 3000], 'Retry-After honoured');
    assert.equal(delays.length, 3, 'then one short backoff after the 500');
    assert.equal(first.requests, 3 + CURRENT_TITLES.length + 3);
  });

  it('a body that is malformed, a record of the wrong shape, or a 404 after listing: failures; the rest lands', async () => {
    const s = buildSite();
    s.site.edit(s.runbook.id, { storage: '<p>Roll out <strong>with care.</p>' });
    s.site.get(s.oncall.id).override = { version: { number: 'seven' } };
    const { fake, set } = await start(s.site);
    // After the listings: the home page vanishes, and the Operations home answers a misshapen body.
    s.site.onRequest = (req) => {
      if (req.path.endsWith('/wiki/api/v2/blogposts') && s.site.contents.has(s.home.id)) {
        s.site.purge(s.home.id);
        s.site.get(s.opsHome.id).override = { body: { storage: { representation: 'storage', value: 42 } } };
      }
    };
    const first = await set.sync();
    const failures = new Map(first.failures.map((f) => [f.externalId, f]));
    assert.deepEqual(
      [...failures.keys()].sort(),
      [s.home.id, s.runbook.id, s.oncall.id, s.opsHome.id].sort(),
    );
    assert.match(
      failures.get(s.runbook.id)!.error.message,
      /Confluence \(wiki\) page \d+ \("Deploy runbook"\).*not well-formed XHTML: <\/p> closes <strong>/,
    );
    assert.match(
      failures.get(s.oncall.id)!.error.message,
      /Confluence \(wiki\) listed a page \(\d+\) in an unexpected shape/,
    );
    assert.match(failures.get(s.home.id)!.error.message, /was listed but answers 404/);
    assert.match(
      failures.get(s.opsHome.id)!.error.message,
      /page \d+ \("Operations Home"\) answered in an unexpected shape: .*body\.storage\.value/,
    );
    assert.ok(first.failures.every((f) => f.retryable === false));
    assert.deepEqual(
      set.titles(),
      CURRENT_TITLES.filter(
        (t) => !['Deploy runbook', 'On-call rota', 'Engineering Home', 'Operations Home'].includes(t),
      ),
    );
    assert.equal(
      requestsTo(fake, 0, isBodyFetch),
      CURRENT_TITLES.length - 1,
      'the misshapen record is not fetched',
    );

    // Content trashed or archived between the listing and its fetch leaves at once.
    s.site.onRequest = (req) => {
      if (req.path.endsWith('/wiki/api/v2/blogposts')) s.site.setStatus(s.child.id, 'archived');
    };
    s.site.edit(s.child.id);
    const second = await set.sync();
    assert.deepEqual(
      second.deleted.map((d) => d.externalId),
      [s.child.id],
    );
  });

  it('a listed record without a readable id stops the deletion pass', async () => {
    const s = buildSite();
    const { set } = await start(s.site);
    await set.sync();
    s.site.purge(s.oncall.id);
    s.site.get(s.opsHome.id).override = { id: null };
    const second = await set.sync();
    assert.equal(second.failures.length, 1);
    assert.equal(second.failures[0]!.externalId, undefined);
    assert.deepEqual(second.deleted, [], 'an enumeration with an unknown record proves no absence');
    assert.ok(set.docs.has(s.oncall.id));

    s.site.get(s.opsHome.id).override = undefined;
    const third = await set.sync();
    assert.deepEqual(
      third.deleted.map((d) => d.externalId),
      [s.oncall.id],
    );
  });

  it('revoked credentials: the sync throws an error naming Confluence, without the token', async () => {
    const s = buildSite();
    const { set } = await start(s.site);
    await set.sync();
    s.site.credentials.api_token = 'ATATT_rotated_elsewhere_987654321';
    await assert.rejects(set.sync(), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'source_auth_failed');
      assert.match(
        err.message,
        /^Confluence \(wiki\) refused the credentials during the sync \(HTTP 401: Unauthorized\)\. Check source\.email and source\.api_token/,
      );
      assert.ok(!err.message.includes(input.api_token));
      assert.ok(!err.message.includes(Buffer.from(`${input.email}:${input.api_token}`).toString('base64')));
      return true;
    });
    assert.deepEqual(set.titles(), CURRENT_TITLES, 'nothing is removed');
  });

  it('a retried full pass goes on after its last checkpoint', async () => {
    const site = new FakeConfluenceSite();
    site.addSpace('ENG', 'Engineering');
    const pages: FakeContent[] = [];
    for (let i = 1; i <= 120; i++) pages.push(site.addPage({ space: 'ENG', title: `Page ${i}` }));
    const post = site.addBlogPost({ space: 'ENG', title: 'Post' });
    const { fake } = await start(site);
    const ctx = createConnectorContext({
      connector: wikiConnector,
      credentials: wikiConnector.normalize(input),
      fetch: plainFetch,
      signal: new AbortController().signal,
      baseUrlTemplate: fake.url,
      http: { ...fastHttp(), requestsPerSecond: 100_000 },
    });
    const events: SyncEvent<WikiCursor>[] = [];
    const cursor: WikiCursor = { after: { table: PAGES_TABLE, id: pages[99]!.id } };
    for await (const e of wikiConnector.sync!(ctx, { cursor, mode: 'full', known: async function* () {} })) {
      events.push(e);
    }
    const docs = events.flatMap((e) => (e.kind === 'document' ? [e.doc.title] : []));
    assert.deepEqual(docs, [...pages.slice(100).map((p) => p.title), 'Post']);
    assert.deepEqual(events.at(-1), { kind: 'checkpoint', cursor: { after: null } });
    assert.ok(post);

    // The first pass checkpoints every 100 documents with its position.
    const set = new SyncedSet<WikiCursor>(wikiConnector, input, fake.url, {
      ...fastHttp(),
      requestsPerSecond: 100_000,
    });
    const full = await set.sync('full');
    assert.deepEqual(full.checkpoints, [
      { after: { table: PAGES_TABLE, id: pages[99]!.id } },
      { after: null },
    ]);
  });

  it('cancel: an aborted signal stops the sync promptly', async () => {
    const site = new FakeConfluenceSite();
    site.addSpace('ENG', 'Engineering');
    for (let i = 1; i <= 60; i++) site.addPage({ space: 'ENG', title: `Page ${i}` });
    const { fake, set } = await start(site);
    const controller = new AbortController();
    let bodies = 0;
    site.onRequest = (req) => {
      if (isBodyFetch(req.path) && ++bodies === 5) controller.abort();
    };
    await assert.rejects(set.sync('incremental', { signal: controller.signal }), { name: 'AbortError' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const fetched = requestsTo(fake, 0, isBodyFetch);
    assert.ok(fetched <= 8, `stopped after ${fetched} of 60 body requests`);
    assert.ok(set.docs.size < 8);
  });
});
