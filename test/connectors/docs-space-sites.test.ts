/**
 * `docs_space` as GitBook publishes since docs sites: the site(s) holding the space decide the items'
 * visibility and URLs, and reusable content is expanded where pages include it. Against the fake GitBook
 * API (test/fakes/gitbook.ts, gitbook-sites.ts) on loopback.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SITES_PER_PAGE } from '../../src/connectors/docs-space/client.ts';
import { docsSpaceConnector } from '../../src/connectors/docs-space/index.ts';
import { type DocsSpaceCursor, SITES_RECHECK_MS } from '../../src/connectors/docs-space/sync.ts';
import type { SourceDocument } from '../../src/connectors/types.ts';
import { AppError } from '../../src/lib/errors.ts';
import {
  type FakeGitbook,
  type FakeGitbookOptions,
  type FakeGitbookSite,
  GITBOOK_DEFAULT_REUSABLE,
  GITBOOK_GOOD_TOKEN,
  GITBOOK_ORG_ID,
  GITBOOK_SPACE_ID,
  startFakeGitbook,
} from '../fakes/gitbook.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const input = { access_token: GITBOOK_GOOD_TOKEN, space_id: GITBOOK_SPACE_ID };
const APP = `https://app.gitbook.com/s/${GITBOOK_SPACE_ID}`;
const sitesPath = `/v1/orgs/${GITBOOK_ORG_ID}/sites`;

const newSet = (fake: FakeGitbook) =>
  new SyncedSet<DocsSpaceCursor>(docsSpaceConnector, input, fake.url, {
    ...fastHttp(),
    requestsPerSecond: 100_000,
  });

function doc(docs: Iterable<SourceDocument>, title: string): SourceDocument {
  const found = [...docs].find((d) => d.title === title);
  assert.ok(found, `a document titled ${title}`);
  return found;
}

/** One site holding the fake space, with the settings a test gives. */
function site(overrides: Partial<FakeGitbookSite> & Pick<FakeGitbookSite, 'id'>): FakeGitbookSite {
  return {
    title: overrides.id,
    visibility: 'public',
    published: true,
    url: 'https://docs.acme.com/',
    siteSpaces: [{ id: `ss_${overrides.id}`, spaceId: GITBOOK_SPACE_ID, path: 'docs', default: true }],
    ...overrides,
  };
}

/** The first sync against a fresh fake with `opts`; the fake is closed afterwards. */
async function firstSync(opts: FakeGitbookOptions) {
  const fake = await startFakeGitbook(opts);
  try {
    const set = newSet(fake);
    return { out: await set.sync(), requests: fake.requests.map((r) => r.path) };
  } finally {
    await fake.close();
  }
}

