/**
 * Confluence storage format (XHTML with `ac:` macros and `ri:` resource identifiers) to markdown.
 *
 * The body is parsed as XML, the way the format is defined (a browser-style HTML parse would nest every
 * element after a self-closed `<ri:page/>` inside it and lose `<![CDATA[…]]>` code); HTML named entities
 * such as `&nbsp;`, which XML does not know, are turned into character references first. The `ac:` / `ri:`
 * elements are then rewritten into the plain HTML they stand for (code blocks with their language,
 * callouts as block quotes naming their kind, task lists as checkboxes, links to pages and attachments,
 * images with alt text; layouts flattened; unknown macros reduced to their text) and the shared
 * `htmlToMarkdown` does the rest, so Confluence pages read like every other source's.
 */
import { DOMParser, parseHTML } from 'linkedom';
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
  const problem = wellFormedProblem(storage);
  if (problem !== undefined) throw new MalformedStorageError(problem);
  const xml = `<ac:confluence xmlns:ac="http://atlassian.com/content" xmlns:ri="http://atlassian.com/resource/identifier">${withCharacterReferences(storage)}</ac:confluence>`;
  const doc = new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document;
  const root = doc.documentElement;
  if (!root) return '';
  const html = new HtmlWriter(ctx).children(root);
  return htmlToMarkdown(html, { baseUrl: `${ctx.wikiBase.replace(/\/+$/, '')}/` });
}

// ---------------------------------------------------------------------------------------------------
// Well-formedness and entities
// ---------------------------------------------------------------------------------------------------

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

/**
 * Why `s` is not well-formed (an element never closed or closed out of order, a truncated tag, an
 * unterminated CDATA section or comment), or undefined. The XML parser itself would silently repair
 * these, rendering a page that is not what its author wrote.
 */
export function wellFormedProblem(s: string): string | undefined {
  const open: string[] = [];
  let i = s.indexOf('<');
  while (i !== -1) {
    const special = skipSpecial(s, i);
    if (special === -1) return `a markup section opened at offset ${i} never ends`;
    if (special !== undefined) {
      i = s.indexOf('<', special);
      continue;
    }
    TAG.lastIndex = i;
    const m = TAG.exec(s);
    if (!m) return `"<" at offset ${i} starts no complete tag`;
    const closing = m[1] === '/';
    const raw = m[2]!;
    const name = raw.toLowerCase();
    const selfClosed = m[4] === '/';
    if (closing) {
      if (!(VOID.has(name) && open.at(-1) !== name)) {
        const top = open.pop();
        if (top !== name) return top ? `</${raw}> closes <${top}>` : `</${raw}> closes nothing`;
      }
    } else if (!selfClosed && !VOID.has(name)) {
      open.push(name);
    }
    i = s.indexOf('<', TAG.lastIndex);
  }
  return open.length > 0 ? `<${open.at(-1)}> is never closed` : undefined;
}

/** Index after a comment, CDATA section, processing instruction or declaration at `i`; -1 if unterminated. */
function skipSpecial(s: string, i: number): number | undefined {
  const end = (open: string, close: string) => {
    const at = s.indexOf(close, i + open.length);
    return at === -1 ? -1 : at + close.length;
  };
  if (s.startsWith('<!--', i)) return end('<!--', '-->');
  if (s.startsWith('<![CDATA[', i)) return end('<![CDATA[', ']]>');
  if (s.startsWith('<?', i)) return end('<?', '?>');
  if (s.startsWith('<!', i)) return end('<!', '>');
  return undefined;
}

const XML_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos']);
const NAMED_ENTITY = /&([A-Za-z][A-Za-z0-9]{1,31});/g;
/** Decoded HTML entity names (null: not an entity), shared by all pages; bounded below. */
const entityCache = new Map<string, string | null>();
const ENTITY_CACHE_MAX = 4096;

/**
 * Replaces HTML named entities (outside CDATA sections) with numeric character references the XML
 * parser decodes; an unknown name stays as literal text.
 */
