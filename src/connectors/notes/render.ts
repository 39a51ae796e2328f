/**
 * Notion block trees and page properties to markdown (vendor-apis/notion.md section 5). Pure: the sync
 * fetches the tree (children of every block with `has_children`, synced copies read from their original)
 * and hands it here.
 *
 * Choices where Notion has no markdown twin:
 * - toggles are list items whose body is nested under them (markdown has no folding; the nesting keeps
 *   the relation), toggleable headings are headings followed by their body;
 * - callouts are quotes led by their emoji; columns are flattened in reading order;
 * - a table's first row is its header (GFM needs one; Notion's `has_column_header` is only styling);
 * - hosted files (`type: file`) lose their signed query string: it expires within the hour and changes
 *   on every read, so keeping it would make an unchanged page look changed;
 * - a block type this renderer does not know degrades to the text it carries (any `plain_text`, `url`
 *   or `expression` in its payload), then its children; it never fails the page.
 * Only characters that would change the meaning are escaped (emphasis markers, backticks, tags, block
 * markers at the start of a line), so words such as `snake_case` stay searchable as written.
 */
import type { z } from 'zod';
import {
  calloutPayload,
  codePayload,
  equationPayload,
  filePayload,
  headingPayload,
  linkToPagePayload,
  type NotionBlock,
  type PropertyValue,
  type RichText,
  richTextSchema,
  tablePayload,
  tableRowPayload,
  textPayload,
  titlePayload,
  toDoPayload,
  urlPayload,
} from './schemas.ts';

/** A block with its children, as the sync fetched them. */
export interface BlockNode {
  block: NotionBlock;
  children: BlockNode[];
}

export interface RenderOptions {
  /** Title of a page or database by id, where the sync knows it (link_to_page, relations). */
  titleOf?: ((id: string) => string | undefined) | undefined;
}

/** A block of a known type whose payload is not Notion's shape: the page cannot be rendered faithfully. */
export class MalformedBlockError extends Error {
  override name = 'MalformedBlockError';
}

const NOTION_ORIGIN = 'https://www.notion.so';

/** The notion.so address of a page or database by id (child_page blocks carry no URL). */
function notionUrl(id: string): string {
  return `${NOTION_ORIGIN}/${id.replace(/-/g, '')}`;
}

// ---------------------------------------------------------------------------------------------------
// Rich text
// ---------------------------------------------------------------------------------------------------

/** Rich text to inline markdown: annotations, links (mentions link where Notion gives an href), equations. */
export function richTextToMarkdown(items: readonly RichText[]): string {
  return items.map(segment).join('');
}

/** The text alone, as a person reads it. */
export function plainText(items: readonly RichText[] | undefined): string {
  return (items ?? []).map((t) => t.plain_text).join('');
}

function segment(rt: RichText): string {
  if (rt.type === 'equation' && rt.equation) return `$${rt.equation.expression}$`;
  const text = rt.plain_text;
  if (!text) return '';
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(text)!;
  const [, lead = '', body = '', trail = ''] = m;
  if (!body) return text;
  const a = rt.annotations;
  let core = a.code ? codeSpan(body) : escapeInline(body);
  if (a.italic) core = `_${core}_`;
  if (a.bold) core = `**${core}**`;
  if (a.strikethrough) core = `~~${core}~~`;
  const link = rt.text?.link?.url ?? rt.href ?? null;
  if (link) core = `[${core}](${linkTarget(link)})`;
  return lead + core + trail;
}

