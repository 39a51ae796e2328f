/**
 * Near-duplicate fingerprints of page text: MinHash over word shingles, cut into LSH bands that the
 * database finds candidates by (an array overlap on a GIN index); the signatures then decide.
 *
 * Written here rather than taken from npm: the two packages there (`simhash-js`, a 32-bit SimHash last
 * published in 2017, and `minhash` 0.0.9, whose `(a * h + b) % p` overflows 2^53 and which hashes every
 * string once per permutation) are unmaintained and neither fits; the algorithm is the lines below.
 *
 * - Words: runs of letters and digits, lower-cased; link targets left out (`[text](url)` counts `text`);
 *   a word with a digit in it is one word, `0`: prices, SKUs, stock counts and ids are what a store's
 *   variant pages differ in, and no two pages are distinct by a number alone.
 * - Shingles: every pair of consecutive words ({@link SHINGLE_WORDS}), each hashed to 32 bits.
 * - Signature: {@link SHINGLE_MINS} minimums over the shingles, {@link WORD_MINS} over the distinct words,
 *   then the number of distinct shingles and of distinct words. The share of positions where two
 *   signatures agree estimates the Jaccard similarity of the sets; with the sizes, how much of one set the
 *   other holds.
 * - Bands: {@link BANDS} bands of {@link ROWS_PER_BAND} shingle minimums, then {@link WORD_BANDS} of
 *   {@link ROWS_PER_WORD_BAND} word minimums, each hashed with its band number and a salt (organization and
 *   host: only pages of one organization's host are ever compared). Two pages at shingle similarity 0.9
 *   share a shingle band with probability > 0.9999, at 0.5 with 0.98, at 0.3 with 0.4; a variant whose
 *   product page is three times its length (reviews) is at about 0.3 by shingles but 0.5 by words, where
 *   the word bands find it with probability 0.94 (at 0.2 by words, 0.16).
 *
 * A page is a near-duplicate of a stored one ({@link duplicateOf}) when
 * - their shingle sets are {@link NEAR_DUPLICATE_SIMILARITY} (0.9) alike: one word changed in a 150-word
 *   page leaves 0.97; a 40-word paragraph added to a 200-word page leaves 0.83 and is kept; or
 * - it is a variant: the page has at least {@link VARIANT_MIN_SHINGLES} shingles, an estimated
 *   {@link VARIANT_CONTAINMENT} of them or more are in the stored page, an estimated
 *   {@link VARIANT_OWN_WORDS} of its words or fewer are not, and the stored page is at most
 *   {@link VARIANT_MAX_RATIO} times its size; then confirmed word by word against the stored page's text
 *   (word-diff.ts, on exact counts: at least 0.7 of its word pairs in the stored page, at most 10 words
 *   of its own, in short runs; not a page simply contained in a longer one, nor one with a paragraph of
 *   its own). The estimates are loose because they only choose what to compare: a variant three times
 *   shorter than its product page has its share estimated within about 0.08, and the exact gates decide.
 *   A store's variant pages differ in a title, a SKU, a colour, a size and a price: scattered single
 *   words, each breaking two shingles, so the shingle similarity of two variants falls to 0.8 and of a
 *   variant and its product page (which carries reviews the variant lacks) to 0.3, while the variant's
 *   words are nearly all its product's. Distinct documentation pages that share a template differ by
 *   sentences of their own: in the generated reference manual the pairs with 0.7 of their word pairs in
 *   another page have 21 words or more of their own, and on the fastapi-docs mirror no pair passes the
 *   gates (bench/fingerprint.ts measures this on every generated shape). Below 80 shingles a page is
 *   compared by similarity alone: two reference stubs
 *   that differ only in the class they name are distinct pages.
 *
 * Short texts ({@link MIN_SHINGLES}) get no signature and are never compared: below that size one word
 * changed already takes two texts under the threshold, so a match could only be the same words in the
 * same order (which the text hash finds) or a few words that say nothing of the page, such as a short
 * page's leftover boilerplate; an index page and a search page of one site are distinct pages.
 */