function withCharacterReferences(storage: string): string {
  if (!storage.includes('&')) return storage;
  const parts = storage.split(/(<!\[CDATA\[[\s\S]*?\]\]>)/);
  const unknown = new Set<string>();
  for (let p = 0; p < parts.length; p += 2) {
    for (const m of parts[p]!.matchAll(NAMED_ENTITY)) {
      const name = m[1]!;
      if (!XML_ENTITIES.has(name) && !entityCache.has(name)) unknown.add(name);
    }
  }
  if (unknown.size > 0) decodeEntities([...unknown]);
  for (let p = 0; p < parts.length; p += 2) {
    parts[p] = parts[p]!.replace(NAMED_ENTITY, (whole, name: string) => {
      if (XML_ENTITIES.has(name)) return whole;
      const text = entityCache.get(name);
      if (text === null || text === undefined) return `&amp;${name};`;
      return Array.from(text, (ch) => `&#${ch.codePointAt(0)};`).join('');
    });
  }
  return parts.join('');
}

/** Asks the HTML parser, once per name, what each entity stands for. */
function decodeEntities(names: string[]): void {
  if (entityCache.size + names.length > ENTITY_CACHE_MAX) entityCache.clear();
  const { document } = parseHTML(
    `<!DOCTYPE html><html><body>${names.map((n) => `<p>&${n};</p>`).join('')}</body></html>`,
  ) as unknown as { document: Document };
  const paragraphs = Array.from(document.querySelectorAll('p'));
  names.forEach((name, index) => {
    const text = paragraphs[index]?.textContent ?? '';
    entityCache.set(name, text && text !== `&${name};` ? text : null);
  });
}

// ---------------------------------------------------------------------------------------------------
// Storage elements → HTML
// ---------------------------------------------------------------------------------------------------

const ELEMENT = 1;
const TEXT = 3;
const CDATA = 4;

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

/**
 * An attribute's value, entities decoded. (linkedom's `getAttribute` on an XML document answers the
 * value still escaped, `A &amp; B`; the attribute node has it decoded.)
 */
function attribute(el: Element, name: string): string | null {
  return el.getAttributeNode(name)?.value ?? null;
}

function nameOf(el: Element): string {
  return el.tagName.toLowerCase();
}

function elementChildren(el: Element): Element[] {
  return Array.from(el.childNodes).filter((n): n is Element => n.nodeType === ELEMENT);
}

