/**
 * GitBook's JSON document (OAS `JSONDocument`: Slate-style blocks, inlines and text leaves) to
 * GitBook-flavoured markdown, for the one body GitBook serves only in that form: a reusable content. The
 * output is spliced into the page's own markdown where the content is referenced, and render.ts turns the
 * whole into plain markdown, so hints, tabs and expandables here are written as GitBook's tags.
 *
 * Text is what matters for search: a block kind not known here gives the text of its children; void
 * blocks with no text (images, drawings, tables of records, integrations) give nothing.
 */

interface Node {
  object?: unknown;
  type?: unknown;
  data?: Record<string, unknown>;
  nodes?: unknown;
  leaves?: unknown;
  text?: unknown;
  marks?: unknown;
  fragments?: unknown;
}

const asNode = (value: unknown): Node | undefined =>
  value && typeof value === 'object' ? (value as Node) : undefined;

const children = (node: Node): Node[] =>
  Array.isArray(node.nodes) ? node.nodes.map(asNode).filter((n): n is Node => n !== undefined) : [];

/** The markdown of a document's top-level blocks, separated by blank lines. */
export function documentToMarkdown(nodes: readonly unknown[]): string {
  return blocks(nodes.map(asNode).filter((n): n is Node => n !== undefined));
}

function blocks(nodes: Node[]): string {
  return nodes
    .map(block)
    .filter((text) => text.trim() !== '')
    .join('\n\n');
}

function block(node: Node): string {
  if (node.object !== 'block') return inline([node]);
  const type = String(node.type ?? '');
  const data = node.data ?? {};
  const kids = children(node);
  const heading = /^heading-([1-6])$/.exec(type);
  if (heading) return `${'#'.repeat(Number(heading[1]))} ${inline(kids)}`;
  switch (type) {
    case 'paragraph':
      return inline(kids);
    case 'list-unordered':
    case 'list-ordered':
    case 'list-tasks':
      return list(type, kids);
    case 'code': {
      const lines = kids.map((line) => inline(children(line)));
      const fence = lines.some((l) => l.includes('```')) ? '~~~' : '```';
      return [`${fence}${typeof data['syntax'] === 'string' ? data['syntax'] : ''}`, ...lines, fence].join(
        '\n',
      );
    }
    case 'hint':
      return `{% hint style="${attr(data['style'] ?? 'info')}" %}\n${blocks(kids)}\n{% endhint %}`;
    case 'blockquote':
      return blocks(kids)
        .split('\n')
        .map((l) => (l ? `> ${l}` : '>'))
        .join('\n');
    case 'divider':
      return '---';
    case 'tabs':
      return `{% tabs %}\n${kids.map(tab).join('\n')}\n{% endtabs %}`;
    case 'expandable':
      return fragments(node)
        .map((f, i) => (i === 0 ? `**${inline(f).trim()}**` : blocks(f)))
        .join('\n\n');
    case 'embed':
      return typeof data['url'] === 'string' ? `[${data['url']}](${data['url']})` : '';
    case 'math':
      return typeof data['formula'] === 'string' ? `$$\n${data['formula']}\n$$` : '';
    default:
      return blocks(kids);
  }
}

function tab(node: Node): string {
  const title = typeof node.data?.['title'] === 'string' ? node.data['title'] : '';
  return `{% tab title="${attr(title)}" %}\n${blocks(children(node))}\n{% endtab %}`;
}

/** An expandable's title and body: its fragments, or its children when it has none. */
function fragments(node: Node): Node[][] {
  const list = Array.isArray(node.fragments) ? node.fragments.map(asNode) : [];
  const found = list.filter((f): f is Node => f !== undefined).map(children);
  return found.length > 0 ? found : [children(node)];
}

function list(type: string, items: Node[]): string {
  return items
    .map((item, i) => {
      const marker =
        type === 'list-ordered'
          ? `${i + 1}.`
          : type === 'list-tasks'
            ? `- [${item.data?.['checked'] === true ? 'x' : ' '}]`
            : '-';
      const body = blocks(children(item)).split('\n');
      const pad = ' '.repeat(marker.length + 1);
      return [`${marker} ${body[0] ?? ''}`, ...body.slice(1).map((l) => (l ? pad + l : l))].join('\n');
    })
    .join('\n');
}

/** Text of inlines and text nodes: links as markdown links, marks as markdown emphasis. */
function inline(nodes: Node[]): string {
  let out = '';
  for (const node of nodes) {
    if (node.object === 'text') {
      out += leaves(node);
    } else if (node.object === 'inline') {
      const text = inline(children(node));
      const ref = asNode(node.data?.['ref']) as { kind?: unknown; url?: unknown } | undefined;
      if (node.type === 'link' && ref?.kind === 'url' && typeof ref.url === 'string') {
        out += `[${text.replace(/[[\]]/g, '')}](${ref.url})`;
      } else if (node.type === 'inline-math' && typeof node.data?.['formula'] === 'string') {
        out += `$${node.data['formula']}$`;
      } else {
        out += text;
      }
    } else if (node.object === 'block') {
      out += block(node);
    }
  }
  return out;
}

function leaves(node: Node): string {
  const list = Array.isArray(node.leaves) ? node.leaves.map(asNode) : [node];
  let out = '';
  for (const leaf of list) {
    if (!leaf || typeof leaf.text !== 'string') continue;
    const marks = new Set(
      (Array.isArray(leaf.marks) ? leaf.marks : []).map((m) => String(asNode(m)?.type ?? '')),
    );
    let text = leaf.text;
    if (!text.trim()) {
      out += text;
      continue;
    }
    if (marks.has('code')) text = `\`${text}\``;
    if (marks.has('bold')) text = `**${text}**`;
    if (marks.has('italic')) text = `_${text}_`;
    out += text;
  }
  return out;
}

function attr(value: unknown): string {
  return String(value).replace(/"/g, "'");
}
