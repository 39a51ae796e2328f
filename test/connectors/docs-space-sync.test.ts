/**
 * The content sync of `docs_space` against the fake GitBook API: enumeration of the page tree of one
 * revision, rendering, change and deletion detection between syncs, failures, rate limits, resets,
 * resumption and cancellation. The job engine and the database are covered by docs-space-e2e.test.ts.
 *
 * No pagination test applies: the one listing this connector reads (a revision's page tree) is a single
 * response, not paginated (vendor-apis/gitbook.md §3).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConnectorContext } from '../../src/connectors/context.ts';
import { docsSpaceConnector } from '../../src/connectors/docs-space/index.ts';
import { CHECKPOINT_EVERY, type DocsSpaceCursor } from '../../src/connectors/docs-space/sync.ts';
import type { KnownDocument, SourceDocument, SyncEvent } from '../../src/connectors/types.ts';
import { AppError } from '../../src/lib/errors.ts';
import {
  type FakeGitbook,
  type FakeGitbookPage,
  GITBOOK_DEFAULT_ITEMS,
  GITBOOK_FIRST_REVISION,
  GITBOOK_DEFAULT_REUSABLE,
  GITBOOK_GOOD_TOKEN,
  GITBOOK_ORG_ID,
  GITBOOK_SITE_ID,
  GITBOOK_SPACE_ID,
  startFakeGitbook,
} from '../fakes/gitbook.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const input = { access_token: GITBOOK_GOOD_TOKEN, space_id: GITBOOK_SPACE_ID };
const spacePath = `/v1/spaces/${GITBOOK_SPACE_ID}`;
const sitesPath = `/v1/orgs/${GITBOOK_ORG_ID}/sites`;
const structurePath = `${sitesPath}/${GITBOOK_SITE_ID}/structure`;
/** The space, its sites, the site's structure, the revision, each page and the one reusable content. */
const FIRST_SYNC_REQUESTS = 4 + GITBOOK_DEFAULT_ITEMS + 1;

const newSet = (fake: FakeGitbook, delays?: number[]) =>
  new SyncedSet<DocsSpaceCursor>(
    docsSpaceConnector,
    input,
    fake.url,
    delays ? { ...fastHttp(delays), requestsPerSecond: 100_000 } : undefined,
  );

/** The page ids the fake was asked for since request number `from`. */
function pageReads(fake: FakeGitbook, from: number): string[] {
  return fake.requests
    .slice(from)
    .map((r) => /\/page\/([^/]+)$/.exec(r.path)?.[1])
    .filter((id): id is string => id !== undefined);
}

function doc(docs: Iterable<SourceDocument>, title: string): SourceDocument {
  const found = [...docs].find((d) => d.title === title);
  assert.ok(found, `a document titled ${title}`);
  return found;
}

