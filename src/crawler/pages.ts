/**
 * What the final response of a frontier URL does, committed as one step under the run's lease and the
 * crawl job's lock: a new or changed page is extracted and stored as an item, or refused (noindex, empty,
 * canonical elsewhere, duplicate or near-duplicate text, budget spent, tombstoned); a 304 keeps the item
 * and re-admits its remembered links; a 404/410 removes the item; a non-HTML or failed response is counted
 * as a refusal. A URL that now redirects elsewhere, or that is refused for any of those reasons, loses the
 * item of its own it had from an earlier crawl, so a page is one item however often it is crawled.
 *
 * Near-duplicates (fingerprint.ts): a page whose text has estimated similarity >= 0.9 with a page of the
 * same host, or is a variant of it (most of its text in that page, few words of its own), that the organization has stored (in this crawl, or in an earlier one and not yet refused by
 * this one) is counted under `near_duplicate` with the URL it duplicates; the kept item's `variants:N` tag
 * says how many pages this crawl collapsed into it (exact duplicates included). A page that a variant
 * stored earlier in this crawl varies takes that variant's place (variant-takeover.ts): the variant's
 * item goes and its URL is counted as a near-duplicate of the page.
 */
import type { Queryable } from '../db/database.ts';
import {
  claimCrawlText,
  type FrontierRow,
  type FrontierRowState,
  finishFrontierRow,
  getFrontierRow,
  insertFrontierRows,
  moveCrawlTexts,
  notePatternCollapse,
  shiftPatternPriority,
} from '../db/repositories/crawl-frontier.ts';
import type { LockedCrawlJob } from '../db/repositories/crawl-jobs.ts';
import {
  countVariant,
  crawledPageText,
  deletePageMemory,
  type FingerprintCandidate,
  moveVariants,
  pageTwins,
  type PageMemory,
  refreshVariantsTag,
  savePageMemory,
  setVariantsTag,
} from '../db/repositories/crawl-pages.ts';
import { addCrawlTags, crawlSourceKey, removeDocument, storeDocument } from '../ingest/hash-skip.ts';
import { sha256Hex } from '../lib/crypto.ts';
import type { Admission } from './admission.ts';
import type { ExtractedPage } from './extract.ts';
import type { FetchPageResult } from './fetch-page.ts';
import { type DuplicateVerdict, duplicateOf, SHINGLE_BAND_COUNT, signatureBands } from './fingerprint.ts';
import { noteRefusals, STORED_OUTCOMES } from './frontier.ts';
import { isPushedBack, PUSH_BACK, urlPattern } from './patterns.ts';
import { PdfRefusal } from './pdf.ts';
import { pagesToTakeOver, type TakenOver } from './variant-takeover.ts';
import { isVariantText } from './word-diff.ts';
import type { FinalResponse } from './redirects.ts';
import type { CrawlerRuntime } from './runtime.ts';
import { urlKey } from './url.ts';
import type { NewJobWarning } from '../db/repositories/job-warnings.ts';
import { pageTooLarge } from './warnings.ts';

/** What a commit's work may return besides nothing: the row's outcome, or the outcome and its detail. */
export type CommitResult = string | { outcome: string; detail: string | null };

/**
 * Commits a finished row: `work` runs in the transaction under the crawl job's lock and may return a
 * {@link CommitResult} (else the row's outcome is `outcome`); the run marks the row done and moves the
 * counters in the same commit.
 */
type CommitRow = (
  row: FrontierRow,
  outcome: string,
  detail: string | null,
  work: (tx: Queryable, locked: LockedCrawlJob) => Promise<unknown>,
) => Promise<void>;

/** A fetched page to extract: HTML, or a PDF. */
type PageResponse = Extract<FetchPageResult, { kind: 'ok' | 'pdf' }>;

/** An extracted page with what its commit needs, worked out before the transaction. */
interface PreparedPage {
  row: FrontierRow;
  res: PageResponse;
  page: ExtractedPage;
  finalUrl: string;
  finalKey: string;
  /** The candidates of the page's links, admitted in the commit. */
  links: Awaited<ReturnType<Admission['candidates']>>;
  markdown: string;
  textHash: string;
  sourceKey: string;
  detail: string | null;
  /** A rel=canonical naming another URL, with that URL's candidates. */
  canonical: { url: string; key: string; candidates: Awaited<ReturnType<Admission['candidates']>> } | null;
  bands: ReturnType<typeof signatureBands> | null;
}

