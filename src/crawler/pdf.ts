/**
 * PDF document → title and markdown, with unpdf (PDF.js's serverless build, no native parts): the text of
 * each page in reading order, with headings where the document has an outline (bookmarks: top level `##`,
 * nested `###`, ...) placed before the text of the page each entry points to. Runs in the extraction
 * worker (extract-worker.ts). Bounded: the bytes by the crawler's page size cap (a cut-off PDF cannot be
 * read and is refused), the pages read by {@link MAX_PDF_PAGES}.
 *
 * A PDF that cannot be read is a {@link PdfRefusal}: `pdf_encrypted` (a password is needed) or
 * `pdf_unreadable` (broken, truncated, not a PDF) - a counted refusal, not a failure of the crawl.
 */
import type { getDocumentProxy } from 'unpdf';
import type { ExtractedPage } from './extract.ts';
import { itemSearchWords } from '../lib/search-words.ts';
import { textSignature } from './fingerprint.ts';

/** Pages read at most; the rest of a longer document is left out. */
const MAX_PDF_PAGES = 500;

export class PdfRefusal extends Error {
  override name = 'PdfRefusal';
  readonly reason: 'pdf_encrypted' | 'pdf_unreadable';
  constructor(reason: 'pdf_encrypted' | 'pdf_unreadable', message: string) {
    super(message);
    this.reason = reason;
  }
}

interface OutlineNode {
  title: string;
  dest: string | unknown[] | null;
  items: OutlineNode[];
}

/** Extracts a PDF fetched from `url`; throws {@link PdfRefusal} when it cannot be read. */
export async function extractPdf(bytes: Uint8Array, url: string): Promise<ExtractedPage> {
  // Loaded on first use: PDF.js is large, and only extraction threads need it.
  const unpdf = await import('unpdf');
  let doc: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // A plain copy: PDF.js refuses a Buffer and may take over the array it is given.
    doc = await unpdf.getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, stopAtErrors: false });
  } catch (err) {
    const name = err instanceof Error ? err.name : '';
    if (name === 'PasswordException') throw new PdfRefusal('pdf_encrypted', 'the PDF is encrypted');
    throw new PdfRefusal(
      'pdf_unreadable',
      `the PDF cannot be read: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  try {
    const pages = Math.min(doc.numPages, MAX_PDF_PAGES);
    const headings = new Map<number, string[]>();
    const outline = ((await doc.getOutline().catch(() => null)) ?? []) as OutlineNode[];
    const place = async (nodes: OutlineNode[], level: number): Promise<void> => {
      for (const node of nodes) {
        const page = await destinationPage(doc, node.dest);
        const title = normalizeSpace(node.title ?? '');
        if (page !== null && page < pages && title) {
          const list = headings.get(page) ?? [];
          list.push(`${'#'.repeat(Math.min(level + 2, 6))} ${title}`);
          headings.set(page, list);
        }
        await place(node.items ?? [], level + 1);
      }
    };
    await place(outline, 0);

    const parts: string[] = [];
    for (let i = 0; i < pages; i++) {
      parts.push(...(headings.get(i) ?? []));
      const page = await doc.getPage(i + 1);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        text += item.str + (item.hasEOL ? '\n' : ' ');
      }
      const paragraph = text
        .split('\n')
        .map((l) => normalizeSpace(l))
        .filter((l) => l !== '')
        .join('\n');
      if (paragraph) parts.push(paragraph);
      page.cleanup();
    }
    const markdown = parts.join('\n\n').trim();
    const info = ((await doc.getMetadata().catch(() => null))?.info ?? {}) as { Title?: unknown };
    const title =
      (typeof info.Title === 'string' && normalizeSpace(info.Title)) ||
      normalizeSpace(outline[0]?.title ?? '') ||
      fileName(url);
    return {
      title,
      markdown,
      links: [],
      noindex: false,
      signature: textSignature(markdown),
      searchWords: itemSearchWords(title, markdown),
    };
  } catch (err) {
    if (err instanceof PdfRefusal) throw err;
    throw new PdfRefusal(
      'pdf_unreadable',
      `the PDF cannot be read: ${err instanceof Error ? err.message : String(err)}`,
    );
  } finally {
    await doc.loadingTask.destroy();
  }
}

/** The 0-based page an outline destination points to; null when it points nowhere we can tell. */
async function destinationPage(
  doc: Awaited<ReturnType<typeof getDocumentProxy>>,
  dest: string | unknown[] | null,
): Promise<number | null> {
  try {
    const explicit = typeof dest === 'string' ? await doc.getDestination(dest) : dest;
    const ref = explicit?.[0];
    if (typeof ref === 'number') return ref;
    if (ref && typeof ref === 'object') return await doc.getPageIndex(ref as { num: number; gen: number });
    return null;
  } catch {
    return null;
  }
}

function fileName(url: string): string {
  const last = new URL(url).pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(last) || new URL(url).hostname;
  } catch {
    return last || new URL(url).hostname;
  }
}

function normalizeSpace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