/** Words per shingle. */
const SHINGLE_WORDS = 2;
/** Minimums over the shingles (the part the bands and the similarity are taken from). */
const SHINGLE_MINS = 256;
/** Minimums over the distinct words (for the words a page has of its own). */
const WORD_MINS = 64;
/** Signature length: both parts, then the two set sizes. */
const SIGNATURE_SIZE = SHINGLE_MINS + WORD_MINS + 2;
const ROWS_PER_BAND = 4;
const BANDS = SHINGLE_MINS / ROWS_PER_BAND;
/** How many of {@link signatureBands}' bands come first from shingles; the rest are of words. */
export const SHINGLE_BAND_COUNT = BANDS;
/** Rows per band over the word minimums, and those bands (after the shingle bands). */
const ROWS_PER_WORD_BAND = 3;
const WORD_BANDS = Math.floor(WORD_MINS / ROWS_PER_WORD_BAND);
/** Estimated Jaccard similarity at or above which a page is a near-duplicate of another. */
export const NEAR_DUPLICATE_SIMILARITY = 0.9;
/** Fewest shingles a page needs to be judged a variant (below, similarity alone decides). */
export const VARIANT_MIN_SHINGLES = 80;
/**
 * Least estimated share of a variant's shingles found in the page it varies. Loose on purpose: the
 * estimate only picks pages to compare word by word (word-diff.ts decides on exact counts); a variant
 * three times shorter than its product page is estimated within about 0.08 of its true share.
 */
export const VARIANT_CONTAINMENT = 0.5;
/** Most estimated words a variant has that the page it varies lacks (loose, as above). */
export const VARIANT_OWN_WORDS = 20;
/** The page a variant varies is at most this many times its size (beyond, estimates are noise). */
export const VARIANT_MAX_RATIO = 4;
/**
 * Fewest distinct shingles a text needs to be fingerprinted: where one changed word (which replaces
 * {@link SHINGLE_WORDS} shingles) still leaves the similarity at the threshold, n - k >= t (n + k).
 * 38 at two-word shingles and 0.9.
 */
const MIN_SHINGLES = Math.round(
  (SHINGLE_WORDS * (1 + NEAR_DUPLICATE_SIMILARITY)) / (1 - NEAR_DUPLICATE_SIMILARITY),
);

// Fixed seeds (from a fixed LCG), so fingerprints are comparable across processes and releases.
const SEEDS = (() => {
  const out = new Int32Array(SIGNATURE_SIZE);
  let x = 0x9e3779b9 | 0;
  for (let i = 0; i < SIGNATURE_SIZE; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) | 0;
    out[i] = fmix(x);
  }
  return out;
})();

/** murmur3's 32-bit finalizer: every input bit affects every output bit. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** FNV-1a over a word's UTF-16 code units. */
function wordHash(word: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

const LINK_TARGET = /\]\([^)\s]*(?:\s+"[^"]*")?\)/g;
const WORD = /[\p{L}\p{N}]+/gu;
const HAS_DIGIT = /\p{N}/u;

/**
 * The MinHash signature of a page's main text (markdown): {@link SIGNATURE_SIZE} signed 32-bit minimums
 * (a Postgres `integer[]`); null when the text has fewer than {@link MIN_SHINGLES} distinct shingles (none
 * when it has no words): a short text is compared by its exact hash only.
 */
export function textSignature(markdown: string): number[] | null {
  const words = markdown.replace(LINK_TARGET, ']').toLowerCase().match(WORD);
  if (!words) return null;
  for (let i = 0; i < words.length; i++) if (HAS_DIGIT.test(words[i]!)) words[i] = '0';
  const width = Math.min(SHINGLE_WORDS, words.length);
  // Each distinct shingle once: pages repeat phrases (menus in the text, tables), and the loop below
  // is the cost of fingerprinting.
  const shingles = new Set<number>();
  const distinctWords = new Set<number>();
  let prev = 0;
  for (let i = 0; i < words.length; i++) {
    const h = wordHash(words[i]!);
    distinctWords.add(h);
    if (i + 1 >= width) shingles.add(width === 1 ? h : Math.imul(prev, 0x9e3779b1) ^ h);
    prev = h;
  }
  if (shingles.size < MIN_SHINGLES) return null;
  const mins = new Int32Array(SIGNATURE_SIZE).fill(0x7fffffff);
  minimums(shingles, mins, 0, SHINGLE_MINS);
  minimums(distinctWords, mins, SHINGLE_MINS, SHINGLE_MINS + WORD_MINS);
  mins[SIGNATURE_SIZE - 2] = shingles.size;
  mins[SIGNATURE_SIZE - 1] = distinctWords.size;
  return Array.from(mins);
}

