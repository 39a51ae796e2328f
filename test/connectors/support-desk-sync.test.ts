/**
 * The content sync of `support_desk` (Zendesk) against the fake account: the article export's paging
 * (overlapping boundary seconds, both endings), categories and sections as tags and heading context,
 * drafts, the listing that finds archived and deleted articles, tickets with their public comments only,
 * retries, failures of one record, revoked credentials, change and deletion detection between syncs,
 * reset, resume and cancel. The job engine and the database are the e2e file's business.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createConnectorContext } from '../../src/connectors/context.ts';
import { supportDeskConnector, ZENDESK_TOKEN_RETIRED_HINT } from '../../src/connectors/support-desk/index.ts';
import {
  ARTICLES_TABLE,
  type SupportDeskCursor,
  TICKETS_TABLE,
} from '../../src/connectors/support-desk/sync.ts';
import type { SourceDocument, SyncEvent } from '../../src/connectors/types.ts';
import { PaginationError } from '../../src/connectors/toolkit/pagination.ts';
import { AppError } from '../../src/lib/errors.ts';
import type { RecordedRequest } from '../fakes/fake-server.ts';
import {
  type FakeZendesk,
  FakeZendeskAccount,
  startFakeZendesk,
  ZENDESK_AGENT_ID,
  ZENDESK_GOOD,
  ZENDESK_GOOD_ACCESS_TOKEN,
} from '../fakes/zendesk.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const input = { subdomain: 'acme', ...ZENDESK_GOOD };
const withTickets = { ...input, include_tickets: true };

const RICH_BODY = `<h2>Before you start</h2><p>You need an <strong>active</strong> account and <em>access</em> to your <a href="/hc/en-us/articles/2">e-mail</a>.</p>
<ol><li>Open the <code>Sign in</code> page<ul><li>On mobile, tap <b>Menu</b></li><li>On desktop, click the link</li></ul></li><li>Click <strong>Forgot password</strong></li></ol>
<pre><code class="language-bash">curl -X POST https://acme.zendesk.com/api/v2/reset</code></pre>
<table><thead><tr><th>Plan</th><th>Reset by</th></tr></thead><tbody><tr><td>Team</td><td>E-mail</td></tr><tr><td>Enterprise</td><td>SSO</td></tr></tbody></table>
<blockquote><p>Links expire after 24 hours.</p></blockquote>
<p><img src="/hc/article_attachments/1/reset.png" alt="The reset form"></p>
<h3>Still stuck?</h3><p>Contact support.</p>`;

const RICH_MARKDOWN = `Getting started > Account

# Resetting your password

## Before you start

You need an **active** account and _access_ to your [e-mail](https://acme.zendesk.com/hc/en-us/articles/2).

1. Open the \`Sign in\` page
   - On mobile, tap **Menu**
   - On desktop, click the link
2. Click **Forgot password**

\`\`\`bash
curl -X POST https://acme.zendesk.com/api/v2/reset
\`\`\`

| Plan | Reset by |
| --- | --- |
| Team | E-mail |
| Enterprise | SSO |

> Links expire after 24 hours.

![The reset form](https://acme.zendesk.com/hc/article_attachments/1/reset.png)

### Still stuck?

Contact support.`;

const SEGMENT = 360_000_555_000;

/** Two categories, a nested section, published articles, and a draft, an archived and a deleted one. */
function buildAccount() {
  const account = new FakeZendeskAccount();
  const gettingStarted = account.addCategory('Getting started');
  const billing = account.addCategory('Billing');
  const accountSection = account.addSection(gettingStarted, 'Account');
  const security = account.addSection(gettingStarted, 'Security', { parent: accountSection });
  const invoices = account.addSection(billing, 'Invoices');
  const add = (
    section: typeof invoices,
    title: string,
    extra: Partial<Parameters<typeof account.addArticle>[0]> = {},
  ) => account.addArticle({ section, title, body: `<p>${title}: the details.</p>`, ...extra });
  const reset = add(accountSection, 'Resetting your password', {
    body: RICH_BODY,
    label_names: ['password', 'login'],
  });
  const twofa = add(security, 'Two-factor authentication', { user_segment_id: SEGMENT });
  const download = add(invoices, 'Downloading invoices');
  const refunds = add(invoices, 'Refund policy');
  const plans = add(invoices, 'Changing your plan');
  const seats = add(invoices, 'Adding team seats');
  const payment = add(invoices, 'Payment methods');
  const sso = add(accountSection, 'Single sign-on');
  add(invoices, 'Upcoming pricing', { draft: true });
  account.archiveArticle(add(invoices, 'Old billing page').id);
  account.deleteArticle(add(invoices, 'Removed article').id);
  return {
    account,
    sections: { gettingStarted, billing, accountSection, security, invoices },
    reset,
    twofa,
    download,
    refunds,
    plans,
    seats,
    payment,
    sso,
  };
}

const TITLES = [
  'Adding team seats',
  'Changing your plan',
  'Downloading invoices',
  'Payment methods',
  'Refund policy',
  'Resetting your password',
  'Single sign-on',
  'Two-factor authentication',
];

const CUSTOMER = 900_001;

/** Tickets in every status, with public replies and internal notes (one of them a ticket's first comment). */
function addTickets(account: FakeZendeskAccount) {
  account.addUser(CUSTOMER, 'Casey Customer');
  const printer = account.addTicket({
    subject: 'Printer on fire',
    tags: ['enterprise', 'hardware'],
    requester: CUSTOMER,
    comments: [
      { author: CUSTOMER, html: '<p>The printer is <strong>on fire</strong>.</p>' },
      {
        author: ZENDESK_AGENT_ID,
        public: false,
        html: '<p>INTERNAL: customer is on the legacy plan, do not refund.</p>',
      },
      { author: ZENDESK_AGENT_ID, html: '<p>Please unplug it and use the extinguisher.</p>' },
    ],
  });
  const invoice = account.addTicket({
    subject: 'Invoice missing',
    status: 'closed',
    requester: CUSTOMER,
    comments: [
      {
        author: ZENDESK_AGENT_ID,
        public: false,
        html: '<p>SECRET first note: VIP account, handle with care.</p>',
      },
      { author: ZENDESK_AGENT_ID, html: '<p>We found your invoice in the archive.</p>' },
    ],
  });
  const loop = account.addTicket({ subject: 'Password reset loop', requester: CUSTOMER });
  const charge = account.addTicket({ subject: 'Duplicate charge', requester: CUSTOMER });
  const login = account.addTicket({ subject: 'Cannot log in', status: 'open', requester: CUSTOMER });
  account.addTicket({ subject: 'Feature request', status: 'pending', requester: CUSTOMER });
  account.addTicket({ subject: 'Spam', status: 'deleted', requester: CUSTOMER });
  return { printer, invoice, loop, charge, login };
}