describe('docs_space: publishing through docs sites', () => {
  it('a space published through a public site: public items at the site’s URL, though the space reads private', async () => {
    const fake = await startFakeGitbook();
    try {
      assert.equal(fake.space.visibility, 'private', 'the space’s own setting, as GitBook leaves it');
      assert.equal(fake.space.published, undefined);
      const out = await newSet(fake).sync();
      assert.equal(out.documents.length > 0, true);
      for (const d of out.documents) {
        assert.equal(d.visibility, 'public', d.title);
        assert.ok(d.url.startsWith('https://docs.acme.com/'), d.url);
      }
      assert.equal(
        doc(out.documents, 'Installation').url,
        'https://docs.acme.com/getting-started/installation',
      );
    } finally {
      await fake.close();
    }
  });

  it('a site space in a section under a variant path: the site space’s published URL', async () => {
    const { out } = await firstSync({
      sites: [
        site({
          id: 'site_sections',
          sections: [
            { id: 'sec_home', title: 'Home', path: 'home', default: true },
            { id: 'sec_cli', title: 'CLI', path: 'cli' },
          ],
          siteSpaces: [{ id: 'ss_v2', spaceId: GITBOOK_SPACE_ID, path: 'v2', section: 'sec_cli' }],
        }),
      ],
    });
    assert.equal(
      doc(out.documents, 'Installation').url,
      'https://docs.acme.com/cli/v2/getting-started/installation',
    );
    assert.equal(doc(out.documents, 'Installation').visibility, 'public');
  });

  const audiences: Array<{
    name: string;
    sites: FakeGitbookSite[];
    visibility: 'public' | 'private';
    url: string;
  }> = [
    {
      name: 'unlisted (anyone with the URL): public, at the site',
      sites: [site({ id: 's1', visibility: 'unlisted' })],
      visibility: 'public',
      url: 'https://docs.acme.com/getting-started/installation',
    },
    {
      name: 'visitor-auth (readers sign in at the site): private, at the site',
      sites: [site({ id: 's1', visibility: 'visitor-auth' })],
      visibility: 'private',
      url: 'https://docs.acme.com/getting-started/installation',
    },
    {
      name: 'share-link (a secret token in the URL): private, in the GitBook app',
      sites: [site({ id: 's1', visibility: 'share-link' })],
      visibility: 'private',
      url: `${APP}/getting-started/installation`,
    },
    {
      name: 'an unpublished site: private, in the GitBook app',
      sites: [site({ id: 's1', published: false })],
      visibility: 'private',
      url: `${APP}/getting-started/installation`,
    },
    {
      name: 'a draft site space: private',
      sites: [
        site({
          id: 's1',
          siteSpaces: [{ id: 'ss1', spaceId: GITBOOK_SPACE_ID, path: 'docs', default: true, draft: true }],
        }),
      ],
      visibility: 'private',
      url: `${APP}/getting-started/installation`,
    },
    {
      name: 'a draft section: private',
      sites: [
        site({
          id: 's1',
          sections: [{ id: 'sec1', title: 'Docs', path: 'docs', default: true, draft: true }],
          siteSpaces: [
            { id: 'ss1', spaceId: GITBOOK_SPACE_ID, path: 'docs', default: true, section: 'sec1' },
          ],
        }),
      ],
      visibility: 'private',
      url: `${APP}/getting-started/installation`,
    },
    {
      name: 'in no site at all: private',
      sites: [
        site({ id: 's1', siteSpaces: [{ id: 'ss1', spaceId: 'otherSpace01', path: 'x', default: true }] }),
      ],
      visibility: 'private',
      url: `${APP}/getting-started/installation`,
    },
    {
      name: 'in a share-link site and a public one: public, at the public one',
      sites: [
        site({ id: 'a_share', visibility: 'share-link', url: 'https://partners.acme.com/' }),
        site({ id: 'b_public', url: 'https://help.acme.com/' }),
      ],
      visibility: 'public',
      url: 'https://help.acme.com/getting-started/installation',
    },
  ];
  for (const c of audiences) {
    it(`site audience ${c.name}`, async () => {
      const { out } = await firstSync({ sites: c.sites });
      const install = doc(out.documents, 'Installation');
      assert.equal(install.visibility, c.visibility);
      assert.equal(install.url, c.url);
      for (const d of out.documents) assert.equal(d.visibility, c.visibility, d.title);
    });
  }

  it('sites the token may not list (403): private items in the GitBook app; the sync completes', async () => {
    const fake = await startFakeGitbook();
    try {
      fake.space.orgAccess = 'forbidden';
      const out = await newSet(fake).sync();
      assert.deepEqual(out.failures, []);
      assert.equal(doc(out.documents, 'Installation').url, `${APP}/getting-started/installation`);
      for (const d of out.documents) assert.equal(d.visibility, 'private');
    } finally {
      await fake.close();
    }
  });

  it('a 401 on the sites listing stops the sync as the token’s problem', async () => {
    const fake = await startFakeGitbook();
    try {
      fake.space.onRequest = (req) => {
        if (req.path.startsWith(sitesPath)) fake.space.revokeToken();
      };
      await assert.rejects(newSet(fake).sync(), (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'source_auth_failed');
        assert.doesNotMatch(err.message, new RegExp(GITBOOK_GOOD_TOKEN));
        return true;
      });
    } finally {
      await fake.close();
    }
  });

  it('follows the sites listing across pages', async () => {
    const others = Array.from({ length: 2 * SITES_PER_PAGE + 3 }, (_, n) =>
      site({ id: `a${String(n).padStart(4, '0')}`, published: false }),
    );
    const { out, requests } = await firstSync({
      sites: [...others, site({ id: 'z_public', url: 'https://last.acme.com/' })],
    });
    assert.equal(requests.filter((p) => p === sitesPath).length, 3);
    assert.equal(
      doc(out.documents, 'Installation').url,
      'https://last.acme.com/getting-started/installation',
    );
  });

  describe('between syncs', () => {
    let fake: FakeGitbook;
    let set: SyncedSet<DocsSpaceCursor>;
    let firstRequests: number;
    before(async () => {
      fake = await startFakeGitbook();
      set = newSet(fake);
      firstRequests = (await set.sync()).requests;
    });
    after(() => fake.close());

    it('an unchanged sync costs at most a quarter of the first one', async () => {
      const out = await set.sync();
      assert.equal(out.documents.length, 0);
      assert.equal(out.requests, 2);
      assert.ok(out.requests * 4 <= firstRequests, `${out.requests} of ${firstRequests}`);
    });

    it('the site unpublished (a setting, no new revision): every page again, private; then quiet', async () => {
      const revision = fake.space.revision;
      fake.space.site.published = false;
      const out = await set.sync();
      assert.equal(fake.space.revision, revision);
      assert.equal(out.documents.length, set.docs.size);
      for (const d of out.documents) assert.equal(d.visibility, 'private', d.title);
      assert.equal((await set.sync()).requests, 2);
      fake.space.site.published = true;
      const back = await set.sync();
      for (const d of back.documents) assert.equal(d.visibility, 'public', d.title);
      assert.equal(back.documents.length, set.docs.size);
    });

    it('a site space turned draft (the listing unchanged) is noticed when the structure is read again daily', async () => {
      fake.space.site.siteSpaces[0]!.draft = true;
      const quiet = await set.sync();
      assert.equal(quiet.documents.length, 0, 'within a day, the listing alone is read');
      // A day later (the cursor the test holds says when the structure was read last).
      set.cursor = { ...set.cursor!, sitesCheckedAt: Date.now() - SITES_RECHECK_MS - 1 };
      const out = await set.sync();
      assert.equal(out.documents.length, set.docs.size);
      for (const d of out.documents) {
        assert.equal(d.visibility, 'private', d.title);
        assert.ok(d.url.startsWith(`${APP}/`), d.url);
      }
    });
  });
});

