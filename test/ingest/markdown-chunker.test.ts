import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalEmbedder } from '../../src/embedding/local.ts';
import { type Chunk, chunkMarkdown, rankingText } from '../../src/ingest/markdown-chunker.ts';
import { createTestEmbedder } from '../support/model.ts';

/** A stand-in tokenizer that makes sizes easy to reason about: one token per word, plus [CLS] and [SEP]. */
const words = (s: string) => 2 + (s.match(/\S+/g)?.length ?? 0);

function chunk(markdown: string, maxTokens = 64, overlapTokens = 0, title = 'Doc'): Chunk[] {
  return chunkMarkdown({ title, markdown }, { maxTokens, overlapTokens, countTokens: words });
}

function sentence(i: number): string {
  return `Sentence number ${i} talks about topic ${i} at some length.`;
}

describe('chunkMarkdown', () => {
  test('empty and whitespace-only documents give no chunks', () => {
    assert.deepEqual(chunk(''), []);
    assert.deepEqual(chunk('  \n\n\t \n'), []);
  });

  test('a short document is one chunk; embedText carries the title', () => {
    const [only, ...rest] = chunk('Hello there. This is short.', 64, 0, 'Greeting');
    assert.equal(rest.length, 0);
    assert.deepEqual(only, {
      index: 0,
      text: 'Hello there. This is short.',
      embedText: 'Greeting\n\nHello there. This is short.',
      headingPath: [],
    });
  });

  test('splits at headings and records the heading path (ATX and setext, inline markup removed)', () => {
    const md = [
      'Preamble text.',
      '# Guide',
      'Guide intro.',
      '## Install *quickly*',
      'Install text.',
      '### On [Linux](http://x)',
      'Linux text.',
      '## Usage',
      'Usage text.',
      'Other Part\n==========',
      'Other text.',
    ].join('\n\n');
    const chunks = chunk(md, 64, 0, 'Manual');
    assert.deepEqual(
      chunks.map((c) => [c.text, c.headingPath]),
      [
        ['Preamble text.', []],
        ['Guide intro.', ['Guide']],
        ['Install text.', ['Guide', 'Install quickly']],
        ['Linux text.', ['Guide', 'Install quickly', 'On Linux']],
        ['Usage text.', ['Guide', 'Usage']],
        ['Other text.', ['Other Part']],
      ],
    );
    assert.equal(chunks[3]!.embedText, 'Manual\nGuide > Install quickly > On Linux\n\nLinux text.');
    assert.deepEqual(
      chunks.map((c) => c.index),
      [0, 1, 2, 3, 4, 5],
    );
  });

  test('a first heading equal to the title is not repeated in embedText', () => {
    const [c] = chunk('# Doc\n\nBody.', 64, 0, 'Doc');
    assert.deepEqual(c!.headingPath, ['Doc']);
    assert.equal(c!.embedText, 'Doc\n\nBody.');
  });

  test('a code block that fits is never cut, even when it does not fit beside the text before it', () => {
    const code = ['```python', ...Array.from({ length: 20 }, (_, i) => `x${i} = ${i}`), '```'].join('\n');
    const para = Array.from({ length: 4 }, (_, i) => sentence(i)).join(' ');
    const chunks = chunk(`${para}\n\n${code}\n\nAfter the code.`, 80);
    const holder = chunks.filter((c) => c.text.includes('x0 = 0'));
    assert.equal(holder.length, 1);
    assert.ok(holder[0]!.text.includes(code), 'the whole block is in one chunk');
    for (const c of chunks) assert.ok(words(c.embedText) <= 80);
  });

  test('an oversize code block is split at lines into complete fenced blocks', () => {
    const lines = Array.from({ length: 120 }, (_, i) => `call(${i}) # step ${i}`);
    const chunks = chunk(['```js', ...lines, '```'].join('\n'), 64);
    assert.ok(chunks.length > 2);
    const seen: string[] = [];
    for (const c of chunks) {
      assert.ok(words(c.embedText) <= 64);
      assert.ok(c.text.startsWith('```js\n') && c.text.endsWith('\n```'), c.text);
      seen.push(...c.text.split('\n').slice(1, -1));
    }
    assert.deepEqual(seen, lines, 'every line once, in order');
  });

  test('tables stay whole when they fit; oversize ones are split at rows under a repeated header', () => {
    const header = '| id | name | notes |\n|---|---|---|';
    const small = `${header}\n| 1 | a | b |\n| 2 | c | d |`;
    const [whole] = chunk(`Intro.\n\n${small}`, 64);
    assert.ok(whole!.text.includes(small));

    const rows = Array.from({ length: 60 }, (_, i) => `| ${i} | row ${i} | more text here |`);
    const chunks = chunk(`${header}\n${rows.join('\n')}`, 64);
    assert.ok(chunks.length > 3);
    const seen: string[] = [];
    for (const c of chunks) {
      assert.ok(c.text.startsWith(`${header}\n`), c.text);
      assert.ok(words(c.embedText) <= 64);
      seen.push(...c.text.split('\n').slice(2));
    }
    assert.deepEqual(seen, rows);
  });

  test('lists stay whole when they fit; oversize ones are split between items', () => {
    const short = '- apples\n- pears\n- plums';
    assert.equal(chunk(`Fruit:\n\n${short}`, 64)[0]!.text, `Fruit:\n\n${short}`);

    const items = Array.from({ length: 30 }, (_, i) => `- item ${i} has a few words in it`);
    const chunks = chunk(items.join('\n'), 48);
    assert.ok(chunks.length > 2);
    const seen: string[] = [];
    for (const c of chunks) {
      for (const line of c.text.split('\n')) assert.ok(items.includes(line), `whole items only: ${line}`);
      seen.push(...c.text.split('\n'));
    }
    assert.deepEqual(seen, items);
  });

  test('a long paragraph is split at sentence boundaries', () => {
    const sentences = Array.from({ length: 40 }, (_, i) => sentence(i));
    const chunks = chunk(sentences.join(' '), 60);
    assert.ok(chunks.length >= 5);
    const seen: string[] = [];
    for (const c of chunks) {
      assert.ok(words(c.embedText) <= 60);
      const parts = c.text.split(/(?<=\.) /);
      for (const p of parts) assert.ok(sentences.includes(p), `whole sentences only: ${p}`);
      seen.push(...parts);
    }
    assert.deepEqual(seen, sentences);
  });

  test('a sentence longer than a chunk is split at words; a word longer than a chunk at characters', () => {
    const long = Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ');
    const chunks = chunk(long, 40);
    assert.deepEqual(
      chunks.flatMap((c) => c.text.split(' ')),
      long.split(' '),
    );
    for (const c of chunks) assert.ok(words(c.embedText) <= 40);

    // A real tokenizer counts a long unbroken string as many tokens.
    const charTokens = (s: string) => 2 + Math.ceil(s.replace(/\s/g, '').length / 4);
    const blob = 'x'.repeat(2000);
    const pieces = chunkMarkdown(
      { title: 'T', markdown: blob },
      { maxTokens: 64, overlapTokens: 0, countTokens: charTokens },
    );
    assert.ok(pieces.length > 5);
    assert.equal(pieces.map((c) => c.text).join(''), blob);
    for (const c of pieces) assert.ok(charTokens(c.embedText) <= 64);
  });

  test('sentences written without spaces (CJK) are not given any', () => {
    const perChar = (t: string) => 2 + t.replace(/\s/g, '').length;
    const text = '検索システムは文書を小さな断片に分割します。'.repeat(30);
    const chunks = chunkMarkdown(
      { title: '', markdown: text },
      { maxTokens: 120, overlapTokens: 0, countTokens: perChar },
    );
    assert.ok(chunks.length > 3);
    assert.equal(chunks.map((c) => c.text).join(''), text);
    assert.equal(chunks[0]!.embedText, chunks[0]!.text, 'no title, no prefix');
  });

  test('consecutive chunks of a section overlap by whole sentences, within the budget', () => {
    const sentences = Array.from({ length: 30 }, (_, i) => sentence(i));
    const chunks = chunk(
      `## A\n\n${sentences.join(' ')}\n\n## B\n\n${sentences.slice(0, 12).join(' ')}`,
      60,
      12,
    );
    const inA = chunks.filter((c) => c.headingPath[0] === 'A');
    assert.ok(inA.length >= 4);
    for (let i = 1; i < inA.length; i++) {
      const prev = inA[i - 1]!.text.split(/(?<=\.) /);
      const cur = inA[i]!.text.split(/(?<=\.) /);
      const last = prev.at(-1)!;
      assert.equal(cur[0], last, `chunk ${i} starts with the last sentence of chunk ${i - 1}`);
      assert.ok(words(last) <= 12);
    }
    const firstB = chunks.find((c) => c.headingPath[0] === 'B')!;
    assert.ok(firstB.text.startsWith(sentence(0)), 'no overlap across sections');
    for (const c of chunks) assert.ok(words(c.embedText) <= 60);
  });

  test('without overlap every sentence appears exactly once', () => {
    const sentences = Array.from({ length: 30 }, (_, i) => sentence(i));
    const text = chunk(sentences.join(' '), 60, 0)
      .map((c) => c.text)
      .join(' ');
    assert.equal(text, sentences.join(' '));
  });

  test('is deterministic', () => {
    const md = `# T\n\n${Array.from({ length: 50 }, (_, i) => sentence(i)).join(' ')}\n\n- a\n- b\n\n\`\`\`\ncode\n\`\`\``;
    assert.deepEqual(chunk(md, 50, 10), chunk(md, 50, 10));
  });

  test('a window too small for any content is refused', () => {
    assert.throws(() => chunk('text', 10), RangeError);
  });

  test('a huge title is cut so content still fits', () => {
    const title = Array.from({ length: 200 }, (_, i) => `t${i}`).join(' ');
    const chunks = chunk('Body text here.', 64, 0, title);
    assert.equal(chunks.length, 1);
    assert.ok(words(chunks[0]!.embedText) <= 64);
    assert.ok(chunks[0]!.embedText.endsWith('Body text here.'));
  });
});

