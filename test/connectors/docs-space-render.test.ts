/** GitBook-flavoured markdown to plain markdown (src/connectors/docs-space/render.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gitbookToMarkdown, renderPage } from '../../src/connectors/docs-space/render.ts';

const md = (...lines: string[]) => lines.join('\n');

describe('docs_space render: GitBook blocks', () => {
  it('hints become labelled blockquote callouts, whatever their content', () => {
    assert.equal(
      gitbookToMarkdown(
        md('{% hint style="info" %}', 'Requires **Node 18+**.', '', 'Then run it.', '{% endhint %}'),
      ),
      md('> **Info:** Requires **Node 18+**.', '>', '> Then run it.'),
    );
    for (const [style, label] of [
      ['warning', 'Warning'],
      ['danger', 'Danger'],
      ['success', 'Success'],
      ['custom', 'Custom'],
    ]) {
      assert.equal(
        gitbookToMarkdown(md(`{% hint style="${style}" %}`, 'Text.', '{% endhint %}')),
        `> **${label}:** Text.`,
      );
    }
    // A hint that starts with a block keeps the block intact under its own label line.
    assert.equal(
      gitbookToMarkdown(md('{% hint style="warning" %}', '```bash', 'rm -rf build', '```', '{% endhint %}')),
      md('> **Warning:**', '>', '> ```bash', '> rm -rf build', '> ```'),
    );
    assert.equal(
      gitbookToMarkdown('{% hint style="info" %}Inline tip.{% endhint %}'),
      '> **Info:** Inline tip.',
    );
    assert.equal(
      gitbookToMarkdown('Before {% hint style="danger" %}careful{% endhint %} after.'),
      'Before **Danger:** careful after.',
    );
  });

  it('tabs become bold titles, each followed by its content', () => {
    const out = gitbookToMarkdown(
      md(
        '{% tabs %}',
        '{% tab title="npm" %}',
        '```bash',
        'npm i acme',
        '```',
        '{% endtab %}',
        '',
        '{% tab title="Yarn & pnpm" %}',
        'Use `yarn add acme`.',
        '',
        '{% hint style="info" %}',
        'Yarn 1 works too.',
        '{% endhint %}',
        '{% endtab %}',
        '{% endtabs %}',
      ),
    );
    assert.equal(
      out,
      md(
        '**npm**',
        '',
        '```bash',
        'npm i acme',
        '```',
        '',
        '**Yarn & pnpm**',
        '',
        'Use `yarn add acme`.',
        '',
        '> **Info:** Yarn 1 works too.',
      ),
    );
  });

  it('code blocks keep their fence and language, with the title as a caption line', () => {
    assert.equal(
      gitbookToMarkdown(
        md(
          '{% code title="server.ts" overflow="wrap" lineNumbers="true" %}',
          '```typescript',
          'const port = 8080;',
          '',
          '',
          '',
          'listen(port);   ',
          '```',
          '{% endcode %}',
        ),
      ),
      md('*server.ts*', '', '```typescript', 'const port = 8080;', '', '', '', 'listen(port);   ', '```'),
      'code is kept byte for byte, blank lines and trailing spaces included',
    );
    assert.equal(
      gitbookToMarkdown(md('{% code lineNumbers="true" %}', '```python', 'print(1)', '```', '{% endcode %}')),
      md('```python', 'print(1)', '```'),
    );
  });

  it('tags inside code (fences and inline spans) are text, not tags', () => {
    const liquid = md('```liquid', '{% if user %}Hello{% endif %}', '{% hint style="info" %}', '```');
    assert.equal(gitbookToMarkdown(liquid), liquid);
    assert.equal(
      gitbookToMarkdown('Write `{% hint style="info" %}` to open a hint.'),
      'Write `{% hint style="info" %}` to open a hint.',
    );
    assert.equal(
      gitbookToMarkdown(md('~~~', '{% endhint %}', '~~~', '{% hint style="info" %}', 'x', '{% endhint %}')),
      md('~~~', '{% endhint %}', '~~~', '', '> **Info:** x'),
    );
  });

  it('embeds and content references become links', () => {
    assert.equal(
      gitbookToMarkdown('{% embed url="https://www.youtube.com/watch?v=abc" %}'),
      '[https://www.youtube.com/watch?v=abc](https://www.youtube.com/watch?v=abc)',
    );
    assert.equal(
      gitbookToMarkdown(md('{% embed url="https://vimeo.com/1" %}', 'Product tour', '{% endembed %}')),
      '[Product tour](https://vimeo.com/1)',
    );
    assert.equal(
      gitbookToMarkdown(
        md('{% content-ref url="guides/setup.md" %}', '[setup.md](guides/setup.md)', '{% endcontent-ref %}'),
      ),
      '[setup.md](guides/setup.md)',
    );
    assert.equal(
      gitbookToMarkdown(md('{% content-ref url="guides/setup.md" %}', '{% endcontent-ref %}')),
      '[guides/setup.md](guides/setup.md)',
    );
    assert.equal(
      gitbookToMarkdown('See {% embed url="https://example.com/a b" %} here.'),
      'See [https://example.com/a b](<https://example.com/a b>) here.',
    );
    assert.equal(
      gitbookToMarkdown(
        md('{% file src="https://files.gitbook.com/x/Report%202024.pdf" %}', '{% endfile %}'),
      ),
      '[Report 2024.pdf](https://files.gitbook.com/x/Report%202024.pdf)',
    );
  });

  it('expandables become their summary in bold, then their body as text', () => {
    assert.equal(
      gitbookToMarkdown(
        md(
          '<details>',
          '',
          '<summary>Why <mark style="color:red;">three</mark> retries?</summary>',
          '',
          'Because **two** were not enough.',
          '',
          '- first',
          '- second',
          '',
          '</details>',
          '',
          'After.',
        ),
      ),
      md(
        '**Why three retries?**',
        '',
        'Because **two** were not enough.',
        '',
        '- first',
        '- second',
        '',
        'After.',
      ),
    );
  });

  it('unknown tags give their inner text; unclosed and stray tags lose nothing and never throw', () => {
    assert.equal(
      gitbookToMarkdown(md('{% sparkle level="9" %}', 'Shiny **text**.', '{% endsparkle %}')),
      'Shiny **text**.',
    );
    assert.equal(
      gitbookToMarkdown(
        md('{% update date="2024-05-01" title="May release" %}', 'Faster sync.', '{% endupdate %}'),
      ),
      md('**May release**', '', 'Faster sync.'),
    );
    // An opening tag with no end: its content stays, in order.
    assert.equal(
      gitbookToMarkdown(md('{% hint style="info" %}', 'Never closed.', '', 'Still here.')),
      md('Never closed.', '', 'Still here.'),
    );
    // An end with no opening is dropped; a void tag is dropped; nested unknown tags keep their text.
    assert.equal(
      gitbookToMarkdown(
        md(
          'Text.',
          '{% endtabs %}',
          '{% include "reusable-abc" %}',
          '{% a %}{% b %}deep{% endb %}{% enda %}',
        ),
      ),
      md('Text.', '', 'deep'),
    );
    // Interleaved ends: the outer hint still closes, the inner unclosed tag keeps its content.
    assert.equal(
      gitbookToMarkdown(md('{% hint style="info" %}', '{% tab title="T" %}', 'Inside.', '{% endhint %}')),
      md('> **Info:**', '>', '> **T**', '>', '> Inside.'),
    );
    const pieces = [
      '{% hint style="info" %}',
      '{% endhint %}',
      '{% tabs %}',
      '{% tab title="x" %}',
      '{% endtab %}',
      '```js',
      '```',
      '{% code %}',
      '{% endcode %}',
      '<details>',
      '</details>',
      '<summary>s</summary>',
      'text',
      '',
      '{% x',
      '%}',
      '{%%}',
      '{% embed url="u" %}',
      '`{% hint %}`',
      '> quote',
      '- item',
      '<figure><img src="a" alt="b"></figure>',
    ];
    let seed = 7;
    for (let i = 0; i < 300; i++) {
      const lines = Array.from({ length: 12 }, () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return pieces[seed % pieces.length]!;
      });
      const out = gitbookToMarkdown(lines.join('\n'));
      if (lines.includes('text')) assert.match(out, /text/, lines.join('\n'));
    }
  });

  it('API blocks become an operation line, parameters and responses', () => {
    assert.equal(
      gitbookToMarkdown(
        md(
          '{% swagger method="post" path="/v1/items" baseUrl="https://api.acme.com" summary="Create an item" %}',
          '{% swagger-description %}',
          'Creates one item.',
          '{% endswagger-description %}',
          '{% swagger-parameter in="body" name="title" type="String" required="true" %}',
          'The title.',
          '{% endswagger-parameter %}',
          '{% swagger-response status="201: Created" description="" %}',
          '```json',
          '{"id": 1}',
          '```',
          '{% endswagger-response %}',
          '{% endswagger %}',
          '',
          '{% openapi src="https://api.acme.com/spec.yaml" path="/v1/items" method="get" %}',
          '[spec.yaml](https://api.acme.com/spec.yaml)',
          '{% endopenapi %}',
        ),
      ),
      md(
        '**POST /v1/items**: Create an item',
        '',
        'Creates one item.',
        '',
        '- `title` (body, String, required): The title.',
        '',
        '**Response 201: Created**',
        '',
        '```json',
        '{"id": 1}',
        '```',
        '',
        '**GET /v1/items**',
        '',
        '[spec.yaml](https://api.acme.com/spec.yaml)',
      ),
    );
  });
});

describe('docs_space render: markdown passes through', () => {
  it('headings, lists, task lists, tables, code, links and images are kept as written', () => {
    const plain = md(
      '## Setup',
      '',
      '1. Install',
      '2. Configure',
      '   - nested item with [a link](https://acme.com/docs)',
      '',
      '- [x] done',
      '- [ ] to do',
      '',
      '| Flag | Meaning |',
      '| --- | --- |',
      '| `-v` | verbose \\| loud |',
      '',
      '![Architecture diagram](https://files.gitbook.com/arch.png)',
      '',
      '```go',
      'fmt.Println("hi")',
      '```',
      '',
      '> A quote.',
      '',
      '$$E = mc^2$$',
    );
    assert.equal(gitbookToMarkdown(plain), plain);
  });

  it('GitBook’s HTML: figures, HTML tables, marks, keys, buttons and entities become markdown', () => {
    assert.equal(
      gitbookToMarkdown(
        '<figure><img src="https://files.gitbook.com/a.png" alt="Login screen"><figcaption><p>Sign in here</p></figcaption></figure>',
      ),
      md('![Login screen](https://files.gitbook.com/a.png)', '', 'Sign in here'),
    );
    assert.equal(
      gitbookToMarkdown(
        '<table><thead><tr><th>Plan</th><th>Price</th></tr></thead><tbody><tr><td>Pro</td><td>$10</td></tr></tbody></table>',
      ),
      md('| Plan | Price |', '| --- | --- |', '| Pro | $10 |'),
    );
    assert.equal(
      gitbookToMarkdown(
        'Press <kbd>Ctrl</kbd>+<kbd>K</kbd>, see <mark style="color:blue;">this</mark> and <a href="https://acme.com/start" class="button primary">Get started</a>.&#x20;',
      ),
      'Press Ctrl+K, see this and [Get started](https://acme.com/start).',
    );
  });
});

describe('docs_space render: the page', () => {
  it('puts the tree path in the first heading, replacing GitBook’s own title heading', () => {
    assert.equal(
      renderPage(md('# Installation', '', 'Body.', '', '## Linux', '', 'apt.'), {
        title: 'Installation',
        trail: ['Getting started', 'Setup'],
      }),
      md('# Getting started › Setup › Installation', '', 'Body.', '', '## Linux', '', 'apt.'),
    );
  });

  it('adds the heading when the body has none, and the description when the body lacks it', () => {
    assert.equal(
      renderPage('Just text.', { title: 'Notes', trail: [], description: 'Short notes' }),
      md('# Notes', '', 'Short notes', '', 'Just text.'),
    );
    assert.equal(
      renderPage(md('# Notes', '', 'Short notes', '', 'More.'), {
        title: 'Notes',
        trail: [],
        description: 'Short notes',
      }),
      md('# Notes', '', 'Short notes', '', 'More.'),
    );
    assert.equal(
      renderPage(md('# Something else', '', 'x'), { title: 'Notes', trail: ['A'] }),
      md('# A › Notes', '', '# Something else', '', 'x'),
    );
    assert.equal(renderPage('', { title: 'Empty page', trail: ['A'] }), '# A › Empty page');
  });

  it('drops Git Sync front matter', () => {
    assert.equal(
      renderPage(
        md(
          '---',
          'description: >-',
          '  Long text',
          'layout:',
          '  title:',
          '    visible: true',
          '---',
          '',
          '# Page',
          '',
          'Body.',
        ),
        {
          title: 'Page',
          trail: [],
        },
      ),
      md('# Page', '', 'Body.'),
    );
  });
});