export class PageSettler {
  readonly #job: { id: string; organizationId: string };
  readonly #startKey: string;
  readonly #tags: string[];
  readonly #rt: CrawlerRuntime;
  readonly #signal: AbortSignal;
  readonly #admission: Admission;
  readonly #commit: CommitRow;
  readonly #warn: (warning: NewJobWarning) => void;

  constructor(ctx: {
    job: { id: string; organizationId: string };
    startKey: string;
    tags: string[];
    runtime: CrawlerRuntime;
    signal: AbortSignal;
    admission: Admission;
    commit: CommitRow;
    /** Notes a warning for the job (written with the next commit). */
    warn?: (warning: NewJobWarning) => void;
  }) {
    this.#job = ctx.job;
    this.#startKey = ctx.startKey;
    this.#tags = ctx.tags;
    this.#rt = ctx.runtime;
    this.#signal = ctx.signal;
    this.#admission = ctx.admission;
    this.#commit = ctx.commit;
    this.#warn = ctx.warn ?? (() => {});
  }

  /** A URL that now redirects elsewhere is no page of its own any more: its item from an earlier crawl goes. */
  async dropRedirected(tx: Queryable, row: FrontierRow): Promise<void> {
    if (!row.admitted) return;
    await this.#dropOwnItem(tx, crawlSourceKey(row.urlKey));
  }

  /** The page is not stored (noindex, duplicate...): an item it had from an earlier crawl goes. */
  async #dropOwnItem(tx: Queryable, sourceKey: string): Promise<void> {
    await deletePageMemory(tx, this.#job.organizationId, sourceKey);
    await removeDocument(tx, this.#job.organizationId, sourceKey);
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
      case 'pdf':
        return this.#processPage(row, result, url, key);
      case 'not_modified': {
        // Unchanged since the last crawl: the item stays; its remembered links keep discovery going.
        const links = await this.#admission.candidates(memory?.links ?? [], row.depth + 1);
        return this.#commit(row, 'unchanged', null, async (tx, locked) => {
          await this.#admission.admit(tx, locked, links);
          if (locked.stored >= locked.limit) {
            noteRefusals(locked, [{ url, reason: 'budget' }]);
            return 'budget';
          }
          if (memory) await claimCrawlText(tx, this.#job.id, memory.textHash, row.urlKey);
          await refreshVariantsTag(tx, org, sourceKey, this.#job.id);
          if (await addCrawlTags(tx, org, sourceKey, this.#tags)) return 'retagged';
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

  async #processPage(row: FrontierRow, res: PageResponse, finalUrl: string, finalKey: string): Promise<void> {
    const redirected = finalKey !== row.urlKey;
    // A PDF, or a PDF that cannot be read: a counted refusal, the crawl goes on.
    const refuse = (reason: string, message: string) =>
      this.#commit(row, reason, message, async (tx, locked) => {
        if (redirected) await this.dropRedirected(tx, row);
        noteRefusals(locked, [{ url: finalUrl, reason }]);
      });
    const maxBytes = this.#rt.settings.maxPageBytes;
    if (res.truncated) this.#warn(pageTooLarge(finalUrl, maxBytes, { skipped: res.kind === 'pdf' }));
    if (res.kind === 'pdf' && res.truncated) {
      return refuse('pdf_too_large', `larger than ${this.#rt.settings.maxPageBytes} bytes`);
    }
    let page: ExtractedPage;
    try {
      page =
        res.kind === 'pdf'
          ? await this.#rt.extractor.extractPdf(res.body, finalUrl, this.#signal)
          : await this.#rt.extractor.extract(res.html, finalUrl, this.#signal);
    } catch (err) {
      this.#signal.throwIfAborted();
      if (err instanceof PdfRefusal) return refuse(err.reason, err.message);
      const message = `extraction failed: ${err instanceof Error ? err.message : String(err)}`;
      return this.#commit(row, 'failed', message, async (_tx, locked) => {
        noteRefusals(locked, [{ url: finalUrl, reason: 'failed' }]);
      });
    }
    const prepared = await this.#preparePage(row, res, page, finalUrl, finalKey);
    return this.#commit(row, 'created', prepared.detail, async (tx, locked) => {
      await this.#admission.admit(tx, locked, prepared.links);
      if (redirected) {
        const duplicate = await this.#takeRedirectTarget(tx, locked, prepared);
        if (duplicate) return duplicate;
      }
      if (!row.admitted) return 'links_only';
      const judged = await this.#refusePage(tx, locked, prepared);
      if ('refusal' in judged) return judged.refusal;
      const stored = await this.#storePage(tx, prepared);
      if (stored !== 'tombstoned') await this.#takeOver(tx, locked, prepared, judged.takeOver);
      return stored;
    });
  }

