/**
 * Which stored pages a newly fetched page takes over. A crawl meets pages in the order it finds them, so
 * a variant is often stored before the page it varies: its product is linked from the same listing, or
 * listed after it in the sitemap. Refusing the product then (or storing both) spends the page budget on
 * a variant and leaves a product unreached. Instead the later page takes the variant's place: the
 * variant's item goes, its URL is counted as a near-duplicate of the page, and its slot in the budget is
 * free again.
 *
 * A stored page is taken over when, judged the other way round, it would have been refused had the new
 * page come first (fingerprint.ts `duplicateOf` finds it a variant of the new page, and its words, aligned
 * with the new page's, differ in short runs only: word-diff.ts), and either the new page would have been
 * stored (it holds more: reviews, a description the variant cut) or both are variants of each other and
 * the new page's URL is the simpler one (fewer path segments and query parameters: the product, not the
 * `?sku=` or `/<sku>.html` under it). Only pages this crawl stored are taken over: an earlier crawl's page
 * is judged again when this crawl fetches it.
 */
import type { Queryable } from '../db/database.ts';
import { getFrontierRow } from '../db/repositories/crawl-frontier.ts';
import { crawledPageText, type FingerprintCandidate } from '../db/repositories/crawl-pages.ts';
import { duplicateOf } from './fingerprint.ts';
import { STORED_OUTCOMES } from './frontier.ts';
import { isVariantText } from './word-diff.ts';

/** Stored pages checked word by word per fetched page: each is one read of an item's content. */
const MAX_TAKEOVER_CHECKS = 3;

/** A stored page of this crawl that a new page takes over. */
export interface TakenOver {
  sourceKey: string;
  /** Its frontier key in this crawl. */
  key: string;
  url: string;
  /** Its row's outcome (what the crawl's counters counted it as). */
  outcome: string;
  /** Its row's URL pattern. */
  pattern: string;
}

/** How many path segments and query parameters a URL has: the fewer, the nearer the page it varies. */
export function urlDepth(url: string): number {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
  const segments = u.pathname.split('/').filter((s) => s !== '').length;
  return segments + [...u.searchParams.keys()].length;
}

/** Whether URL `a` is strictly simpler than URL `b` (see {@link urlDepth}). */
export function isSimplerUrl(a: string, b: string): boolean {
  return urlDepth(a) < urlDepth(b);
}

/** The frontier key of a crawled page's source key (hash-skip.ts `crawlSourceKey`). */
function keyOfSourceKey(sourceKey: string): string | null {
  return sourceKey.startsWith('crawl:') ? sourceKey.slice('crawl:'.length) : null;
}

/**
 * The candidates (stored pages sharing a band with the new page) that the new page takes over (module
 * comment). `page.refusedAs` is the candidate the new page would be refused as a variant of, if any: it
 * is taken over only when the page's URL is simpler, and then only it.
 */
export async function pagesToTakeOver(
  tx: Queryable,
  ctx: { organizationId: string; crawlJobId: string },
  page: { url: string; signature: readonly number[]; text: string; refusedAs: string | null },
  candidates: readonly FingerprintCandidate[],
): Promise<TakenOver[]> {
  const judged = candidates
    .filter((c) => page.refusedAs === null || c.sourceKey === page.refusedAs)
    .filter((c) => page.refusedAs === null || isSimplerUrl(page.url, c.url))
    .map((c) => ({ c, verdict: duplicateOf(c.signature, page.signature) }))
    .filter((x) => x.verdict?.kind === 'variant')
    .sort((a, b) => b.verdict!.containment - a.verdict!.containment);
  const out: TakenOver[] = [];
  let checks = 0;
  for (const { c } of judged) {
    if (checks >= MAX_TAKEOVER_CHECKS) break;
    const key = keyOfSourceKey(c.sourceKey);
    if (key === null) continue;
    const row = await getFrontierRow(tx, ctx.crawlJobId, key);
    if (!row?.admitted || row.state !== 'done' || !STORED_OUTCOMES.has(row.outcome ?? '')) continue;
    checks++;
    const stored = await crawledPageText(tx, ctx.organizationId, c.sourceKey);
    if (stored === null || !isVariantText(stored, page.text)) continue;
    out.push({ sourceKey: c.sourceKey, key, url: row.url, outcome: row.outcome!, pattern: row.pattern });
  }
  return out;
}