const SECRET_TEXT = /INTERNAL|legacy plan|SECRET|VIP account|refund approved/;

let fake: FakeZendesk | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start(
  account: FakeZendeskAccount,
  opts: { input?: Record<string, unknown>; prefix?: boolean; delays?: number[]; maxAttempts?: number } = {},
) {
  fake = await startFakeZendesk({ account });
  const http = {
    ...fastHttp(opts.delays ?? []),
    requestsPerSecond: 100_000,
    ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}),
  };
  const set = new SyncedSet<SupportDeskCursor>(
    supportDeskConnector,
    opts.input ?? input,
    opts.prefix ? `${fake.url}/{subdomain}` : fake.url,
    http,
  );
  return { fake, set };
}

const isExport = (r: RecordedRequest) => r.path.endsWith('/api/v2/help_center/incremental/articles');
const isListing = (r: RecordedRequest) =>
  r.path.endsWith('/api/v2/help_center/articles') && r.query.get('page[size]') !== null;
const isCount = (r: RecordedRequest) =>
  r.path.endsWith('/api/v2/help_center/articles') && r.query.get('per_page') === '1';
const isTicketExport = (r: RecordedRequest) => r.path.endsWith('/api/v2/incremental/tickets/cursor.json');
const isComments = (r: RecordedRequest) => /\/api\/v2\/tickets\/\d+\/comments\.json$/.test(r.path);

function since(f: FakeZendesk, from: number, test: (r: RecordedRequest) => boolean): RecordedRequest[] {
  return f.requests.slice(from).filter(test);
}

function byTitle(docs: Iterable<SourceDocument>, title: string): SourceDocument {
  const doc = [...docs].find((d) => d.title === title);
  assert.ok(doc, `a document titled ${title}: ${[...docs].map((d) => d.title).join(' | ')}`);
  return doc;
}

const titles = (docs: SourceDocument[]) => docs.map((d) => d.title).sort();
const ids = (events: Array<{ externalId?: string | undefined }>) => events.map((e) => e.externalId).sort();
const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.000Z$/, 'Z');

