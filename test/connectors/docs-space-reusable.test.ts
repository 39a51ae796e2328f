/**
 * The pure parts of reusable content in `docs_space`: GitBook's JSON document to markdown, matching an
 * include to the revision's reusable contents, expanding includes, and the versions that tie a page to
 * the bodies it included. The sync against the fake is in docs-space-sites.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { documentToMarkdown } from '../../src/connectors/docs-space/document.ts';
import { gitbookToMarkdown } from '../../src/connectors/docs-space/render.ts';
import {
  expandReusable,
  isCurrentVersion,
  ReusableIndex,
  versionWithReusable,
} from '../../src/connectors/docs-space/reusable.ts';

const text = (t: string, marks: string[] = []) => ({
  object: 'text',
  leaves: [{ object: 'leaf', text: t, marks: marks.map((type) => ({ object: 'mark', type })) }],
});
const block = (type: string, nodes: unknown[], data: Record<string, unknown> = {}) => ({
  object: 'block',
  type,
  data,
  nodes,
});
const p = (...nodes: unknown[]) => block('paragraph', nodes);

describe('docs_space: JSON document to markdown', () => {
  it('renders headings, marks, links, lists, tasks, code, hints, tabs and expandables', () => {
    const nodes = [
      block('heading-2', [text('Limits')]),
      p(
        text('Use '),
        text('acme', ['code']),
        text(' or '),
        text('the API', ['bold']),
        text(', see '),
        {
          object: 'inline',
          type: 'link',
          data: { ref: { kind: 'url', url: 'https://acme.test/docs' } },
          nodes: [text('docs')],
        },
        text('.'),
      ),
      block('list-ordered', [
        block('list-item', [p(text('First'))]),
        block('list-item', [p(text('Second'))]),
      ]),
      block('list-tasks', [
        block('list-item', [p(text('Done'))], { checked: true }),
        block('list-item', [p(text('Open'))]),
      ]),
      block('code', [block('code-line', [text('a = 1')]), block('code-line', [text('b = 2')])], {
        syntax: 'python',
      }),
      block('hint', [p(text('Careful.'))], { style: 'danger' }),
      block('tabs', [block('tabs-item', [p(text('Mac text'))], { title: 'macOS' })]),
      {
        ...block('expandable', []),
        fragments: [
          block('expandable-title', [p(text('More'))]),
          block('expandable-body', [p(text('Hidden body'))]),
        ],
      },
      block('images', [block('image', [], { src: 'file-ref' })]),
    ];
    assert.equal(
      gitbookToMarkdown(documentToMarkdown(nodes)),
      [
        '## Limits',
        '',
        'Use `acme` or **the API**, see [docs](https://acme.test/docs).',
        '',
        '1. First',
        '2. Second',
        '',
        '- [x] Done',
        '- [ ] Open',
        '',
        '```python',
        'a = 1',
        'b = 2',
        '```',
        '',
        '> **Danger:** Careful.',
        '',
        '**macOS**',
        '',
        'Mac text',
        '',
        '**More**',
        '',
        'Hidden body',
      ].join('\n'),
    );
  });
});

describe('docs_space: includes of reusable content', () => {
  const index = new ReusableIndex(
    [
      {
        id: 'rcGit0000001',
        title: 'Support',
        document: 'd1',
        git: { oid: 'o1', path: '.gitbook/includes/support.md' },
      },
      { id: 'rcNoGit00001', title: 'Legal notice', document: 'd2' },
      { id: 'rcBare000001', title: 'Bare' },
      { malformed: true },
    ],
    'rev1',
  );

  it('matches by Git path, by id, and by file name against the title', () => {
    assert.equal(index.size, 3);
    assert.equal(index.match('../../.gitbook/includes/support.md')?.id, 'rcGit0000001');
    assert.equal(index.match('/reusable-contents/rcNoGit00001')?.id, 'rcNoGit00001');
    assert.equal(index.match('../.gitbook/includes/legal-notice.md')?.id, 'rcNoGit00001');
    assert.equal(index.match('.gitbook/includes/unknown.md'), undefined);
  });

  it('expands includes in place (at their indentation), leaves code alone, and lists what was used', async () => {
    const reads: string[] = [];
    const body = async (id: string) => {
      reads.push(id);
      return id === 'rcGit0000001' ? 'Mail us.\n\nOr call.' : undefined;
    };
    const markdown = [
      'Intro.',
      '{% include "../.gitbook/includes/support.md" %}',
      '  {% include ".gitbook/includes/support.md" %}',
      '```liquid',
      '{% include "../.gitbook/includes/legal-notice.md" %}',
      '```',
      "{% include 'rcBare000001' %}",
      '{% include "nothing-here.md" %}',
    ].join('\n');
    const out = await expandReusable(markdown, index, body);
    assert.deepEqual(out.used, ['rcBare000001', 'rcGit0000001']);
    assert.deepEqual(out.unmatched, ['nothing-here.md']);
    assert.deepEqual(reads, ['rcGit0000001', 'rcBare000001'], 'each body read once');
    assert.equal(
      out.markdown,
      [
        'Intro.',
        '\nMail us.\n\nOr call.\n',
        '  \n  Mail us.\n\n  Or call.\n',
        '```liquid',
        '{% include "../.gitbook/includes/legal-notice.md" %}',
        '```',
        '',
        '{% include "nothing-here.md" %}',
      ].join('\n'),
    );
  });

  it('a page’s version names what it included and changes with those bodies only', () => {
    const version = versionWithReusable('pageV1', ['rcGit0000001'], index);
    assert.match(version, /^pageV1~rcGit0000001~[\w-]{16}$/);
    assert.equal(versionWithReusable('pageV1', [], index), 'pageV1');
    assert.equal(isCurrentVersion(version, 'pageV1', index), true);
    assert.equal(isCurrentVersion(version, 'pageV2', index), false);
    assert.equal(isCurrentVersion('pageV1', 'pageV1', index), true);
    assert.equal(isCurrentVersion(null, 'pageV1', index), false);
    const edited = new ReusableIndex(
      [
        {
          id: 'rcGit0000001',
          title: 'Support',
          document: 'd9',
          git: { oid: 'o9', path: '.gitbook/includes/support.md' },
        },
      ],
      'rev2',
    );
    assert.equal(isCurrentVersion(version, 'pageV1', edited), false);
    const otherEdited = new ReusableIndex(
      [
        {
          id: 'rcGit0000001',
          title: 'Support',
          document: 'd1',
          git: { oid: 'o1', path: '.gitbook/includes/support.md' },
        },
        { id: 'rcNoGit00001', title: 'Legal notice', document: 'd7' },
      ],
      'rev2',
    );
    assert.equal(isCurrentVersion(version, 'pageV1', otherEdited), true);
  });
});