function child(el: Element, name: string): Element | undefined {
  return elementChildren(el).find((c) => nameOf(c) === name);
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

  children(el: Element): string {
    let out = '';
    for (const node of Array.from(el.childNodes)) out += this.node(node);
    return out;
  }

  node(node: Node): string {
    if (node.nodeType === TEXT) return escapeText((node.nodeValue ?? '').replace(/\u00a0/g, ' '));
    if (node.nodeType === CDATA) return escapeText(node.nodeValue ?? '');
    if (node.nodeType !== ELEMENT) return '';
    const el = node as Element;
    const name = nameOf(el);
    if (name.startsWith('ac:') || name.startsWith('ri:')) return this.storageElement(el, name);
    if (name === 'time') return escapeText(attribute(el, 'datetime') ?? el.textContent ?? '');
    // Column widths only; a `colgroup` before the rows also hides the header row from the table rule.
    if (name === 'script' || name === 'style' || name === 'colgroup' || name === 'col') return '';
    return this.htmlElement(el, name);
  }

  /** A plain HTML element, kept with its plain attributes (Confluence's own `ac:`/`data-` ones dropped). */
  htmlElement(el: Element, name: string): string {
    let tag = name;
    let attrs = '';
    for (const attr of Array.from(el.attributes)) {
      const key = attr.name.toLowerCase();
      if (key.includes(':') || key.startsWith('on') || key.startsWith('data-')) continue;
      if (key === 'style') {
        if (name === 'span' && /line-through/.test(attr.value)) tag = 's';
        continue;
      }
      attrs += ` ${key}="${escapeAttr(attr.value)}"`;
    }
    // An unclosed void element (`<br>` in older content) holds what followed it in the XML tree.
    if (VOID.has(name)) return `<${tag}${attrs}>${this.children(el)}`;
    return `<${tag}${attrs}>${this.children(el)}</${tag}>`;
  }

  storageElement(el: Element, name: string): string {
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
        return escapeText(el.textContent ?? '');
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
  params(macro: Element): Map<string, Element> {
    const out = new Map<string, Element>();
    for (const c of elementChildren(macro)) {
      if (nameOf(c) === 'ac:parameter') out.set((attribute(c, 'ac:name') ?? '').toLowerCase(), c);
    }
    return out;
  }

  macro(el: Element): string {
    const name = (attribute(el, 'ac:name') ?? '').toLowerCase();
    const params = this.params(el);
    const param = (key: string) => params.get(key)?.textContent?.trim() ?? '';
    const rich = child(el, 'ac:rich-text-body');
    const plain = child(el, 'ac:plain-text-body');
    const body = rich ? this.children(rich) : '';
    const inline = INLINE_PARENTS.has(el.parentElement ? nameOf(el.parentElement) : '');

    if (name === 'code' || name === 'noformat' || name === 'code-block') {
      const lang = param('language').replace(/[^\w#+.-]/g, '');
      const title = param('title');
      const code = escapeText(plain?.textContent ?? rich?.textContent ?? '');
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
      const text = escapeText(plain.textContent ?? '');
      return inline ? `<code>${text}</code>` : `<pre><code>${text}</code></pre>`;
    }
    const values = [...params.values()]
      .map((p) =>
        elementChildren(p).length > 0 ? this.children(p) : escapeText(p.textContent?.trim() ?? ''),
      )
      .filter((v) => v !== '');
    if (values.length === 0) return '';
    return inline ? `<span>${values.join(' ')}</span>` : `<p>${values.join(' ')}</p>`;
  }

  /** `<ac:link>`: a page, blog post, attachment, space, URL or user, with an optional anchor and body. */
  link(el: Element): string {
    const anchor = attribute(el, 'ac:anchor') ?? '';
    const richBody = child(el, 'ac:link-body');
    const plainBody = child(el, 'ac:plain-text-link-body');
    const body = richBody
      ? this.children(richBody)
      : plainBody
        ? escapeText(plainBody.textContent ?? '')
        : '';
    const resource = elementChildren(el).find((c) => nameOf(c).startsWith('ri:'));
    if (!resource) {
      if (!anchor) return body;
      return `<a href="#${escapeAttr(anchor)}">${body || escapeText(anchor)}</a>`;
    }
    return this.resource(resource, body, anchor);
  }

  /** A link to what an `ri:` identifier names; `body` (HTML) is the link text when there is one. */
  resource(ri: Element, body: string, anchor = ''): string {
    const { href, text } = this.target(ri);
    const label = body || escapeText(text);
    if (!href) return label;
    const full = anchor ? `${href}#${encodeURIComponent(anchor)}` : href;
    return `<a href="${escapeAttr(full)}">${label || escapeText(full)}</a>`;
  }

  target(ri: Element): { href?: string; text: string } {
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

  image(el: Element): string {
    const ri = elementChildren(el).find((c) => nameOf(c).startsWith('ri:'));
    const { href, text } = ri ? this.target(ri) : { text: '' };
    const alt = attribute(el, 'ac:alt') || attribute(el, 'ac:title') || text;
    if (!href) return escapeText(alt);
    return `<img alt="${escapeAttr(alt)}" src="${escapeAttr(href)}">`;
  }

  /** `<ac:task-list>` as a list of checkboxes; a task list nested in it belongs to the task before it. */
  taskList(el: Element): string {
    const items: string[] = [];
    for (const c of elementChildren(el)) {
      const name = nameOf(c);
      if (name === 'ac:task') {
        const done = (child(c, 'ac:task-status')?.textContent ?? '').trim() === 'complete';
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

  emoticon(el: Element): string {
    const fallback = attribute(el, 'ac:emoji-fallback') ?? '';
    if (fallback && !fallback.startsWith(':')) return fallback;
    const name = attribute(el, 'ac:name') ?? '';
    return EMOTICONS[name] ?? fallback;
  }

  /**
   * Newer editor content stored as an ADF node (`panel`, `decision-list`...) with an HTML fallback: a
   * panel becomes a callout, anything else its content, else the fallback.
   */
  adfExtension(el: Element): string {
    const node = child(el, 'ac:adf-node');
    const fallback = child(el, 'ac:adf-fallback');
    if (!node) return fallback ? this.children(fallback) : '';
    return this.adfNode(node) || (fallback ? this.children(fallback) : '');
  }

  adfNode(node: Element): string {
    const type = (attribute(node, 'type') ?? '').toLowerCase();
    const adfAttribute = (key: string) =>
      elementChildren(node)
        .find((c) => nameOf(c) === 'ac:adf-attribute' && attribute(c, 'key') === key)
        ?.textContent?.trim() ?? '';
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
