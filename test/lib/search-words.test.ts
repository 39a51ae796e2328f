import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { itemSearchWords, MAX_WORD_CHARS, MAX_WORDS_BYTES, splitWords } from '../../src/lib/search-words.ts';

describe('search words', () => {
  test('runs of letters, marks and digits, lower-cased across Unicode', () => {
    assert.deepEqual(splitWords('snake_case C:\\dir "quoted" O\'Brien'), [
      'snake',
      'case',
      'c',
      'dir',
      'quoted',
      'o',
      'brien',
    ]);
    assert.deepEqual(splitWords('Release 0.115.0: 100% done'), ['release', '0', '115', '0', '100', 'done']);
    assert.deepEqual(splitWords('Un ÉCLAIR au café, Größe M'), ['un', 'éclair', 'au', 'café', 'größe', 'm']);
    // A decomposed accent (e + U+0301) stays inside its word.
    assert.deepEqual(splitWords('Cafe\u0301 noir'), ['cafe\u0301', 'noir']);
    assert.deepEqual(splitWords("machine & !learning | ':* <->"), ['machine', 'learning']);
    assert.deepEqual(splitWords('%_\\\'"'), []);
  });

  test('a word longer than a tsvector keeps is cut, on both sides alike', () => {
    const long = 'x'.repeat(MAX_WORD_CHARS + 50);
    assert.deepEqual(splitWords(`a ${long}`), ['a', 'x'.repeat(MAX_WORD_CHARS)]);
    assert.equal(itemSearchWords('', long), 'x'.repeat(MAX_WORD_CHARS));
  });

  test("an item's words: distinct, the title's first, in order of first appearance", () => {
    assert.equal(
      itemSearchWords('Shipping FAQ', 'We ship; we SHIP worldwide. Shipping!'),
      'shipping faq we ship worldwide',
    );
    assert.equal(itemSearchWords('', ''), '');
  });

  test('distinct words are kept until a tsvector is full, counted in UTF-8 bytes', () => {
    // 9-byte words (7 characters + 4 bytes of entry each = 11): the budget holds MAX_WORDS_BYTES / 11 of them.
    const ascii = Array.from({ length: 200_000 }, (_, i) => `w${i.toString().padStart(6, '0')}`);
    const kept = itemSearchWords('', ascii.join(' ')).split(' ');
    assert.equal(kept.length, Math.floor(MAX_WORDS_BYTES / 11));
    assert.deepEqual(kept.slice(0, 2), ['w000000', 'w000001']);
    // The same count of characters in two-byte letters: fewer words fit.
    const accented = ascii.map((w) => w.replace('w', 'é'));
    const keptAccented = itemSearchWords('', accented.join(' ')).split(' ');
    assert.equal(keptAccented.length, Math.floor(MAX_WORDS_BYTES / 12));
  });
});

test('link targets, image URLs and tags are not words of an item; anchor and alt text are', () => {
  const md =
    'Use [the guide](https://docs.example.com/tutorial/body.html#request-body "Body") and ' +
    '![diagram of flow](https://cdn.example.net/img/flow.png) <span class="note">noted</span> <https://kept.example.org>.';
  const words = itemSearchWords('Title', md).split(' ');
  for (const w of ['use', 'the', 'guide', 'diagram', 'of', 'flow', 'noted', 'kept'])
    assert.ok(words.includes(w), w);
  for (const w of ['docs', 'tutorial', 'html', 'request', 'body', 'cdn', 'png', 'span', 'note'])
    assert.ok(!words.includes(w), w);
});
