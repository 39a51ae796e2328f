import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { withSearch } from '../support/embedding.ts';
import { expectError, STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

/** A page about cookie parameters, and release notes that mention them in passing. */
const COOKIE_PAGE = {
  title: 'Cookie Parameters',
  content:
    '# Cookie Parameters\n\nDeclare them the same way you declare query and path parameters: import the ' +
    'class, then add a function argument annotated with it. The first value is the default; every extra ' +
    'validation or annotation argument works as it does for the others. Values arrive as text and are ' +
    'converted to the type you annotate, and a missing value takes the default or fails validation with a ' +
    'clear error that names the field, so the handler only ever sees valid data of the declared type.',
};
const RELEASE_NOTES = {
  title: 'Release Notes',
  content:
    '# Release Notes\n\n## 0.101.0\n\n### Fixes\n\n' +
    '- Cookie parameters whose value holds spaces parse again.\n' +
    '- Fix a typo in the tutorial.\n\n## 0.100.0\n\n### Features\n\n- Add support for Python 3.12.\n',
};

/** Other pages that share a word with the query, as a real site has (the candidates a ranking compares). */
const PARAMETER_PAGES = ['Query', 'Path', 'Header', 'Form', 'Body'].map((kind) => ({
  title: `${kind} Parameters`,
  content:
    `# ${kind} Parameters\n\n${kind} parameters are declared as function arguments with a type, a default ` +
    'and optional validation; the framework reads, converts and validates each of them for every request.',
}));

/** One section of a long page: about 200 words, so each is a passage of its own. */
function invoiceSection(n: number): string {
  const sentences = Array.from(
    { length: 12 },
    (_, i) =>
      `Invoice rule ${n}.${i}: an invoice for order ${n * 100 + i} is sent by email once payment settles, ` +
      'and the invoice total includes tax.',
  );
  return `## Invoices part ${n}\n\n${sentences.join(' ')}`;
}
const INVOICE_GUIDE = {
  title: 'Invoice guide',
  content: `# Invoice guide\n\n${Array.from({ length: 6 }, (_, n) => invoiceSection(n + 1)).join('\n\n')}`,
};
const OTHER_INVOICE_PAGES = [
  { title: 'Invoice emails', content: 'Each invoice is sent by email to the billing contact of the order.' },
  {
    title: 'Tax on invoices',
    content: 'The invoice total includes tax at the rate of the shipping country.',
  },
];

for (const mode of STORAGE_MODES) {
  describe(`page ranking (${mode})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(mode);
      const { drain } = await withSearch(t);
      for (const body of [
        COOKIE_PAGE,
        RELEASE_NOTES,
        ...PARAMETER_PAGES,
        INVOICE_GUIDE,
        ...OTHER_INVOICE_PAGES,
      ]) {
        const res = await t.call('POST', '/api/connect/knowledgebase-items', { body });
        assert.equal(res.status, 200);
      }
      await drain();
    });
    after(async () => t?.close());

    const ask = async (query: string, extra: Record<string, unknown> = {}) => {
      const res = await t.call('POST', '/api/consume/search', {
        body: { query, includeEmbedding: false, ...extra },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.result as Array<{ title: string; item_id: string }>;
    };

    for (const searchMode of ['semantic', 'hybrid', 'keyword']) {
      test(`${searchMode}: the page titled for the thing ranks before a page that mentions it in passing`, async () => {
        const hits = await ask('cookie parameters', { mode: searchMode });
        assert.equal(hits[0]?.title, 'Cookie Parameters');
      });
    }

    test('maxPerItem collapses the hits to at most N passages per item', async () => {
      for (const searchMode of ['semantic', 'hybrid', 'keyword']) {
        const all = await ask('invoice sent by email with tax', { mode: searchMode, limit: 10 });
        const guide = all.filter((h) => h.title === 'Invoice guide').length;
        assert.ok(
          guide >= 3,
          `${searchMode}: the guide's passages fill the list without the option (${guide})`,
        );

        const one = await ask('invoice sent by email with tax', {
          mode: searchMode,
          limit: 10,
          maxPerItem: 1,
        });
        const items = one.map((h) => h.item_id);
        assert.equal(new Set(items).size, items.length, `${searchMode}: one passage per item`);
        const titles = new Set(one.map((h) => h.title));
        for (const page of ['Invoice guide', 'Invoice emails', 'Tax on invoices'])
          assert.ok(titles.has(page), `${searchMode}: ${page} still found`);

        const two = await ask('invoice sent by email with tax', {
          mode: searchMode,
          limit: 4,
          maxPerItem: 2,
        });
        assert.equal(two.length, 4, `${searchMode}: the limit is still filled`);
        assert.ok(two.filter((h) => h.title === 'Invoice guide').length <= 2);
      }
    });

    test('maxPerItem out of range is refused in the API error shape', async () => {
      for (const maxPerItem of [0, 101, 1.5]) {
        const res = await t.call('POST', '/api/consume/search', {
          body: { query: 'invoice', maxPerItem },
        });
        expectError(res, 400, 'invalid_request');
      }
    });
  });
}
