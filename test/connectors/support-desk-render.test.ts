/**
 * Zendesk content to markdown: Help Center article HTML of every block kind under its heading context,
 * names and titles that look like markup, the fake account's generated articles, and tickets rendered
 * from their public comments only.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  plainLine,
  readableTime,
  renderArticle,
  renderTicket,
  ticketTitle,
} from '../../src/connectors/support-desk/render.ts';
import {
  type Article,
  articleSchema,
  type Comment,
  commentSchema,
  type Ticket,
  ticketSchema,
} from '../../src/connectors/support-desk/schemas.ts';
import { FakeZendeskAccount, generatedArticleBody, ZENDESK_AGENT_ID } from '../fakes/zendesk.ts';

const URL_OF = 'https://acme.zendesk.com/hc/en-us/articles/5-Exporting-reports';

function article(
  body: string | null,
  title = 'Exporting reports',
): Pick<Article, 'title' | 'body' | 'html_url'> {
  return { title, body, html_url: URL_OF };
}

describe('support_desk article rendering', () => {
  it('renders every block kind, nested, under the Category > Section line and the title heading', () => {
    const html = `<h2>Overview</h2>
<p>Reports hold <strong>bold</strong>, <em>italic</em> and <code>inline code</code>, a <a href="/hc/en-us/articles/9">relative link</a>, <a href="#limits">an anchor</a> and a line<br>break; entities &amp; &lt;tags&gt; stay text.</p>
<div class="callout callout--warning"><p><strong>Warning:</strong> exports are limited to 10,000 rows.</p></div>
<ol><li>Open <b>Reports</b><ul><li>Pick a dashboard<ol><li>Filter by date</li></ol></li><li>Or start blank</li></ul></li><li>Click <strong>Export</strong></li></ol>
<pre><code class="language-python">for row in report:
    print(row["id"])</code></pre>
<table><tbody><tr><td>Format</td><td>Size</td></tr><tr><td>CSV</td><td>a|b</td></tr></tbody></table>
<blockquote><p>Exports older than 30 days are deleted.</p></blockquote>
<p><img src="/hc/article_attachments/7/export.png" alt="The export button"></p>
<hr><h3 id="limits">Limits</h3><p>&nbsp;</p><p>One export at a time.</p>`;
    assert.equal(
      renderArticle(article(html), ['Reporting', 'Dashboards', 'Exports']),
      `Reporting > Dashboards > Exports

# Exporting reports

## Overview

Reports hold **bold**, _italic_ and \`inline code\`, a [relative link](https://acme.zendesk.com/hc/en-us/articles/9), [an anchor](#limits) and a line
break; entities & <tags> stay text.

**Warning:** exports are limited to 10,000 rows.

1. Open **Reports**
   - Pick a dashboard
     1. Filter by date
   - Or start blank
2. Click **Export**

\`\`\`python
for row in report:
    print(row["id"])
\`\`\`

|  |  |
| --- | --- |
| Format | Size |
| CSV | a\\|b |

> Exports older than 30 days are deleted.

![The export button](https://acme.zendesk.com/hc/article_attachments/7/export.png)

---

### Limits

One export at a time.`,
    );
  });

  it('names and titles that look like markup stay text', () => {
    assert.equal(
      renderArticle(article('<p>Body.</p>', 'Use # for ids #'), [
        '*Stars* & _under_',
        '# Hash',
        '1. Numbered',
        '- dash',
      ]),
      '\\*Stars\\* & \\_under\\_ > \\# Hash > 1\\. Numbered > \\- dash\n\n# Use # for ids \\#\n\nBody.',
    );
    assert.equal(plainLine('  <b>[x](y)  `z`\n'), '\\<b>\\[x\\](y) \\`z\\`');
    assert.equal(plainLine('2) second'), '2\\) second');
    assert.equal(plainLine('2024 plans'), '2024 plans');
  });

  it('without a known section the title comes first; an empty body leaves the title alone', () => {
    assert.equal(renderArticle(article('<p>Text.</p>'), []), '# Exporting reports\n\nText.');
    assert.equal(renderArticle(article(null), ['Reporting']), 'Reporting\n\n# Exporting reports');
    assert.equal(renderArticle(article('<p>&nbsp;</p>'), []), '# Exporting reports');
  });

  it("renders the fake account's articles as Zendesk answers them", () => {
    const account = new FakeZendeskAccount();
    const section = account.addSection(account.addCategory('Category 1'), 'Section 1.1');
    const a = account.addArticle({
      section,
      title: 'Item 3',
      body: (x) => generatedArticleBody(3, x.revision),
    });
    const parsed = articleSchema.parse(account.articleJson(a));
    const md = renderArticle(parsed, ['Category 1', 'Section 1.1']);
    assert.match(md, /^Category 1 > Section 1\.1\n\n# Item 3\n\n## About item 3\n\n/);
    assert.match(
      md,
      /\n```bash\ncurl https:\/\/acme\.zendesk\.com\/api\/v2\/items\/3\.json \\\n {2}-u agent@acme\.test/,
    );
    assert.match(md, /\n\| Setting \| Value \|\n\| --- \| --- \|\n(\| .+ \|\n){3}\| .+ \|\n/);
    assert.match(md, /\n1\. \w[^\n]*\n2\. [^\n]*\n {3}- \w[^\n]*\n {3}- \w[^\n]*\n3\. /);
    assert.match(
      md,
      /!\[Screenshot of item 3\]\(https:\/\/acme\.zendesk\.com\/hc\/article_attachments\/3\/screen\.png\)/,
    );
    assert.match(md, /\[item 2\]\(https:\/\/acme\.zendesk\.com\/hc\/en-us\/articles\/2\)/);
    assert.match(md, /\*\*Note:\*\* /);
    assert.match(md, /Revision 1 of item 3\.$/);
    assert.ok(md.length > 2_000, `a few KB of text (${md.length})`);
    account.editArticle(a.id);
    assert.match(renderArticle(articleSchema.parse(account.articleJson(a)), []), /Revision 2 of item 3\.$/);
  });
});

describe('support_desk ticket rendering', () => {
  const account = new FakeZendeskAccount();
  account.addUser(900_001, 'Casey Customer');
  const fake = account.addTicket({
    subject: 'Refund for order #1234',
    requester: 900_001,
    tags: ['billing'],
    comments: [
      { author: ZENDESK_AGENT_ID, public: false, html: '<p>NOTE: fraud check pending.</p>' },
      { author: 900_001, html: '<p>I was charged <strong>twice</strong>.</p><ul><li>Order 1234</li></ul>' },
    ],
  });
  account.addComment(fake.id, {
    author: ZENDESK_AGENT_ID,
    html: '<p>Refunded. See <a href="/hc/en-us/articles/1">our policy</a>.</p>',
  });
  account.addComment(fake.id, {
    author: ZENDESK_AGENT_ID,
    public: false,
    html: '<p>NOTE: flagged account.</p>',
  });
  const ticket: Ticket = ticketSchema.parse(account.ticketJson(fake));
  const comments: Comment[] = fake.comments.map((c) => commentSchema.parse(account.commentJson(c)));
  const names = new Map([
    [900_001, 'Casey Customer'],
    [ZENDESK_AGENT_ID, 'Avery Agent'],
  ]);
  const url = `https://acme.zendesk.com/agent/tickets/${fake.id}`;

  it('renders the subject, a status line and the public comments in order, never an internal note', () => {
    assert.match(
      String(account.ticketJson(fake).description ?? ''),
      /fraud check/,
      'the fixture: the description is the internal note',
    );
    const md = renderTicket(ticket, comments, names, url);
    const created = readableTime(ticket.created_at);
    const updated = readableTime(ticket.updated_at);
    const reply = readableTime(comments[2]!.created_at);
    assert.equal(
      md,
      [
        '# Refund for order #1234',
        `Ticket #${fake.id} · solved · priority normal · created ${created} · updated ${updated}`,
        `## Casey Customer · ${created}`,
        'I was charged **twice**.\n\n- Order 1234',
        `## Avery Agent · ${reply}`,
        `Refunded. See [our policy](https://acme.zendesk.com/hc/en-us/articles/1).`,
      ].join('\n\n'),
    );
    assert.doesNotMatch(md, /NOTE|fraud|flagged/);
  });

  it('orders comments by time, names unknown authors by id, falls back to the plain body, lists attachments', () => {
    const [, first, second] = comments;
    const later: Comment = { ...first!, created_at: '2030-01-01T00:00:00Z' };
    const plain: Comment = {
      ...second!,
      author_id: 42,
      html_body: null,
      plain_body: 'Plain text only.',
      attachments: [
        {
          id: 1,
          file_name: 'receipt_[final].pdf',
          content_url: 'https://acme.zendesk.com/attachments/token/abc/?name=receipt.pdf',
        },
      ],
    };
    const md = renderTicket(ticket, [later, plain], names, url);
    const sections = md.split('\n\n## ').slice(1);
    assert.equal(sections.length, 2);
    assert.match(
      sections[0]!,
      /^User 42 · .*\n\nPlain text only\.\n\nAttachments: \[receipt\\_\\\[final\\\]\.pdf\]\(https:\/\/acme\.zendesk\.com\/attachments\/token\/abc\/\?name=receipt\.pdf\)$/,
    );
    assert.match(sections[1]!, /^Casey Customer · 2030-01-01 00:00 UTC\n\nI was charged/);
  });

  it('a ticket without a subject is titled by its number; times read as UTC minutes', () => {
    assert.equal(ticketTitle({ id: 35436, subject: null, raw_subject: null }), 'Ticket #35436');
    assert.equal(
      ticketTitle({ id: 1, subject: '  Printer\non fire ', raw_subject: null }),
      'Printer on fire',
    );
    assert.equal(readableTime('2024-05-05T10:38:52Z'), '2024-05-05 10:38 UTC');
    assert.equal(readableTime('yesterday'), 'yesterday');
    const md = renderTicket({ ...ticket, subject: null, raw_subject: null }, [], names, url);
    assert.match(md, new RegExp(`^# Ticket #${fake.id}\\n\\nTicket #${fake.id} · solved`));
  });
});
