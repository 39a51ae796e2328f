/**
 * `support_desk` (Zendesk) through the HTTP API and the job engine, in both storage modes: the shared
 * scenario over a Help Center (published articles among a draft and an archived one), then tickets
 * (`include_tickets`): private items of their public comments, never an internal note, a reopened
 * ticket leaving, and a deactivated API token failing the job with an error that says what to do.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ZENDESK_TOKEN_RETIRED_HINT } from '../../src/connectors/support-desk/index.ts';
import {
  type FakeZendesk,
  FakeZendeskAccount,
  startFakeZendesk,
  ZENDESK_AGENT_ID,
  ZENDESK_GOOD,
} from '../fakes/zendesk.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, waitForJob } from '../jobs/helpers.ts';
import { withSearch } from '../support/embedding.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';
import { describeSourceEndToEnd } from './source-e2e.ts';

/** Fourteen published articles on distinct topics, one restricted, plus a draft and an archived one. */
function helpCenter() {
  const account = new FakeZendeskAccount();
  const gettingStarted = account.addCategory('Getting started');
  const billing = account.addCategory('Billing');
  const accountSection = account.addSection(gettingStarted, 'Account');
  const security = account.addSection(gettingStarted, 'Security', { parent: accountSection });
  const invoices = account.addSection(billing, 'Invoices');
  const plans = account.addSection(billing, 'Plans');
  const articles: Array<[typeof invoices, string, string, string[]?]> = [
    [
      accountSection,
      'Resetting your password',
      'Click Forgot password on the sign-in page and follow the link we e-mail you.',
    ],
    [
      accountSection,
      'Changing your e-mail address',
      'Your login e-mail is changed under Profile, then Contact.',
    ],
    [accountSection, 'Closing your account', 'An owner can close the account from the Admin Center.'],
    [security, 'Two-factor authentication', 'Agents must confirm sign-ins with an authenticator app.'],
    [security, 'Single sign-on', 'SAML single sign-on is available on the Enterprise plan.'],
    [
      invoices,
      'Refund policy',
      'Customers can request a full refund within thirty days of purchase by writing to the billing team; after thirty days only unused months are refunded.',
      ['refunds'],
    ],
    [invoices, 'Downloading invoices', 'Every invoice can be downloaded as a PDF from the Billing page.'],
    [invoices, 'Updating payment details', 'Credit cards and bank transfers are both accepted.'],
    [
      invoices,
      'Tax exemptions',
      'Send your exemption certificate and we remove sales tax from future invoices.',
    ],
    [plans, 'Comparing plans', 'Team, Growth and Enterprise differ in automation and reporting limits.'],
    [plans, 'Adding seats', 'Seats are added mid-cycle and billed pro rata.'],
    [plans, 'Downgrading', 'A downgrade takes effect at the end of the current billing period.'],
    [plans, 'Nonprofit discount', 'Registered nonprofits receive half off any annual plan.'],
    [plans, 'Trial extension', 'A trial can be extended once by another fourteen days.'],
  ];
  const byTitle = new Map<string, ReturnType<typeof account.addArticle>>();
  for (const [section, title, text, labels] of articles) {
    byTitle.set(
      title,
      account.addArticle({
        section,
        title,
        body: `<h2>${title}</h2><p>${text}</p><ul><li>Applies to every plan.</li></ul>`,
        label_names: labels ?? [],
        ...(title === 'Two-factor authentication' ? { user_segment_id: 360_000_555_000 } : {}),
      }),
    );
  }
  account.addArticle({ section: plans, title: 'Upcoming pricing', draft: true });
  account.archiveArticle(account.addArticle({ section: plans, title: 'Legacy plans' }).id);
  return { account, byTitle };
}

const fixture = helpCenter();

describeSourceEndToEnd({
  name: 'support_desk (Zendesk)',
  baseUrlSetting: 'KB_SUPPORT_DESK_BASE_URL',
  // Each storage mode gets its own copy (same ids: the account is built the same way).
  startFake: () => startFakeZendesk({ account: helpCenter().account }),
  source: () => ({ type: 'zendesk', subdomain: 'acme', ...ZENDESK_GOOD }),
  itemCount: 14,
  expected: [
    {
      title: 'Refund policy',
      source_url: fixture.account.htmlUrl(fixture.byTitle.get('Refund policy')!),
      source_table_name: 'support_desk_articles',
      visibility: 'public',
      tags: ['support_desk', 'Billing', 'Invoices', 'refunds'],
    },
    {
      title: 'Two-factor authentication',
      source_url: fixture.account.htmlUrl(fixture.byTitle.get('Two-factor authentication')!),
      source_table_name: 'support_desk_articles',
      visibility: 'private',
      tags: ['support_desk', 'Getting started', 'Account', 'Security'],
    },
  ],
  search: { query: 'how long do I have to ask for my money back?', topTitle: 'Refund policy' },
  // The export carries the bodies, a thousand articles a request, so a first sync of fourteen costs six
  // requests (categories, sections, languages, the article count, the export and its boundary second),
  // and an unchanged one two (the count and the export's boundary second: the structure is the last
  // pass's). support-desk-sync.test.ts asserts that an unchanged sync does not list, and the locales test
  // holds the share under a quarter at 500 articles in 3 languages.
  maxIncrementalShare: 0.34,
});

const PUBLIC_REPLY = 'Please unplug the printer and use a class C fire extinguisher on the toner drawer.';
const INTERNAL_NOTE = 'Internal: this customer owes us three invoices, so escalate to collections first.';

