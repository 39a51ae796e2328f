import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';

// The items query's `search`: words from the GIN index of migrations 013 and 016, then the
// search text checked on those items (src/db/repositories/items.ts states the rule these cases pin down).
for (const mode of STORAGE_MODES) {
  describe(`items query search (${mode})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(mode);
      const docs: Array<[string, string]> = [
        ['Shipping FAQ', 'We ship worldwide within 5 days.'],
        ['Marsupials', 'The Quokkaline survey counted animals on the island.'],
        ['Models', 'Notes on Machine learning for ranking.'],
        ['Order', 'A learning machine is not the same thing.'],
        ['Apart', 'Machine parts and a learning curve.'],
        ['Pâtisserie', 'Un ÉCLAIR au café, Größe M.'],
        ['Discounts', 'Save 100% on nothing.'],
        ['Counts', 'We sold 1000 units.'],
        ['Code', 'Use snake_case names; a path C:\\dir\\file and a word snakeXcase.'],
        ['People', 'Report by O\'Brien, "quoted" in full.'],
        ['Others', 'O Brien and snake case, dir file.'],
      ];
      for (const [title, content] of docs) await upload(title, content);
      // The other organization holds the same words: none of its items may show up for org A.
      await upload('Shipping FAQ', 'We ship worldwide, too. Quokkaline.', t.orgB.key);
    });
    after(async () => t?.close());

    async function upload(title: string, content: string, key?: string): Promise<string> {
      const res = await t.call('POST', '/api/connect/knowledgebase-items', { body: { title, content }, key });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.item.id as string;
    }

    async function titles(search: string, extra: Record<string, unknown> = {}): Promise<string[]> {
      const res = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search, ...extra },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.pagination.total_items >= res.body.items.length, true);
      return res.body.items.map((i: { title: string }) => i.title).sort();
    }

    test('a word, in the title or the content, case-insensitive; other organizations never', async () => {
      assert.deepEqual(await titles('WORLDWIDE'), ['Shipping FAQ']);
      assert.deepEqual(await titles('shipping'), ['Shipping FAQ']);
      assert.deepEqual(await titles('shipping faq'), ['Shipping FAQ']);
      // A one-word search folds all of Unicode, in both modes (items' words are split and lower-cased by
      // the service); a longer one is checked with the database's lower() (see the phrase test).
      assert.deepEqual(await titles('éclair'), ['Pâtisserie']);
      assert.deepEqual(await titles('ÉCLAIR'), ['Pâtisserie']);
      assert.deepEqual(await titles('GRÖSSE'), []); // lower-casing, not case folding: ß is not SS
      assert.deepEqual(await titles('größe'), ['Pâtisserie']);
      const theirs = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'quokkaline' },
        key: t.orgB.key,
      });
      assert.equal(theirs.body.pagination.total_items, 1);
    });

    test('a word prefix finds the words it begins, not the inside of a word', async () => {
      assert.deepEqual(await titles('quokk'), ['Marsupials']);
      assert.deepEqual(await titles('QUOKKALINE'), ['Marsupials']);
      assert.deepEqual(await titles('okkaline'), []);
      assert.deepEqual(await titles('mach'), ['Apart', 'Models', 'Order']);
    });

    test('several words match as a phrase, in order, the last one a prefix', async () => {
      assert.deepEqual(await titles('machine learning'), ['Models']);
      assert.deepEqual(await titles('MACHINE LEAR'), ['Models']);
      assert.deepEqual(await titles('learning machine'), ['Order']);
      assert.deepEqual(await titles('un ÉCLAIR au café'), ['Pâtisserie']);
      // The text check folds as the database's lower() does: all of Unicode in embedded mode (ctype
      // C.UTF-8), ASCII only on a server initialized with the C locale (the test fixture's).
      const folds = (await t.db.query<{ folds: boolean }>(`SELECT lower('ÉCLAIR') = 'éclair' AS folds`))[0]!
        .folds;
      assert.equal(folds, mode === 'pglite');
      assert.deepEqual(await titles('UN éclair au CAFÉ'), folds ? ['Pâtisserie'] : []);
      assert.deepEqual(await titles('machine curve'), []);
    });

    test('%, _, backslash and quotes are ordinary characters; tsquery syntax is not read', async () => {
      assert.deepEqual(await titles('100%'), ['Discounts']);
      assert.deepEqual(await titles('%'), ['Discounts']);
      assert.deepEqual(await titles('snake_case'), ['Code']);
      assert.deepEqual(await titles('_'), ['Code']);
      assert.deepEqual(await titles('C:\\dir'), ['Code']);
      assert.deepEqual(await titles('\\'), ['Code']);
      assert.deepEqual(await titles("O'Brien"), ['People']);
      assert.deepEqual(await titles('"quoted"'), ['People']);
      assert.deepEqual(await titles("'"), ['People']);
      assert.deepEqual(await titles("machine & !learning | ':* <->"), []);
      assert.deepEqual(await titles('quokk:*'), []);
    });

    test('paging a search is truthful, past the end too', async () => {
      const p2 = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'machine', limit: 2, page: 2 },
      });
      assert.equal(p2.body.pagination.total_items, 3);
      assert.equal(p2.body.items.length, 1);
      const past = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'machine', limit: 2, page: 9 },
      });
      assert.deepEqual(past.body.items, []);
      assert.equal(past.body.pagination.total_items, 3);
      const none = await t.call('POST', '/api/connect/knowledgebase-items/query', {
        body: { search: 'zebra' },
      });
      assert.deepEqual(none.body.items, []);
      assert.equal(none.body.pagination.total_items, 0);
    });

    test('a renamed item is found by its new title only; a deleted one not at all', async () => {
      const id = await upload('Temporary heading', 'body text');
      const upd = await t.call('PUT', '/api/connect/knowledgebase-items', {
        body: [{ id, title: 'Renamed zeppelin' }],
      });
      assert.equal(upd.status, 200);
      assert.deepEqual(await titles('zeppelin'), ['Renamed zeppelin']);
      assert.deepEqual(await titles('temporary'), []);
      await t.call('DELETE', '/api/connect/knowledgebase-items', { body: { ids: [id] } });
      assert.deepEqual(await titles('zeppelin'), []);
    });

    test('long content: words past 250,000 characters are found, and too many distinct words do not fail the write', async () => {
      // 300,000 characters of ordinary words (under a tsvector's 1 MB of distinct words), one rare word at the end.
      const filler = 'lorem ipsum dolor sit amet '.repeat(11_200);
      await upload('Long page', `${filler} zanzibarite`);
      assert.deepEqual(await titles('zanzibarite'), ['Long page']);
      // ~1.3 MB of distinct words: more than a tsvector holds; the item is stored and indexed by the distinct
      // words of its start, up to 1 MB of them (src/lib/search-words.ts): the documented limit.
      const distinct = Array.from(
        { length: 130_000 },
        (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`,
      );
      await upload('Huge vocabulary', `${distinct.join(' ')} quasarite`);
      assert.deepEqual(await titles('w0x0'), ['Huge vocabulary']);
      assert.deepEqual(await titles(distinct[60_000]!), ['Huge vocabulary']);
      assert.deepEqual(await titles('quasarite'), []);
    });
  });
}
