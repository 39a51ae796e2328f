/**
 * Near-duplicate fingerprints of page text: MinHash over word shingles, cut into LSH bands that the
 * database finds candidates by (an array overlap on a GIN index); the signatures then decide.
 *
 * Written here rather than taken from npm: the two packages there (`simhash-js`, a 32-bit SimHash last
 * published in 2017, and `minhash` 0.0.9, whose `(a * h + b) % p` overflows 2^53 and which hashes every
 * string once per permutation) are unmaintained and neither fits; the algorithm is the 50 lines below.
 *
 * - Words: runs of letters and digits, lower-cased; link targets left out (`[text](url)` counts `text`).
 * - Shingles: every pair of consecutive words ({@link SHINGLE_WORDS}), each hashed to 32 bits.
 * - Signature: {@link SIGNATURE_SIZE} minimums, one per hash function (seeded multiply-xorshift); the share of
 *   positions where two signatures agree estimates the Jaccard similarity of their shingle sets
 *   (standard error 0.019 at 0.9, 0.014 at 0.95).
 * - Bands: {@link BANDS} bands of {@link ROWS_PER_BAND} minimums, each hashed with its band number and a
 *   salt (organization and host: only pages of one organization's host are ever compared). Two pages at
 *   similarity 0.9 share a band with probability 1 - (1 - 0.9^8)^32 > 0.9999, two at 0.5 with 0.12.
 *
 * Threshold ({@link NEAR_DUPLICATE_SIMILARITY}, 0.9). A changed word changes 2 of a page's shingles:
 * one word changed in a 150-word page leaves 0.97, a variant page of the test catalogue (a 200-word
 * product page with the colour and size named: 7 words) 0.95, and both collapse. A 40-word paragraph
 * added to a 200-word page leaves 200 of 240 shingles shared (0.83), a 40-word paragraph replaced 0.67,
 * and both are kept: a page with a paragraph of its own is content.
 *
 * Short texts ({@link MIN_SHINGLES}) get no signature and are never compared: below that size one word
 * changed already takes two texts under the threshold, so a match could only be the same words in the
 * same order (which the text hash finds) or a few words that say nothing of the page, such as a short
 * page's leftover boilerplate; an index page and a search page of one site are distinct pages.
 */

/** Words per shingle. */
const SHINGLE_WORDS = 2;
/** Hash functions (minimums) per signature. */
const SIGNATURE_SIZE = 256;
const ROWS_PER_BAND = 8;
const BANDS = SIGNATURE_SIZE / ROWS_PER_BAND;
/** Estimated Jaccard similarity at or above which a page is a near-duplicate of another. */
export const NEAR_DUPLICATE_SIMILARITY = 0.9;
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

/**
 * The MinHash signature of a page's main text (markdown): {@link SIGNATURE_SIZE} signed 32-bit minimums
 * (a Postgres `integer[]`); null when the text has fewer than {@link MIN_SHINGLES} distinct shingles (none
 * when it has no words): a short text is compared by its exact hash only.
 */
export function textSignature(markdown: string): number[] | null {
  const words = markdown.replace(LINK_TARGET, ']').toLowerCase().match(WORD);
  if (!words) return null;
  const width = Math.min(SHINGLE_WORDS, words.length);
  // Each distinct shingle once: pages repeat phrases (menus in the text, tables), and the loop below
  // is the cost of fingerprinting.
  const shingles = new Set<number>();
  let prev = 0;
  for (let i = 0; i < words.length; i++) {
    const h = wordHash(words[i]!);
    if (i + 1 >= width) shingles.add(width === 1 ? h : Math.imul(prev, 0x9e3779b1) ^ h);
    prev = h;
  }
  if (shingles.size < MIN_SHINGLES) return null;
  const mins = new Int32Array(SIGNATURE_SIZE).fill(0x7fffffff);
  for (const shingle of shingles) {
    const h = fmix(shingle);
    for (let k = 0; k < SIGNATURE_SIZE; k++) {
      // One multiply-xorshift per hash function: the shingle is mixed once above.
      let v = Math.imul(h ^ SEEDS[k]!, 0x85ebca6b);
      v ^= v >>> 15;
      if (v < mins[k]!) mins[k] = v;
    }
  }
  return Array.from(mins);
}

/**
 * The signature's LSH bands under `salt`: {@link BANDS} signed 32-bit hashes, distinct per band number,
 * so two pages share a band value only when that whole band of their signatures agrees (or, rarely, by
 * collision: the signatures decide).
 */
export function signatureBands(signature: readonly number[], salt: string): number[] {
  let s = wordHash(salt);
  s = fmix(s);
  const bands: number[] = [];
  for (let b = 0; b < BANDS; b++) {
    let h = fmix(s ^ Math.imul(b + 1, 0x9e3779b1));
    for (let r = 0; r < ROWS_PER_BAND; r++)
      h = fmix(Math.imul(h, 31) ^ (signature[b * ROWS_PER_BAND + r] ?? 0));
    bands.push(h);
  }
  return bands;
}

/** Estimated Jaccard similarity of the shingle sets behind two signatures (0..1). */
export function signatureSimilarity(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let same = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) same++;
  return same / a.length;
}
