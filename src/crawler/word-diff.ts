/**
 * Word-by-word confirmation of a variant (fingerprint.ts `duplicateOf` only estimates one from
 * signatures): the page's words aligned with the stored page's by a shortest edit script (Myers' O(ND)
 * diff), and the runs of the page's words that the alignment leaves unmatched measured.
 *
 * A store's variant differs from the page it varies in attribute values: a colour, a size, a price, and
 * the lines that carry them: against its product page, which has no such lines, a variant's SKU, stock
 * and attribute table are one run of up to 17 words in the generated stores (`SKU: HB-01000-RED-ONE-SIZE.
 * In stock: 3.` then `Colour Red Size ONE SIZE Material`), its `Item no. ... Price 42,00 kr. Colour: red.
 * Size: M.` line 13. A page that is wholly contained in a longer one (the longer one has a paragraph of
 * its own) has no run of its own at all, and a page with a paragraph of its own has a longer run: both are
 * distinct pages. Before the alignment, exact counts: a variant has most of its word pairs in the page it
 * varies and few distinct words of its own (a template's distinct pages have a sentence of their own:
 * 21 words or more in the generated reference manual). Runs of the stored page's own words are not limited: a product page carries reviews its
 * variants lack.
 */

/** Longest run of a variant's own words (an attribute value or a line of them; see above). */
export const VARIANT_MAX_RUN = 20;
/** Least share of a variant's distinct word pairs that the page it varies has (counted exactly). */
export const VARIANT_MIN_CONTAINMENT = 0.7;
/** Most distinct words a variant has that the page it varies lacks (counted exactly). */
export const VARIANT_MAX_OWN_WORDS = 10;
/**
 * Most edits (words of either page the other lacks) the alignment looks for; beyond, the pages are too
 * different to be variants, and the diff's cost (time O((n + m) d), memory O(d²)) stays bounded.
 */
const MAX_EDITS = 1500;

const LINK_TARGET = /\]\([^)\s]*(?:\s+"[^"]*")?\)/g;
const WORD = /[\p{L}\p{N}]+/gu;

/** A text's words as the comparison sees them: lower-cased, link targets left out, digits kept. */
export function comparedWords(markdown: string): string[] {
  return markdown.replace(LINK_TARGET, ']').toLowerCase().match(WORD) ?? [];
}

/**
 * Lengths of the runs of `page`'s words that a shortest alignment with `stored` leaves unmatched, in
 * order; null when the two need more than {@link MAX_EDITS} edits.
 */
export function ownRuns(page: readonly string[], stored: readonly string[]): number[] | null {
  const own = unmatchedWords(page, stored);
  if (!own) return null;
  const runs: number[] = [];
  let run = 0;
  for (const unmatched of own) {
    if (unmatched) run++;
    else if (run > 0) {
      runs.push(run);
      run = 0;
    }
  }
  if (run > 0) runs.push(run);
  return runs;
}

/**
 * Whether the page of text `pageText` is a variant of the stored page of text `storedText` (module
 * comment): at least {@link VARIANT_MIN_CONTAINMENT} of its word pairs are in the stored page, at most
 * {@link VARIANT_MAX_OWN_WORDS} of its distinct words are not, and it has words of its own, in runs of at
 * most {@link VARIANT_MAX_RUN}.
 */
export function isVariantText(pageText: string, storedText: string): boolean {
  // The counts first: they are linear in the texts, the alignment is not.
  const m = variantMeasures(pageText, storedText);
  if (m.containment < VARIANT_MIN_CONTAINMENT || m.ownWords > VARIANT_MAX_OWN_WORDS) return false;
  const runs = ownRuns(comparedWords(pageText), comparedWords(storedText));
  return runs !== null && runs.length > 0 && runs.every((r) => r <= VARIANT_MAX_RUN);
}

/** What a page shares with a stored page, counted exactly on their words (digits as one word, `0`). */
export interface VariantMeasures {
  /** Share of the page's distinct word pairs that the stored page has. */
  containment: number;
  /** The page's distinct words that the stored page lacks. */
  ownWords: number;
}

const HAS_DIGIT = /\p{N}/u;

/** {@link VariantMeasures} of `pageText` against `storedText`. */
export function variantMeasures(pageText: string, storedText: string): VariantMeasures {
  const norm = (t: string) => comparedWords(t).map((w) => (HAS_DIGIT.test(w) ? '0' : w));
  const page = norm(pageText);
  const stored = norm(storedText);
  const pairs = (ws: string[]) => {
    const out = new Set<string>();
    for (let i = 1; i < ws.length; i++) out.add(`${ws[i - 1]} ${ws[i]}`);
    return out;
  };
  const pagePairs = pairs(page);
  const storedPairs = pairs(stored);
  let shared = 0;
  for (const p of pagePairs) if (storedPairs.has(p)) shared++;
  const storedWords = new Set(stored);
  const own = new Set(page.filter((w) => !storedWords.has(w)));
  return { containment: pagePairs.size === 0 ? 0 : shared / pagePairs.size, ownWords: own.size };
}

/** For each word of `a`, whether a shortest edit script from `a` to `b` deletes it; null past the cap. */
function unmatchedWords(a: readonly string[], b: readonly string[]): boolean[] | null {
  const n = a.length;
  const m = b.length;
  const maxD = Math.min(n + m, MAX_EDITS);
  // v[k + offset]: the furthest x reached on diagonal k (y = x - k); trace[d]: v before step d, kept for
  // diagonals -d..d only.
  const offset = maxD + 1;
  const v = new Int32Array(2 * maxD + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= maxD; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
          ? v[offset + k + 1]!
          : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m, d);
    }
  }
  return null;
}

/** Walks the saved steps back from (n, m), marking the words of `a` the script deletes. */
function backtrack(trace: Int32Array[], n: number, m: number, steps: number): boolean[] {
  const deleted = new Array<boolean>(n).fill(false);
  let x = n;
  let y = m;
  for (let d = steps; d > 0; d--) {
    const saved = trace[d]!;
    // saved[i] holds diagonal i - d - 1.
    const at = (k: number) => saved[k + d + 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    // From (prevX, prevY) one edit, then matched words: one word of `b` (down) or `a[prevX]` (right).
    if (!down) deleted[prevX] = true;
    x = prevX;
    y = prevY;
  }
  return deleted;
}