describe('chunkMarkdown with the real model tokenizer', () => {
  let embedder: LocalEmbedder;
  before(async () => {
    embedder = await createTestEmbedder();
  });
  after(async () => {
    await embedder.close();
  });

  test('every embedText fits the model window, with overlap, on a mixed document', () => {
    const md = [
      '# Handbook',
      Array.from(
        { length: 60 },
        (_, i) => `Paragraph sentence ${i}, with punctuation; and numbers like 3.14 or v2.0.1!`,
      ).join(' '),
      '## Code',
      '```ts',
      ...Array.from(
        { length: 80 },
        (_, i) => `const value${i} = computeSomething(${i}, "string literal ${i}");`,
      ),
      '```',
      '## Table',
      '| key | description |\n|---|---|',
      ...Array.from(
        { length: 50 },
        (_, i) => `| k${i} | the description of key number ${i} is rather long |`,
      ),
      '## Unbroken',
      'https://example.com/' + 'a1b2c3d4'.repeat(300),
      '## Non-English',
      '検索システムは文書を小さな断片に分割します。'.repeat(40),
    ].join('\n\n');
    const opts = { maxTokens: 256, overlapTokens: 32, countTokens: (s: string) => embedder.countTokens(s) };
    const chunks = chunkMarkdown({ title: 'Handbook', markdown: md }, opts);
    assert.ok(chunks.length > 10);
    for (const c of chunks) {
      const n = embedder.countTokens(c.embedText);
      assert.ok(n <= 256, `chunk ${c.index} has ${n} tokens`);
      assert.ok(c.text.trim().length > 0);
    }
    assert.deepEqual(chunkMarkdown({ title: 'Handbook', markdown: md }, opts), chunks);
  });
});

