/**
 * Runs {@link extractPage} off the main thread, in a small piscina worker pool, so a large page (the
 * fastapi release notes take ~0.5 s to parse and convert) never stalls the API or the other crawls.
 * Threads start on demand and exit when idle, so an idle service holds none.
 */
import { Piscina } from 'piscina';
import { type ExtractedPage, extractPage } from './extract.ts';

export interface PageExtractor {
  extract(html: string, url: string, signal?: AbortSignal): Promise<ExtractedPage>;
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
      close: async () => {},
    };
  }
  const pool = new Piscina<{ html: string; url: string }, ExtractedPage>({
    filename: new URL('./extract-worker.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: opts.threads,
    idleTimeout: opts.idleTimeoutMs ?? 10_000,
  });
  return {
    extract: (html, url, signal) => pool.run({ html, url }, signal ? { signal } : {}),
    close: () => pool.destroy(),
  };
}