/** The minimums of `hashes` under hash functions `from` to `to`, into `mins`. */
function minimums(hashes: Set<number>, mins: Int32Array, from: number, to: number): void {
  for (const x of hashes) {
    const h = fmix(x);
    for (let k = from; k < to; k++) {
      // One multiply-xorshift per hash function: the value is mixed once above.
      let v = Math.imul(h ^ SEEDS[k]!, 0x85ebca6b);
      v ^= v >>> 15;
      if (v < mins[k]!) mins[k] = v;
    }
  }
}

/**
 * The signature's LSH bands under `salt`: {@link BANDS} plus {@link WORD_BANDS} signed 32-bit hashes, distinct per band number,
 * so two pages share a band value only when that whole band of their signatures agrees (or, rarely, by
 * collision: the signatures decide).
 */
export function signatureBands(signature: readonly number[], salt: string): number[] {
  let s = wordHash(salt);
  s = fmix(s);
  const bands: number[] = [];
  const band = (b: number, from: number, rows: number) => {
    let h = fmix(s ^ Math.imul(b + 1, 0x9e3779b1));
    for (let r = 0; r < rows; r++) h = fmix(Math.imul(h, 31) ^ (signature[from + r] ?? 0));
    return h;
  };
  for (let b = 0; b < BANDS; b++) bands.push(band(b, b * ROWS_PER_BAND, ROWS_PER_BAND));
  // Word bands only where the signature has its word part (not on signatures from before it).
  if (signature.length >= SHINGLE_MINS + WORD_MINS)
    for (let b = 0; b < WORD_BANDS; b++)
      bands.push(band(BANDS + b, SHINGLE_MINS + b * ROWS_PER_WORD_BAND, ROWS_PER_WORD_BAND));
  return bands;
}

/** Estimated Jaccard similarity of the shingle sets behind two signatures (0..1). */
export function signatureSimilarity(a: readonly number[], b: readonly number[]): number {
  return agreement(a, b, 0, SHINGLE_MINS);
}

/** Share of positions `from`..`to` where two signatures agree; 0 when either is shorter. */
function agreement(a: readonly number[], b: readonly number[], from: number, to: number): number {
  if (a.length < to || b.length < to) return 0;
  let same = 0;
  for (let i = from; i < to; i++) if (a[i] === b[i]) same++;
  return same / (to - from);
}

/** How a page repeats a stored one: `similar` (near-copy) or `variant` (see the module comment). */
export interface DuplicateVerdict {
  kind: 'similar' | 'variant';
  /** Estimated Jaccard similarity of the shingle sets. */
  similarity: number;
  /** Estimated share of the page's shingles the stored page holds. */
  containment: number;
}

/**
 * Whether the page of signature `page` is a near-duplicate of the stored page of signature `stored`
 * (module comment); null when it is a page of its own. Signatures written before the word part and the
 * sizes existed are judged by similarity alone.
 */
export function duplicateOf(page: readonly number[], stored: readonly number[]): DuplicateVerdict | null {
  const similarity = signatureSimilarity(page, stored);
  const sized = page.length === SIGNATURE_SIZE && stored.length === SIGNATURE_SIZE;
  const shingles = sized ? page[SIGNATURE_SIZE - 2]! : 0;
  const storedShingles = sized ? stored[SIGNATURE_SIZE - 2]! : 0;
  const containment = sized ? sharedOf(similarity, shingles, storedShingles) / shingles : similarity;
  if (similarity >= NEAR_DUPLICATE_SIMILARITY) return { kind: 'similar', similarity, containment };
  if (!sized || shingles < VARIANT_MIN_SHINGLES || storedShingles > VARIANT_MAX_RATIO * shingles) return null;
  if (containment < VARIANT_CONTAINMENT) return null;
  const words = page[SIGNATURE_SIZE - 1]!;
  const wordSimilarity = agreement(page, stored, SHINGLE_MINS, SHINGLE_MINS + WORD_MINS);
  const ownWords = words - sharedOf(wordSimilarity, words, stored[SIGNATURE_SIZE - 1]!);
  return ownWords <= VARIANT_OWN_WORDS ? { kind: 'variant', similarity, containment } : null;
}

/** Size of the intersection of two sets of sizes `a` and `b` whose Jaccard similarity is `j`. */
function sharedOf(j: number, a: number, b: number): number {
  return (j * (a + b)) / (1 + j);
}