describe('chunkMarkdown: passages that stand on their own', () => {
  const opts = (minTokens: number, maxTokens = 64) => ({
    maxTokens,
    overlapTokens: 0,
    minTokens,
    countTokens: words,
  });
  const contentTokens = (c: Chunk) => words(c.embedText.split('\n\n').slice(1).join('\n\n')) - 2;

  test('a section shorter than minTokens joins its neighbour under the same parent, its heading kept in the text', () => {
    const md = [
      '# Guide',
      '## Install',
      Array.from({ length: 3 }, (_, i) => sentence(i)).join(' '),
      '## Check it',
      'The docs will show it like this:',
      '## Usage',
      Array.from({ length: 3 }, (_, i) => sentence(10 + i)).join(' '),
    ].join('\n\n');
    const before = chunkMarkdown({ title: 'Manual', markdown: md }, opts(0));
    assert.ok(
      before.some((c) => c.text === 'The docs will show it like this:'),
      'alone without minTokens',
    );

    const chunks = chunkMarkdown({ title: 'Manual', markdown: md }, opts(16));
    for (const c of chunks) assert.ok(contentTokens(c) >= 16, `${contentTokens(c)} tokens: ${c.text}`);
    const holder = chunks.find((c) => c.text.includes('The docs will show it like this:'))!;
    assert.ok(holder.text.includes('## Check it'), holder.text);
    assert.ok(holder.embedText.includes('Check it\n\nThe docs will show it like this:'), holder.embedText);
    assert.deepEqual(holder.headingPath, ['Guide'], 'the path the joined sections share');
    assert.equal(holder.embedText.split('\n')[1], 'Guide');
  });

  test('a short parent introduction joins its first child rather than the previous sibling', () => {
    const md = [
      '## A',
      Array.from({ length: 4 }, (_, i) => sentence(i)).join(' '),
      '## B',
      'Intro to B.',
      '### B.1',
      Array.from({ length: 3 }, (_, i) => sentence(20 + i)).join(' '),
    ].join('\n\n');
    const chunks = chunkMarkdown({ title: 'Doc', markdown: md }, opts(16));
    const intro = chunks.find((c) => c.text.includes('Intro to B.'))!;
    assert.deepEqual(intro.headingPath, ['B']);
    assert.ok(intro.text.includes('### B.1') && intro.text.includes(sentence(20)), intro.text);
    assert.ok(!intro.text.includes(sentence(0)));
  });

  test('no chunk is left below minTokens at the end of a long section; a short document stays one chunk', () => {
    const text = Array.from({ length: 11 }, (_, i) => sentence(i)).join(' ');
    const chunks = chunkMarkdown({ title: 'Doc', markdown: text }, opts(24));
    assert.ok(chunks.length >= 2);
    for (const c of chunks) assert.ok(contentTokens(c) >= 24, `${contentTokens(c)}: ${c.text}`);
    assert.ok(words(chunks.at(-1)!.embedText) <= 64);
    assert.equal(chunks.map((c) => c.text).join(' '), text);

    const [only, ...rest] = chunkMarkdown(
      { title: 'Doc', markdown: '# Doc\n\nOne line.\n\n## More\n\nTwo.' },
      opts(24),
    );
    assert.equal(rest.length, 0);
    assert.equal(only!.text, 'One line.\n\n## More\n\nTwo.');
  });

  test('a code block that starts a new chunk takes the sentence introducing it along', () => {
    const code = ['```python', ...Array.from({ length: 12 }, (_, i) => `x${i} = ${i}`), '```'].join('\n');
    const md = `${Array.from({ length: 3 }, (_, i) => sentence(i)).join(' ')}\n\nWrite this:\n\n${code}`;
    const chunks = chunkMarkdown({ title: 'Doc', markdown: md }, { ...opts(8), overlapTokens: 0 });
    const holder = chunks.find((c) => c.text.includes(code))!;
    assert.ok(holder.text.startsWith(`Write this:\n\n${code}`), holder.text);
    assert.ok(!chunks[0]!.text.includes('Write this:'));
  });

  test('links, images and tags are left out of embedText (and so of the keyword index); the text keeps them', () => {
    const md =
      'See [the `Depends()` guide](https://docs.example.com/tutorial/dependencies/#depends "Depends") and ' +
      '![a diagram](https://cdn.example.com/img/diagram-v2.png) with <span class="x">**bold**</span> words.\n\n' +
      '```console\n$ <font color="#4E9A06">uv run fastapi</font> dev &amp; more\n```';
    const [c] = chunkMarkdown({ title: 'T', markdown: md }, opts(0, 200));
    assert.equal(c!.text, md);
    assert.equal(
      c!.embedText,
      'T\n\nSee the Depends() guide and a diagram with bold words.\n\n```console\n$ uv run fastapi dev & more\n```',
    );
    for (const noise of ['https', 'example', 'png', 'span', '#depends', 'font'])
      assert.ok(!c!.embedText.includes(noise), noise);
  });

  test('sizes are counted on the ranking text: long link targets do not cut a passage short', () => {
    const link = (i: number) => `[item ${i}](https://example.com/${'segment/'.repeat(20)}${i})`;
    const md = Array.from({ length: 10 }, (_, i) => `Read ${link(i)} now.`).join(' ');
    // A real tokenizer counts a URL as many tokens: here one per four characters.
    const charTokens = (s: string) => 2 + Math.ceil(s.replace(/\s/g, '').length / 4);
    const chunks = chunkMarkdown({ title: 'T', markdown: md }, { ...opts(0, 64), countTokens: charTokens });
    assert.equal(chunks.length, 1, 'forty words of text fit one chunk however long the targets');
    assert.equal(chunks[0]!.text, md);
  });
});

