/**
 * PDF documents: extracted to text with headings from the outline and the document's
 * title; encrypted, broken and over-size PDFs are counted refusals, not failures of the crawl. The PDFs are
 * written by test/support/pdf.ts, byte by byte, so the reading side is checked against another producer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { extractPdf, PdfRefusal } from '../../src/crawler/pdf.ts';
import { type CrawlTestApp, startCrawlApp } from '../http/crawl-helpers.ts';
import { STORAGE_MODES } from '../support/harness.ts';
import { makePdf } from '../support/pdf.ts';
import { type ServedRoutes, serveRoutes } from '../support/sites.ts';

const MANUAL = makePdf({
  title: 'Lantern Field Manual',
  pages: [
    ['Lanterns light the harbour at night.', 'Each lantern burns for twelve hours.'],
    ['Polish the copper once a month.', 'Use a soft cloth and no abrasive paste.'],
    ['Spare wicks are kept in the harbour office.'],
  ],
  outline: [
    { title: 'Introduction', page: 0, children: [{ title: 'Burning time', page: 0 }] },
    { title: 'Copper care', page: 1 },
    { title: 'Spares', page: 2 },
  ],
});

describe('PDF extraction', () => {
  test('text in page order, headings from the outline, title from the document', async () => {
    const page = await extractPdf(MANUAL, 'https://example.com/docs/manual.pdf');
    assert.equal(page.title, 'Lantern Field Manual');
    assert.equal(
      page.markdown,
      [
        '## Introduction',
        '### Burning time',
        'Lanterns light the harbour at night.\nEach lantern burns for twelve hours.',
        '## Copper care',
        'Polish the copper once a month.\nUse a soft cloth and no abrasive paste.',
        '## Spares',
        'Spare wicks are kept in the harbour office.',
      ].join('\n\n'),
    );
    assert.ok(page.signature && page.signature.length > 0, 'fingerprinted like a page');
  });

  test('without an outline or title: the text, titled by its file name', async () => {
    const page = await extractPdf(
      makePdf({ pages: [['Only text here.']] }),
      'https://example.com/a/notes%201.pdf',
    );
    assert.equal(page.title, 'notes 1.pdf');
    assert.equal(page.markdown, 'Only text here.');
  });

  test('encrypted and broken PDFs are refusals with a reason', async () => {
    await assert.rejects(
      extractPdf(makePdf({ pages: [['secret']], encrypted: true }), 'https://example.com/s.pdf'),
      (err) => err instanceof PdfRefusal && err.reason === 'pdf_encrypted',
    );
    await assert.rejects(
      extractPdf(Buffer.from('%PDF-1.4\nnot really a PDF'), 'https://example.com/b.pdf'),
      (err) => err instanceof PdfRefusal && err.reason === 'pdf_unreadable',
    );
    await assert.rejects(
      extractPdf(MANUAL.subarray(0, 400), 'https://example.com/cut.pdf'),
      (err) => err instanceof PdfRefusal && err.reason === 'pdf_unreadable',
    );
  });
});

for (const mode of STORAGE_MODES) {
  describe(`PDFs in a crawl (${mode})`, () => {
    let h: CrawlTestApp;
    let site: ServedRoutes;
    before(async () => {
      h = await startCrawlApp(mode, { crawler: { maxPageBytes: 64 * 1024 } });
      const pdf = (body: Buffer) => ({ headers: { 'content-type': 'application/pdf' }, body });
      const big = makePdf({
        pages: Array.from({ length: 60 }, (_, i) =>
          Array.from({ length: 40 }, (_, j) => `Line ${i}.${j} of a long report.`),
        ),
      });
      assert.ok(big.length > 64 * 1024);
      site = await serveRoutes({
        '/': {
          body: `<html><head><title>Docs</title></head><body><main><h1>Docs</h1><p>Our manuals, as PDF documents, for download and for reading.</p>
<a href="/manual.pdf">Manual</a> <a href="/secret.pdf">Secret</a> <a href="/broken.pdf">Broken</a> <a href="/report.pdf">Report</a> <a href="/untyped">Untyped</a></main></body></html>`,
        },
        '/manual.pdf': pdf(MANUAL),
        '/secret.pdf': pdf(makePdf({ pages: [['secret']], encrypted: true })),
        '/broken.pdf': pdf(Buffer.from('%PDF-1.7\n%garbage')),
        '/report.pdf': pdf(big),
        // A PDF served without a content type is recognised by its first bytes.
        '/untyped': (_req, res) => {
          res.writeHead(200);
          res.end(makePdf({ title: 'Untyped Notes', pages: [['Notes served without a content type.']] }));
        },
      });
    });
    after(async () => {
      await h?.close();
      await site?.close();
    });

    test('a PDF becomes an item; encrypted, broken and over-size PDFs are counted refusals', async () => {
      const done = await h.waitDone((await h.crawl({ url: `${site.origin}/`, tags: ['docs'] })).id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const items = await h.crawledItems();
      const manual = items.find((i) => i.source_url === `${site.origin}/manual.pdf`);
      assert.equal(manual?.title, 'Lantern Field Manual');
      assert.deepEqual(manual?.tags, ['docs']);
      assert.equal(items.find((i) => i.source_url === `${site.origin}/untyped`)?.title, 'Untyped Notes');
      const [row] = await h.t.db.query<{ content: string }>(
        'SELECT content FROM items WHERE source_url = $1',
        [`${site.origin}/manual.pdf`],
      );
      assert.match(row!.content, /## Copper care\n\nPolish the copper once a month\./);
      const path = (u: string) => new URL(u).pathname;
      assert.deepEqual(done.refused['pdf_encrypted']?.sample.map(path), ['/secret.pdf']);
      assert.deepEqual(done.refused['pdf_unreadable']?.sample.map(path), ['/broken.pdf']);
      assert.deepEqual(done.refused['pdf_too_large']?.sample.map(path), ['/report.pdf']);
      assert.equal(done.completed_pages, 3, 'home, manual and the untyped PDF');
    });
  });
}
