/**
 * Confluence storage format (XHTML with `ac:` macros and `ri:` resource identifiers) to markdown.
 *
 * The body is parsed as the XML it is defined to be, by a small parser of its own: a browser-style HTML
 * parse would nest every element after a self-closed `<ri:page/>` inside it and lose `<![CDATA[…]]>`
 * code, and a lenient XML parser would silently repair a broken body (which is refused here instead).
 * Entities are decoded as HTML does (`&nbsp;`, `&eacute;`: XML knows five). The `ac:` / `ri:` elements are
 * then rewritten into the plain HTML they stand for (code blocks with their language,
 * callouts as block quotes naming their kind, task lists as checkboxes, links to pages and attachments,
 * images with alt text; layouts flattened; unknown macros reduced to their text) and the shared
 * `htmlToMarkdown` does the rest, so Confluence pages read like every other source's.
 */
import { parseHTML } from 'linkedom';
import { htmlToMarkdown } from '../../lib/html-to-markdown.ts';

export interface RenderContext {
  /** The site's `https://<host>/wiki` (`_links.base`): page links and attachments resolve against it. */
  wikiBase: string;
  /** The space of the page being rendered: a page link without `ri:space-key` points into it. */
  spaceKey: string;
  /** The page or blog post being rendered: its own attachments live under its id. */
  contentId: string;
}

/** The storage body is not well-formed XHTML, so what it says cannot be told reliably. */
export class MalformedStorageError extends Error {
  constructor(problem: string) {
    super(`storage body is not well-formed XHTML: ${problem}`);
    this.name = 'MalformedStorageError';
  }
}

/** Converts one storage-format body to markdown; throws {@link MalformedStorageError} for a broken one. */
export function storageToMarkdown(storage: string, ctx: RenderContext): string {
  const root = parseStorage(storage);
  const html = new HtmlWriter(ctx).children(root);
  return htmlToMarkdown(html, { baseUrl: `${ctx.wikiBase.replace(/\/+$/, '')}/` });
}

