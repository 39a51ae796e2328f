/**
 * Notion blocks and properties to markdown: every block kind of the sample workspace as the connector
 * reads it from the fake API (nesting, synced blocks, columns), and the renderer's edge cases on Notion's
 * own JSON shapes (escaping, annotations, unknown and malformed blocks, property types).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { notesConnector } from '../../src/connectors/notes/index.ts';
import {
  type BlockNode,
  MalformedBlockError,
  pageTitle,
  renderBlocks,
  renderProperties,
  richTextToMarkdown,
} from '../../src/connectors/notes/render.ts';
import type { NotesCursor } from '../../src/connectors/notes/sync.ts';
import type { NotionBlock, PropertyValue, RichText } from '../../src/connectors/notes/schemas.ts';
import {
  type FakeNotion,
  inlineEquation,
  NOTION_GOOD_TOKEN,
  np,
  pageMention,
  rt,
  type SampleIds,
  sampleWorkspace,
  startFakeNotion,
} from '../fakes/notion.ts';
import { SyncedSet } from './helpers.ts';

const plainUrl = (id: string) => `https://www.notion.so/${id.replace(/-/g, '')}`;

describe('notes rendering of a synced page', () => {
  let fake: FakeNotion;
  let ids: SampleIds;
  let markdown: Map<string, string>;
  before(async () => {
    const sample = sampleWorkspace();
    ids = sample.ids;
    fake = await startFakeNotion({ workspace: sample.workspace });
    const out = await new SyncedSet<NotesCursor>(
      notesConnector,
      { access_token: NOTION_GOOD_TOKEN },
      fake.url,
    ).sync();
    markdown = new Map(out.documents.map((d) => [d.externalId, d.markdown]));
  });
  after(() => fake.close());

  it('renders every block kind, nested, in order', () => {
    const expected = [
      '# How we work',
      'We value **clear writing**, _small changes_ and `npm test`. See the [style guide](https://acme.test/style) and $E=mc^2$.',
      '## Checklist',
      '- Write tests\n  - Unit tests first\n  - Then integration tests\n- Review code',
      '1. Open a pull request\n2. Ask for review',
      '- [x] Install the CLI\n- [ ] Read the runbook',
      '> Simplicity is prerequisite for reliability.\n>\n> Edsger Dijkstra',
      '> 💡 Ask in #eng-help when stuck.',
      '```typescript\nconst answer: number = 42;\nconsole.log(answer);\n```',
      '_The answer_',
      '```\njust text\n```',
      '| Service | Owner |\n| --- | --- |\n| Search | Ada |\n| Billing | Grace |',
      '- Why small changes?\n\n  They are easier to review and to revert.',
      '### Toggle heading',
      'Hidden under a heading.',
      '$$\n\\int_0^1 x^2 dx = \\frac{1}{3}\n$$',
      // The signed query of a hosted file is dropped: it changes on every read.
      '![Architecture diagram](https://prod-files-secure.s3.us-west-2.amazonaws.com/ws/architecture.png)',
      '![](https://images.acme.test/team.jpg)',
      '[How we ship](https://acme.test/blog/how-we-ship)',
      '[https://acme.test/embed/dashboard](https://acme.test/embed/dashboard)',
      '[intro.mp4](https://video.acme.test/intro.mp4)',
      '[handbook.pdf](https://files.acme.test/handbook.pdf)',
      '---',
      'Shared status: all systems operational.',
      'Left column: deploys happen on Tuesdays.',
      'Right column: freezes start on the 20th.',
      `[Column notes](${plainUrl(ids.inColumn)})`,
      'Weekly sync notes',
      'An AI summary of the page.',
      `[Deep dive](${plainUrl(ids.deepDive)})`,
      `[Services](${plainUrl(ids.database)})`,
    ].join('\n\n');
    assert.equal(markdown.get(ids.handbook), expected);
  });

  it('reads a synced copy from its original, and renders links to pages with their titles', () => {
    assert.equal(
      markdown.get(ids.deepDive),
      [
        'How the indexer batches work.',
        'Shared status: all systems operational.',
        `[Runbook](${plainUrl(ids.runbook)})`,
      ].join('\n\n'),
    );
    assert.equal(
      markdown.get(ids.releaseNotes),
      [
        'Version 2.0 adds hybrid search.',
        `[Onboarding guide](${plainUrl(ids.onboarding)})`,
        `Read [Onboarding guide](${plainUrl(ids.onboarding)}) first.`,
      ].join('\n\n'),
    );
  });

  it('renders a database row as its properties table, then its body', () => {
    const row = markdown.get(ids.searchRow)!;
    assert.equal(
      row,
      [
        [
          '| Property | Value |',
          '| --- | --- |',
          '| Status | Live |',
          '| Tier | 1 |',
          '| Tags | core, search |',
          '| Owner | Ada Lovelace |',
          '| Launched | 2023-04-01 |',
          '| On call | Yes |',
          '| Docs | [https://docs.acme.test/search](https://docs.acme.test/search) |',
          '| Notes | Answers queries \\| fast |',
        ].join('\n'),
        'The search API answers semantic and keyword queries.',
      ].join('\n\n'),
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The renderer on Notion's JSON
// ---------------------------------------------------------------------------------------------------

function node(type: string, payload: unknown, children: BlockNode[] = []): BlockNode {
  const block = {
    object: 'block',
    id: randomUUID(),
    type,
    has_children: children.length > 0,
    [type]: payload,
  } as NotionBlock;
  return { block, children };
}

const rich = (...parts: Array<string | RichText>) =>
  parts.map((p) => (typeof p === 'string' ? rt(p) : p)) as RichText[];
const para = (...parts: Array<string | RichText>) =>
  node('paragraph', { rich_text: rich(...parts), color: 'default' });

describe('notes rich text', () => {
  it('keeps annotations, with spaces outside the markers', () => {
    assert.equal(
      richTextToMarkdown(
        rich(
          rt('bold ', { bold: true }),
          'and ',
          rt(' italic', { italic: true }),
          ' ',
          rt('all', { bold: true, italic: true, strikethrough: true }),
        ),
      ),
      '**bold** and  _italic_ ~~**_all_**~~',
    );
  });

  it('escapes what would change the meaning, not words like snake_case', () => {
    assert.equal(
      richTextToMarkdown(rich('use snake_case, *not* _this_ or `ticks` <b>tags</b> 2 < 3')),
      'use snake_case, \\*not\\* \\_this\\_ or \\`ticks\\` \\<b>tags\\</b> 2 < 3',
    );
    assert.equal(renderBlocks([para('# not a heading')]), '\\# not a heading');
    assert.equal(renderBlocks([para('1. not a list')]), '1\\. not a list');
    assert.equal(
      renderBlocks([node('bulleted_list_item', { rich_text: rich('# not a heading either') })]),
      '- \\# not a heading either',
    );
  });

  it('fences inline code longer than the backticks it holds', () => {
    assert.equal(richTextToMarkdown(rich(rt('a `b` c', { code: true }))), '``a `b` c``');
  });

  it('makes Notion-relative links absolute, and renders mentions and equations', () => {
    const internal = { ...rt('the guide'), href: '/59833787c2f94fdf8782e53db20768a5' } as RichText;
    assert.equal(
      richTextToMarkdown([internal]),
      '[the guide](https://www.notion.so/59833787c2f94fdf8782e53db20768a5)',
    );
    const id = randomUUID();
    assert.equal(
      richTextToMarkdown([pageMention(id, 'FAQ') as RichText, inlineEquation('a^2') as RichText]),
      `[FAQ](https://www.notion.so/${id.replace(/-/g, '')})$a^2$`,
    );
  });
});

describe('notes blocks', () => {
  it('nests lists of every kind, with multi-line items and bodies indented under their marker', () => {
    const md = renderBlocks([
      node('numbered_list_item', { rich_text: rich('First\nsecond line') }, [
        node('bulleted_list_item', { rich_text: rich('Nested bullet') }, [
          node('to_do', { rich_text: rich('Deep task'), checked: false }),
        ]),
      ]),
      node('numbered_list_item', { rich_text: rich('Second') }, [para('A paragraph under it.')]),
      para('Between.'),
      node('numbered_list_item', { rich_text: rich('Restarts') }),
    ]);
    assert.equal(
      md,
      [
        '1. First\n   second line\n   - Nested bullet\n     - [ ] Deep task',
        '2. Second\n\n   A paragraph under it.',
        '',
        'Between.',
        '',
        '1. Restarts',
      ].join('\n'),
    );
  });

  it('quotes callouts and quotes with their children, and keeps line breaks in paragraphs', () => {
    const md = renderBlocks([
      node(
        'callout',
        { rich_text: rich('Heads up'), icon: { type: 'emoji', emoji: '⚠️' }, color: 'default' },
        [
          node('bulleted_list_item', { rich_text: rich('one') }),
          node('bulleted_list_item', { rich_text: rich('two') }),
        ],
      ),
      node('quote', { rich_text: rich('Line one\nline two') }),
      node('callout', { rich_text: rich('No icon'), icon: null }),
    ]);
    assert.equal(md, '> ⚠️ Heads up\n>\n> - one\n> - two\n\n> Line one  \n> line two\n\n> No icon');
  });

  it('fences code with its language, longer than any fence inside it', () => {
    const md = renderBlocks([
      node('code', { rich_text: rich('```js\nx\n```'), caption: [], language: 'markdown' }),
      node('code', { rich_text: rich('int main() {}'), caption: rich('entry'), language: 'c++' }),
      node('code', { rich_text: rich('Get-Item'), caption: [], language: 'java/c/c++/c#' }),
    ]);
    assert.equal(
      md,
      '````markdown\n```js\nx\n```\n````\n\n```cpp\nint main() {}\n```\n\n_entry_\n\n```java\nGet-Item\n```',
    );
  });

  it('makes the first row a table header, escapes pipes and keeps empty cells', () => {
    const row = (...cells: string[]) => node('table_row', { cells: cells.map((c) => (c ? rich(c) : [])) });
    const md = renderBlocks([
      node('table', { table_width: 3, has_column_header: false, has_row_header: true }, [
        row('a|b', '', 'c'),
        row('1', '2', '3'),
      ]),
    ]);
    assert.equal(md, '| a\\|b |  | c |\n| --- | --- | --- |\n| 1 | 2 | 3 |');
  });

  it('degrades unknown block types to their text and children, never to an error', () => {
    const md = renderBlocks([
      node('heading_4', { rich_text: rich('Small heading'), color: 'default' }),
      node('transcription', { title: rich('Standup'), summary: { rich_text: rich('All green.') } }, [
        para('Child of an unknown block.'),
      ]),
      node('ai_block', {}),
      node('form_embed', { url: 'https://forms.acme.test/1' }),
      node('unsupported', {}),
      para('End.'),
    ]);
    assert.equal(
      md,
      '#### Small heading\n\nStandup\n\nAll green.\n\nChild of an unknown block.\n\n[https://forms.acme.test/1](https://forms.acme.test/1)\n\nEnd.',
    );
  });

  it('refuses a known block whose payload is not Notion’s shape', () => {
    assert.throws(
      () => renderBlocks([node('to_do', { rich_text: 'not rich text', checked: 'yes' })]),
      MalformedBlockError,
    );
  });

  it('renders media: hosted files without their signature, captions as alt text or labels', () => {
    const md = renderBlocks([
      node('image', {
        type: 'file',
        file: {
          url: 'https://s3.example/ws/a%20b.png?X-Amz-Signature=abc',
          expiry_time: '2030-01-01T00:00:00.000Z',
        },
        caption: rich('A [diagram]'),
      }),
      node('pdf', { type: 'external', external: { url: 'https://acme.test/spec.pdf' }, caption: [] }),
      node('file', {
        type: 'file',
        file: { url: 'https://s3.example/ws/report.xlsx?sig=1', expiry_time: '2030-01-01T00:00:00.000Z' },
        caption: [],
        name: 'Q3 report.xlsx',
      }),
      node('link_preview', { url: 'https://github.com/acme/kb/pull/1' }),
    ]);
    assert.equal(
      md,
      [
        '![A \\[diagram\\]](https://s3.example/ws/a%20b.png)',
        '[spec.pdf](https://acme.test/spec.pdf)',
        '[Q3 report.xlsx](https://s3.example/ws/report.xlsx)',
        '[https://github.com/acme/kb/pull/1](https://github.com/acme/kb/pull/1)',
      ].join('\n\n'),
    );
  });
});

describe('notes properties', () => {
  const value = (v: Record<string, unknown>, id = 'x'): PropertyValue => ({ id, ...v }) as PropertyValue;

  it('takes the title from the property of type title, whatever its name', () => {
    assert.equal(
      pageTitle({ Task: value({ type: 'title', title: [rt('Ship '), rt('it')] }, 'title') }),
      'Ship it',
    );
    assert.equal(pageTitle({ Name: value({ type: 'title', title: [] }, 'title') }), 'Untitled');
  });

  it('renders each property type as text, leaves out the title and empty values', () => {
    const related = randomUUID();
    const md = renderProperties(
      {
        Name: value({ type: 'title', title: [rt('Row')] }),
        Status: value(np.status('In progress')),
        Empty: value(np.text('')),
        None: value(np.number(null)),
        When: value(np.date('2024-05-01', '2024-05-03')),
        Mail: value(np.email('ada@acme.test')),
        Score: value(np.formula(42)),
        Key: value(np.uniqueId('ENG', 7)),
        Related: value(np.relation(related)),
        Rollup: value({
          type: 'rollup',
          rollup: {
            type: 'array',
            array: [
              { type: 'number', number: 3 },
              { type: 'rich_text', rich_text: [rt('x')] },
            ],
            function: 'show_original',
          },
        }),
        Created: value({ type: 'created_time', created_time: '2024-03-01T10:15:00.000Z' }),
        By: value({ type: 'created_by', created_by: { object: 'user', id: 'u-1' } }),
        Files: value({
          type: 'files',
          files: [{ name: 'spec.pdf', type: 'external', external: { url: 'https://x' } }],
        }),
        Checked: value({ type: 'verification', verification: { state: 'verified' } }),
        Future: value({ type: 'place', place: 'Berlin' }),
      },
      { titleOf: (id) => (id === related ? 'Parent task' : undefined) },
    );
    assert.equal(
      md,
      [
        '| Property | Value |',
        '| --- | --- |',
        '| Status | In progress |',
        '| When | 2024-05-01 → 2024-05-03 |',
        '| Mail | ada@acme.test |',
        '| Score | 42 |',
        '| Key | ENG-7 |',
        `| Related | [Parent task](${plainUrl(related)}) |`,
        '| Rollup | 3, x |',
        '| Created | 2024-03-01T10:15:00.000Z |',
        '| By | user u-1 |',
        '| Files | spec.pdf |',
        '| Checked | verified |',
        '| Future | Berlin |',
      ].join('\n'),
    );
  });
});