describe('support_desk (Zendesk) content sync: articles', () => {
  it('syncs published articles with URL, tags, heading context, visibility, table and version; no ticket request', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account);
    const first = await set.sync();
    assert.deepEqual([first.failures, first.deleted], [[], []]);
    assert.deepEqual(titles(first.documents), TITLES);
    // Categories, sections, the article count, then the export: everything from 0, and the boundary
    // second once more, whose page names itself as next.
    assert.deepEqual(
      fake.requests.map((r) => r.path),
      [
        '/api/v2/help_center/categories',
        '/api/v2/help_center/sections',
        '/api/v2/help_center/locales',
        '/api/v2/help_center/articles',
        '/api/v2/help_center/incremental/articles',
        '/api/v2/help_center/incremental/articles',
      ],
    );
    // The export leaves archived and deleted articles out: the last exported one is the last published
    // or draft one.
    const last = Math.max(
      ...[...s.account.articles.values()].filter((a) => !a.archived && !a.deleted).map((a) => a.updated_at),
    );
    assert.deepEqual(
      since(fake, 0, isExport).map((r) => r.query.get('start_time')),
      ['0', String(last)],
    );
    assert.equal(fake.requests[0]!.query.get('page[size]'), '100');
    assert.equal(since(fake, 0, isCount).length, 1);
    assert.equal(first.requests, 6);
    assert.equal(first.cursor?.articles.startTime, last);
    // Eight published articles and the draft: what the list counts.
    assert.equal(first.cursor?.articles.seen?.count, 9);
    const basic = Buffer.from(`${input.email}/token:${input.api_token}`).toString('base64');
    assert.ok(fake.requests.every((r) => r.headers.authorization === `Basic ${basic}`));

    const reset = byTitle(first.documents, 'Resetting your password');
    assert.equal(reset.externalId, String(s.reset.id));
    assert.equal(reset.table, ARTICLES_TABLE);
    assert.equal(
      reset.url,
      `https://acme.zendesk.com/hc/en-us/articles/${s.reset.id}-Resetting-your-password`,
    );
    assert.equal(reset.visibility, 'public');
    assert.deepEqual(reset.tags, [
      'support_desk',
      'locale:en-us',
      'Getting started',
      'Account',
      'password',
      'login',
    ]);
    assert.equal(reset.updatedAt, isoOf(s.reset.updated_at));
    assert.match(reset.version ?? '', new RegExp(`^${isoOf(s.reset.updated_at)}\\|[0-9a-f]{12}$`));
    assert.equal(reset.markdown, RICH_MARKDOWN);

    const twofa = byTitle(first.documents, 'Two-factor authentication');
    assert.equal(twofa.visibility, 'private', 'restricted to a user segment');
    assert.deepEqual(twofa.tags, ['support_desk', 'locale:en-us', 'Getting started', 'Account', 'Security']);
    assert.equal(
      twofa.markdown,
      'Getting started > Account > Security\n\n# Two-factor authentication\n\nTwo-factor authentication: the details.',
    );
    const invoices = byTitle(first.documents, 'Downloading invoices');
    assert.deepEqual(invoices.tags, ['support_desk', 'locale:en-us', 'Billing', 'Invoices']);
    assert.match(invoices.markdown, /^Billing > Invoices\n\n# Downloading invoices\n\n/);
    assert.equal(since(fake, 0, isTicketExport).length, 0);
  });

  it('an unchanged second sync yields nothing and asks only the count, with the newest update', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account);
    const first = await set.sync();
    const mark = fake.requests.length;
    const second = await set.sync();
    assert.deepEqual([second.documents, second.deleted, second.failures], [[], [], []]);
    assert.deepEqual(
      fake.requests.slice(mark).map((r) => [r.path, r.query.get('start_time') ?? r.query.get('page[size]')]),
      // The categories, sections and languages are the last pass's; the count and the newest update say
      // nothing moved, so the export has nothing to show.
      [['/api/v2/help_center/articles', null]],
    );
    const probe = fake.requests[mark]!.query;
    assert.deepEqual(
      [probe.get('per_page'), probe.get('sort_by'), probe.get('sort_order')],
      ['1', 'updated_at', 'desc'],
    );
    assert.equal(since(fake, mark, isListing).length, 0, 'the count proves nothing left: no listing');
    assert.equal(first.requests, 6);
    assert.equal(second.requests, 1);
    assert.ok(
      second.requests * 4 <= first.requests,
      'an unchanged sync costs at most a quarter of the first',
    );
    console.log(
      `# support_desk: first sync ${first.requests} requests, unchanged second sync ${second.requests}`,
    );
    assert.deepEqual(set.titles(), TITLES);
    assert.deepEqual(
      second.cursor,
      first.cursor,
      'the same start, count, places, structure and listing time',
    );
  });

  it('an edit in the newest second, made just after the last pass read it, is not left to the count: the export runs', async () => {
    const account = new FakeZendeskAccount();
    // The account's clock is ours: its newest update is seconds old when the next sync runs.
    account.clock = Math.floor(Date.now() / 1000);
    const section = account.addSection(account.addCategory('Guides'), 'Basics');
    const older = account.addArticle({ section, title: 'Older' });
    const newest = account.addArticle({ section, title: 'Newest' });
    const { fake, set } = await start(account);
    await set.sync();
    // Within the newest article's second: the count and the newest update stay as the first pass saw them.
    account.editArticle(older.id, { body: '<p>Edited in the same second.</p>', at: newest.updated_at });
    const mark = fake.requests.length;
    const second = await set.sync();
    assert.deepEqual(
      second.documents.map((d) => d.title),
      ['Older'],
    );
    assert.equal(since(fake, mark, isExport).length, 1);
  });

  for (const ending of ['self', 'null'] as const) {
    it(`pages the export with overlapping boundary seconds, each article once (last page: next_page ${ending === 'self' ? 'equal to the request' : 'null'})`, async () => {
      const account = new FakeZendeskAccount();
      account.articleExportPageSize = 3;
      account.exportEnding = ending;
      const section = account.addSection(account.addCategory('Guides'), 'Basics');
      const t = account.clock + 100;
      // a3 and a4 share a second; page 1 ends on it and page 2 starts there again.
      const at = [t + 1, t + 2, t + 3, t + 3, t + 4, t + 5];
      const articles = at.map((second, i) =>
        account.addArticle({ section, title: `Article ${i + 1}`, at: second }),
      );
      const { fake, set } = await start(account, { prefix: true });

      const first = await set.sync();
      assert.deepEqual(first.failures, []);
      assert.deepEqual(
        first.documents.map((d) => d.title),
        articles.map((a) => a.title),
        'every article once, in export order',
      );
      const asked = since(fake, 0, isExport).map((r) => Number(r.query.get('start_time')));
      // 0 → [a1 a2 a3] ends t+3; t+3 → [a3 a4 a5] ends t+4; t+4 → [a5 a6] ends t+5, which is the last page
      // (null), or names t+5, whose page re-reads a6 and names itself.
      assert.deepEqual(asked, ending === 'self' ? [0, t + 3, t + 4, t + 5] : [0, t + 3, t + 4]);
      assert.deepEqual(
        first.checkpoints.map((c) => c.articles.startTime),
        ending === 'self' ? [t + 3, t + 4, t + 5, t + 5, t + 5] : [t + 3, t + 4, t + 5, t + 5],
        'a checkpoint after each page, at its end_time',
      );
      assert.ok(
        fake.requests.every((r) => r.path.startsWith('/acme/api/v2/')),
        'the path prefix is kept',
      );

      const again = await set.sync();
      assert.deepEqual([again.documents, again.deleted, again.requests], [[], [], 1]);
      assert.equal(again.cursor?.articles.startTime, t + 5, 'nothing exported: the position stays');
      account.editArticle(articles[0]!.id, { body: '<p>Edited.</p>' });
      const edited = await set.sync();
      assert.deepEqual(
        edited.documents.map((d) => d.title),
        ['Article 1'],
      );
      assert.deepEqual(
        since(fake, fake.requests.length - edited.requests, isExport)
          .slice(0, 1)
          .map((r) => r.query.get('start_time')),
        [String(t + 5)],
        'the next export starts at the boundary second',
      );
    });
  }

  it('export pages of 100 overlap on their boundary article; the listing pages at exactly 100 with page[after]', async () => {
    const account = new FakeZendeskAccount();
    account.articleExportPageSize = 100;
    const section = account.addSection(account.addCategory('Guides'), 'Basics');
    for (let i = 1; i <= 200; i++)
      account.addArticle({ section, title: `Article ${i}`, body: `<p>Text ${i}.</p>` });
    const { fake, set } = await start(account);
    const first = await set.sync();
    assert.equal(first.documents.length, 200);
    // 0 → 1..100; the 100th's second → 100..199 (a full page again); the 199th's → 199 and 200; the
    // 200th's → the 200th alone, naming itself.
    assert.equal(since(fake, 0, isExport).length, 4);

    // An archive lowers the count: this sync lists.
    account.archiveArticle([...account.articles.values()][0]!.id);
    const mark = fake.requests.length;
    const second = await set.sync();
    assert.deepEqual([second.documents.length, second.deleted.length], [0, 1]);
    const listing = since(fake, mark, isListing);
    assert.equal(listing.length, 2, 'exactly two full listing pages: has_more is false on the second');
    assert.equal(listing[0]!.query.get('page[after]'), null);
    assert.ok(listing[1]!.query.get('page[after]'), 'the second page follows meta.after_cursor');
    assert.equal(listing[1]!.query.get('page[size]'), '100');
  });

  it('between two syncs: an edit, a delete, an archive, a draft-back, a move, an unshare and a renamed section', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account);
    await set.sync();
    const held = new Map([...set.held.values()].map((d) => [d.externalId, d]));

    s.account.editArticle(s.refunds.id, { body: '<p>Refunds within <strong>60</strong> days.</p>' });
    s.account.deleteArticle(s.download.id);
    s.account.archiveArticle(s.plans.id);
    s.account.draftArticle(s.seats.id);
    s.account.moveArticle(s.payment.id, s.sections.accountSection);
    s.account.restrictArticle(s.sso.id, SEGMENT);
    s.account.renameSection(s.sections.security, 'Security & privacy');
    const mark = fake.requests.length;

    const second = await set.sync();
    assert.deepEqual(second.failures, []);
    assert.deepEqual(titles(second.documents), [
      'Payment methods',
      'Refund policy',
      'Single sign-on',
      'Two-factor authentication',
    ]);
    assert.deepEqual(
      second.deleted.map((d) => [d.externalId, d.table]).sort(),
      [s.download.id, s.plans.id, s.seats.id].map((id) => [String(id), ARTICLES_TABLE]).sort(),
    );
    // The count (lower: the structure is read), categories, sections, languages, the export (changed
    // articles, then the boundary page) and one listing page.
    assert.equal(second.requests, 7);
    assert.equal(since(fake, mark, isListing).length, 1);

    assert.equal(
      byTitle(second.documents, 'Refund policy').markdown,
      'Billing > Invoices\n\n# Refund policy\n\nRefunds within **60** days.',
    );
    const moved = byTitle(second.documents, 'Payment methods');
    assert.deepEqual(moved.tags, ['support_desk', 'locale:en-us', 'Getting started', 'Account']);
    assert.match(moved.markdown, /^Getting started > Account\n\n# Payment methods/);
    assert.notEqual(moved.version, held.get(String(s.payment.id))?.version);
    assert.equal(byTitle(second.documents, 'Single sign-on').visibility, 'private');
    // The rename changed no article, so the export did not show it: the listing's tokens did.
    const renamed = byTitle(second.documents, 'Two-factor authentication');
    assert.deepEqual(renamed.tags, [
      'support_desk',
      'locale:en-us',
      'Getting started',
      'Account',
      'Security & privacy',
    ]);
    assert.match(renamed.markdown, /^Getting started > Account > Security & privacy\n\n/);
    assert.equal(renamed.updatedAt, held.get(String(s.twofa.id))?.updatedAt);

    assert.deepEqual(set.titles(), [
      'Payment methods',
      'Refund policy',
      'Resetting your password',
      'Single sign-on',
      'Two-factor authentication',
    ]);
    const third = await set.sync();
    assert.deepEqual([third.documents.length, third.deleted.length, third.requests], [0, 0, 1]);

    // Published again: back.
    s.account.publishArticle(s.seats.id);
    const fourth = await set.sync();
    assert.deepEqual(titles(fourth.documents), ['Adding team seats']);
  });

  it('an archive and a new article in one interval: the count still differs, so the sync lists', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account);
    await set.sync();
    s.account.archiveArticle(s.plans.id);
    s.account.addArticle({ section: s.sections.invoices, title: 'Tax exemptions' });
    const mark = fake.requests.length;
    const second = await set.sync();
    assert.deepEqual(titles(second.documents), ['Tax exemptions']);
    assert.deepEqual(ids(second.deleted), [String(s.plans.id)]);
    assert.equal(since(fake, mark, isListing).length, 1);
    assert.equal(second.cursor?.articles.seen?.count, 9, 'one archived, one added');
  });

  it('a pass that stopped midway saves no count: the pass that resumes it lists', async () => {
    const account = new FakeZendeskAccount();
    account.articleExportPageSize = 3;
    const section = account.addSection(account.addCategory('Guides'), 'Basics');
    const articles = Array.from({ length: 6 }, (_, i) =>
      account.addArticle({ section, title: `Article ${i + 1}` }),
    );
    const { fake, set } = await start(account);
    await set.sync();
    for (const a of articles.slice(0, 4)) account.editArticle(a.id, { body: `<p>${a.title}, revised.</p>` });
    const second = await set.sync();
    assert.ok(second.checkpoints.length > 2);
    const midway = second.checkpoints[0]!;
    assert.equal(midway.articles.seen, undefined, 'a checkpoint inside the export carries no count');
    assert.ok(second.cursor?.articles.seen, 'the pass that completed does');
    // As if the second pass had died after its first page.
    set.cursor = midway;
    const mark = fake.requests.length;
    await set.sync();
    assert.equal(since(fake, mark, isListing).length, 1);
  });

  it('a renamed category alone shows at the structure interval: then it lists, and re-yields the articles under it', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account);
    await set.sync();
    s.account.renameCategory(s.sections.billing, 'Billing & payments');
    let mark = fake.requests.length;
    // No article changed and the count is the same: nothing says the names moved, so they are not read.
    const second = await set.sync();
    assert.deepEqual([second.documents, second.deleted, second.requests], [[], [], 1]);
    assert.equal(since(fake, mark, (r) => r.path.endsWith('/api/v2/help_center/categories')).length, 0);

    // A day after the structure was read (the default KB_SUPPORT_DESK_LISTING_HOURS), it is read again.
    const seen = set.cursor!.articles.seen!;
    assert.ok(seen.structureAt !== undefined);
    set.cursor = {
      ...set.cursor!,
      articles: {
        ...set.cursor!.articles,
        seen: { ...seen, structureAt: seen.structureAt - 24 * 3_600_000 },
      },
    };
    mark = fake.requests.length;
    const third = await set.sync();
    assert.equal(since(fake, mark, isListing).length, 1);
    assert.deepEqual(titles(third.documents), [
      'Adding team seats',
      'Changing your plan',
      'Downloading invoices',
      'Payment methods',
      'Refund policy',
    ]);
    assert.deepEqual(byTitle(third.documents, 'Refund policy').tags, [
      'support_desk',
      'locale:en-us',
      'Billing & payments',
      'Invoices',
    ]);
    assert.ok(third.cursor!.articles.seen!.structureAt! > seen.structureAt, 'the structure time moves on');
    const fourth = await set.sync();
    assert.equal(fourth.requests, 1, 'the new places are the saved ones: no listing');
  });

  it('a changed count or a changed article reads the structure, and a rename made meanwhile lists', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account);
    await set.sync();
    const isCategories = (r: RecordedRequest) => r.path.endsWith('/api/v2/help_center/categories');

    // An archive lowers the count.
    s.account.archiveArticle(s.plans.id);
    s.account.renameCategory(s.sections.billing, 'Billing & payments');
    let mark = fake.requests.length;
    const second = await set.sync();
    assert.equal(since(fake, mark, isCategories).length, 1);
    assert.deepEqual(ids(second.deleted), [String(s.plans.id)]);
    assert.deepEqual(byTitle(second.documents, 'Refund policy').tags.slice(2), [
      'Billing & payments',
      'Invoices',
    ]);

    // An edit leaves the count as it was; the export shows the article changed.
    s.account.editArticle(s.refunds.id, { body: '<p>Refunds within <strong>60</strong> days.</p>' });
    s.account.renameSection(s.sections.invoices, 'Invoices & receipts');
    mark = fake.requests.length;
    const third = await set.sync();
    assert.equal(since(fake, mark, isCategories).length, 1);
    assert.equal(since(fake, mark, isListing).length, 1, 'the names changed: every article is compared');
    assert.deepEqual(titles(third.documents), [
      'Adding team seats',
      'Downloading invoices',
      'Payment methods',
      'Refund policy',
    ]);
    assert.deepEqual(byTitle(third.documents, 'Downloading invoices').tags.slice(2), [
      'Billing & payments',
      'Invoices & receipts',
    ]);
    const fourth = await set.sync();
    assert.deepEqual([fourth.documents, fourth.deleted, fourth.requests], [[], [], 1]);
  });

  it('what the count cannot see (an archive and a restore in one interval) leaves at the listing interval', async () => {
    const s = buildAccount();
    // Archived before the first sync, created before everything that sync exported.
    s.account.archiveArticle(s.refunds.id);
    const { fake, set } = await start(s.account);
    await set.sync();
    s.account.archiveArticle(s.plans.id);
    s.account.restoreArticle(s.refunds.id);
    let mark = fake.requests.length;
    const second = await set.sync();
    // The count is unchanged and the restored article was created long ago: nothing says "list".
    assert.deepEqual(titles(second.documents), ['Refund policy']);
    assert.deepEqual(second.deleted, []);
    assert.equal(since(fake, mark, isListing).length, 0);

    // A day after the last listing (the default KB_SUPPORT_DESK_LISTING_HOURS), the sync lists.
    const seen = set.cursor!.articles.seen!;
    set.cursor = {
      ...set.cursor!,
      articles: { ...set.cursor!.articles, seen: { ...seen, listedAt: seen.listedAt - 24 * 3_600_000 } },
    };
    mark = fake.requests.length;
    const third = await set.sync();
    assert.equal(since(fake, mark, isListing).length, 1);
    assert.deepEqual(ids(third.deleted), [String(s.plans.id)]);
    assert.ok(third.cursor!.articles.seen!.listedAt > seen.listedAt, 'the listing time moves on');
    const fourth = await set.sync();
    assert.equal(fourth.requests, 1);

    // KB_SUPPORT_DESK_LISTING_HOURS=0: every incremental sync lists.
    set.settings = { listingHours: '0' };
    mark = fake.requests.length;
    await set.sync();
    assert.equal(since(fake, mark, isListing).length, 1);
  });

  it('reset (full) re-reads everything from the start and ends with exactly the source set', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account);
    await set.sync();
    s.account.archiveArticle(s.plans.id);
    s.account.draftArticle(s.seats.id);
    s.account.addArticle({ section: s.sections.invoices, title: 'Tax exemptions' });
    s.account.editArticle(s.refunds.id, { body: '<p>No refunds.</p>' });
    const mark = fake.requests.length;

    const reset = await set.sync('full');
    const expected = [
      ...TITLES.filter((t) => t !== 'Changing your plan' && t !== 'Adding team seats'),
      'Tax exemptions',
    ].sort();
    assert.deepEqual(titles(reset.documents), expected, 'every current article is yielded again');
    assert.deepEqual(reset.deleted, [], 'a full pass leaves removal to the sweep');
    assert.equal(since(fake, mark, isExport)[0]!.query.get('start_time'), '0');
    assert.equal(
      since(fake, mark, isListing).length,
      0,
      'no listing: the sweep removes what was not yielded',
    );
    assert.deepEqual(set.titles(), expected);
    assert.equal(
      byTitle(set.held.values(), 'Refund policy').markdown,
      'Billing > Invoices\n\n# Refund policy\n\nNo refunds.',
    );
  });

  it('a retried full pass goes on from its last checkpoint', async () => {
    const s = buildAccount();
    const { fake } = await start(s.account);
    const ctx = createConnectorContext({
      connector: supportDeskConnector,
      credentials: supportDeskConnector.normalize(input),
      fetch: plainFetch,
      signal: new AbortController().signal,
      baseUrlTemplate: fake.url,
      http: { ...fastHttp(), requestsPerSecond: 100_000 },
    });
    const from = s.payment.updated_at;
    const events: SyncEvent<SupportDeskCursor>[] = [];
    const cursor: SupportDeskCursor = { articles: { startTime: from } };
    for await (const e of supportDeskConnector.sync!(ctx, {
      cursor,
      mode: 'full',
      known: async function* () {},
    })) {
      events.push(e);
    }
    assert.equal(since(fake, 0, isExport)[0]!.query.get('start_time'), String(from));
    const docs = events.flatMap((e) => (e.kind === 'document' ? [e.doc.title] : []));
    assert.deepEqual(docs, ['Payment methods', 'Single sign-on']);
  });

  it('waits out a 429 burst with Retry-After and a 500, then succeeds', async () => {
    const s = buildAccount();
    const delays: number[] = [];
    const { fake, set } = await start(s.account, { delays, maxAttempts: 5 });
    fake.rateLimitNext(2, 3);
    fake.failNext(1, { status: 500, body: { error: 'InternalError', description: 'Something went wrong' } });
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    assert.deepEqual(set.titles(), TITLES);
    assert.deepEqual(delays.slice(0, 2), [3000, 3000], 'Retry-After honoured');
    assert.equal(delays.length, 3, 'then one short backoff after the 500');
    assert.equal(first.requests, 6 + 3);
  });

  it('a malformed article is a failure and the rest lands; the next listing brings it once it reads', async () => {
    const s = buildAccount();
    s.refunds.override = { title: 42 };
    const { set } = await start(s.account);
    const first = await set.sync();
    assert.equal(first.failures.length, 1, 'once, though the boundary page shows it again');
    const failure = first.failures[0] as Extract<SyncEvent<unknown>, { kind: 'failure' }>;
    assert.equal(failure.externalId, String(s.refunds.id));
    assert.equal(failure.table, ARTICLES_TABLE);
    assert.equal(failure.retryable, false);
    assert.match(
      failure.error.message,
      /^Zendesk \(support_desk\) answered an article \(\d+\) in an unexpected shape: .*title/,
    );
    assert.deepEqual(
      set.titles(),
      TITLES.filter((t) => t !== 'Refund policy'),
    );

    s.refunds.override = undefined;
    const second = await set.sync();
    assert.deepEqual(
      titles(second.documents),
      ['Refund policy'],
      'the listing shows what the connection lacks',
    );
    assert.deepEqual(second.failures, []);
  });

  it('a listed record without a readable id stops the deletion pass', async () => {
    const s = buildAccount();
    const { set } = await start(s.account);
    await set.sync();
    s.account.archiveArticle(s.plans.id);
    s.reset.override = { id: 'not-a-number' };
    const second = await set.sync();
    assert.ok(second.failures.some((f) => f.externalId === undefined));
    assert.deepEqual(second.deleted, [], 'a listing with an unknown record proves no absence');
    assert.ok(set.doc(String(s.plans.id), ARTICLES_TABLE));

    s.reset.override = undefined;
    const third = await set.sync();
    assert.deepEqual(ids(third.deleted), [String(s.plans.id)]);
  });

  it("an export page larger than the client's default 32 MiB cap is read (long articles, 1,000 a page)", async () => {
    const account = new FakeZendeskAccount();
    const section = account.addSection(account.addCategory('Guides'), 'Long reads');
    // 40 articles of 1 MiB: one 40 MiB page.
    const paragraph = `<p>${'All work and no play makes a long article. '.repeat(23)}</p>`;
    const body = (a: { title: string }) => `<h2>${a.title}</h2>${paragraph.repeat(1024)}`;
    for (let i = 1; i <= 40; i++) account.addArticle({ section, title: `Long ${i}`, body });
    const { set } = await start(account);
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    assert.equal(first.documents.length, 40);
    assert.ok(first.bytes > 40 * 1024 * 1024, `${first.bytes} bytes received`);
  });

  it('more same-second changes than an export page holds: the listing brings the rest', async () => {
    const account = new FakeZendeskAccount();
    const section = account.addSection(account.addCategory('Guides'), 'Bulk');
    const second = account.clock + 10;
    for (let i = 1; i <= 1001; i++)
      account.addArticle({ section, title: `Bulk ${i}`, body: `<p>${i}</p>`, at: second });
    const { fake, set } = await start(account);
    const first = await set.sync();
    assert.equal(new Set(first.documents.map((d) => d.externalId)).size, 1001);
    assert.equal(first.documents.length, 1001, 'each once');
    assert.equal(since(fake, 0, isExport).length, 2, 'the export cannot page past that second');
    assert.equal(since(fake, 0, isListing).length, 11);
  });

  it('revoked API token: the sync throws an error saying tokens are being retired and how to reconnect, no secret', async () => {
    const s = buildAccount();
    const { set } = await start(s.account);
    await set.sync();
    s.account.credentials.api_token = 'zd_rotated_elsewhere_987654321';
    await assert.rejects(set.sync(), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'source_auth_failed');
      assert.equal(
        err.message,
        `Zendesk (support_desk) refused the credentials during the sync (HTTP 401: Couldn't authenticate you). ${ZENDESK_TOKEN_RETIRED_HINT}`,
      );
      assert.match(err.message, /unused for 30 days.*2027-04-30.*POST \/api\/connect\/oauth\/initiate/);
      assert.ok(!err.message.includes(input.api_token));
      assert.ok(
        !err.message.includes(Buffer.from(`${input.email}/token:${input.api_token}`).toString('base64')),
      );
      return true;
    });
    assert.deepEqual(set.titles(), TITLES, 'nothing is removed');
  });

  it('an OAuth connection sends Bearer; a revoked access token says to reconnect through OAuth', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account, {
      input: { subdomain: 'acme', access_token: ZENDESK_GOOD_ACCESS_TOKEN },
    });
    await set.sync();
    assert.ok(fake.requests.every((r) => r.headers.authorization === `Bearer ${ZENDESK_GOOD_ACCESS_TOKEN}`));
    s.account.credentials.access_token = 'zd_oauth_new_one_123456';
    await assert.rejects(set.sync(), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'source_auth_failed');
      assert.match(
        err.message,
        /HTTP 401.*The OAuth access was revoked or has expired: reconnect support_desk through OAuth/,
      );
      assert.doesNotMatch(err.message, /API token/);
      assert.ok(!err.message.includes(ZENDESK_GOOD_ACCESS_TOKEN));
      return true;
    });
  });
});

