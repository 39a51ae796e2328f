/**
 * What the final response of a frontier URL does, committed as one step under the run's lease and the
 * crawl job's lock: a new or changed page is extracted and stored as an item (or refused: noindex, empty,
 * duplicate text, tombstoned), a 304 keeps the item and re-admits its remembered links, a 404/410 removes
 * the item, a non-HTML or failed response is counted as a refusal. A URL that now redirects elsewhere
 * loses the item of its own it had.
 */
import type { Queryable } from '../db/database.ts';
import { claimCrawlText, type FrontierRow, insertFrontierRows } from '../db/repositories/crawl-frontier.ts';
import type { LockedCrawlJob } from '../db/repositories/crawl-jobs.ts';
import { deletePageMemory, type PageMemory, savePageMemory } from '../db/repositories/crawl-pages.ts';
import { crawlSourceKey, removeDocument, storeDocument } from '../ingest/store.ts';
import { sha256Hex } from '../lib/crypto.ts';
import type { Admission } from './admission.ts';
import type { ExtractedPage } from './extract.ts';
import type { FetchPageResult } from './fetch-page.ts';
import { noteRefusals } from './frontier.ts';
import type { FinalResponse } from './redirects.ts';
import type { CrawlerRuntime } from './runtime.ts';

/**
 * Commits a finished row: `work` runs in the transaction under the crawl job's lock and may return the
 * row's outcome (else `outcome`); the run marks the row done and moves the counters in the same commit.
 */
export type CommitRow = (
  row: FrontierRow,
  outcome: string,
  detail: string | null,
  work: (tx: Queryable, locked: LockedCrawlJob) => Promise<unknown>,
) => Promise<void>;

export class PageSettler {
  readonly #job: { id: string; organizationId: string };
  readonly #startKey: string;
  readonly #tags: string[];
  readonly #rt: CrawlerRuntime;
  readonly #signal: AbortSignal;
  readonly #admission: Admission;
  readonly #commit: CommitRow;

  constructor(ctx: {
    job: { id: string; organizationId: string };
    startKey: string;
    tags: string[];
    runtime: CrawlerRuntime;
    signal: AbortSignal;
    admission: Admission;
    commit: CommitRow;
  }) {
    this.#job = ctx.job;
    this.#startKey = ctx.startKey;
    this.#tags = ctx.tags;
    this.#rt = ctx.runtime;
    this.#signal = ctx.signal;
    this.#admission = ctx.admission;
    this.#commit = ctx.commit;
  }