describe('rankingText', () => {
  test('keeps anchor text, alt text and code, drops targets, titles and tags', () => {
    assert.equal(rankingText('[a *b*](http://x/y "t") ![c](d.png) `e[f](g)` <br/> h'), 'a b c e[f](g)  h');
    assert.equal(rankingText('plain words only'), 'plain words only');
    assert.equal(rankingText('<b>x</b> &amp; y', 'code'), 'x & y');
  });
});

describe('chunkMarkdown: what is left below the minimum', () => {
  test('the end of a section after a block that fills a chunk joins the next chunk, heading and all', () => {
    const code = ['```', ...Array.from({ length: 28 }, (_, i) => `v${i} = ${i}`), '```'].join('\n');
    const next = Array.from({ length: 3 }, (_, i) => sentence(i)).join(' ');
    const md = `## One\n\n${code}\n\nA short end.\n\n## Two\n\n${next}`;
    const chunks = chunkMarkdown(
      { title: 'Doc', markdown: md },
      { maxTokens: 90, overlapTokens: 0, minTokens: 16, countTokens: words },
    );
    const end = chunks.find((c) => c.text.includes('A short end.'))!;
    assert.ok(!end.text.includes('v0 = 0'), 'the block fills its own chunk');
    assert.equal(end.text, `A short end.\n\n## Two\n\n${next}`);
    assert.deepEqual(end.headingPath, []);
    for (const c of chunks) assert.ok(words(c.embedText) <= 90);
  });
});
