/**
 * The word-by-word check behind a variant verdict: a page whose own words are attribute values is a
 * variant of the page it varies; a page wholly contained in a longer one, or with a paragraph of its own,
 * is not.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isVariantText, ownRuns } from '../../src/crawler/word-diff.ts';

const w = (s: string) => s.split(' ');
// As long as a store's product description: a variant is judged on pages of 80 word pairs or more.
const DESCRIPTION =
  'Soft cotton shirt with a relaxed fit, stitched seams and a button collar, washed for a lived-in feel. ' +
  'Cut a little longer at the back so it stays tucked in, with a chest pocket deep enough for a notebook ' +
  'and cuffs that roll up and hold. Woven at a family mill from long-staple organic fibre, then garment ' +
  'dyed in small batches, so each piece has a slightly different shade. Machine wash cold, dry flat.';

describe('variant confirmation by words', () => {
  test("the runs of a page's own words follow a shortest alignment", () => {
    assert.deepEqual(ownRuns(w('a b c d'), w('a b c d')), []);
    assert.deepEqual(ownRuns(w('a b x c d'), w('a b c d')), [1]);
    assert.deepEqual(ownRuns(w('a x y b c q d'), w('a b c r d')), [2, 1]);
    assert.deepEqual(ownRuns(w('a b'), w('a b c d e f')), []);
  });

  test('a variant naming its colour, size, SKU and price varies its product page, reviews and all', () => {
    const product = `# Field Shirt\n\nFrom $40.00\n\n${DESCRIPTION}\n\n## Reviews\n\nLoved it, fits true to size and washes well after months. Would buy another.`;
    const variant = `# Field Shirt - Navy / XL\n\n$42.00\n\nSKU: FS-100-NAV-XL. In stock: 7.\n\n${DESCRIPTION}`;
    assert.equal(isVariantText(variant, product), true);
  });

  test('a page contained in a longer one, or with a paragraph of its own, is a page of its own', () => {
    const guide = `# Trail Guide\n\n${DESCRIPTION}`;
    const extended = `${guide}\n\nThe northern loop climbs through pine forest to a ridge with views across the valley, then descends by the creek to the hut where the trail began.`;
    assert.equal(isVariantText(guide, extended), false, 'wholly contained');
    assert.equal(isVariantText(extended, guide), false, 'a paragraph of its own');
  });
});
