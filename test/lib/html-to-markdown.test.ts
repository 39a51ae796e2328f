import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { htmlToMarkdown } from '../../src/lib/html-to-markdown.ts';

const BASE = 'https://help.example.com/hc/en-us/articles/1';

describe('htmlToMarkdown', () => {
  it('writes ATX headings and inline emphasis', () => {
    assert.equal(
      htmlToMarkdown(
        '<h1>Title</h1><h2>Sub <code>x</code></h2><h3>Third</h3><p>A <strong>b</strong> <em>c</em>.</p>',
      ),
      '# Title\n\n## Sub `x`\n\n### Third\n\nA **b** _c_.',
    );
  });

  it('nests lists with compact markers, continuing an ordered list from its start', () => {
    assert.equal(
      htmlToMarkdown(
        '<ol><li>One<ul><li>a</li><li>b<ul><li>deep</li></ul></li></ul></li><li>Two</li></ol>' +
          '<ol start="3"><li>three</li></ol>',
      ),
      '1. One\n   - a\n   - b\n     - deep\n2. Two\n\n3. three',
    );
  });

  it('writes GFM tables: cells on one line, pipes escaped, an empty header row when there is none', () => {
    assert.equal(
      htmlToMarkdown(
        '<table><thead><tr><th>Name</th><th>Type</th></tr></thead><tbody>' +
          '<tr><td>a</td><td><p>one</p><p>two</p></td></tr>' +
          '<tr><td>b</td><td><code>str | None</code></td></tr></tbody></table>',
      ),
      '| Name | Type |\n| --- | --- |\n| a | one two |\n| b | `str \\| None` |',
    );
    assert.equal(
      htmlToMarkdown('<table><tr><td>h1</td><td>h2</td></tr><tr><td>x</td><td>y</td></tr></table>'),
      '|  |  |\n| --- | --- |\n| h1 | h2 |\n| x | y |',
    );
    assert.equal(
      htmlToMarkdown('<table><tr><td></td><th>Free</th></tr><tr><th>Seats</th><td>2</td></tr></table>'),
      '|  | Free |\n| --- | --- |\n| Seats | 2 |',
      'an empty corner cell belongs to the header row',
    );
    assert.equal(
      htmlToMarkdown(
        '<table><caption>Prices</caption><colgroup><col><col></colgroup>' +
          '<tr><th>Plan</th><th>Price</th></tr><tr><td>Pro</td><td>10</td></tr></table>',
      ),
      'Prices\n\n| Plan | Price |\n| --- | --- |\n| Pro | 10 |',
      'a caption and column groups do not leave the table as HTML',
    );
  });

  it('writes layout tables as their text, outermost first, keeping a data table inside them', () => {
    const page =
      '<table><tr><td colspan="2"><b>Club</b></td></tr>' +
      '<tr><td><a href="/news">News</a></td><td><h2>Welcome</h2><p>Row with us.</p>' +
      '<table><tr><th>Date</th><th>Race</th></tr><tr><td>3 May</td><td>Head</td></tr></table></td></tr></table>';
    assert.equal(
      htmlToMarkdown(page),
      '**Club**\n\n[News](/news)\n\n## Welcome\n\nRow with us.\n\n| Date | Race |\n| --- | --- |\n| 3 May | Head |',
    );
    assert.equal(
      htmlToMarkdown(
        '<table role="presentation"><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>',
      ),
      'a\n\nb\n\nc\n\nd',
      'the author says so',
    );
    assert.equal(
      htmlToMarkdown('<table><tr><td><p>Only</p><p>column</p></td></tr></table>'),
      'Only\n\ncolumn',
    );
    assert.equal(
      htmlToMarkdown(
        '<table><tr><td>x</td><td><ul><li>a</li></ul></td></tr><tr><td>y</td><td>z</td></tr></table>',
      ),
      'x\n\n- a\n\ny\n\nz',
      'a list in a cell of a header-less table',
    );
  });

  it('writes definition lists as bold terms over their definitions', () => {
    assert.equal(
      htmlToMarkdown(
        '<dl><dt>Backfill</dt><dd>Past runs.</dd><dt>Claim</dt><dt>Lease</dt>' +
          '<dd><p>A hold.</p><p>It expires.</p></dd><dd>Also a contract.</dd></dl><p>After.</p>',
      ),
      '**Backfill**\nPast runs.\n\n**Claim**\n**Lease**\nA hold.\n\nIt expires.\n\nAlso a contract.\n\nAfter.',
    );
  });

  it('fences code blocks with their language, from a class or a data attribute', () => {
    const md = htmlToMarkdown(
      '<pre><code class="language-python">def f():\n    return 1\n</code></pre>' +
        '<pre class="lang-js"><code>let a = 1;</code></pre>' +
        '<pre data-language="ruby"><code>puts 1</code></pre>' +
        '<div class="highlight-source-shell"><pre>echo hi</pre></div>' +
        '<pre><code>plain</code></pre>',
    );
    assert.equal(
      md,
      [
        '```python\ndef f():\n    return 1\n```',
        '```js\nlet a = 1;\n```',
        '```ruby\nputs 1\n```',
        '```shell\necho hi\n```',
        '```\nplain\n```',
      ].join('\n\n'),
    );
  });

  it('makes the fence longer than any run of backticks inside the code', () => {
    assert.equal(
      htmlToMarkdown('<pre><code class="language-md">```\nx\n```</code></pre>'),
      '````md\n```\nx\n```\n````',
    );
  });

  it('keeps link targets, absolute against the base URL; fragment links stay; empty links go', () => {
    const html =
      '<p>See <a href="/docs/start?x=1">the guide</a>, <a href="#frag">this</a>, ' +
      '<a href="https://other.example/x" title="T">other</a><a href="/icon"></a>.</p>';
    assert.equal(
      htmlToMarkdown(html, { baseUrl: BASE }),
      'See [the guide](https://help.example.com/docs/start?x=1), [this](#frag), [other](https://other.example/x "T").',
    );
    assert.equal(htmlToMarkdown('<a href="../img">rel</a>'), '[rel](../img)', 'no base URL: as written');
  });

  it('writes images as ![alt](src); decorative and inline-data images are dropped', () => {
    assert.equal(
      htmlToMarkdown(
        '<p><img src="/logo.png" alt="Acme [logo]"> <img src="/deco.png" alt=""> ' +
          '<img src="data:image/png;base64,AAAA" alt="inline"></p>',
        { baseUrl: BASE },
      ),
      '![Acme logo](https://help.example.com/logo.png)',
    );
  });

  it('writes task lists, with the checkbox directly in the item or in its paragraph', () => {
    assert.equal(
      htmlToMarkdown(
        '<ul><li><input type="checkbox" checked disabled> done</li><li><input type="checkbox">todo</li>' +
          '<li><p><input type="checkbox" checked> in a paragraph</p></li></ul>',
      ),
      '- [x] done\n- [ ] todo\n- [x] in a paragraph',
    );
  });

  it('quotes blockquotes, nested ones included, and strikes deletions', () => {
    assert.equal(
      htmlToMarkdown(
        '<blockquote><p>Quoted</p><blockquote><p>nested</p></blockquote></blockquote><p><del>gone</del></p>',
      ),
      '> Quoted\n>\n> > nested\n\n~gone~',
    );
  });

  it('takes a whole document as well as a fragment, converting only the body', () => {
    assert.equal(
      htmlToMarkdown(
        '<!DOCTYPE html><html><head><title>Not content</title></head><body><p>Body</p></body></html>',
      ),
      'Body',
    );
    assert.equal(htmlToMarkdown(''), '');
  });
});
