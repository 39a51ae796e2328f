/**
 * Worker-thread entry of the extraction pool (extract-pool.ts): parsing and converting a large page takes
 * hundreds of milliseconds of CPU, which must not stall the API's event loop.
 */
import { type ExtractedPage, extractPage } from './extract.ts';

export default function extract(task: { html: string; url: string }): ExtractedPage {
  return extractPage(task.html, task.url);
}
