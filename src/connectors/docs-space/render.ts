/**
 * GitBook-flavoured markdown (`format=markdown`) to the plain markdown readers, the chunker and search
 * understand. GitBook keeps its blocks as Liquid-style tags (`{% hint %}`, `{% tabs %}`, `{% code %}`,
 * `{% embed %}`, `{% content-ref %}`...) and some as HTML (`<details>`, `<figure>`, `<table>`); ordinary
 * markdown (headings, lists, task lists, tables, fences, links, images) passes through untouched.
 *
 * Tolerant by design: a tag with no end is read as one that needs none, a stray end tag is dropped, an
 * unknown tag gives its inner text, and text inside code (fences and inline spans) is never read as a tag.
 */
import { htmlToMarkdown } from '../../lib/html-to-markdown.ts';

/** Where the page sits, for the heading that gives every chunk its place in the tree. */
interface PagePlace {
  title: string;
  /** Titles of the groups and parent pages above the page, outermost first. */
  trail: readonly string[];
  description?: string | undefined;
}

/** The separator of the tree path, in headings and nowhere else. */
const TRAIL_SEPARATOR = ' › ';

/**
 * The item's markdown: a first heading with the page's tree path (`# Getting started › Installation`,
 * standing in for GitBook's own title heading, so sub-headings nest under the path), the description,
 * then the body.
 */
export function renderPage(markdown: string, place: PagePlace): string {
  const body = dropTitleHeading(gitbookToMarkdown(markdown), place.title);
  const parts = [`# ${[...place.trail, place.title].map(headingText).join(TRAIL_SEPARATOR)}`];
  const description = place.description?.trim();
  if (description && !body.slice(0, 2_000).includes(description)) parts.push(description);
  if (body) parts.push(body);
  return parts.join('\n\n');
}

/** Converts GitBook-flavoured markdown to plain markdown. */
export function gitbookToMarkdown(markdown: string): string {
  const text = stripFrontMatter(markdown.replace(/\r\n?/g, '\n'));
  const tree = parse(tokenize(convertHtml(text)));
  return tidy(renderNodes(tree.children));
}

// ---------------------------------------------------------------------------------------------------
// Title heading and front matter
// ---------------------------------------------------------------------------------------------------

