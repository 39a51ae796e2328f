/**
 * Runs {@link extractPage} and {@link extractPdf} off the main thread, in a small piscina worker pool, so
 * a large page (the fastapi release notes take ~0.5 s to parse and convert) or a PDF never stalls the API
 * or the other crawls. Threads start on demand and exit when idle, so an idle service holds none.
 */
import { Piscina } from 'piscina';
import { type ExtractedPage, extractPage } from './extract.ts';
import type { ExtractTask, ExtractTaskResult } from './extract-worker.ts';
import { extractPdf, PdfRefusal } from './pdf.ts';

export interface PageExtractor {
  extract(html: string, url: string, signal?: AbortSignal): Promise<ExtractedPage>;
  /** A PDF document; rejects with a {@link PdfRefusal} when it cannot be read. */
  extractPdf(bytes: Uint8Array, url: string, signal?: AbortSignal): Promise<ExtractedPage>;
  close(): Promise<void>;
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
    };
  }
  const pool = new Piscina<ExtractTask, ExtractTaskResult>({
    filename: new URL('./extract-worker.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: opts.threads,
    idleTimeout: opts.idleTimeoutMs ?? 10_000,
  });
  return {
    extract: async (html, url, signal) => {
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