  /** What committing an extracted page needs that may be worked out before its transaction. */
  async #preparePage(
    row: FrontierRow,
    res: PageResponse,
    page: ExtractedPage,
    finalUrl: string,
    finalKey: string,
  ): Promise<PreparedPage> {
    const org = this.#job.organizationId;
    const links = await this.#admission.candidates(page.links, row.depth + 1);
    const markdown = page.markdown.trim();
    // rel=canonical naming another URL: that URL is the page to store (admitted here if it may be).
    const canonicalKey = page.canonical ? urlKey(page.canonical) : null;
    const canonical =
      page.canonical && canonicalKey && canonicalKey !== finalKey && row.admitted
        ? {
            url: page.canonical,
            key: canonicalKey,
            candidates: await this.#admission.candidates([page.canonical], row.depth),
          }
        : null;
    return {
      row,
      res,
      page,
      finalUrl,
      finalKey,
      links,
      markdown,
      textHash: sha256Hex(markdown.replace(/\s+/g, ' ')),
      sourceKey: crawlSourceKey(finalKey),
      detail: res.truncated ? `truncated at ${this.#rt.settings.maxPageBytes} bytes` : null,
      canonical,
      // Salted with organization and host: only pages of one organization's host are compared.
      bands: page.signature ? signatureBands(page.signature, `${org}\n${new URL(finalUrl).host}`) : null,
    };
  }

  /**
   * A row that redirected: its own item goes, and the target's key is taken by this fetch; if another row
   * took it meanwhile, that row has the page and this one is its duplicate.
   */
  async #takeRedirectTarget(
    tx: Queryable,
    locked: LockedCrawlJob,
    { row, finalKey, finalUrl }: PreparedPage,
  ): Promise<CommitResult | null> {
    await this.dropRedirected(tx, row);
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
    if (taken.length > 0) return null;
    noteRefusals(locked, [{ url: row.url, reason: 'duplicate' }]);
    return 'duplicate';
  }

  /**
   * Why an admitted page is not stored (noindex, empty, canonical elsewhere, the same or nearly the same
   * text as a stored page, budget spent), its own earlier item dropped where it had one; else the stored
   * pages of this crawl it takes over once stored (variant-takeover.ts).
   */
  async #refusePage(
    tx: Queryable,
    locked: LockedCrawlJob,
    p: PreparedPage,
  ): Promise<{ refusal: CommitResult } | { takeOver: TakenOver[] }> {
    const org = this.#job.organizationId;
    const { res, page, finalUrl, finalKey, sourceKey, canonical } = p;
    if (res.noindex || page.noindex) {
      noteRefusals(locked, [{ url: finalUrl, reason: 'noindex' }]);
      await this.#dropOwnItem(tx, sourceKey);
      return { refusal: 'noindex' };
    }
    if (p.markdown === '') {
      noteRefusals(locked, [{ url: finalUrl, reason: 'empty' }]);
      return { refusal: 'empty' };
    }
    if (canonical) {
      await this.#admission.admit(tx, locked, canonical.candidates);
      const target = await getFrontierRow(tx, this.#job.id, canonical.key);
      // Stored under its canonical URL unless that one is out of the crawl or failed to be a page.
      if (target && canonicalTaken(target)) {
        noteRefusals(locked, [{ url: finalUrl, reason: 'canonical', of: target.url }]);
        await this.#dropOwnItem(tx, sourceKey);
        return { refusal: { outcome: 'canonical', detail: `canonical: ${target.url}` } };
      }
    }
    const twins = await pageTwins(tx, {
      crawlJobId: this.#job.id,
      organizationId: org,
      textHash: p.textHash,
      bands: p.bands,
      wordBandsFrom: SHINGLE_BAND_COUNT,
      exceptSourceKey: sourceKey,
    });
    const holder = twins.sameText;
    if (holder && holder.key !== finalKey) {
      noteRefusals(locked, [{ url: finalUrl, reason: 'duplicate', of: holder.url }]);
      await this.#dropOwnItem(tx, sourceKey);
      await countVariant(tx, org, crawlSourceKey(holder.key), this.#job.id);
      return { refusal: { outcome: 'duplicate', detail: `duplicate of ${holder.url}` } };
    }
    const near = page.signature
      ? await nearestDuplicate(tx, org, { signature: page.signature, text: p.markdown }, twins.candidates)
      : null;
    const takeOver =
      page.signature && near?.kind !== 'similar'
        ? await pagesToTakeOver(
            tx,
            { organizationId: org, crawlJobId: this.#job.id },
            {
              url: finalUrl,
              signature: page.signature,
              text: p.markdown,
              refusedAs: near ? near.sourceKey : null,
            },
            twins.candidates,
          )
        : [];
    if (near && takeOver.length === 0) {
      noteRefusals(locked, [{ url: finalUrl, reason: 'near_duplicate', of: near.url }]);
      await this.#dropOwnItem(tx, sourceKey);
      await countVariant(tx, org, near.sourceKey, this.#job.id);
      return {
        refusal: {
          outcome: 'near_duplicate',
          detail: `near-duplicate of ${near.url} (similarity ${near.similarity.toFixed(2)}${near.kind === 'variant' ? `; a variant: ${near.containment.toFixed(2)} of its text is there` : ''})`,
        },
      };
    }
    // Not reached while the claim keeps stored + in flight below the limit; kept as the last guard.
    if (locked.stored >= locked.limit) {
      noteRefusals(locked, [{ url: finalUrl, reason: 'budget' }]);
      return { refusal: 'budget' };
    }
    return { takeOver };
  }

  /**
   * The stored page `p` takes the place of pages of this crawl it varies (variant-takeover.ts): each one's
   * item goes, its row becomes a near-duplicate of `p` (its slot in the page budget free again), what it
   * stood for is counted on `p`, and its URL pattern counts one more collapsed page.
   */
  async #takeOver(tx: Queryable, locked: LockedCrawlJob, p: PreparedPage, pages: TakenOver[]): Promise<void> {
    const org = this.#job.organizationId;
    const jobId = this.#job.id;
    for (const v of pages) {
      await moveVariants(tx, org, { sourceKey: v.sourceKey, to: p.sourceKey }, jobId);
      await moveCrawlTexts(tx, jobId, v.key, p.finalKey);
      await this.#dropOwnItem(tx, v.sourceKey);
      await finishFrontierRow(
        tx,
        jobId,
        v.key,
        'near_duplicate',
        `near-duplicate of ${p.finalUrl} (a variant of it, stored first and taken over)`,
      );
      const left = (locked.outcomes[v.outcome] ?? 1) - 1;
      if (left > 0) locked.outcomes[v.outcome] = left;
      else delete locked.outcomes[v.outcome];
      locked.outcomes['near_duplicate'] = (locked.outcomes['near_duplicate'] ?? 0) + 1;
      locked.stored--;
      noteRefusals(locked, [{ url: v.url, reason: 'near_duplicate', of: p.finalUrl }]);
      const pattern = v.pattern || urlPattern(v.url);
      const verdict = await notePatternCollapse(tx, jobId, pattern, isPushedBack);
      if (verdict.changed)
        await shiftPatternPriority(tx, jobId, pattern, verdict.pushedBack ? PUSH_BACK : -PUSH_BACK);
    }
  }

  /** Stores the page as an item and remembers its validators, links and text for the next crawl. */
  async #storePage(tx: Queryable, p: PreparedPage): Promise<CommitResult> {
    const org = this.#job.organizationId;
    const { row, res, page, finalUrl, finalKey, sourceKey } = p;
    const lift = row.urlKey === this.#startKey || finalKey === this.#startKey;
    const stored = await storeDocument(
      tx,
      org,
      {
        sourceType: 'crawl',
        sourceTableName: 'crawled_pages',
        sourceKey,
        title: page.title || finalUrl,
        markdown: p.markdown,
        // Split from the page's own title and text: trimming changes no word; a title taken from the URL does.
        ...(page.title ? { searchWords: page.searchWords } : {}),
        url: finalUrl,
        visibility: 'public',
        tags: this.#tags,
        crawlJobId: this.#job.id,
      },
      // A new crawl of a URL brings back its item if the user had deleted it; other pages stay deleted.
      { respectTombstones: !lift },
    );
    if (stored.outcome === 'tombstoned') return 'tombstoned';
    // The text is this page's now (a later fetch of the same text is its duplicate).
    const variants = await savePageMemory(
      tx,
      org,
      sourceKey,
      this.#job.id,
      {
        etag: res.etag ?? null,
        lastModified: res.lastModified ?? null,
        textHash: p.textHash,
        links: page.links,
        // A text too short to fingerprint saves an empty signature: compared with nothing, but unlike a
        // page stored before fingerprints (NULL), its next fetch may be conditional.
        signature: page.signature ?? [],
        bands: p.bands,
      },
      finalKey,
    );
    // Pages this crawl collapsed into this one before it was stored again.
    if (variants > 0) await setVariantsTag(tx, org, sourceKey, variants);
    return stored.outcome;
  }
}

/** Variant verdicts confirmed against stored text per page: each is one read of an item's content. */
const MAX_VARIANT_CONFIRMATIONS = 3;

/**
 * The candidate page this one is a near-duplicate or a variant of (fingerprint.ts `duplicateOf`), if any:
 * the most similar near-copy, else the variant holding most of its text. Signatures only estimate a variant, and a page wholly contained in a
 * longer one looks like one to them; a variant is taken only once the page's words, aligned with the
 * stored page's, differ in short runs of their own (word-diff.ts).
 */
async function nearestDuplicate(
  tx: Queryable,
  organizationId: string,
  page: { signature: number[]; text: string },
  candidates: readonly FingerprintCandidate[],
): Promise<({ sourceKey: string; url: string } & DuplicateVerdict) | null> {
  const verdicts: Array<{ sourceKey: string; url: string } & DuplicateVerdict> = [];
  for (const c of candidates) {
    const verdict = duplicateOf(page.signature, c.signature);
    if (verdict) verdicts.push({ sourceKey: c.sourceKey, url: c.url, ...verdict });
  }
  // A near-copy first (the most similar), then variants by how much of the page they hold.
  verdicts.sort((a, b) =>
    a.kind !== b.kind
      ? a.kind === 'similar'
        ? -1
        : 1
      : a.kind === 'similar'
        ? b.similarity - a.similarity
        : b.containment - a.containment,
  );
  let confirmations = 0;
  for (const v of verdicts) {
    if (v.kind === 'similar') return v;
    if (confirmations >= MAX_VARIANT_CONFIRMATIONS) continue;
    confirmations++;
    const stored = await crawledPageText(tx, organizationId, v.sourceKey);
    if (stored !== null && isVariantText(page.text, stored)) return v;
  }
  return null;
}

/**
 * Whether a page's canonical URL, found in the frontier, holds (or will hold) the page: queued or being
 * fetched, stored, or taken by a redirect that stored it; not when it failed, was refused or is a page
 * only read for its links.
 */
function canonicalTaken(target: FrontierRowState): boolean {
  if (target.outcome === 'redirect_target') return true;
  if (!target.admitted) return false;
  return target.state !== 'done' || STORED_OUTCOMES.has(target.outcome ?? '');
}
