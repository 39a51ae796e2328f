/**
 * Runs {@link extractPage} and {@link extractPdf} off the main thread, in a small piscina worker pool, so
 * a large page (the fastapi release notes take ~0.5 s to parse and convert) or a PDF never stalls the API
 * or the other crawls. Threads start on demand and exit when idle, so an idle service holds none.
 *
 * A thread takes ~200 ms to start (loading linkedom, readability and turndown), which was a tenth of a
 * 154-page crawl spent with both threads idle before its first page. So while no thread is up, one is
 * started and pages of at most {@link INLINE_WHILE_STARTING_CHARS} are extracted on the calling thread
 * meanwhile (a few milliseconds each: the crawl's start page, a sitemap's first pages); larger pages and
 * PDFs wait for the thread.
 */
import { Piscina } from 'piscina';
import { type ExtractedPage, extractPage } from './extract.ts';
import type { ExtractTask, ExtractTaskResult } from './extract-worker.ts';
import { extractPdf, PdfRefusal } from './pdf.ts';

/**
 * Largest page (characters of HTML) extracted on the calling thread while the pool's thread starts.
 * Extraction costs about 0.3 ms per 1,000 characters on a quiet core and several times that on a busy one:
 * 16,000 characters keeps the event loop's turn under the 50 ms that any one task may hold it, where
 * 128 KiB pages held it 80 ms and more when cores were short.
 */
export const INLINE_WHILE_STARTING_CHARS = 16 * 1024;

export interface PageExtractor {
  extract(html: string, url: string, signal?: AbortSignal): Promise<ExtractedPage>;
  /** A PDF document; rejects with a {@link PdfRefusal} when it cannot be read. */
  extractPdf(bytes: Uint8Array, url: string, signal?: AbortSignal): Promise<ExtractedPage>;
  close(): Promise<void>;
  /** Pages extracted on the calling thread while the pool's thread started (see above). */
  readonly inlineExtractions: number;
}

/** `threads: 0` extracts on the calling thread (no pool). */
export function createPageExtractor(opts: { threads: number; idleTimeoutMs?: number }): PageExtractor {
  if (opts.threads <= 0) {
    return {
      extract: async (html, url, signal) => {
        signal?.throwIfAborted();
        return extractPage(html, url);
      },
      extractPdf: async (bytes, url, signal) => {
        signal?.throwIfAborted();
        return extractPdf(bytes, url);
      },
      close: async () => {},
      inlineExtractions: 0,
    };
  }
  const pool = new Piscina<ExtractTask, ExtractTaskResult>({
    filename: new URL('./extract-worker.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: opts.threads,
    idleTimeout: opts.idleTimeoutMs ?? 10_000,
  });
  // The first task of a new thread, run to start it; null once it has answered (the thread is up).
  let starting: Promise<unknown> | null = null;
  const threadUp = (): boolean => {
    if (starting) return false;
    if (pool.threads.length > 0) return true;
    starting = pool
      .run({ html: '<html></html>', url: 'http://localhost/' })
      .catch(() => {})
      .finally(() => {
        starting = null;
      });
    return false;
  };
  let inline = 0;
  return {
    get inlineExtractions() {
      return inline;
    },
    extract: async (html, url, signal) => {
      if (html.length <= INLINE_WHILE_STARTING_CHARS && !threadUp()) {
        signal?.throwIfAborted();
        inline++;
        return extractPage(html, url);
      }
      const result = await pool.run({ html, url }, signal ? { signal } : {});
      if ('refused' in result) throw new Error(result.message);
      return result;
    },
    extractPdf: async (bytes, url, signal) => {
      const result = await pool.run({ kind: 'pdf', bytes, url }, signal ? { signal } : {});
      if ('refused' in result) throw new PdfRefusal(result.refused, result.message);
      return result;
    },
    close: () => pool.destroy(),
  };
}
