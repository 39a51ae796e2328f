/** Confluence storage format → markdown (src/connectors/wiki/render.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MalformedStorageError,
  type RenderContext,
  storageToMarkdown,
  wellFormedProblem,
} from '../../src/connectors/wiki/render.ts';

const ctx: RenderContext = {
  wikiBase: 'https://acme.atlassian.net/wiki',
  spaceKey: 'ENG',
  contentId: '491527',
};
const md = (storage: string) => storageToMarkdown(storage, ctx);

describe('wiki storage format to markdown', () => {
  it('renders a page with every block kind, nested', () => {
    const storage = [
      '<h1>Release&nbsp;process</h1>',
      '<p>Owned by <ac:link><ri:user ri:account-id="5b10ac8d82e05b22cc7d4ef5"/></ac:link> &mdash; caf&eacute; rules &amp; more.</p>',
      '<ac:layout><ac:layout-section ac:type="two_equal"><ac:layout-cell>',
      '<h2>Checklist</h2>',
      '<ul><li>Prepare<ul><li>Branch <code>release/x</code></li><li>Tag</li></ul></li><li>Ship</li></ul>',
      '<ol><li>First</li><li>Second<ol><li>Nested</li></ol></li></ol>',
      '</ac:layout-cell><ac:layout-cell>',
      '<blockquote><p>Quoted wisdom.</p></blockquote>',
      '<ac:structured-macro ac:name="note" ac:schema-version="1"><ac:parameter ac:name="title">Freeze</ac:parameter><ac:rich-text-body><p>No merges on Friday.</p><ul><li>Really.</li></ul></ac:rich-text-body></ac:structured-macro>',
      '</ac:layout-cell></ac:layout-section></ac:layout>',
      '<ac:structured-macro ac:name="code" ac:schema-version="1"><ac:parameter ac:name="language">python</ac:parameter><ac:plain-text-body><![CDATA[def ship(x):\n    return x < 3 and "`ok`"]]></ac:plain-text-body></ac:structured-macro>',
      '<ac:structured-macro ac:name="expand"><ac:parameter ac:name="title">Why?</ac:parameter><ac:rich-text-body><p>Because <ac:link><ri:page ri:content-title="Release policy" ri:space-key="OPS"/><ac:plain-text-link-body><![CDATA[the policy]]></ac:plain-text-link-body></ac:link> says so.</p></ac:rich-text-body></ac:structured-macro>',
      '<table><colgroup><col/><col/></colgroup><tbody><tr><th><p>Step</p></th><th><p>Owner</p></th></tr><tr><td><p>Build | test</p></td><td><p><ac:link><ri:attachment ri:filename="owners.pdf"/></ac:link></p></td></tr></tbody></table>',
      '<ac:task-list><ac:task><ac:task-id>1</ac:task-id><ac:task-status>complete</ac:task-status><ac:task-body>Write notes</ac:task-body></ac:task><ac:task><ac:task-id>2</ac:task-id><ac:task-status>incomplete</ac:task-status><ac:task-body>Announce</ac:task-body></ac:task></ac:task-list>',
      '<p><ac:image ac:alt="Pipeline diagram"><ri:attachment ri:filename="pipeline.png"/></ac:image></p>',
      '<ac:structured-macro ac:name="drawio"><ac:parameter ac:name="diagramName">Release flow</ac:parameter></ac:structured-macro>',
      '<ac:structured-macro ac:name="toc"/>',
    ].join('\n');
    assert.equal(
      md(storage),
      [
        '# Release process',
        '',
        'Owned by @user — café rules & more.',
        '',
        '## Checklist',
        '',
        '- Prepare',
        '  - Branch `release/x`',
        '  - Tag',
        '- Ship',
        '',
        '1. First',
        '2. Second',
        '   1. Nested',
        '',
        '> Quoted wisdom.',
        '',
        '> **Note: Freeze**',
        '>',
        '> No merges on Friday.',
        '>',
        '> - Really.',
        '',
        '```python',
        'def ship(x):',
        '    return x < 3 and "`ok`"',
        '```',
        '',
        '**Why?**',
        '',
        'Because [the policy](https://acme.atlassian.net/wiki/display/OPS/Release+policy) says so.',
        '',
        '| Step | Owner |',
        '| --- | --- |',
        '| Build \\| test | [owners.pdf](https://acme.atlassian.net/wiki/download/attachments/491527/owners.pdf) |',
        '',
        '- [x] Write notes',
        '- [ ] Announce',
        '',
        '![Pipeline diagram](https://acme.atlassian.net/wiki/download/attachments/491527/pipeline.png)',
        '',
        'Release flow',
      ].join('\n'),
    );
  });

  it('renders each callout macro as a block quote naming its kind and title', () => {
    const callout = (name: string, title?: string) =>
      `<ac:structured-macro ac:name="${name}">${title ? `<ac:parameter ac:name="title">${title}</ac:parameter>` : ''}<ac:rich-text-body><p>Body of ${name}.</p></ac:rich-text-body></ac:structured-macro>`;
    assert.equal(md(callout('info')), '> **Info**\n>\n> Body of info.');
    assert.equal(md(callout('note', 'Careful')), '> **Note: Careful**\n>\n> Body of note.');
    assert.equal(md(callout('warning')), '> **Warning**\n>\n> Body of warning.');
    assert.equal(md(callout('tip', 'Pro tip')), '> **Tip: Pro tip**\n>\n> Body of tip.');
    assert.equal(md(callout('panel', 'Contacts')), '> **Contacts**\n>\n> Body of panel.');
    assert.equal(md(callout('panel')), '> **Panel**\n>\n> Body of panel.');
    // The newer editor's panels, stored as ADF extensions.
    assert.equal(
      md(
        '<ac:adf-extension><ac:adf-node type="panel"><ac:adf-attribute key="panel-type">warning</ac:adf-attribute><ac:adf-content><p>Mind the gap.</p></ac:adf-content></ac:adf-node><ac:adf-fallback><div><p>fallback</p></div></ac:adf-fallback></ac:adf-extension>',
      ),
      '> **Warning**\n>\n> Mind the gap.',
    );
    assert.equal(
      md(
        '<ac:adf-extension><ac:adf-node type="decision-list"><ac:adf-attribute key="local-id">x</ac:adf-attribute><ac:adf-node type="decision-item"><ac:adf-attribute key="state">DECIDED</ac:adf-attribute><ac:adf-content>Use Postgres</ac:adf-content></ac:adf-node></ac:adf-node><ac:adf-fallback><p>fallback</p></ac:adf-fallback></ac:adf-extension>',
      ),
      '- **Decision:** Use Postgres',
    );
    assert.equal(
      md(
        '<ac:adf-extension><ac:adf-node type="mystery"></ac:adf-node><ac:adf-fallback><p>Fallback text</p></ac:adf-fallback></ac:adf-extension>',
      ),
      'Fallback text',
    );
    assert.equal(
      md(
        '<ac:structured-macro ac:name="expand"><ac:rich-text-body><p>Hidden</p></ac:rich-text-body></ac:structured-macro>',
      ),
      '**Details**\n\nHidden',
    );
  });

  it('keeps code: language, title, characters XML would escape, a CDATA split around ]]>, noformat', () => {
    assert.equal(
      md(
        '<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">js</ac:parameter><ac:parameter ac:name="title">run.js</ac:parameter><ac:plain-text-body><![CDATA[if (a < b && c) x = a[b[0]]]]]><![CDATA[>1;]]></ac:plain-text-body></ac:structured-macro>',
      ),
      '_run.js_\n\n```js\nif (a < b && c) x = a[b[0]]]>1;\n```',
    );
    assert.equal(
      md(
        '<ac:structured-macro ac:name="noformat"><ac:plain-text-body><![CDATA[raw &nbsp; text]]></ac:plain-text-body></ac:structured-macro>',
      ),
      '```\nraw &nbsp; text\n```',
    );
    assert.equal(
      md(
        '<ac:structured-macro ac:name="code"><ac:plain-text-body><![CDATA[```md\nfenced\n```]]></ac:plain-text-body></ac:structured-macro>',
      ),
      '````\n```md\nfenced\n```\n````',
    );
  });

  it('links: pages (other space, same space, anchors), blog posts, attachments, URLs, spaces, users', () => {
    assert.equal(
      md('<p><ac:link><ri:page ri:content-title="Home Page"/></ac:link></p>'),
      '[Home Page](https://acme.atlassian.net/wiki/display/ENG/Home+Page)',
    );
    assert.equal(
      md(
        '<p><ac:link ac:anchor="setup"><ri:page ri:content-title="Guide &amp; FAQ" ri:space-key="OPS"/><ac:link-body><strong>the guide</strong></ac:link-body></ac:link></p>',
      ),
      '[**the guide**](https://acme.atlassian.net/wiki/display/OPS/Guide+%26+FAQ#setup)',
    );
    assert.equal(md('<p><ac:link ac:anchor="top"/></p>'), '[top](#top)');
    assert.equal(
      md('<p><ac:link><ri:blog-post ri:content-title="Launch" ri:posting-day="2024/05/20"/></ac:link></p>'),
      '[Launch](https://acme.atlassian.net/wiki/display/ENG/2024/05/20/Launch)',
    );
    assert.equal(
      md(
        '<p><ac:link><ri:attachment ri:filename="q1 report.pdf"/><ac:plain-text-link-body><![CDATA[Q1]]></ac:plain-text-link-body></ac:link></p>',
      ),
      '[Q1](https://acme.atlassian.net/wiki/download/attachments/491527/q1%20report.pdf)',
    );
    assert.equal(
      md(
        '<p><ac:link><ri:attachment ri:filename="spec.pdf"><ri:page ri:content-title="Specs"/></ri:attachment></ac:link></p>',
      ),
      'spec.pdf',
      "another page's attachment keeps its name",
    );
    assert.equal(
      md('<p><ac:link><ri:url ri:value="https://example.com/a?b=1"/></ac:link></p>'),
      '[https://example.com/a?b=1](https://example.com/a?b=1)',
    );
    assert.equal(
      md('<p><ac:link><ri:space ri:space-key="OPS"/></ac:link></p>'),
      '[OPS](https://acme.atlassian.net/wiki/spaces/OPS)',
    );
    assert.equal(
      md(
        '<p>Ask <ac:link><ri:user ri:account-id="5b10"/><ac:plain-text-link-body><![CDATA[Dana]]></ac:plain-text-link-body></ac:link>.</p>',
      ),
      'Ask Dana.',
    );
    assert.equal(
      md('<p><a href="/wiki/spaces/ENG">relative</a></p>'),
      '[relative](https://acme.atlassian.net/wiki/spaces/ENG)',
    );
  });

  it('images: attachment or URL, alt text or the file name', () => {
    assert.equal(
      md('<p><ac:image ac:alt="Arch"><ri:url ri:value="https://cdn.example.com/a.png"/></ac:image></p>'),
      '![Arch](https://cdn.example.com/a.png)',
    );
    assert.equal(
      md('<p><ac:image><ri:attachment ri:filename="chart.png"/></ac:image></p>'),
      '![chart.png](https://acme.atlassian.net/wiki/download/attachments/491527/chart.png)',
    );
    assert.equal(
      md(
        '<p><ac:image ac:title="Logo"><ri:attachment ri:filename="logo.png"><ri:page ri:content-title="Brand"/></ri:attachment></ac:image></p>',
      ),
      'Logo',
    );
  });

  it('task lists, nested ones included', () => {
    assert.equal(
      md(
        '<ac:task-list><ac:task><ac:task-id>1</ac:task-id><ac:task-status>incomplete</ac:task-status><ac:task-body>Parent <strong>task</strong></ac:task-body></ac:task><ac:task-list><ac:task><ac:task-id>2</ac:task-id><ac:task-status>complete</ac:task-status><ac:task-body>Child</ac:task-body></ac:task></ac:task-list><ac:task><ac:task-id>3</ac:task-id><ac:task-status>complete</ac:task-status><ac:task-body>Last</ac:task-body></ac:task></ac:task-list>',
      ),
      '- [ ] Parent **task**\n  - [x] Child\n- [x] Last',
    );
  });

  it('unknown macros degrade to their text; navigation macros and placeholders leave nothing', () => {
    assert.equal(
      md(
        '<ac:structured-macro ac:name="details"><ac:rich-text-body><p>Owner: Ops</p></ac:rich-text-body></ac:structured-macro>',
      ),
      'Owner: Ops',
    );
    assert.equal(
      md(
        '<ac:structured-macro ac:name="mermaid-cloud"><ac:plain-text-body><![CDATA[graph TD; A-->B]]></ac:plain-text-body></ac:structured-macro>',
      ),
      '```\ngraph TD; A-->B\n```',
    );
    assert.equal(
      md(
        '<p>Status: <ac:structured-macro ac:name="status"><ac:parameter ac:name="colour">Green</ac:parameter><ac:parameter ac:name="title">On track</ac:parameter></ac:structured-macro> and <ac:structured-macro ac:name="jira"><ac:parameter ac:name="server">System JIRA</ac:parameter><ac:parameter ac:name="key">OPS-42</ac:parameter></ac:structured-macro>.</p>',
      ),
      'Status: **On track** and `OPS-42`.',
    );
    assert.equal(
      md(
        '<p>See <ac:structured-macro ac:name="widget-x"><ac:parameter ac:name="label">the widget</ac:parameter></ac:structured-macro> here.</p>',
      ),
      'See the widget here.',
    );
    assert.equal(
      md(
        '<ac:structured-macro ac:name="include"><ac:parameter ac:name=""><ac:link><ri:page ri:content-title="Shared footer"/></ac:link></ac:parameter></ac:structured-macro>',
      ),
      '[Shared footer](https://acme.atlassian.net/wiki/display/ENG/Shared+footer)',
    );
    assert.equal(
      md(
        '<ac:structured-macro ac:name="toc"><ac:parameter ac:name="maxLevel">3</ac:parameter></ac:structured-macro><ac:structured-macro ac:name="children"/><p><ac:placeholder>Type here</ac:placeholder>Text</p>',
      ),
      'Text',
    );
    assert.equal(md('<ac:unheard-of><p>Inside</p></ac:unheard-of>'), 'Inside');
    assert.equal(
      md(
        '<h2>A <ac:structured-macro ac:name="anchor"><ac:parameter ac:name="">a1</ac:parameter></ac:structured-macro>heading</h2>',
      ),
      '## A heading',
    );
  });

  it('inline bits: entities, emoticons, comment markers, dates, strike-through', () => {
    assert.equal(
      md(
        '<p>A&nbsp;B &hellip; &rarr; &copy; &#233; &amp;nbsp; &bogus; <ac:emoticon ac:name="tick"/> <ac:emoticon ac:name="blue-star" ac:emoji-fallback="🚀"/> <ac:inline-comment-marker ac:ref="x">marked</ac:inline-comment-marker> <time datetime="2024-05-01"/> <span style="text-decoration: line-through;">old</span></p>',
      ),
      'A B … → © é &nbsp; &bogus; ✅ 🚀 marked 2024-05-01 ~old~',
    );
    assert.equal(md('<p title="&eacute;t&eacute;">x</p>'), 'x');
  });

  it('an empty body renders as nothing', () => {
    assert.equal(md(''), '');
    assert.equal(md('<p><br/></p>'), '');
  });

  it('refuses a body that is not well-formed', () => {
    for (const [storage, problem] of [
      ['<p>unclosed', '<p> is never closed'],
      ['<p><strong>crossed</p></strong>', '</p> closes <strong>'],
      ['<p>text</p></div>', '</div> closes nothing'],
      ['<p>1 < 2</p>', '"<" at offset 5 starts no complete tag'],
      ['<ac:structured-macro ac:name="code"><ac:plain-text-body><![CDATA[never ends', 'never ends'],
      ['<p>truncated <ac:link', 'starts no complete tag'],
    ] as const) {
      assert.throws(
        () => md(storage),
        (err: unknown) => err instanceof MalformedStorageError && err.message.includes(problem),
        storage,
      );
    }
    // Void elements may stay unclosed, as older content writes them; `>` inside attributes is fine.
    assert.equal(wellFormedProblem('<p>a<br>b<hr></p><img src="x" alt="a > b"/>'), undefined);
    assert.equal(md('<p>a<br>b</p>'), 'a\nb');
  });
});