/** Why `storage` is not well-formed, or undefined when it is. */
export function wellFormedProblem(storage: string): string | undefined {
  try {
    parseStorage(storage);
    return undefined;
  } catch (err) {
    if (err instanceof MalformedStorageError) return err.message.replace(/^[^:]*: /, '');
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------------

interface StorageElement {
  type: 'element';
  /** Lower-cased, prefix included: `p`, `ac:structured-macro`, `ri:page`. */
  name: string;
  /** Entities decoded; names lower-cased. */
  attrs: Map<string, string>;
  children: StorageNode[];
  parent: StorageElement | undefined;
}

type StorageNode = StorageElement | { type: 'text'; text: string } | { type: 'cdata'; text: string };

/** HTML elements that never close: Confluence writes them self-closed, older content may not. */
const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);

const TAG =
  /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[^\s=>/"']+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)*)\s*(\/?)>/y;
const ATTRIBUTE = /([^\s=>/"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g;

/**
 * The element tree of a storage body under a nameless root. Throws {@link MalformedStorageError} for an
 * element never closed or closed out of order, a truncated tag, a bare `<`, or an unterminated CDATA
 * section or comment.
 */
function parseStorage(s: string): StorageElement {
  prepareEntities(s);
  const root: StorageElement = {
    type: 'element',
    name: '',
    attrs: new Map(),
    children: [],
    parent: undefined,
  };
  let top = root;
  let i = 0;
  const text = (to: number) => {
    if (to > i) top.children.push({ type: 'text', text: decodeEntities(s.slice(i, to)) });
  };
  for (;;) {
    const lt = s.indexOf('<', i);
    if (lt === -1) {
      text(s.length);
      break;
    }
    text(lt);
    if (s.startsWith('<![CDATA[', lt)) {
      const end = s.indexOf(']]>', lt + 9);
      if (end === -1) throw new MalformedStorageError(`a CDATA section opened at offset ${lt} never ends`);
      top.children.push({ type: 'cdata', text: s.slice(lt + 9, end) });
      i = end + 3;
      continue;
    }
    const special = s.startsWith('<!--', lt)
      ? '-->'
      : s.startsWith('<?', lt)
        ? '?>'
        : s.startsWith('<!', lt)
          ? '>'
          : '';
    if (special) {
      const end = s.indexOf(special, lt + 2);
      if (end === -1) throw new MalformedStorageError(`a markup section opened at offset ${lt} never ends`);
      i = end + special.length;
      continue;
    }
    TAG.lastIndex = lt;
    const m = TAG.exec(s);
    if (!m) throw new MalformedStorageError(`"<" at offset ${lt} starts no complete tag`);
    i = TAG.lastIndex;
    const raw = m[2]!;
    const name = raw.toLowerCase();
    if (m[1] === '/') {
      // `</br>` and the like close nothing that was opened.
      if (VOID.has(name) && top.name !== name) continue;
      if (top === root) throw new MalformedStorageError(`</${raw}> closes nothing`);
      if (top.name !== name) throw new MalformedStorageError(`</${raw}> closes <${top.name}>`);
      top = top.parent!;
      continue;
    }
    const attrs = new Map<string, string>();
    for (const a of m[3]!.matchAll(ATTRIBUTE)) {
      attrs.set(a[1]!.toLowerCase(), decodeEntities(a[2] ?? a[3] ?? a[4] ?? ''));
    }
    const el: StorageElement = { type: 'element', name, attrs, children: [], parent: top };
    top.children.push(el);
    if (m[4] !== '/' && !VOID.has(name)) top = el;
  }
  if (top !== root) throw new MalformedStorageError(`<${top.name}> is never closed`);
  return root;
}

const ENTITY = /&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/g;
const NAMED_ENTITY = /&([A-Za-z][A-Za-z0-9]{1,31});/g;
const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
/** What each HTML entity name stands for (null: not an entity), shared by all pages; bounded below. */
const entityCache = new Map<string, string | null>();
const ENTITY_CACHE_MAX = 4096;

/** Learns, in one HTML parse, the entity names of `s` not seen before. */
function prepareEntities(s: string): void {
  if (!s.includes('&')) return;
  const unknown = new Set<string>();
  for (const m of s.matchAll(NAMED_ENTITY)) {
    const name = m[1]!;
    if (!(name in XML_ENTITIES) && !entityCache.has(name)) unknown.add(name);
  }
  if (unknown.size === 0) return;
  const names = [...unknown];
  if (entityCache.size + names.length > ENTITY_CACHE_MAX) entityCache.clear();
  const { document } = parseHTML(
    `<!DOCTYPE html><html><body>${names.map((n) => `<p>&${n};</p>`).join('')}</body></html>`,
  ) as unknown as { document: Document };
  const paragraphs = Array.from(document.querySelectorAll('p'));
  names.forEach((name, index) => {
    const decoded = paragraphs[index]?.textContent ?? '';
    entityCache.set(name, decoded && decoded !== `&${name};` ? decoded : null);
  });
}

/** Decodes character references and entities; an unknown name stays as written. */
function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(ENTITY, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code =
        ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
        ? String.fromCodePoint(code)
        : whole;
    }
    return XML_ENTITIES[ref] ?? entityCache.get(ref) ?? whole;
  });
}

/** The text of a node and its descendants, CDATA included. */
function textOf(node: StorageNode | undefined): string {
  if (!node) return '';
  if (node.type !== 'element') return node.text;
  let out = '';
  for (const c of node.children) out += textOf(c);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Storage elements → HTML
// ---------------------------------------------------------------------------------------------------

/** Callout macros and the label their block quote starts with. */
const CALLOUTS: Record<string, string> = {
  info: 'Info',
  note: 'Note',
  warning: 'Warning',
  tip: 'Tip',
  success: 'Success',
  error: 'Error',
  panel: 'Panel',
};

/** Macros that show generated navigation or search results: no text of the page's own. */
const GENERATED = new Set([
  'anchor',
  'attachments',
  'blog-posts',
  'children',
  'contentbylabel',
  'create-from-template',
  'index',
  'livesearch',
  'pagetree',
  'pagetreesearch',
  'popular-labels',
  'recently-updated',
  'related-labels',
  'space-details',
  'toc',
]);

const EMOTICONS: Record<string, string> = {
  smile: '🙂',
  sad: '🙁',
  cheeky: '😛',
  laugh: '😄',
  wink: '😉',
  'thumbs-up': '👍',
  'thumbs-down': '👎',
  information: 'ℹ️',
  tick: '✅',
  cross: '❌',
  warning: '⚠️',
  plus: '➕',
  minus: '➖',
  question: '❓',
  'light-on': '💡',
  'light-off': '💡',
  'yellow-star': '⭐',
  'red-star': '⭐',
  'green-star': '⭐',
  'blue-star': '⭐',
  heart: '❤️',
  'broken-heart': '💔',
};

/** Elements whose content flows inline: a macro inside one renders as inline text, not a paragraph. */
const INLINE_PARENTS = new Set([
  'a',
  'b',
  'code',
  'em',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'i',
  'p',
  's',
  'span',
  'strong',
  'sub',
  'sup',
  'u',
]);

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;');
}

function attribute(el: StorageElement, name: string): string | null {
  return el.attrs.get(name) ?? null;
}

function nameOf(el: StorageElement): string {
  return el.name;
}

function elementChildren(el: StorageElement): StorageElement[] {
  return el.children.filter((n): n is StorageElement => n.type === 'element');
}

function child(el: StorageElement, name: string): StorageElement | undefined {
  return el.children.find((c): c is StorageElement => c.type === 'element' && c.name === name);
}

/** A `/display/KEY/Page+Title` path segment: Confluence writes spaces as `+`. */
function titleSegment(title: string): string {
  return encodeURIComponent(title).replace(/%20/g, '+');
}

class HtmlWriter {
  readonly #ctx: RenderContext;
  readonly #base: string;

  constructor(ctx: RenderContext) {
    this.#ctx = ctx;
    this.#base = ctx.wikiBase.replace(/\/+$/, '');
  }

  children(el: StorageElement): string {
    let out = '';
    for (const node of el.children) out += this.node(node);
    return out;
  }

  node(node: StorageNode): string {
    // A no-break space is a space to a reader and to search; code keeps its characters.
    if (node.type === 'text') return escapeText(node.text.replace(/\u00a0/g, ' '));
    if (node.type === 'cdata') return escapeText(node.text);
    const el = node;
    const name = el.name;
    if (name.startsWith('ac:') || name.startsWith('ri:')) return this.storageElement(el, name);
    if (name === 'time') return escapeText(attribute(el, 'datetime') ?? textOf(el));
    // Column widths only; a `colgroup` before the rows also hides the header row from the table rule.
    if (name === 'script' || name === 'style' || name === 'colgroup' || name === 'col') return '';
    return this.htmlElement(el, name);
  }

  /** A plain HTML element, kept with its plain attributes (Confluence's own `ac:`/`data-` ones dropped). */
  htmlElement(el: StorageElement, name: string): string {
    let tag = name;
    let attrs = '';
    for (const [key, value] of el.attrs) {
      if (key.includes(':') || key.startsWith('on') || key.startsWith('data-')) continue;
      if (key === 'style') {
        if (name === 'span' && /line-through/.test(value)) tag = 's';
        continue;
      }
      attrs += ` ${key}="${escapeAttr(value)}"`;
    }
    if (VOID.has(name)) return `<${tag}${attrs}>`;
    return `<${tag}${attrs}>${this.children(el)}</${tag}>`;
  }

  storageElement(el: StorageElement, name: string): string {
    switch (name) {
      case 'ac:structured-macro':
      case 'ac:macro':
        return this.macro(el);
      case 'ac:link':
        return this.link(el);
      case 'ac:image':
        return this.image(el);
      case 'ac:task-list':
        return this.taskList(el);
      case 'ac:layout':
      case 'ac:layout-section':
      case 'ac:layout-cell':
        return `<div>${this.children(el)}</div>`;
      case 'ac:emoticon':
        return escapeText(this.emoticon(el));
      case 'ac:adf-extension':
        return this.adfExtension(el);
      case 'ac:plain-text-body':
      case 'ac:plain-text-link-body':
        return escapeText(textOf(el));
      // Instructions to the editor, and macro or task metadata read where their owner is rendered.
      case 'ac:placeholder':
      case 'ac:parameter':
      case 'ac:task-id':
      case 'ac:task-status':
      case 'ac:adf-attribute':
        return '';
      default:
        if (name.startsWith('ri:')) return this.resource(el, '');
        // Unknown or wrapper elements (`ac:inline-comment-marker`, `ac:rich-text-body`...): their content.
        return this.children(el);
    }
  }

  /** `ac:parameter` values of a macro, by name (the unnamed default parameter is ``). */
  params(macro: StorageElement): Map<string, StorageElement> {
    const out = new Map<string, StorageElement>();
    for (const c of elementChildren(macro)) {
      if (nameOf(c) === 'ac:parameter') out.set((attribute(c, 'ac:name') ?? '').toLowerCase(), c);
    }
    return out;
  }

  macro(el: StorageElement): string {
    const name = (attribute(el, 'ac:name') ?? '').toLowerCase();
    const params = this.params(el);
    const param = (key: string) => textOf(params.get(key)).trim();
    const rich = child(el, 'ac:rich-text-body');
    const plain = child(el, 'ac:plain-text-body');
    const body = rich ? this.children(rich) : '';
    const inline = INLINE_PARENTS.has(el.parent?.name ?? '');

    if (name === 'code' || name === 'noformat' || name === 'code-block') {
      const lang = param('language').replace(/[^\w#+.-]/g, '');
      const title = param('title');
      const code = escapeText(textOf(plain ?? rich));
      const caption = title ? `<p><em>${escapeText(title)}</em></p>` : '';
      return `${caption}<pre><code${lang ? ` class="language-${lang}"` : ''}>${code}</code></pre>`;
    }
    if (name in CALLOUTS) {
      const title = param('title');
      const kind = CALLOUTS[name]!;
      const heading = name === 'panel' ? title || kind : title ? `${kind}: ${title}` : kind;
      return `<blockquote><p><strong>${escapeText(heading)}</strong></p>${body}</blockquote>`;
    }
    if (name === 'expand') {
      const title = param('title') || 'Details';
      return `<div><p><strong>${escapeText(title)}</strong></p>${body}</div>`;
    }
    if (GENERATED.has(name)) return '';
    if (name === 'status') {
      const title = param('title') || param('colour');
      return title ? `<strong>${escapeText(title)}</strong>` : '';
    }
    if (name === 'jira') {
      const text = param('key') || param('jqlquery');
      return text ? `<code>${escapeText(text)}</code>` : '';
    }
    // Any other macro degrades to what it carries: its rich body, its plain body as a block of text, or
    // else the values of its parameters (a linked page, a file name, a diagram's name).
    if (rich) return inline ? body : `<div>${body}</div>`;
    if (plain) {
      const text = escapeText(textOf(plain));
      return inline ? `<code>${text}</code>` : `<pre><code>${text}</code></pre>`;
    }
    const values = [...params.values()]
      .map((p) => (elementChildren(p).length > 0 ? this.children(p) : escapeText(textOf(p).trim())))
      .filter((v) => v !== '');
    if (values.length === 0) return '';
    return inline ? `<span>${values.join(' ')}</span>` : `<p>${values.join(' ')}</p>`;
  }

  /** `<ac:link>`: a page, blog post, attachment, space, URL or user, with an optional anchor and body. */
  link(el: StorageElement): string {
    const anchor = attribute(el, 'ac:anchor') ?? '';
    const richBody = child(el, 'ac:link-body');
    const plainBody = child(el, 'ac:plain-text-link-body');
    const body = richBody ? this.children(richBody) : plainBody ? escapeText(textOf(plainBody)) : '';
    const resource = elementChildren(el).find((c) => nameOf(c).startsWith('ri:'));
    if (!resource) {
      if (!anchor) return body;
      return `<a href="#${escapeAttr(anchor)}">${body || escapeText(anchor)}</a>`;
    }
    return this.resource(resource, body, anchor);
  }

  /** A link to what an `ri:` identifier names; `body` (HTML) is the link text when there is one. */
  resource(ri: StorageElement, body: string, anchor = ''): string {
    const { href, text } = this.target(ri);
    const label = body || escapeText(text);
    if (!href) return label;
    const full = anchor ? `${href}#${encodeURIComponent(anchor)}` : href;
    return `<a href="${escapeAttr(full)}">${label || escapeText(full)}</a>`;
  }

  target(ri: StorageElement): { href?: string; text: string } {
    const attr = (n: string) => attribute(ri, n) ?? '';
    const space = attr('ri:space-key') || this.#ctx.spaceKey;
    switch (nameOf(ri)) {
      case 'ri:page': {
        const title = attr('ri:content-title');
        if (!title) return { text: '' };
        return {
          href: `${this.#base}/display/${encodeURIComponent(space)}/${titleSegment(title)}`,
          text: title,
        };
      }
      case 'ri:blog-post': {
        const title = attr('ri:content-title');
        const day = attr('ri:posting-day'); // yyyy/mm/dd
        if (!title) return { text: '' };
        const dated = /^\d{4}\/\d{2}\/\d{2}$/.test(day) ? `${day}/` : '';
        return {
          href: `${this.#base}/display/${encodeURIComponent(space)}/${dated}${titleSegment(title)}`,
          text: title,
        };
      }
      case 'ri:attachment': {
        const file = attr('ri:filename');
        // An attachment of another page names that page by title only; its id (the download path) is
        // not known here, so only the file name is kept.
        const elsewhere = elementChildren(ri).length > 0;
        if (!file || elsewhere) return { text: file };
        return {
          href: `${this.#base}/download/attachments/${encodeURIComponent(this.#ctx.contentId)}/${encodeURIComponent(file)}`,
          text: file,
        };
      }
      case 'ri:url':
        return attr('ri:value') ? { href: attr('ri:value'), text: attr('ri:value') } : { text: '' };
      case 'ri:space': {
        const key = attr('ri:space-key');
        return key ? { href: `${this.#base}/spaces/${encodeURIComponent(key)}`, text: key } : { text: '' };
      }
      case 'ri:content-entity': {
        const id = attr('ri:content-id');
        return id
          ? { href: `${this.#base}/pages/viewpage.action?pageId=${encodeURIComponent(id)}`, text: id }
          : { text: '' };
      }
      case 'ri:user':
        // Only an account id: no name to show without another request per mention.
        return { text: '@user' };
      default:
        return { text: '' };
    }
  }

  image(el: StorageElement): string {
    const ri = elementChildren(el).find((c) => nameOf(c).startsWith('ri:'));
    const { href, text } = ri ? this.target(ri) : { text: '' };
    const alt = attribute(el, 'ac:alt') || attribute(el, 'ac:title') || text;
    if (!href) return escapeText(alt);
    return `<img alt="${escapeAttr(alt)}" src="${escapeAttr(href)}">`;
  }

  /** `<ac:task-list>` as a list of checkboxes; a task list nested in it belongs to the task before it. */
  taskList(el: StorageElement): string {
    const items: string[] = [];
    for (const c of elementChildren(el)) {
      const name = nameOf(c);
      if (name === 'ac:task') {
        const done = textOf(child(c, 'ac:task-status')).trim() === 'complete';
        const body = child(c, 'ac:task-body');
        items.push(`<input type="checkbox"${done ? ' checked' : ''}> ${body ? this.children(body) : ''}`);
      } else if (name === 'ac:task-list') {
        const nested = this.taskList(c);
        if (items.length > 0) items[items.length - 1] += nested;
        else items.push(nested);
      }
    }
    return `<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>`;
  }

  emoticon(el: StorageElement): string {
    const fallback = attribute(el, 'ac:emoji-fallback') ?? '';
    if (fallback && !fallback.startsWith(':')) return fallback;
    const name = attribute(el, 'ac:name') ?? '';
    return EMOTICONS[name] ?? fallback;
  }

  /**
   * Newer editor content stored as an ADF node (`panel`, `decision-list`...) with an HTML fallback: a
   * panel becomes a callout, anything else its content, else the fallback.
   */
  adfExtension(el: StorageElement): string {
    const node = child(el, 'ac:adf-node');
    const fallback = child(el, 'ac:adf-fallback');
    if (!node) return fallback ? this.children(fallback) : '';
    return this.adfNode(node) || (fallback ? this.children(fallback) : '');
  }

  adfNode(node: StorageElement): string {
    const type = (attribute(node, 'type') ?? '').toLowerCase();
    const adfAttribute = (key: string) =>
      textOf(
        elementChildren(node).find((c) => nameOf(c) === 'ac:adf-attribute' && attribute(c, 'key') === key),
      ).trim();
    const content = child(node, 'ac:adf-content');
    const inner = elementChildren(node)
      .filter((c) => nameOf(c) === 'ac:adf-node')
      .map((c) => this.adfNode(c))
      .join('');
    const body = (content ? this.children(content) : '') + inner;
    if (type === 'panel') {
      const kind = adfAttribute('panel-type').toLowerCase();
      const label = CALLOUTS[kind] ?? 'Panel';
      return `<blockquote><p><strong>${escapeText(label)}</strong></p>${body}</blockquote>`;
    }
    if (type === 'decision-list') return `<ul>${inner}</ul>`;
    if (type === 'decision-item') {
      const decided = adfAttribute('state').toUpperCase() === 'DECIDED';
      return `<li>${decided ? '<strong>Decision:</strong> ' : ''}${content ? this.children(content) : ''}</li>`;
    }
    return body;
  }
}