function codeSpan(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

function escapeInline(text: string): string {
  return text
    .replace(/[*`~]/g, (c) => `\\${c}`)
    .replace(/(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, '\\_')
    .replace(/<(?=[A-Za-z/!?])/g, '\\<');
}

/** Notion writes links to its own pages as paths (`/5983...`); a document must stand on its own. */
function linkTarget(url: string): string {
  const absolute = url.startsWith('/') && !url.startsWith('//') ? NOTION_ORIGIN + url : url;
  return absolute.replace(/ /g, '%20').replace(/\(/g, '%28').replace(/\)/g, '%29');
}

/** A line that would read as a heading, quote, list item or rule is escaped at its start. */
function escapeLineStart(text: string): string {
  return text.replace(/^(\s*)([#>+-]|\d+[.)])(?=\s|$)/gm, (_m, ws: string, marker: string) =>
    /^\d/.test(marker) ? `${ws}${marker.replace(/([.)])$/, '\\$1')}` : `${ws}\\${marker}`,
  );
}

// ---------------------------------------------------------------------------------------------------
// Blocks
// ---------------------------------------------------------------------------------------------------

/** Blocks rendered as list items, by marker family: items of one family in a row form one list. */
const LIST_FAMILY: Record<string, string> = {
  bulleted_list_item: '-',
  to_do: '-',
  toggle: '-',
  numbered_list_item: '1.',
};

/** A block tree to markdown. */
export function renderBlocks(nodes: readonly BlockNode[], opts: RenderOptions = {}): string {
  return renderNodes(nodes, opts).trim();
}

function renderNodes(nodes: readonly BlockNode[], opts: RenderOptions): string {
  let out = '';
  let previousFamily: string | undefined;
  let number = 0;
  for (const node of nodes) {
    const type = node.block.type;
    number = type === 'numbered_list_item' ? number + 1 : 0;
    const chunk = renderNode(node, opts, number);
    if (!chunk) continue;
    const family = LIST_FAMILY[type];
    if (out) out += family !== undefined && family === previousFamily ? '\n' : '\n\n';
    out += chunk;
    previousFamily = family;
  }
  return out;
}

function payload<S extends z.ZodType>(node: BlockNode, schema: S): z.infer<S> {
  const { block } = node;
  const parsed = schema.safeParse(block[block.type]);
  if (!parsed.success) {
    throw new MalformedBlockError(`block ${block.id} (${block.type}) is not in Notion's shape`);
  }
  return parsed.data;
}

// One switch over Notion's block types, a case each: split up, the table of types would be scattered.
function renderNode(node: BlockNode, opts: RenderOptions, number: number): string {
  const { block } = node;
  const children = () => renderNodes(node.children, opts);
  switch (block.type) {
    case 'paragraph': {
      const text = paragraphText(payload(node, textPayload).rich_text);
      return joinChunks(text, children());
    }
    case 'heading_1':
    case 'heading_2':
    case 'heading_3':
    case 'heading_4': {
      const level = Number(block.type.slice(-1));
      const text = richTextToMarkdown(payload(node, headingPayload).rich_text).replace(/\s*\n\s*/g, ' ');
      return joinChunks(text.trim() ? `${'#'.repeat(level)} ${text.trim()}` : '', children());
    }
    case 'bulleted_list_item':
    case 'toggle':
      return listItem('- ', richTextToMarkdown(payload(node, textPayload).rich_text), children());
    case 'numbered_list_item':
      return listItem(`${number}. `, richTextToMarkdown(payload(node, textPayload).rich_text), children());
    case 'to_do': {
      const p = payload(node, toDoPayload);
      return listItem(p.checked ? '- [x] ' : '- [ ] ', richTextToMarkdown(p.rich_text), children());
    }
    case 'quote':
      return quote(joinChunks(paragraphText(payload(node, textPayload).rich_text), children()));
    case 'callout': {
      const p = payload(node, calloutPayload);
      const icon = p.icon?.type === 'emoji' && p.icon.emoji ? `${p.icon.emoji} ` : '';
      return quote(joinChunks(icon + paragraphText(p.rich_text), children()));
    }
    case 'code': {
      const p = payload(node, codePayload);
      const caption = richTextToMarkdown(p.caption ?? []).trim();
      return joinChunks(
        codeFence(plainText(p.rich_text), codeLanguage(p.language)),
        caption ? `_${caption}_` : '',
      );
    }
    case 'equation': {
      const expression = payload(node, equationPayload).expression.trim();
      return expression ? `$$\n${expression}\n$$` : '';
    }
    case 'divider':
      return '---';
    case 'table':
      return table(node);
    case 'child_page':
    case 'child_database': {
      const title = payload(node, titlePayload).title.trim() || 'Untitled';
      return `[${escapeLabel(title)}](${notionUrl(block.id)})`;
    }
    case 'link_to_page': {
      const p = payload(node, linkToPagePayload);
      const id = p.page_id ?? p.database_id;
      if (!id) return '';
      const title = opts.titleOf?.(id) ?? (p.database_id ? 'Linked database' : 'Linked page');
      return `[${escapeLabel(title)}](${notionUrl(id)})`;
    }
    case 'image':
    case 'video':
    case 'pdf':
    case 'file':
    case 'audio':
      return media(node);
    case 'bookmark':
    case 'embed':
    case 'link_preview': {
      const p = payload(node, urlPayload);
      const caption = plainText(p.caption).trim();
      return joinChunks(`[${escapeLabel(caption || p.url)}](${linkTarget(p.url)})`, children());
    }
    case 'synced_block':
    case 'column_list':
    case 'column':
      return children();
    case 'table_of_contents':
    case 'breadcrumb':
    case 'unsupported':
      return children();
    default:
      return joinChunks(escapeLineStart(degradedText(block[block.type])), children());
  }
}

function paragraphText(rich: readonly RichText[]): string {
  // A line break inside a Notion paragraph stays a line break (two trailing spaces), not a new paragraph.
  return escapeLineStart(richTextToMarkdown(rich)).replace(/ *\n/g, '  \n');
}

function joinChunks(...chunks: string[]): string {
  return chunks.filter((c) => c.trim()).join('\n\n');
}

function listItem(marker: string, text: string, body: string): string {
  const indent = ' '.repeat(marker.startsWith('- [') ? 2 : marker.length);
  const head = marker + escapeLineStart(text.trim()).replace(/\n/g, `\n${indent}`);
  if (!body.trim()) return head;
  // A nested list may follow the item's line directly; any other body needs a blank line, or it would
  // read as the continuation of the item's own paragraph.
  const nestedList = /^(?:[-+*]|\d+[.)])\s/.test(body);
  return `${head}\n${nestedList ? '' : '\n'}${indentLines(body, indent)}`;
}