describe('support_desk (Zendesk) content sync: tickets', () => {
  it('solved and closed tickets become private items of their public comments only', async () => {
    const s = buildAccount();
    const tk = addTickets(s.account);
    const { fake, set } = await start(s.account, { input: withTickets });
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    const tickets = first.documents.filter((d) => d.table === TICKETS_TABLE);
    assert.deepEqual(titles(tickets), [
      'Duplicate charge',
      'Invoice missing',
      'Password reset loop',
      'Printer on fire',
    ]);
    assert.equal(first.documents.length, TITLES.length + 4);

    const printer = byTitle(tickets, 'Printer on fire');
    assert.equal(printer.externalId, String(tk.printer.id));
    assert.equal(printer.visibility, 'private');
    assert.equal(printer.url, `${fake.url}/agent/tickets/${tk.printer.id}`);
    assert.deepEqual(printer.tags, ['support_desk', 'ticket', 'enterprise', 'hardware']);
    assert.equal(printer.version, isoOf(tk.printer.updated_at));
    const when = `${isoOf(tk.printer.created_at).slice(0, 16).replace('T', ' ')} UTC`;
    assert.equal(
      printer.markdown,
      [
        '# Printer on fire',
        `Ticket #${tk.printer.id} · solved · priority normal · created ${when} · updated ${when}`,
        `## Casey Customer · ${when}`,
        'The printer is **on fire**.',
        `## Avery Agent · ${when}`,
        'Please unplug it and use the extinguisher.',
      ].join('\n\n'),
    );
    const invoice = byTitle(tickets, 'Invoice missing');
    assert.match(invoice.markdown, /closed/);
    assert.match(invoice.markdown, /We found your invoice in the archive\./);
    for (const d of tickets) {
      assert.doesNotMatch(
        JSON.stringify(d),
        SECRET_TEXT,
        `${d.title} carries no internal note, nor the description`,
      );
    }

    const exportRequests = since(fake, 0, isTicketExport);
    assert.deepEqual(
      exportRequests.map((r) => [r.query.get('start_time'), r.query.get('cursor')]),
      [['0', null]],
    );
    const comments = since(fake, 0, isComments);
    assert.equal(comments.length, 4, 'comments of the solved and closed tickets only');
    assert.deepEqual(
      [comments[0]!.query.get('page[size]'), comments[0]!.query.get('include')],
      ['100', 'users'],
    );
    assert.equal(first.requests, 6 + 1 + 4);
    assert.ok(
      first.cursor?.tickets && 'cursor' in first.cursor.tickets,
      'the ticket export after_cursor is saved',
    );

    const second = await set.sync();
    assert.deepEqual([second.documents, second.deleted], [[], []]);
    assert.equal(second.requests, 1 + 1, 'an unchanged account asks no comments');
    console.log(
      `# support_desk with tickets: first sync ${first.requests} requests, unchanged second sync ${second.requests}`,
    );
  });

  it('between two syncs: an internal note, a reopened, a deleted and a newly solved ticket', async () => {
    const s = buildAccount();
    const tk = addTickets(s.account);
    const { fake, set } = await start(s.account, { input: withTickets });
    const first = await set.sync();
    const saved = first.cursor!.tickets as { cursor: string };

    s.account.addComment(tk.printer.id, {
      public: false,
      html: '<p>INTERNAL follow-up: refund approved by finance.</p>',
    });
    s.account.setTicketStatus(tk.loop.id, 'open');
    s.account.setTicketStatus(tk.charge.id, 'deleted');
    s.account.addComment(tk.login.id, { html: '<p>Clearing the browser cache fixed it.</p>' });
    s.account.setTicketStatus(tk.login.id, 'solved');
    const mark = fake.requests.length;

    const second = await set.sync();
    assert.deepEqual(second.failures, []);
    assert.deepEqual(titles(second.documents), ['Cannot log in', 'Printer on fire']);
    assert.deepEqual(
      second.deleted.map((d) => [d.externalId, d.table]).sort(),
      [
        [String(tk.charge.id), TICKETS_TABLE],
        [String(tk.loop.id), TICKETS_TABLE],
      ].sort(),
    );
    assert.deepEqual(
      since(fake, mark, isTicketExport).map((r) => [r.query.get('start_time'), r.query.get('cursor')]),
      [[null, saved.cursor]],
      'the export goes on from the saved after_cursor',
    );
    assert.equal(since(fake, mark, isComments).length, 2, 'only the changed tickets are read again');
    const printer = byTitle(second.documents, 'Printer on fire');
    assert.doesNotMatch(printer.markdown, SECRET_TEXT);
    assert.equal(
      printer.markdown,
      byTitle(first.documents, 'Printer on fire').markdown.replace(
        /updated [^\n]*UTC\n/,
        `updated ${isoOf(s.account.ticket(tk.printer.id).updated_at).slice(0, 16).replace('T', ' ')} UTC\n`,
      ),
    );
    assert.match(
      byTitle(second.documents, 'Cannot log in').markdown,
      /Clearing the browser cache fixed it\./,
    );
    assert.deepEqual(
      [...set.held.values()]
        .filter((d) => d.table === TICKETS_TABLE)
        .map((d) => d.title)
        .sort(),
      ['Cannot log in', 'Invoice missing', 'Printer on fire'],
    );
  });

  it('pages the ticket export by cursor until end_of_stream, checkpointing after each page', async () => {
    const account = new FakeZendeskAccount();
    account.ticketExportPageSize = 3;
    for (let i = 1; i <= 6; i++) account.addTicket({ subject: `Ticket ${i}` });
    const { fake, set } = await start(account, { input: withTickets });
    const first = await set.sync();
    assert.equal(first.documents.length, 6);
    const pages = since(fake, 0, isTicketExport);
    // Six tickets in pages of three: the second page is the last (end_of_stream), no empty third one.
    assert.equal(pages.length, 2);
    assert.equal(pages[0]!.query.get('start_time'), '0');
    assert.equal(pages[1]!.query.get('start_time'), null, 'later pages name only the cursor');
    assert.ok(pages[1]!.query.get('cursor'));
    const ticketCursors = first.checkpoints.map((c) =>
      c.tickets && 'cursor' in c.tickets ? c.tickets.cursor : null,
    );
    assert.deepEqual(ticketCursors.slice(-3), [
      pages[1]!.query.get('cursor'),
      ticketCursors.at(-1),
      ticketCursors.at(-1),
    ]);
    assert.notEqual(ticketCursors.at(-1), pages[1]!.query.get('cursor'));
  });

  it('a ticket whose comments keep failing: a retryable failure, and the next sync reads its page again', async () => {
    const account = new FakeZendeskAccount();
    account.addTicket({ subject: 'First' });
    const b = account.addTicket({ subject: 'Second' });
    account.addTicket({ subject: 'Third' });
    let failing = true;
    account.onRequest = (req) =>
      failing && req.path.endsWith(`/tickets/${b.id}/comments.json`)
        ? { status: 500, body: { error: 'InternalError', description: 'Something went wrong' } }
        : undefined;
    const { fake, set } = await start(account, { input: withTickets });
    const first = await set.sync();
    assert.deepEqual(titles(first.documents), ['First', 'Third']);
    assert.equal(first.failures.length, 1);
    const failure = first.failures[0] as Extract<SyncEvent<unknown>, { kind: 'failure' }>;
    assert.deepEqual(
      [failure.externalId, failure.table, failure.retryable],
      [String(b.id), TICKETS_TABLE, true],
    );
    assert.match(failure.error.message, /^Zendesk \(support_desk\) ticket \d+ could not be read: .*HTTP 500/);
    assert.equal(first.cursor?.tickets, undefined, 'the ticket cursor stays before the failed page');

    failing = false;
    const mark = fake.requests.length;
    const second = await set.sync();
    assert.deepEqual(titles(second.documents), ['Second']);
    assert.deepEqual(
      since(fake, mark, isComments).map((r) => r.path),
      [`/api/v2/tickets/${b.id}/comments.json`],
      'the others are known and skipped',
    );
    assert.ok(second.cursor?.tickets && 'cursor' in second.cursor.tickets);
  });

  it('a malformed ticket and a ticket gone before its comments are failures; the rest lands', async () => {
    const account = new FakeZendeskAccount();
    const bad = account.addTicket({ subject: 'Malformed' });
    bad.override = { status: 7 };
    const gone = account.addTicket({ subject: 'Gone' });
    account.addTicket({ subject: 'Fine' });
    account.onRequest = (req) =>
      req.path.endsWith(`/tickets/${gone.id}/comments.json`)
        ? { status: 404, body: { error: 'RecordNotFound', description: 'Not found' } }
        : undefined;
    const { set } = await start(account, { input: withTickets });
    const first = await set.sync();
    assert.deepEqual(titles(first.documents), ['Fine']);
    assert.deepEqual(
      first.failures.map((f) => [f.externalId, (f as { table?: string }).table, f.retryable]).sort(),
      [
        [String(bad.id), TICKETS_TABLE, false],
        [String(gone.id), TICKETS_TABLE, false],
      ].sort(),
    );
    assert.match(first.failures.find((f) => f.externalId === String(gone.id))!.error.message, /answer 404/);
  });

  it('a ticket export that names the cursor it was asked with again stops the sync with an error', async () => {
    const account = new FakeZendeskAccount();
    account.ticketExportPageSize = 1;
    for (let i = 1; i <= 3; i++) account.addTicket({ subject: `Ticket ${i}` });
    account.onRequest = (req) => {
      const cursor = req.query.get('cursor');
      if (!isTicketExport(req) || !cursor) return undefined;
      return {
        status: 200,
        body: {
          after_cursor: cursor,
          after_url: null,
          before_cursor: null,
          before_url: null,
          end_of_stream: false,
          tickets: [],
        },
      };
    };
    const { fake, set } = await start(account, { input: withTickets });
    await assert.rejects(set.sync(), (err: unknown) => {
      assert.ok(err instanceof PaginationError, String(err));
      assert.equal(err.fault, 'repeated');
      assert.match(
        err.message,
        /incremental\/tickets\/cursor\.json \(page 1\) named a cursor this pass had already followed/,
      );
      return true;
    });
    assert.equal(since(fake, 0, isTicketExport).length, 2);
  });

  it('article 7 and ticket 7 are two documents in two tables', async () => {
    const account = new FakeZendeskAccount();
    const section = account.addSection(account.addCategory('Guides'), 'Basics');
    account.addArticle({ section, title: 'Article seven', id: 7 });
    account.addTicket({ subject: 'Ticket seven', id: 7 });
    const { set } = await start(account, { input: withTickets });
    const first = await set.sync();
    assert.deepEqual(
      first.documents.map((d) => [d.table, d.externalId, d.title]),
      [
        [ARTICLES_TABLE, '7', 'Article seven'],
        [TICKETS_TABLE, '7', 'Ticket seven'],
      ],
    );
    assert.equal(set.held.size, 2);
    const second = await set.sync();
    assert.deepEqual([second.documents, second.deleted], [[], []]);

    account.setTicketStatus(7, 'deleted');
    const third = await set.sync();
    assert.deepEqual(third.deleted, [{ externalId: '7', table: TICKETS_TABLE }]);
    assert.equal(set.doc('7', ARTICLES_TABLE)?.title, 'Article seven');
  });

  it('cancel: an aborted signal stops the sync promptly', async () => {
    const account = new FakeZendeskAccount();
    for (let i = 1; i <= 60; i++) account.addTicket({ subject: `Ticket ${i}` });
    const controller = new AbortController();
    let comments = 0;
    account.onRequest = (req) => {
      if (isComments(req) && ++comments === 5) controller.abort();
      return undefined;
    };
    const { fake, set } = await start(account, { input: withTickets });
    await assert.rejects(set.sync('incremental', { signal: controller.signal }), { name: 'AbortError' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const fetched = since(fake, 0, isComments).length;
    assert.ok(fetched <= 8, `stopped after ${fetched} of 60 comment requests`);
    assert.ok(set.held.size < 8);
  });
});