  /** A URL that now redirects elsewhere is no page of its own any more: its item from an earlier crawl goes. */
  async dropRedirected(tx: Queryable, row: FrontierRow): Promise<void> {
    if (!row.admitted) return;
    const key = crawlSourceKey(row.urlKey);
    await deletePageMemory(tx, this.#job.organizationId, key);
    await removeDocument(tx, this.#job.organizationId, key);
  }

  /** Commits the final response of a row (after redirects: `url` / `key` are where it landed). */
  async settle(
    row: FrontierRow,
    result: FinalResponse,
    url: string,
    key: string,
    memory: PageMemory | null,
  ): Promise<void> {
    const org = this.#job.organizationId;
    const redirected = key !== row.urlKey;
    const sourceKey = crawlSourceKey(key);
    switch (result.kind) {
      case 'ok':
        return this.#processPage(row, result, url, key);
      case 'not_modified': {
        // Unchanged since the last crawl: the item stays; its remembered links keep discovery going.
        const links = await this.#admission.candidates(memory?.links ?? [], row.depth + 1);
        return this.#commit(row, 'unchanged', null, async (tx, locked) => {
          if (memory) await claimCrawlText(tx, this.#job.id, memory.textHash, row.urlKey);
          await this.#admission.admit(tx, locked, links);
        });
      }
      case 'gone':
        return this.#commit(row, 'gone', `HTTP ${result.status}`, async (tx) => {
          if (!row.admitted) return 'gone';
          if (redirected) await this.dropRedirected(tx, row);
          await deletePageMemory(tx, org, sourceKey);
          return (await removeDocument(tx, org, sourceKey)) ? 'removed' : 'gone';
        });
      case 'skipped':
        return this.#commit(row, 'not_html', result.contentType || null, async (tx, locked) => {
          if (redirected) await this.dropRedirected(tx, row);
          noteRefusals(locked, [{ url, reason: 'not_html' }]);
        });
      case 'failed': {
        const outcome = result.blocked ? 'blocked' : 'failed';
        return this.#commit(row, outcome, result.message, async (_tx, locked) => {
          noteRefusals(locked, [{ url, reason: outcome }]);
        });
      }
    }
  }

  async #processPage(
    row: FrontierRow,
    res: Extract<FetchPageResult, { kind: 'ok' }>,
    finalUrl: string,
    finalKey: string,
  ): Promise<void> {
    const org = this.#job.organizationId;
    const redirected = finalKey !== row.urlKey;
    let page: ExtractedPage;
    try {
      page = await this.#rt.extractor.extract(res.html, finalUrl, this.#signal);
    } catch (err) {
      this.#signal.throwIfAborted();
      const message = `extraction failed: ${err instanceof Error ? err.message : String(err)}`;
      return this.#commit(row, 'failed', message, async (_tx, locked) => {
        noteRefusals(locked, [{ url: finalUrl, reason: 'failed' }]);
      });
    }
    const links = await this.#admission.candidates(page.links, row.depth + 1);
    const markdown = page.markdown.trim();
    const textHash = sha256Hex(markdown.replace(/\s+/g, ' '));
    const sourceKey = crawlSourceKey(finalKey);
    const detail = res.truncated ? `truncated at ${this.#rt.settings.maxPageBytes} bytes` : null;

    return this.#commit(row, 'created', detail, async (tx, locked) => {
      await this.#admission.admit(tx, locked, links);
      if (redirected) {
        await this.dropRedirected(tx, row);
        // The target's key is taken by this fetch; if another row took it meanwhile, that row has the page.
        const taken = await insertFrontierRows(tx, this.#job.id, [
          {
            key: finalKey,
            url: finalUrl,
            depth: row.depth,
            admitted: false,
            state: 'done',
            outcome: 'redirect_target',
          },
        ]);
        this.#admission.markKnown(finalKey);
        if (taken.length === 0) {
          noteRefusals(locked, [{ url: row.url, reason: 'duplicate' }]);
          return 'duplicate';
        }
      }
      if (!row.admitted) return 'links_only';
      if (res.noindex || page.noindex) {
        noteRefusals(locked, [{ url: finalUrl, reason: 'noindex' }]);
        await deletePageMemory(tx, org, sourceKey);
        await removeDocument(tx, org, sourceKey);
        return 'noindex';
      }
      if (markdown === '') {
        noteRefusals(locked, [{ url: finalUrl, reason: 'empty' }]);
        return 'empty';
      }
      if (!(await claimCrawlText(tx, this.#job.id, textHash, finalKey))) {
        noteRefusals(locked, [{ url: finalUrl, reason: 'duplicate' }]);
        return 'duplicate';
      }
      const lift = row.urlKey === this.#startKey || finalKey === this.#startKey;
      const stored = await storeDocument(
        tx,
        org,
        {
          sourceType: 'crawl',
          sourceTableName: 'crawled_pages',
          sourceKey,
          title: page.title || finalUrl,
          markdown,
          url: finalUrl,
          visibility: 'public',
          tags: this.#tags,
          crawlJobId: this.#job.id,
        },
        // A new crawl of a URL brings back its item if the user had deleted it; other pages stay deleted.
        { respectTombstones: !lift },
      );
      if (stored.outcome === 'tombstoned') return 'tombstoned';
      await savePageMemory(tx, org, sourceKey, {
        etag: res.etag ?? null,
        lastModified: res.lastModified ?? null,
        textHash,
        links: page.links,
      });
      return stored.outcome;
    });
  }
}