function indentLines(text: string, indent: string): string {
  return text
    .split('\n')
    .map((line) => (line ? indent + line : line))
    .join('\n');
}

function quote(text: string): string {
  if (!text.trim()) return '';
  return text
    .split('\n')
    .map((line) => (line ? `> ${line}` : '>'))
    .join('\n');
}

function codeFence(code: string, language: string): string {
  const longest = Math.max(2, ...[...code.matchAll(/^ *(`{3,})/gm)].map((m) => m[1]!.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${code.replace(/\n$/, '')}\n${fence}`;
}

/** Notion's language names (`plain text`, `c++`, `java/c/c++/c#`) as the info strings highlighters know. */
function codeLanguage(language: string): string {
  const lang = language.trim().toLowerCase();
  const known: Record<string, string> = {
    'plain text': '',
    'c++': 'cpp',
    'c#': 'csharp',
    'f#': 'fsharp',
    'objective-c': 'objectivec',
    'vb.net': 'vbnet',
    'visual basic': 'vb',
    'java/c/c++/c#': 'java',
    'notion formula': '',
  };
  return known[lang] ?? lang.replace(/\s+/g, '-');
}

function table(node: BlockNode): string {
  const rows = node.children
    .filter((c) => c.block.type === 'table_row')
    .map((c) => payload(c, tableRowPayload).cells.map(cell));
  payload(node, tablePayload);
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((r) => r.length));
  const line = (cells: string[]) =>
    `| ${Array.from({ length: width }, (_, i) => cells[i] ?? '').join(' | ')} |`;
  const [header, ...body] = rows;
  return [line(header!), line(Array.from({ length: width }, () => '---')), ...body.map(line)].join('\n');
}

function cell(rich: readonly RichText[]): string {
  return escapeCell(richTextToMarkdown(rich));
}

function escapeCell(text: string): string {
  return text
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

function escapeLabel(text: string): string {
  return text.replace(/([[\]\\])/g, '\\$1');
}

function media(node: BlockNode): string {
  const p = payload(node, filePayload);
  const hosted = p.file?.url;
  const url = hosted ? stripQuery(hosted) : p.external?.url;
  const caption = plainText(p.caption).trim();
  if (!url) return caption ? escapeLineStart(escapeInline(caption)) : '';
  if (node.block.type === 'image')
    return `![${escapeLabel(caption.replace(/\s*\n\s*/g, ' '))}](${linkTarget(url)})`;
  const label = caption || p.name || fileName(url) || node.block.type;
  return `[${escapeLabel(label)}](${linkTarget(url)})`;
}

function stripQuery(url: string): string {
  try {
    const u = new URL(url);
    u.search = '';
    u.hash = '';
    return u.toString();
  } catch {
    return url.replace(/[?#].*$/, '');
  }
}

function fileName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    return '';
  }
}

/** The text a block of an unknown type carries, wherever in its payload it sits. */
function degradedText(value: unknown): string {
  const texts: string[] = [];
  const visit = (v: unknown, depth: number) => {
    if (depth > 6 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      const rich = v.map((x) => richTextSchema.safeParse(x));
      if (v.length > 0 && rich.every((r) => r.success)) {
        const text = richTextToMarkdown(rich.map((r) => r.data!)).trim();
        if (text) texts.push(text);
        return;
      }
      for (const x of v) visit(x, depth + 1);
      return;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.plain_text === 'string' && o.plain_text.trim()) {
      texts.push(escapeInline(o.plain_text.trim()));
      return;
    }
    for (const [key, x] of Object.entries(o)) {
      if (typeof x === 'string' && x.trim()) {
        if (key === 'url') texts.push(`[${escapeLabel(x)}](${linkTarget(x)})`);
        else if (key === 'expression') texts.push(`$${x}$`);
        else if (key === 'title' || key === 'content' || key === 'text') texts.push(escapeInline(x.trim()));
      } else {
        visit(x, depth + 1);
      }
    }
  };
  visit(value, 0);
  return texts.join('\n\n');
}

// ---------------------------------------------------------------------------------------------------
// Page properties
// ---------------------------------------------------------------------------------------------------

/** The page's title: the one property whose type is `title`; "Untitled" when it is empty. */
export function pageTitle(properties: Record<string, PropertyValue>): string {
  for (const value of Object.values(properties)) {
    if (value.type === 'title') {
      const text = plainText(richArray(value['title'])).replace(/\s+/g, ' ').trim();
      return text || 'Untitled';
    }
  }
  return 'Untitled';
}

/**
 * A database row's properties (all but the title) as a two-column table, in the order Notion lists
 * them; empty values are left out so the table stays small.
 */
export function renderProperties(
  properties: Record<string, PropertyValue>,
  opts: RenderOptions = {},
): string {
  const rows: string[] = [];
  for (const [name, value] of Object.entries(properties)) {
    if (value.type === 'title') continue;
    const text = escapeCell(propertyText(value, opts));
    if (text) rows.push(`| ${escapeCell(escapeInline(name))} | ${text} |`);
  }
  if (rows.length === 0) return '';
  return ['| Property | Value |', '| --- | --- |', ...rows].join('\n');
}

function richArray(value: unknown): RichText[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((v) => {
    const parsed = richTextSchema.safeParse(v);
    return parsed.success ? [parsed.data] : [];
  });
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function nameOf(value: unknown): string {
  const o = record(value);
  return o ? str(o.name) : '';
}

function dateText(value: unknown): string {
  const o = record(value);
  if (!o || !str(o.start)) return '';
  return str(o.end) ? `${str(o.start)} → ${str(o.end)}` : str(o.start);
}

function userText(value: unknown): string {
  const o = record(value);
  if (!o) return '';
  return str(o.name) || (str(o.id) ? `user ${str(o.id)}` : '');
}

function propertyText(value: PropertyValue, opts: RenderOptions): string {
  return valueText(value.type, value[value.type], opts);
}

function valueText(type: string, v: unknown, opts: RenderOptions): string {
  switch (type) {
    case 'title':
    case 'rich_text':
      return richTextToMarkdown(richArray(v));
    case 'number':
      return typeof v === 'number' ? String(v) : '';
    case 'select':
    case 'status':
      return escapeInline(nameOf(v));
    case 'multi_select':
      return Array.isArray(v) ? v.map(nameOf).filter(Boolean).map(escapeInline).join(', ') : '';
    case 'date':
      return dateText(v);
    case 'checkbox':
      return v === true ? 'Yes' : v === false ? 'No' : '';
    case 'url':
      return str(v) ? `[${escapeLabel(str(v))}](${linkTarget(str(v))})` : '';
    case 'email':
    case 'phone_number':
    case 'created_time':
    case 'last_edited_time':
      return str(v);
    case 'people':
      return Array.isArray(v) ? v.map(userText).filter(Boolean).join(', ') : '';
    case 'created_by':
    case 'last_edited_by':
      return userText(v);
    case 'relation':
      return Array.isArray(v)
        ? v
            .map((r) => str(record(r)?.id))
            .filter(Boolean)
            .map((id) => `[${escapeLabel(opts.titleOf?.(id) ?? 'Linked page')}](${notionUrl(id)})`)
            .join(', ')
        : '';
    case 'files':
      return Array.isArray(v) ? v.map(nameOf).filter(Boolean).map(escapeInline).join(', ') : '';
    case 'unique_id': {
      const o = record(v);
      if (!o || typeof o.number !== 'number') return '';
      return str(o.prefix) ? `${str(o.prefix)}-${o.number}` : String(o.number);
    }
    case 'verification':
      return escapeInline(str(record(v)?.state));
    case 'formula':
    case 'rollup': {
      const o = record(v);
      if (!o) return '';
      const inner = str(o.type);
      if (inner === 'array') {
        return Array.isArray(o.array)
          ? o.array
              .map((item) => {
                const i = record(item);
                return i ? valueText(str(i.type), i[str(i.type)], opts) : '';
              })
              .filter(Boolean)
              .join(', ')
          : '';
      }
      if (inner === 'string') return escapeInline(str(o.string));
      if (inner === 'boolean') return valueText('checkbox', o.boolean, opts);
      return inner ? valueText(inner, o[inner], opts) : '';
    }
    case 'button':
      return '';
    default: {
      if (typeof v === 'string') return escapeInline(v);
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      const rich = richArray(v);
      return rich.length > 0 ? richTextToMarkdown(rich) : '';
    }
  }
}