/** A title as heading text: one line, and no trailing `#` that markdown would read as a closing sequence. */
function headingText(title: string): string {
  return title.replace(/\s+/g, ' ').trim().replace(/\s#+$/, '') || 'Untitled';
}

const comparable = (s: string) => s.replace(/[*_`]/g, '').replace(/\s+/g, ' ').trim().toLowerCase();

/** GitBook starts a page with `# <title>`; the path heading replaces it rather than repeating it. */
function dropTitleHeading(body: string, title: string): string {
  const m = /^# +(.+?)[ #]*(?:\n|$)/.exec(body);
  if (!m || comparable(m[1]!) !== comparable(title)) return body;
  return body.slice(m[0].length).replace(/^\n+/, '');
}

/** Git Sync's YAML header (`description:`, `cover:`...): metadata the sync takes from the page tree. */
function stripFrontMatter(text: string): string {
  const m = /^---\n((?:[\w-]+:.*\n|[ \t-].*\n|\n)*?)---\n/.exec(text);
  return m ? text.slice(m[0].length) : text;
}

// ---------------------------------------------------------------------------------------------------
// Code fences: found once, never touched
// ---------------------------------------------------------------------------------------------------

interface Segment {
  code: boolean;
  lines: string[];
}

/** Splits lines into fenced code blocks (kept byte for byte) and the rest. An unclosed fence runs to the end. */
function segments(text: string): Segment[] {
  const out: Segment[] = [];
  let current: Segment | null = null;
  let fence: { char: string; length: number } | null = null;
  const push = (line: string, { code }: { code: boolean }) => {
    if (current?.code !== code) {
      current = { code, lines: [] };
      out.push(current);
    }
    current.lines.push(line);
  };
  for (const line of text.split('\n')) {
    if (fence) {
      push(line, { code: true });
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) {
        fence = null;
        current = null;
      }
      continue;
    }
    const open = /^\s*(`{3,}|~{3,})(.*)$/.exec(line);
    if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) {
      fence = { char: open[1]![0]!, length: open[1]!.length };
      current = null;
      push(line, { code: true });
      continue;
    }
    push(line, { code: false });
  }
  return out;
}

// A code span: a run of backticks, then anything up to the same run (CommonMark); a lone backtick is text.
const CODE_SPAN = /(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g;

/** Calls `fn` with each part of a line outside inline code spans and its offset in the line. */
function eachOutsideInlineCode(line: string, fn: (part: string, offset: number) => void): void {
  let last = 0;
  if (line.includes('`')) {
    for (const m of line.matchAll(CODE_SPAN)) {
      fn(line.slice(last, m.index), last);
      last = m.index + m[0].length;
    }
  }
  fn(line.slice(last), last);
}

/** Applies `fn` to the parts of a line outside inline code spans. */
function outsideInlineCode(line: string, fn: (part: string) => string): string {
  let out = '';
  let last = 0;
  eachOutsideInlineCode(line, (part, offset) => {
    out += line.slice(last, offset) + fn(part);
    last = offset + part.length;
  });
  return out;
}

// ---------------------------------------------------------------------------------------------------
// HTML: expandables, figures and tables, inline marks
// ---------------------------------------------------------------------------------------------------

// HTML block starts (CommonMark type 6 names GitBook writes) that end at a blank line.
const HTML_BLOCK = /^<(figure|table|div|picture|p|ol|ul|dl|center|blockquote|h[1-6]|img|hr)(?=[\s>/])/i;

function convertHtml(text: string): string {
  const out: string[] = [];
  for (const seg of segments(text)) {
    if (seg.code) {
      out.push(...seg.lines);
      continue;
    }
    const lines = seg.lines;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const trimmed = line.trim();
      // An expandable is its summary as a bold line, then its body as ordinary text.
      if (/^<\/?details(\s[^>]*)?>$/i.test(trimmed)) {
        out.push('');
        continue;
      }
      const summary = /^<summary(?:\s[^>]*)?>([\s\S]*?)<\/summary>$/i.exec(trimmed);
      if (summary) {
        const title = inlineHtml(summary[1]!).trim();
        out.push('', title ? `**${title}**` : '', '');
        continue;
      }
      if (HTML_BLOCK.test(trimmed)) {
        const block = [line];
        while (i + 1 < lines.length && lines[i + 1]!.trim() !== '') block.push(lines[++i]!);
        out.push('', htmlToMarkdown(block.join('\n')), '');
        continue;
      }
      out.push(outsideInlineCode(line, inlineHtml));
    }
  }
  return out.join('\n');
}

function htmlAttr(attrs: string, name: string): string | undefined {
  const m = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(attrs);
  return m ? (m[1] ?? m[2] ?? m[3]) : undefined;
}

/** The inline HTML GitBook writes (colour marks, keyboard keys, button links, images) as markdown. */
function inlineHtml(s: string): string {
  if (!s.includes('<') && !s.includes('&')) return s;
  return s
    .replace(/<img\b([^>]*)>/gi, (_m, attrs: string) => {
      const src = htmlAttr(attrs, 'src');
      const alt = (htmlAttr(attrs, 'alt') ?? '').replace(/[[\]]/g, '').trim();
      return src && alt && !src.startsWith('data:') ? `![${alt}](${linkTarget(src)})` : '';
    })
    .replace(/<a\b([^>]*)>([\s\S]*?)<\/a>/gi, (_m, attrs: string, label: string) => {
      const href = htmlAttr(attrs, 'href');
      const text = label.replace(/<[^>]+>/g, '').trim();
      if (!href) return text;
      return `[${text || href}](${linkTarget(href)})`;
    })
    .replace(/<(strong|b)>([\s\S]*?)<\/\1>/gi, '**$2**')
    .replace(/<(em|i)>([\s\S]*?)<\/\1>/gi, '_$2_')
    .replace(/<i\b[^>]*><\/i>/gi, '')
    .replace(/<br\s*\/?>/gi, ' ')
    .replace(/<\/?(?:mark|span|kbd|sup|sub|u|small|font|abbr|ins|del)\b[^>]*>/gi, '')
    .replace(/&#x20;|&#32;|&nbsp;/g, ' ');
}

// ---------------------------------------------------------------------------------------------------
// Liquid-style tags: tokens, tree, markdown
// ---------------------------------------------------------------------------------------------------

type Attrs = Record<string, string>;

type Token =
  | { kind: 'text'; text: string }
  | {
      kind: 'tag';
      name: string;
      closing: boolean;
      attrs: Attrs;
      /** First line of the tag stands alone (only whitespace before it): a block, not inline. */
      block: boolean;
      indent: string;
    };

interface Element {
  name: string;
  attrs: Attrs;
  block: boolean;
  indent: string;
  children: Node[];
  closed: boolean;
}
type Node = string | Element;

// Tags that never take an end tag, so they never swallow what follows.
const VOID_TAGS = new Set(['include', 'else', 'elsif', 'elseif', 'comment']);

const TAG = /\{%-?\s*([\s\S]*?)\s*-?%\}/g;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const pushText = (s: string) => {
    if (!s) return;
    const last = tokens.at(-1);
    if (last?.kind === 'text') last.text += s;
    else tokens.push({ kind: 'text', text: s });
  };
  for (const seg of segments(text)) {
    if (seg.code) {
      pushText(seg.lines.map((l) => `${l}\n`).join(''));
      continue;
    }
    for (const line of seg.lines) {
      const tags: Array<{ start: number; end: number; body: string }> = [];
      eachOutsideInlineCode(line, (part, offset) => {
        for (const m of part.matchAll(TAG)) {
          tags.push({ start: offset + m.index, end: offset + m.index + m[0].length, body: m[1]! });
        }
      });
      if (tags.length === 0) {
        pushText(`${line}\n`);
        continue;
      }
      let rest = line.slice(tags.at(-1)!.end);
      for (let i = tags.length - 1; i >= 0; i--)
        rest = line.slice(i ? tags[i - 1]!.end : 0, tags[i]!.start) + rest;
      const onlyTags = rest.trim() === '';
      const indent = /^\s*/.exec(line)![0];
      let last = 0;
      for (const t of tags) {
        const before = line.slice(last, t.start);
        if (!onlyTags) pushText(before);
        const tag = readTag(t.body);
        if (tag) {
          tokens.push({
            kind: 'tag',
            ...tag,
            block: onlyTags || line.slice(0, t.start).trim() === '',
            indent,
          });
        }
        last = t.end;
      }
      if (!onlyTags) pushText(`${line.slice(last)}\n`);
    }
  }
  return tokens;
}

function readTag(body: string): { name: string; closing: boolean; attrs: Attrs } | undefined {
  const m = /^([A-Za-z][\w-]*)\s*([\s\S]*)$/.exec(body);
  if (!m) return undefined;
  const word = m[1]!.toLowerCase();
  const attrs: Attrs = {};
  for (const a of m[2]!.matchAll(/([A-Za-z][\w.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))/g)) {
    attrs[a[1]!.toLowerCase()] = a[2] ?? a[3] ?? a[4] ?? '';
  }
  const closing = word.startsWith('end') && word.length > 3;
  return { name: closing ? word.slice(3) : word, closing, attrs };
}

function parse(tokens: Token[]): Element {
  const root: Element = { name: '', attrs: {}, block: true, indent: '', children: [], closed: true };
  const stack: Element[] = [root];
  for (const tok of tokens) {
    const top = stack.at(-1)!;
    if (tok.kind === 'text') {
      top.children.push(tok.text);
      continue;
    }
    if (tok.closing) {
      // The nearest open tag of that name ends here; tags opened inside it and never ended are read as
      // tags without an end (their content stays where it is). An end with no opening is dropped.
      for (let i = stack.length - 1; i > 0; i--) {
        if (stack[i]!.name === tok.name) {
          stack[i]!.closed = true;
          stack.length = i;
          break;
        }
      }
      continue;
    }
    const el: Element = { ...tok, children: [], closed: false };
    top.children.push(el);
    if (!VOID_TAGS.has(tok.name)) stack.push(el);
  }
  return root;
}

function renderNodes(nodes: Node[]): string {
  let out = '';
  for (const node of nodes) out += typeof node === 'string' ? node : renderElement(node);
  return out;
}

function renderElement(el: Element): string {
  if (!el.closed) {
    const lone = withoutEnd(el);
    return (lone ? place(el, lone) : '') + renderNodes(el.children);
  }
  const inner = renderNodes(el.children);
  return place(el, el.block ? blockOf(el, dedent(inner, el.indent)) : inlineOf(el, inner));
}

/** A block on lines of its own at the tag's indentation; inline output as it is. */
function place(el: Element, text: string): string {
  if (!el.block) return text;
  const body = text.replace(/^\n+|\s+$/g, '');
  if (!body) return '\n';
  return `\n${reindent(body, el.indent)}\n\n`;
}

const HINT_LABELS: Record<string, string> = {
  info: 'Info',
  warning: 'Warning',
  danger: 'Danger',
  success: 'Success',
  tip: 'Tip',
  note: 'Note',
};

function hintLabel(style: string | undefined): string {
  if (!style) return 'Note';
  return HINT_LABELS[style.toLowerCase()] ?? style.charAt(0).toUpperCase() + style.slice(1).toLowerCase();
}

function blockOf(el: Element, inner: string): string {
  const body = inner.replace(/^\s*\n/, '').replace(/\s+$/, '');
  const a = el.attrs;
  switch (el.name) {
    case 'hint':
      return callout(hintLabel(a['style']), body);
    case 'code':
      return a['title'] ? `*${a['title']}*\n\n${body}` : body;
    case 'embed': {
      const url = a['url'];
      if (!url) return body;
      const caption = body.trim();
      return caption && !caption.includes('\n')
        ? link(caption, url)
        : [link(url, url), caption].filter(Boolean).join('\n\n');
    }
    case 'content-ref':
      return body.trim() || (a['url'] ? link(a['url'], a['url']) : '');
    case 'file':
      return a['src'] ? link(body.trim().replace(/\s+/g, ' ') || basename(a['src']), a['src']) : body;
    case 'swagger':
    case 'openapi':
      return [operationLine(a), body].filter(Boolean).join('\n\n');
    case 'swagger-parameter':
      return `- ${parameterLine(a)}${body.trim() ? `: ${body.trim().replace(/\n+/g, ' ')}` : ''}`;
    case 'swagger-response':
      return [`**Response ${a['status'] ?? ''}**${a['description'] ? `: ${a['description']}` : ''}`, body]
        .filter(Boolean)
        .join('\n\n');
    default:
      // tabs / tab, stepper / step, columns / column, if, updates / update and tags unknown to us: the
      // content, under its title when the tag names one.
      return a['title'] ? `**${a['title']}**\n\n${body}` : body;
  }
}

function inlineOf(el: Element, inner: string): string {
  const a = el.attrs;
  switch (el.name) {
    case 'hint':
      return `**${hintLabel(a['style'])}:** ${inner.trim()}`;
    case 'embed':
    case 'content-ref':
      return a['url'] ? link(inner.trim() || a['url'], a['url']) : inner;
    case 'file':
      return a['src'] ? link(inner.trim() || basename(a['src']), a['src']) : inner;
    default:
      return a['title'] ? `**${a['title']}** ${inner}` : inner;
  }
}

/** A tag without an end: what it says by itself (a link, an operation, a title), or nothing. */
function withoutEnd(el: Element): string {
  const a = el.attrs;
  if (el.name === 'swagger' || el.name === 'openapi') return operationLine(a);
  if (el.name === 'file' && a['src']) return link(basename(a['src']), a['src']);
  const target = a['url'] ?? a['src'] ?? a['href'];
  if (target) return link(target, target);
  return a['title'] ? `**${a['title']}**` : '';
}

function operationLine(a: Attrs): string {
  const op = [a['method']?.toUpperCase(), a['path']].filter(Boolean).join(' ');
  const summary = a['summary'] ?? a['title'];
  if (!op) return summary ? `**${summary}**` : a['src'] ? link(a['src'], a['src']) : '';
  return `**${op}**${summary ? `: ${summary}` : ''}`;
}

function parameterLine(a: Attrs): string {
  const facts = [a['in'], a['type'], a['required'] === 'true' ? 'required' : undefined].filter(Boolean);
  return `\`${a['name'] ?? 'parameter'}\`${facts.length ? ` (${facts.join(', ')})` : ''}`;
}

/** A blockquote callout: `> **Info:** text`; the label stands alone when the body starts with a block. */
function callout(label: string, body: string): string {
  const first = body.split('\n', 1)[0] ?? '';
  const startsWithBlock = /^\s*(?:#|[-*+]\s|\d+[.)]\s|`{3}|~{3}|\||>|<|!\[|\*\*[^*]+\*\*$)/.test(first);
  const text = !body
    ? `**${label}**`
    : startsWithBlock
      ? `**${label}:**\n\n${body}`
      : `**${label}:** ${body}`;
  return text
    .split('\n')
    .map((l) => (l.trim() === '' ? '>' : `> ${l}`))
    .join('\n');
}

function link(text: string, url: string): string {
  return `[${text.replace(/[[\]]/g, '')}](${linkTarget(url)})`;
}

/** Link destinations with spaces or parentheses go in angle brackets, as CommonMark allows. */
function linkTarget(url: string): string {
  return /[\s()<>]/.test(url) ? `<${url.replace(/[<>]/g, encodeURIComponent)}>` : url;
}

function basename(src: string): string {
  const clean = src.split(/[?#]/, 1)[0]!.replace(/\/+$/, '');
  const name = clean.slice(clean.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(name) || src;
  } catch {
    return name || src;
  }
}

function dedent(text: string, indent: string): string {
  if (!indent) return text;
  const re = new RegExp(`^[ \\t]{0,${indent.length}}`, 'gm');
  return text.replace(re, '');
}

function reindent(text: string, indent: string): string {
  return indent ? text.replace(/^(?=.)/gm, indent) : text;
}

/** Trailing spaces and runs of blank lines outside code blocks; code stays byte for byte. */
function tidy(text: string): string {
  const out: string[] = [];
  let blank = 0;
  for (const seg of segments(text)) {
    if (seg.code) {
      out.push(...seg.lines);
      blank = 0;
      continue;
    }
    for (const raw of seg.lines) {
      const line = raw.replace(/\s+$/, '');
      if (line === '') {
        if (++blank > 1) continue;
      } else {
        blank = 0;
      }
      out.push(line);
    }
  }
  return out.join('\n').trim();
}