describe('docs_space: reusable content', () => {
  let fake: FakeGitbook;
  let set: SyncedSet<DocsSpaceCursor>;
  let first: Awaited<ReturnType<SyncedSet<DocsSpaceCursor>['sync']>>;
  const rcDocument = () =>
    `/v1/spaces/${GITBOOK_SPACE_ID}/revisions/${fake.space.revision}/reusable-contents/${GITBOOK_DEFAULT_REUSABLE.id}/document`;
  before(async () => {
    fake = await startFakeGitbook();
    set = newSet(fake);
    first = await set.sync();
  });
  after(() => fake.close());

  it('is expanded where pages include it, read once per pass from the revision', () => {
    for (const title of ['Configuration', 'Deploying to production']) {
      const md = doc(first.documents, title).markdown;
      assert.match(md, /^Write to support@acme\.test with your project id\.$/m, title);
      assert.match(md, /^> \*\*Warning:\*\* Rollbacks older than 30 days need a support ticket\.$/m, title);
      assert.doesNotMatch(md, /\{%|%\}/, title);
    }
    assert.doesNotMatch(doc(first.documents, 'Installation').markdown, /support@acme\.test/);
    assert.equal(fake.requests.filter((r) => r.path === rcDocument()).length, 1);
  });

  it('an edit of the reusable content fetches again exactly the pages that include it', async () => {
    fake.space.editReusable(GITBOOK_DEFAULT_REUSABLE.id, [
      { type: 'paragraph', text: 'Open a ticket at https://help.acme.test instead.' },
      { type: 'code', syntax: 'bash', lines: ['acme support --open'] },
    ]);
    const from = fake.requests.length;
    const out = await set.sync();
    assert.deepEqual(out.documents.map((d) => d.title).sort(), ['Configuration', 'Deploying to production']);
    for (const d of out.documents) {
      assert.match(d.markdown, /^Open a ticket at https:\/\/help\.acme\.test instead\.$/m);
      assert.match(d.markdown, /^```bash\nacme support --open\n```$/m);
      assert.doesNotMatch(d.markdown, /support@acme\.test/);
    }
    assert.equal(fake.requests.slice(from).filter((r) => r.path === rcDocument()).length, 1);
    assert.equal((await set.sync()).documents.length, 0);
  });

  it('a page that starts including it is fetched (its own edit) and expanded', async () => {
    fake.space.edit('pgDocQuick01', {
      markdown: '# Quickstart\n\nStart here.\n\n{{reusable:rcSupport001}}\n',
    });
    const out = await set.sync();
    assert.deepEqual(
      out.documents.map((d) => d.title),
      ['Quickstart'],
    );
    assert.match(out.documents[0]!.markdown, /Open a ticket at/);
  });

  it('a reusable content that fails (500): the pages including it fail retryably and are fetched next time', async () => {
    const f = await startFakeGitbook();
    try {
      f.space.reusableReplies.set(GITBOOK_DEFAULT_REUSABLE.id, {
        status: 500,
        body: { error: { code: 500, message: 'Internal error' } },
      });
      const s = newSet(f);
      const out = await s.sync();
      assert.deepEqual(out.failures.map((x) => [x.externalId, x.retryable]).sort(), [
        ['pgDocConfig1', true],
        ['pgDocDeploy1', true],
      ]);
      assert.equal(out.cursor?.settled, false);
      f.space.reusableReplies.clear();
      const next = await s.sync();
      assert.deepEqual(next.documents.map((d) => d.title).sort(), [
        'Configuration',
        'Deploying to production',
      ]);
      assert.equal(next.cursor?.settled, true);
    } finally {
      await f.close();
    }
  });

  it('an include that names nothing in the revision: the page is indexed without it', async () => {
    const f = await startFakeGitbook();
    try {
      f.space.edit('pgDocQuick01', {
        markdown: '# Quickstart\n\nBefore.\n\n{{reusable:rcGone000001}}\n\nAfter.\n',
      });
      const out = await newSet(f).sync();
      assert.deepEqual(out.failures, []);
      const md = doc(out.documents, 'Quickstart').markdown;
      assert.equal(md, '# Getting started › Quickstart\n\nBefore.\n\nAfter.');
    } finally {
      await f.close();
    }
  });
});
