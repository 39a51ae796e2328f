import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { extractPage } from '../../src/crawler/extract.ts';
import { createPageExtractor, INLINE_WHILE_STARTING_CHARS } from '../../src/crawler/extract-pool.ts';

const SITE = '/work/shared/data/sites/fastapi-docs';
const ORIGIN = 'http://127.0.0.1:8000';
const html = (rel: string) => readFileSync(path.join(SITE, rel), 'utf8');

// The pool's thread takes a while to start; small pages meanwhile are extracted on the calling thread
// (extract-pool.ts), so a crawl's first pages do not wait for it. Either way the page comes out the same.
describe('page extraction pool', () => {
  it('extracts small pages on the calling thread while its thread starts, large ones in the thread', async () => {
    const small = html('tutorial/static-files.html');
    const large = html('release-notes.html');
    assert.ok(small.length <= INLINE_WHILE_STARTING_CHARS && large.length > INLINE_WHILE_STARTING_CHARS);
    const pool = createPageExtractor({ threads: 1 });
    try {
      // Nothing is up yet: the small page is answered here, the large one waits for the thread.
      const [first, big] = await Promise.all([
        pool.extract(small, `${ORIGIN}/tutorial/static-files.html`),
        pool.extract(large, `${ORIGIN}/release-notes.html`),
      ]);
      assert.equal(pool.inlineExtractions, 1);
      assert.deepEqual(first, extractPage(small, `${ORIGIN}/tutorial/static-files.html`));
      assert.deepEqual(big, extractPage(large, `${ORIGIN}/release-notes.html`));
      // The large page ran in the thread, so the thread is up: small pages go to it now.
      const again = await pool.extract(small, `${ORIGIN}/tutorial/static-files.html`);
      assert.equal(pool.inlineExtractions, 1);
      assert.deepEqual(again, first);
    } finally {
      await pool.close();
    }
  });

  it('a page extracted on the calling thread still honours an aborted signal', async () => {
    const pool = createPageExtractor({ threads: 1 });
    try {
      const aborted = AbortSignal.abort(new Error('crawl cancelled'));
      await assert.rejects(
        pool.extract(html('tutorial/static-files.html'), `${ORIGIN}/tutorial/static-files.html`, aborted),
        /crawl cancelled/,
      );
      assert.equal(pool.inlineExtractions, 0);
    } finally {
      await pool.close();
    }
  });
});