for (const mode of STORAGE_MODES) {
  describe(`support_desk (Zendesk) tickets end to end through the API (${mode})`, () => {
    let fake: FakeZendesk;
    let t: TestApp;
    let search: Awaited<ReturnType<typeof withSearch>>;
    let account: FakeZendeskAccount;
    let printer: number;
    let login: number;
    before(async () => {
      account = new FakeZendeskAccount();
      const section = account.addSection(account.addCategory('Getting started'), 'Account');
      account.addArticle({
        section,
        title: 'Resetting your password',
        body: '<p>Click Forgot password on the sign-in page.</p>',
      });
      const customer = account.addUser(900_001, 'Casey Customer');
      printer = account.addTicket({
        subject: 'Printer on fire',
        tags: ['hardware'],
        requester: customer,
        comments: [
          { author: customer, html: '<p>Smoke is coming out of the office printer.</p>' },
          { author: ZENDESK_AGENT_ID, public: false, html: `<p>${INTERNAL_NOTE}</p>` },
          { author: ZENDESK_AGENT_ID, html: `<p>${PUBLIC_REPLY}</p>` },
        ],
      }).id;
      login = account.addTicket({ subject: 'Cannot log in', requester: customer }).id;
      account.addTicket({ subject: 'Feature request', status: 'open', requester: customer });
      fake = await startFakeZendesk({ account });
      t = await startTestApp(mode, {
        config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_SUPPORT_DESK_BASE_URL: fake.url },
        parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
      });
      search = await withSearch(t);
      t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    const runAndWait = async () => {
      const run = await t.call('POST', '/api/connect/run-sync', { body: { type: 'support_desk' } });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      return waitForJob(t, run.body.jobId as number, undefined, 60_000);
    };
    const items = async () => {
      const res = await t.call('POST', '/api/connect/knowledgebase-items/query', { body: { limit: 100 } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.items as Array<{
        id: string;
        title: string;
        source_url: string;
        source_table_name: string;
        visibility: string;
        tags: string[];
      }>;
    };

    test('solved tickets are private items of their public comments; internal notes are nowhere', async () => {
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'support_desk', subdomain: 'acme', ...ZENDESK_GOOD, include_tickets: true } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      // The connection's first sync, queued by the create.
      const first = await waitForJob(t, created.body.jobId as number, undefined, 60_000);
      assert.equal(first.status, 'succeeded', JSON.stringify(first));
      const all = await items();
      assert.deepEqual(all.map((i) => i.title).sort(), [
        'Cannot log in',
        'Printer on fire',
        'Resetting your password',
      ]);
      const ticket = all.find((i) => i.title === 'Printer on fire')!;
      assert.equal(ticket.source_table_name, 'support_desk_tickets');
      assert.equal(ticket.visibility, 'private');
      assert.equal(ticket.source_url, `${fake.url}/agent/tickets/${printer}`);
      assert.deepEqual(ticket.tags, ['support_desk', 'ticket', 'hardware']);
      const [row] = await t.db.query<{ content: string }>('SELECT content FROM items WHERE id = $1', [
        ticket.id,
      ]);
      assert.ok(row!.content.includes(PUBLIC_REPLY), row!.content);
      assert.ok(row!.content.includes('Smoke is coming out of the office printer.'));
      assert.ok(!row!.content.includes('owes us three invoices'), 'the internal note is not stored');

      await search.drain();
      const found = await t.call('POST', '/api/consume/search', {
        body: {
          query: 'which customer owes us invoices and must be escalated to collections?',
          limit: 10,
          includeEmbedding: false,
        },
      });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      const results = found.body.result as Array<{ title: string; chunk_plain_text: string }>;
      assert.ok(results.length > 0, 'the search answers (from whatever is there)');
      for (const r of results) assert.doesNotMatch(r.chunk_plain_text, /owes us|collections/, r.title);
      const reply = await t.call('POST', '/api/consume/search', {
        body: { query: 'how do I put out a printer fire?', limit: 1, includeEmbedding: false },
      });
      assert.equal(reply.body.result[0]?.title, 'Printer on fire', 'the public reply is searchable');
    });

    test('a reopened ticket leaves; a new internal note changes nothing a reader sees', async () => {
      account.setTicketStatus(login, 'open');
      account.addComment(printer, { public: false, html: '<p>Internal: refund approved by finance.</p>' });
      const second = await runAndWait();
      assert.equal(second.status, 'succeeded', JSON.stringify(second));
      assert.deepEqual((await items()).map((i) => i.title).sort(), [
        'Printer on fire',
        'Resetting your password',
      ]);
      const rows = await t.db.query<{ content: string }>(
        `SELECT content FROM items WHERE source_table_name = 'support_desk_tickets'`,
      );
      assert.equal(rows.length, 1);
      assert.ok(!rows[0]!.content.includes('refund approved'));
    });

    test('a deactivated API token fails the job with an error that says so and what to do', async () => {
      account.credentials.api_token = 'zd_token_replaced_after_deactivation_0001';
      const failed = await runAndWait();
      assert.equal(failed.status, 'failed', JSON.stringify(failed));
      assert.ok(failed.error?.includes(ZENDESK_TOKEN_RETIRED_HINT), failed.error);
      assert.match(
        failed.error ?? '',
        /^Zendesk \(support_desk\) refused the credentials during the sync \(HTTP 401/,
      );
      assert.ok(!failed.error?.includes(ZENDESK_GOOD.api_token));
      assert.equal((await items()).length, 2, 'nothing is removed');
    });
  });
}