describe('docs_space sync: first pass', () => {
  let fake: FakeGitbook;
  let set: SyncedSet<DocsSpaceCursor>;
  let first: Awaited<ReturnType<SyncedSet<DocsSpaceCursor>['sync']>>;
  before(async () => {
    fake = await startFakeGitbook();
    set = newSet(fake);
    first = await set.sync();
  });
  after(() => fake.close());

  it('yields every indexable page in tree order, reading the space, its sites, one revision and each page of it', () => {
    assert.deepEqual(
      first.documents.map((d) => d.title),
      [
        'Installation',
        'Quickstart',
        'Guides',
        'Configuration',
        'Deploying to production',
        'REST API',
        'Generated endpoints',
      ],
      'groups, links and the noIndex page are not items; the hidden page is',
    );
    assert.equal(first.documents.length, GITBOOK_DEFAULT_ITEMS);
    assert.deepEqual(first.failures, []);
    assert.deepEqual(first.deleted, []);
    assert.equal(first.requests, FIRST_SYNC_REQUESTS);
    const paths = fake.requests.map((r) => r.path);
    assert.deepEqual(paths.slice(0, 4), [
      spacePath,
      sitesPath,
      structurePath,
      `${spacePath}/revisions/${GITBOOK_FIRST_REVISION}`,
    ]);
    assert.equal(fake.requests[1]!.query.get('space'), GITBOOK_SPACE_ID);
    const reusable = `${spacePath}/revisions/${GITBOOK_FIRST_REVISION}/reusable-contents/${GITBOOK_DEFAULT_REUSABLE.id}/document`;
    assert.equal(paths.filter((p) => p === reusable).length, 1, 'a reusable content is read once per pass');
    for (const r of fake.requests.slice(4).filter((r) => r.path !== reusable)) {
      assert.match(r.path, new RegExp(`^${spacePath}/revisions/${GITBOOK_FIRST_REVISION}/page/\\w+$`));
      assert.equal(r.query.get('format'), 'markdown');
    }
    for (const r of fake.requests) assert.equal(r.headers.authorization, `Bearer ${GITBOOK_GOOD_TOKEN}`);
    assert.deepEqual(first.cursor, {
      revision: GITBOOK_FIRST_REVISION,
      space: first.cursor!.space,
      settled: true,
      sites: first.cursor!.sites,
      sitesCheckedAt: first.cursor!.sitesCheckedAt,
    });
  });

  it('gives public items at the published URL, tagged with the space and the sections above them', () => {
    const install = doc(first.documents, 'Installation');
    assert.equal(install.externalId, 'pgDocInstall');
    assert.equal(install.url, 'https://docs.acme.com/getting-started/installation');
    assert.equal(install.visibility, 'public');
    assert.equal(install.table, 'docs_space_pages');
    assert.deepEqual(install.tags, ['docs_space', 'Product Docs', 'Getting started']);
    assert.equal(install.updatedAt, '2024-05-20T08:42:11.000Z');
    assert.ok(install.version && install.version.length >= 16);
    const config = doc(first.documents, 'Configuration');
    assert.equal(config.url, 'https://docs.acme.com/guides/configuration');
    assert.deepEqual(config.tags, ['docs_space', 'Product Docs', 'Guides']);
    assert.deepEqual(doc(first.documents, 'Guides').tags, ['docs_space', 'Product Docs']);
    assert.equal(new Set(first.documents.map((d) => d.version)).size, GITBOOK_DEFAULT_ITEMS);
  });

  it('renders every block kind to plain markdown under a heading with the tree path', () => {
    assert.equal(
      doc(first.documents, 'Installation').markdown,
      [
        '# Getting started › Installation',
        '',
        'Install the CLI in two minutes',
        '',
        'Install the **Acme CLI** with your package manager.',
        '',
        '> **Info:** Requires Node 18+ and `npm` 9.',
        '',
        '**macOS**',
        '',
        '```bash',
        'brew install acme',
        '```',
        '',
        '**Windows**',
        '',
        'Download the installer from the releases page and run it.',
        '',
        '*acme.config.js*',
        '',
        '```javascript',
        'export default { region: "eu-west-1" };',
        '```',
        '',
        '**Troubleshooting a failed install**',
        '',
        'Delete `~/.acme/cache` and run the installer again.',
        '',
        '![The installer window](https://files.gitbook.com/acme/install.png)',
        '',
        'The installer',
      ].join('\n'),
    );
    const quick = doc(first.documents, 'Quickstart').markdown;
    assert.ok(quick.startsWith('# Getting started › Quickstart\n\nCreate your first project'), quick);
    assert.match(quick, /^- \[x\] Install the CLI\n- \[ \] Run `acme init`$/m);
    assert.match(quick, /^\| `acme deploy` \| Deploys it \|$/m);
    assert.match(
      quick,
      /^\[A five-minute tour of the CLI\]\(https:\/\/www\.youtube\.com\/watch\?v=acme123\)$/m,
    );
    assert.match(quick, /^\[configuration\.md\]\(\.\.\/guides\/configuration\.md\)$/m);
    assert.doesNotMatch(quick, /\{%/);
    const config = doc(first.documents, 'Configuration').markdown;
    assert.ok(config.startsWith('# Guides › Configuration\n'), config);
    assert.match(config, /^> \*\*Warning:\*\* Never commit your API key\.$/m);
    assert.match(config, /^### Set the region\nEdit the `region` field\.$/m);
    assert.match(
      config,
      /^\[Sample configuration\]\(https:\/\/files\.gitbook\.com\/acme\/sample-config\.zip\)$/m,
    );
    const api = doc(first.documents, 'REST API').markdown;
    assert.ok(api.startsWith('# Reference › REST API\n\n**GET /v1/projects**: List projects'), api);
    assert.match(api, /^- `limit` \(query, Number\): Page size, at most 100\.$/m);
    assert.match(api, /^```json\n\{ "projects": \[\] \}\n```$/m);
    assert.match(api, /^Text inside a tag nobody knows\.$/m, 'an unknown tag keeps its inner text');
    for (const d of first.documents) assert.doesNotMatch(d.markdown, /\{%|%\}|<details|<summary/, d.title);
  });
});

describe('docs_space sync: changes between syncs', () => {
  let fake: FakeGitbook;
  let set: SyncedSet<DocsSpaceCursor>;
  before(async () => {
    fake = await startFakeGitbook();
    set = newSet(fake);
    await set.sync();
  });
  after(() => fake.close());

  it('an unchanged space: two requests (the space and its sites), no document, the same cursor', async () => {
    const cursor = set.cursor;
    const from = fake.requests.length;
    const out = await set.sync();
    assert.equal(out.documents.length, 0);
    assert.equal(out.deleted.length, 0);
    assert.equal(out.requests, 2);
    assert.deepEqual(
      fake.requests.slice(from).map((r) => r.path),
      [spacePath, sitesPath],
    );
    assert.deepEqual(out.cursor, cursor);
  });

  it('an edit: the new revision’s tree, and only the edited page fetched and yielded', async () => {
    const before = new Map([...set.docs.values()].map((d) => [d.externalId, d.version]));
    fake.space.edit('pgDocQuick01', {
      markdown: '# Quickstart\n\nRun `acme init --template web` to begin.\n',
    });
    const from = fake.requests.length;
    const out = await set.sync();
    assert.deepEqual(
      out.documents.map((d) => d.externalId),
      ['pgDocQuick01'],
    );
    assert.equal(out.requests, 5, 'space, sites, structure, revision, page');
    assert.deepEqual(pageReads(fake, from), ['pgDocQuick01']);
    assert.equal(
      out.documents[0]!.markdown,
      '# Getting started › Quickstart\n\nRun `acme init --template web` to begin.',
    );
    assert.notEqual(out.documents[0]!.version, before.get('pgDocQuick01'));
    assert.equal(out.cursor?.revision, fake.space.revision);
    assert.notEqual(fake.space.revision, GITBOOK_FIRST_REVISION);
    for (const d of set.docs.values()) {
      if (d.externalId !== 'pgDocQuick01') assert.equal(d.version, before.get(d.externalId), d.title);
    }
  });

  it('a page deleted from the tree: deleted, nothing fetched', async () => {
    fake.space.remove('pgCmpEndpts1');
    const from = fake.requests.length;
    const out = await set.sync();
    assert.deepEqual(out.deleted, [{ externalId: 'pgCmpEndpts1', table: 'docs_space_pages' }]);
    assert.equal(out.documents.length, 0);
    assert.deepEqual(pageReads(fake, from), []);
    assert.equal(out.requests, 4);
  });

  it('a page set to noIndex (unpublished from search): deleted', async () => {
    fake.space.edit('pgDocDeploy1', { noIndex: true });
    const out = await set.sync();
    assert.deepEqual(
      out.deleted.map((d) => d.externalId),
      ['pgDocDeploy1'],
    );
    assert.equal(out.documents.length, 0);
    assert.equal(set.docs.has('pgDocDeploy1'), false);
  });

  it('a page moved to another group: fetched again with its new URL, tags and heading', async () => {
    fake.space.move('pgDocConfig1', 'pgGrpRefs001', 0);
    const from = fake.requests.length;
    const out = await set.sync();
    assert.deepEqual(pageReads(fake, from), ['pgDocConfig1']);
    assert.equal(out.documents.length, 1);
    const moved = out.documents[0]!;
    assert.equal(moved.url, 'https://docs.acme.com/reference/configuration');
    assert.deepEqual(moved.tags, ['docs_space', 'Product Docs', 'Reference']);
    assert.ok(moved.markdown.startsWith('# Reference › Configuration\n'), moved.markdown);
    assert.deepEqual(out.deleted, []);
  });

  it('a renamed group: its pages are yielded again under the new name, others are not', async () => {
    fake.space.edit('pgGrpStart01', { title: 'First steps' });
    const from = fake.requests.length;
    const out = await set.sync();
    assert.deepEqual(pageReads(fake, from).sort(), ['pgDocInstall', 'pgDocQuick01']);
    for (const d of out.documents) {
      assert.deepEqual(d.tags, ['docs_space', 'Product Docs', 'First steps']);
      assert.ok(d.markdown.startsWith(`# First steps › ${d.title}\n`), d.markdown);
    }
  });

  it('a new page: yielded', async () => {
    fake.space.add(
      { id: 'pgDocFaq0001', title: 'FAQ', markdown: '# FAQ\n\nAnswers to common questions.' },
      'pgDocGuides1',
    );
    const out = await set.sync();
    assert.deepEqual(
      out.documents.map((d) => [d.externalId, d.url]),
      [['pgDocFaq0001', 'https://docs.acme.com/guides/faq']],
    );
  });

  it('the site published under a sub-path: every page again at its new URL', async () => {
    fake.space.site.url = 'https://acme.gitbook.io/docs';
    const out = await set.sync();
    assert.equal(out.documents.length, set.docs.size);
    assert.equal(
      doc(out.documents, 'Configuration').url,
      'https://acme.gitbook.io/docs/reference/configuration',
    );
    for (const d of out.documents) assert.equal(d.visibility, 'public');
  });

  it('the site turned to share links: every page again, private, at its GitBook app URL; then quiet', async () => {
    fake.space.site.visibility = 'share-link';
    const revision = fake.space.revision;
    const out = await set.sync();
    assert.equal(fake.space.revision, revision, 'a setting, not a new revision');
    assert.equal(out.documents.length, set.docs.size);
    for (const d of out.documents) {
      assert.equal(d.visibility, 'private', d.title);
      assert.ok(d.url.startsWith(`https://app.gitbook.com/s/${GITBOOK_SPACE_ID}/`), d.url);
    }
    assert.equal(
      doc(out.documents, 'Installation').url,
      `https://app.gitbook.com/s/${GITBOOK_SPACE_ID}/first-steps/installation`,
    );
    const quiet = await set.sync();
    assert.equal(quiet.documents.length, 0);
    assert.equal(quiet.requests, 2);
  });

  it('a reset re-reads everything and ends with exactly the source’s set', async () => {
    // An item the incremental syncs never learnt was gone (as after a lost deletion).
    set.hold({ ...doc(set.docs.values(), 'FAQ'), externalId: 'pgDocGone001' });
    const from = fake.requests.length;
    const out = await set.sync('full');
    const expected = fake.space.indexableIds();
    assert.equal(out.documents.length, expected.length);
    assert.equal(out.requests, 4 + expected.length + 1);
    assert.deepEqual(pageReads(fake, from).sort(), [...expected].sort());
    assert.deepEqual([...set.docs.keys()].sort(), [...expected].sort());
    assert.deepEqual(out.cursor, {
      revision: fake.space.revision,
      space: out.cursor!.space,
      settled: true,
      sites: out.cursor!.sites,
      sitesCheckedAt: out.cursor!.sitesCheckedAt,
    });
    const quiet = await set.sync();
    assert.equal(quiet.requests, 2);
  });
});

describe('docs_space sync: failures', () => {
  let fake: FakeGitbook;
  before(async () => {
    fake = await startFakeGitbook();
  });
  after(() => fake.close());

  it('a malformed page body is a failure of that page; the rest lands', async () => {
    fake.space.pageReplies.set('pgDocQuick01', {
      status: 200,
      body: { id: 'pgDocQuick01', title: 'Quickstart', markdown: 42 },
    });
    try {
      const set = newSet(fake);
      const out = await set.sync();
      assert.equal(out.documents.length, GITBOOK_DEFAULT_ITEMS - 1);
      assert.equal(out.failures.length, 1);
      assert.equal(out.failures[0]!.externalId, 'pgDocQuick01');
      assert.equal(out.failures[0]!.retryable, false);
      assert.match(out.failures[0]!.error.message, /unexpected shape/);
      // Retrying cannot help until the page changes, so an unchanged space stays quiet.
      const quiet = await set.sync();
      assert.equal(quiet.requests, 2);
    } finally {
      fake.space.pageReplies.clear();
    }
  });

  it('a page that keeps failing with 500 is a retryable failure, fetched alone on the next sync', async () => {
    fake.space.pageReplies.set('pgDocConfig1', {
      status: 500,
      body: { error: { code: 500, message: 'Internal error' } },
    });
    const set = newSet(fake);
    const out = await set.sync();
    assert.equal(out.documents.length, GITBOOK_DEFAULT_ITEMS - 1);
    assert.deepEqual(
      out.failures.map((f) => [f.externalId, f.retryable]),
      [['pgDocConfig1', true]],
    );
    assert.equal(out.cursor?.settled, false);
    fake.space.pageReplies.clear();
    const from = fake.requests.length;
    const next = await set.sync();
    assert.deepEqual(pageReads(fake, from), ['pgDocConfig1']);
    assert.deepEqual(
      next.documents.map((d) => d.title),
      ['Configuration'],
    );
    // The space, its sites, their structure, the revision, the page and the reusable content it includes.
    assert.equal(next.requests, 6);
    assert.equal(next.cursor?.settled, true);
  });

  it('a tree node without an id is a failure without one, and blocks deletions in that pass', async () => {
    const f = await startFakeGitbook();
    try {
      const set = newSet(f);
      await set.sync();
      f.space.remove('pgDocRestApi');
      f.space.treeFilter = (pages) => [...pages, { type: 'document', title: 'No id' }];
      const out = await set.sync();
      assert.equal(out.failures.length, 1);
      assert.equal(out.failures[0]!.externalId, undefined);
      assert.deepEqual(out.deleted, [], 'an incomplete tree proves no absence');
      f.space.treeFilter = undefined;
      const next = await set.sync();
      assert.deepEqual(
        next.deleted.map((d) => d.externalId),
        ['pgDocRestApi'],
      );
    } finally {
      await f.close();
    }
  });

  it('a document node of an unexpected shape is a failure of that page, which keeps its item', async () => {
    const f = await startFakeGitbook();
    try {
      const set = newSet(f);
      await set.sync();
      f.space.edit('pgDocGuides1', { title: 'Guides and how-tos' });
      f.space.treeFilter = (pages) =>
        pages.map((p) =>
          (p as { id: string }).id === 'pgDocGuides1' ? { ...(p as object), path: undefined } : p,
        );
      const out = await set.sync();
      assert.deepEqual(
        out.failures.map((x) => [x.externalId, x.retryable]),
        [['pgDocGuides1', false]],
      );
      assert.deepEqual(out.deleted, []);
      assert.ok(set.docs.has('pgDocGuides1'));
      // Its children are still read, under the parent's new title.
      assert.deepEqual(out.documents.map((d) => d.title).sort(), [
        'Configuration',
        'Deploying to production',
      ]);
      for (const d of out.documents)
        assert.deepEqual(d.tags, ['docs_space', 'Product Docs', 'Guides and how-tos']);
    } finally {
      await f.close();
    }
  });

  it('waits out a 429 burst until X-RateLimit-Reset (no Retry-After) and completes', async () => {
    const delays: number[] = [];
    fake.rateLimitNext(2, 3);
    const out = await newSet(fake, delays).sync();
    assert.equal(out.documents.length, GITBOOK_DEFAULT_ITEMS);
    assert.deepEqual(out.failures, []);
    assert.equal(delays.length, 2);
    // fastHttp's backoff is at most 4 ms: waits of seconds can only come from the reset header.
    // The reset is whole epoch seconds, so a 3 s limit waits between 2 and 4 s.
    for (const d of delays) assert.ok(d > 1_000 && d <= 4_000, `waited ${d} ms`);
    assert.equal(out.requests, 2 + FIRST_SYNC_REQUESTS);
  });

  it('retries a 500 and completes', async () => {
    const delays: number[] = [];
    fake.failNext(1, { status: 500, body: { error: { code: 500, message: 'Internal error' } } });
    const out = await newSet(fake, delays).sync();
    assert.equal(out.documents.length, GITBOOK_DEFAULT_ITEMS);
    assert.deepEqual(out.failures, []);
    assert.equal(delays.length, 1);
    assert.equal(out.requests, 1 + FIRST_SYNC_REQUESTS);
  });

  it('revoked credentials: the sync throws source_auth_failed naming GitBook, without the token; items stay', async () => {
    const f = await startFakeGitbook();
    try {
      const set = newSet(f);
      await set.sync();
      const held = [...set.docs.keys()];
      f.space.revokeToken();
      await assert.rejects(set.sync(), (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'source_auth_failed');
        assert.match(
          err.message,
          /^GitBook \(docs_space\) rejected the access token \(HTTP 401: You must be authenticated/,
        );
        assert.match(err.message, /source\.access_token/);
        assert.doesNotMatch(err.message, new RegExp(GITBOOK_GOOD_TOKEN));
        return true;
      });
      assert.deepEqual([...set.docs.keys()], held);
    } finally {
      await f.close();
    }
  });

  it('access to the space lost (403 or 404): the sync throws naming the space', async () => {
    const f = await startFakeGitbook();
    try {
      f.space.access = 'forbidden';
      await assert.rejects(newSet(f).sync(), (err: unknown) => {
        assert.ok(err instanceof AppError && err.code === 'source_auth_failed');
        assert.match(err.message, new RegExp(`refused access to space ${GITBOOK_SPACE_ID} \\(HTTP 403`));
        return true;
      });
      f.space.access = 'gone';
      await assert.rejects(
        newSet(f).sync(),
        /has no space yN5y7mTE9ShLiSKLYkzY for this token \(HTTP 404: Space not found\)/,
      );
    } finally {
      await f.close();
    }
  });

  it('a 401 on a page mid-sync stops the sync instead of failing page by page', async () => {
    const f = await startFakeGitbook();
    try {
      f.space.pageReplies.set('pgDocGuides1', {
        status: 401,
        body: { error: { code: 401, message: 'You must be authenticated to access this resource' } },
      });
      await assert.rejects(
        newSet(f).sync(),
        (err: unknown) => err instanceof AppError && err.code === 'source_auth_failed',
      );
    } finally {
      await f.close();
    }
  });
});

describe('docs_space sync: a reset resumes in its revision', () => {
  const PAGES = 2 * CHECKPOINT_EVERY + 50;
  let fake: FakeGitbook;
  before(async () => {
    const pages: FakeGitbookPage[] = Array.from({ length: PAGES }, (_, n) => ({
      id: `pgBulk${n}`,
      title: `Bulk page ${n}`,
      markdown: `# Bulk page ${n}\n\nBody ${n}.`,
    }));
    fake = await startFakeGitbook({ pages: [{ id: 'pgGrpBulk01', type: 'group', title: 'Bulk', pages }] });
  });
  after(() => fake.close());

  async function drive(cursor: DocsSpaceCursor | null) {
    const ctx = createConnectorContext({
      connector: docsSpaceConnector,
      credentials: docsSpaceConnector.normalize(input),
      fetch: plainFetch,
      signal: new AbortController().signal,
      baseUrlTemplate: fake.url,
      http: { ...fastHttp(), requestsPerSecond: 100_000 },
    });
    const events: SyncEvent<DocsSpaceCursor>[] = [];
    // A full pass does not read known(): the runner sweeps what the pass did not yield.
    const known = async function* (): AsyncGenerator<KnownDocument[]> {
      yield* [];
    };
    for await (const e of docsSpaceConnector.sync!(ctx, { cursor, mode: 'full', known })) events.push(e);
    return events;
  }

  it('checkpoints every CHECKPOINT_EVERY pages and resumes after the last one, in the same revision', async () => {
    const events = await drive(null);
    const checkpoints = events.filter((e) => e.kind === 'checkpoint').map((e) => e.cursor);
    const revision = fake.space.revision;
    assert.deepEqual(
      checkpoints.map((c) => [c.revision, c.after]),
      [
        [revision, CHECKPOINT_EVERY],
        [revision, 2 * CHECKPOINT_EVERY],
        [revision, undefined],
      ],
    );
    const docs = events.filter((e) => e.kind === 'document');
    assert.equal(docs.length, PAGES);
    // The checkpoint after the first hundred pages follows the hundredth document.
    const firstCheckpoint = events.findIndex((e) => e.kind === 'checkpoint');
    assert.equal(
      events.slice(0, firstCheckpoint).filter((e) => e.kind === 'document').length,
      CHECKPOINT_EVERY,
    );

    // The job is restarted from its first checkpoint after the space moved on.
    fake.space.edit('pgBulk0', { markdown: '# Bulk page 0\n\nChanged.' });
    const from = fake.requests.length;
    const resumed = await drive(checkpoints[0]!);
    assert.equal(
      fake.requests[from + 3]!.path,
      `${spacePath}/revisions/${revision}`,
      'the interrupted pass’s revision',
    );
    const resumedDocs = resumed.filter((e) => e.kind === 'document').map((e) => e.doc.externalId);
    assert.equal(resumedDocs.length, PAGES - CHECKPOINT_EVERY);
    assert.equal(resumedDocs[0], `pgBulk${CHECKPOINT_EVERY}`);
    const last = resumed.at(-1);
    assert.ok(last?.kind === 'checkpoint');
    assert.deepEqual(
      { ...last.cursor, sites: undefined, sitesCheckedAt: undefined },
      { revision, space: checkpoints[0]!.space, settled: true, sites: undefined, sitesCheckedAt: undefined },
    );
  });
});

describe('docs_space sync: cancel', () => {
  let fake: FakeGitbook;
  before(async () => {
    fake = await startFakeGitbook();
  });
  after(() => fake.close());

  it('an abort during the pass stops it promptly, with requests in flight cut', async () => {
    const controller = new AbortController();
    let pages = 0;
    // Page answers are held until the test ends: a sync that waited for them would never settle (and
    // the test would time out), so settling at all shows the abort cut the requests in flight.
    const held: Array<() => void> = [];
    fake.space.onRequest = async (req) => {
      if (!req.path.includes('/page/')) return;
      if (++pages === 2) controller.abort();
      await new Promise<void>((resolve) => held.push(resolve));
    };
    try {
      const from = fake.requests.length;
      await assert.rejects(newSet(fake).sync('incremental', { signal: controller.signal }), {
        name: 'AbortError',
      });
      assert.ok(held.length > 0, 'answers were held when the abort came');
      assert.ok(pageReads(fake, from).length < GITBOOK_DEFAULT_ITEMS, 'did not read every page');
    } finally {
      fake.space.onRequest = undefined;
      for (const release of held) release();
    }
  });

  it('an already aborted signal sends nothing', async () => {
    const from = fake.requests.length;
    await assert.rejects(newSet(fake).sync('incremental', { signal: AbortSignal.abort() }), {
      name: 'AbortError',
    });
    assert.equal(fake.requests.length, from);
  });
});
