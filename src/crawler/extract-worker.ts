/**
 * Worker-thread entry of the extraction pool (extract-pool.ts): parsing and converting a large page (or
 * a PDF) takes hundreds of milliseconds of CPU, which must not stall the API's event loop.
 */
import { lowerThisThreadPriority } from '../lib/thread-priority.ts';
import { type ExtractedPage, extractPage } from './extract.ts';
import { extractPdf, PdfRefusal } from './pdf.ts';

// A crawl's pages are background work: where cores are short, the threads answering requests go first.
lowerThisThreadPriority();

export type ExtractTask =
  | { kind?: 'html'; html: string; url: string }
  | { kind: 'pdf'; bytes: Uint8Array; url: string };

/** A PDF refusal crosses the thread boundary as data (errors lose their class there). */
export type ExtractTaskResult = ExtractedPage | { refused: PdfRefusal['reason']; message: string };

export default async function extract(task: ExtractTask): Promise<ExtractTaskResult> {
  if (task.kind !== 'pdf') return extractPage(task.html, task.url);
  try {
    return await extractPdf(task.bytes, task.url);
  } catch (err) {
    if (err instanceof PdfRefusal) return { refused: err.reason, message: err.message };
    throw err;
  }
}
