/**
 * HTML → GitHub-flavoured markdown, for every producer of documents: the crawler (after it has found a
 * page's main content) and the connectors whose sources store HTML (Zendesk articles, Confluence storage
 * bodies, Shopify descriptions). Turndown with the GFM plugin over a linkedom DOM, plus rules for what
 * matters to a reader and to search: fenced code blocks that keep their language, compact nested lists,
 * GFM tables (cells flattened to one line; an empty header row when the table has none), layout tables
 * as their text, definition lists as bold terms over their definitions, task lists,
 * images as `![alt](src)`, and links with absolute targets when a base URL is given.
 */
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';

interface HtmlToMarkdownOptions {
  /**
   * Resolves relative link and image targets against this URL, so the markdown stands on its own.
   * Without it they stay as written. Fragment-only links (`#section`) are left alone either way.
   */
  baseUrl?: string | undefined;
}

/** Converts an HTML document or fragment to markdown. */
export function htmlToMarkdown(html: string, opts: HtmlToMarkdownOptions = {}): string {
  // linkedom does not synthesise the html/body elements a browser would for a fragment.
  const source = /<html[\s>]/i.test(html)
    ? html
    : `<!DOCTYPE html><html>${/<body[\s>]/i.test(html) ? html : `<body>${html}</body>`}</html>`;
  const { document } = parseHTML(source) as unknown as { document: Document };
  const root = document.body ?? document.documentElement;
  return root ? elementToMarkdown(root, opts) : '';
}

/**
 * Converts a subtree the caller already parsed (the crawler holds the page's DOM). The subtree is changed
 * in place (URLs resolved, tables flattened) and taken out of its document, so pass one the caller no
 * longer needs.
 */
export function elementToMarkdown(root: Element, opts: HtmlToMarkdownOptions = {}): string {
  if (opts.baseUrl) absolutizeUrls(root, opts.baseUrl);
  markCodeLanguages(root);
  // The parsed tree itself, in a fragment (turndown converts a node's children, and the root's own
  // element, a <pre> or <table> say, must be converted too), rather than its HTML parsed again by
  // turndown's own parser: that second parse was a third of a crawled page's extraction time.
  const fragment = root.ownerDocument.createDocumentFragment();
  fragment.appendChild(root);
  prepareTables(fragment);
  // linkedom keeps a decoded entity (`&gt;`) as a text node of its own; turndown escapes each text node
  // as if it began a line (`\>`), so adjacent text is joined first, as a browser's parser would have.
  fragment.normalize();
  return tidyMarkdown(turndown.turndown(fragment as unknown as HTMLElement));
}

// `language-x` (Prism, highlight.js, GitHub, CommonMark renderers), `lang-x` (Prettify), `highlight-x` and
// `highlight-source-x` (Pygments, GitHub).
const LANGUAGE_CLASS = /(?:^|\s)(?:language|lang|highlight-source|highlight)-([\w#+.-]+)/i;

/**
 * Records each code block's language on its `<pre>` (`data-lang`), from a class of the `<code>`, the
 * `<pre>` or up to two wrappers, else from a `data-lang` / `data-language` attribute. Call it before
 * anything that strips class attributes (Readability does); converting calls it again, harmlessly.
 */
export function markCodeLanguages(root: ParentNode): void {
  for (const pre of Array.from(root.querySelectorAll('pre'))) {
    const code = pre.querySelector('code');
    const candidates = [code, pre, pre.parentElement, pre.parentElement?.parentElement];
    for (const el of candidates) {
      const m = el ? LANGUAGE_CLASS.exec(el.getAttribute('class') ?? '') : null;
      if (m?.[1]) {
        pre.setAttribute('data-lang', m[1]);
        break;
      }
    }
    const declared =
      pre.getAttribute('data-lang') ??
      code?.getAttribute('data-lang') ??
      pre.getAttribute('data-language') ??
      code?.getAttribute('data-language');
    if (declared) pre.setAttribute('data-lang', declared.replace(/[^\w#+.-]/g, ''));
  }
}

/** Resolves link and image targets against `base`; a target that cannot be resolved is dropped. */
export function absolutizeUrls(root: ParentNode, base: string): void {
  for (const a of Array.from(root.querySelectorAll('a[href]'))) {
    const href = a.getAttribute('href') ?? '';
    if (href.startsWith('#')) continue;
    try {
      a.setAttribute('href', new URL(href, base).href);
    } catch {
      a.removeAttribute('href');
    }
  }
  for (const img of Array.from(root.querySelectorAll('img[src]'))) {
    try {
      img.setAttribute('src', new URL(img.getAttribute('src') ?? '', base).href);
    } catch {
      img.removeAttribute('src');
    }
  }
}

const turndown = createTurndown();

/**
 * linkedom's tables have no `rows`, which the GFM plugin reads (`table.rows[0]`) to find a heading row:
 * the DOM's definition, defined once on linkedom's table element (thead's rows first, then the table's
 * own and its tbodies' in order, tfoot's last).
 */
function addTableRows(): void {
  const { document } = parseHTML('<html><body><table></table></body></html>');
  const proto = Object.getPrototypeOf(document.querySelector('table')) as object;
  if ('rows' in proto) return;
  Object.defineProperty(proto, 'rows', {
    configurable: true,
    get(this: Element) {
      const head: Element[] = [];
      const body: Element[] = [];
      const foot: Element[] = [];
      for (const child of Array.from(this.children)) {
        if (child.tagName === 'TR') body.push(child);
        else if (child.tagName === 'THEAD' || child.tagName === 'TBODY' || child.tagName === 'TFOOT') {
          const rows = Array.from(child.children).filter((c) => c.tagName === 'TR');
          (child.tagName === 'THEAD' ? head : child.tagName === 'TFOOT' ? foot : body).push(...rows);
        }
      }
      return [...head, ...body, ...foot];
    },
  });
}
addTableRows();

function createTurndown(): TurndownService {
  const td = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
    hr: '---',
  });
  td.use(gfm);
  // Code blocks: one rule for every highlighter's markup (`<pre><span></span><code>`, `<pre>` alone,
  // language on the code, the pre or a wrapper), with a fence longer than any run of backticks inside.
  td.addRule('preCodeBlock', {
    filter: (node) => node.nodeName === 'PRE',
    replacement: (_content, node) => {
      const el = node as HTMLElement;
      const lang = el.getAttribute('data-lang') ?? '';
      const code = (el.textContent ?? '').replace(/\n+$/, '');
      const longest = Math.max(2, ...Array.from(code.matchAll(/`+/g), (m) => m[0].length));
      const fence = '`'.repeat(longest + 1);
      return `\n\n${fence}${lang}\n${code}\n${fence}\n\n`;
    },
  });
  // List items with a one-space marker (`- x`, `1. x`) and continuation lines indented to match, instead
  // of turndown's padded `-   x`: the same markdown in fewer tokens.
  td.addRule('compactListItem', {
    filter: 'li',
    replacement: (content, node) => {
      const li = node as HTMLElement;
      const parent = li.parentNode as HTMLElement | null;
      let prefix = '- ';
      if (parent?.nodeName === 'OL') {
        const start = Number(parent.getAttribute('start') ?? '1');
        const index = Array.prototype.indexOf.call(parent.children, li) as number;
        prefix = `${(Number.isFinite(start) ? start : 1) + index}. `;
      }
      const isParagraph = /\n$/.test(content);
      const body = content.replace(/^\n+/, '').replace(/\n+$/, '') + (isParagraph ? '\n' : '');
      return prefix + body.replace(/\n/g, `\n${' '.repeat(prefix.length)}`) + (li.nextSibling ? '\n' : '');
    },
  });
  // Table cells as the GFM plugin writes them, with `|` escaped: a pipe in a cell (`str | None`) would
  // otherwise end the cell and break the row.
  td.addRule('tableCellEscaped', {
    filter: ['th', 'td'],
    replacement: (content, node) => {
      const siblings = node.parentNode?.childNodes ?? [];
      const first = Array.prototype.indexOf.call(siblings, node) === 0;
      return `${first ? '| ' : ' '}${content.replace(/\|/g, '\\|')} |`;
    },
  });
  // Task lists: a checkbox anywhere in a list item (GitHub puts it inside a <p>; the GFM plugin only
  // knows it as the item's direct child) becomes `[x]` / `[ ]`.
  td.addRule('taskListCheckbox', {
    filter: (node) =>
      node.nodeName === 'INPUT' &&
      (node.getAttribute('type') ?? '').toLowerCase() === 'checkbox' &&
      node.closest('li') !== null,
    replacement: (_content, node) => {
      const box = (node as HTMLElement).hasAttribute('checked') ? '[x]' : '[ ]';
      // The label's own leading space (`<input> done`) separates it already.
      return /^\s/.test(node.nextSibling?.textContent ?? '') ? box : `${box} `;
    },
  });
  // Definition lists (glossaries, API parameters): markdown has none, so each term is a bold line and its
  // definition follows on the next line, in the same paragraph: the chunker keeps a term with what defines
  // it. Terms sharing a definition stack up; a second definition of one term is a paragraph of its own.
  td.addRule('definitionTerm', {
    filter: 'dt',
    replacement: (content, node) => {
      const term = content.replace(/\s+/g, ' ').trim();
      if (!term) return '';
      const bold = /^\*\*[^*]+\*\*$/.test(term) ? term : `**${term}**`;
      return `${previousElementIs(node, 'DT') ? '\n' : '\n\n'}${bold}\n`;
    },
  });
  td.addRule('definitionDescription', {
    filter: 'dd',
    replacement: (content, node) => {
      const text = content.replace(/^\n+/, '').replace(/\n+$/, '');
      if (!text.trim()) return '';
      return `${previousElementIs(node, 'DT') ? '\n' : '\n\n'}${text}\n\n`;
    },
  });
  // Images: alt text carries the meaning; decorative images (no alt) and inline data are dropped.
  td.addRule('imageWithAlt', {
    filter: 'img',
    replacement: (_content, node) => {
      const el = node as HTMLElement;
      const alt = (el.getAttribute('alt') ?? '').replace(/\s+/g, ' ').trim();
      const src = el.getAttribute('src') ?? '';
      if (!alt || !src || src.startsWith('data:')) return '';
      return `![${alt.replace(/[[\]]/g, '')}](${src})`;
    },
  });
  return td;
}

/** Whether the nearest element before `node` among its siblings is a `tag` (`DT`, say). */
function previousElementIs(node: Node, tag: string): boolean {
  let prev = node.previousSibling;
  while (prev && prev.nodeType !== 1) prev = prev.previousSibling;
  return prev?.nodeName === tag;
}

/** Drops empty links and trailing spaces and collapses blank lines, leaving code blocks byte for byte. */
function tidyMarkdown(md: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  let blank = 0;
  for (const line of md.split('\n')) {
    if (fence !== null) {
      out.push(line);
      if (line.startsWith(fence) && line.trim() === fence) fence = null;
      continue;
    }
    const opening = /^(`{3,}|~{3,})/.exec(line);
    if (opening?.[1]) {
      fence = opening[1];
      blank = 0;
      out.push(line);
      continue;
    }
    // Links without text (icons) carry nothing a reader or a search can use.
    const tidy = line.replace(/(?<!!)\[\s*\]\([^)]*\)/g, '').replace(/\s+$/, '');
    if (tidy === '') {
      if (++blank > 1) continue;
    } else {
      blank = 0;
    }
    out.push(tidy);
  }
  return out.join('\n').trim();
}

/**
 * Tables come in two kinds, told apart here (before conversion, on the DOM), outermost first:
 *
 * - A layout table (a page laid out in a grid) becomes its text: each cell's content in reading order, as
 *   the blocks it holds. A table is layout when its author says so (`role="presentation"` or `"none"`),
 *   or when it has no header cell (no `<th>`, `<thead>` or `<caption>`) and any of: a single row or a
 *   single column (columns of a page, or a stack of blocks: not records), or a cell that holds page
 *   structure (a nested table, a heading, a list, a quotation, preformatted text, a form or its controls,
 *   or more than one paragraph or division). A table with header cells is data whatever its cells hold:
 *   a header is the mark of records.
 * - A data table becomes a GFM table: cells lose their block structure (nested tables become inline
 *   text), and one without a header row gets an empty one (GFM requires it), never its first row
 *   promoted: a first row of data is not a header.
 */
function prepareTables(root: DocumentFragment): void {
  unwrapStrayCells(root);
  for (const table of Array.from(root.querySelectorAll('table'))) {
    // A nested table already flattened into its data cell, or unwrapped with its layout table, is done.
    if (!root.contains(table)) continue;
    if (isLayoutTable(table)) unwrapLayoutTable(table);
    else {
      flattenCells(table);
      liftCaption(table);
      ensureHeaderRow(table);
    }
  }
}

const CELL_STRUCTURE =
  'table, h1, h2, h3, h4, h5, h6, ul, ol, dl, blockquote, pre, form, input, select, textarea';

function isLayoutTable(table: Element): boolean {
  const role = (table.getAttribute('role') ?? '').toLowerCase();
  if (role === 'presentation' || role === 'none') return true;
  const rows = ownRows(table);
  const cells = rows.map(ownCells);
  if (childrenNamed(table, 'CAPTION', 'THEAD').length > 0 || cells.some((r) => r.some(isHeaderCell)))
    return false;
  if (rows.length <= 1 || cells.every((r) => r.length <= 1)) return true;
  return cells.some((r) =>
    r.some((cell) => {
      if (cell.querySelector(CELL_STRUCTURE)) return true;
      let blocks = 0;
      for (const child of Array.from(cell.children))
        if (/^(?:P|DIV|SECTION|ARTICLE)$/.test(child.tagName)) blocks++;
      return blocks > 1;
    }),
  );
}

/** The table's own rows (thead's, its own and its tbodies', tfoot's), not those of tables nested in it. */
function ownRows(table: Element): Element[] {
  return Array.from((table as HTMLTableElement).rows as unknown as ArrayLike<Element>);
}

function ownCells(row: Element): Element[] {
  return Array.from(row.children).filter((c) => c.tagName === 'TD' || c.tagName === 'TH');
}

function childrenNamed(el: Element, ...tags: string[]): Element[] {
  return Array.from(el.children).filter((c) => tags.includes(c.tagName));
}

function isHeaderCell(cell: Element): boolean {
  return cell.tagName === 'TH';
}

/**
 * Rows and cells outside any table are what Readability keeps of a layout table (the cell it chose and
 * its siblings), or the subtree a caller converts (a cell): their content, each cell a block of its own.
 */
function unwrapStrayCells(root: DocumentFragment): void {
  const doc = root.ownerDocument;
  for (const cell of Array.from(root.querySelectorAll('td, th'))) {
    if (cell.closest('table')) continue;
    const block = doc.createElement('div');
    block.append(...Array.from(cell.childNodes));
    cell.replaceWith(block);
  }
  for (const row of Array.from(root.querySelectorAll('tr'))) {
    if (!row.closest('table')) row.replaceWith(...Array.from(row.childNodes));
  }
}

/** Replaces a layout table by its cells' content, each cell a block of its own, in reading order. */
function unwrapLayoutTable(table: Element): void {
  const doc = table.ownerDocument;
  const blocks: Element[] = [];
  for (const row of ownRows(table)) {
    for (const cell of ownCells(row)) {
      if (!cell.hasChildNodes()) continue;
      const block = doc.createElement('div');
      block.append(...Array.from(cell.childNodes));
      blocks.push(block);
    }
  }
  // A caption of a layout table (rare) is text like any other.
  const [caption] = childrenNamed(table, 'CAPTION');
  if (caption) {
    const block = doc.createElement('div');
    block.append(...Array.from(caption.childNodes));
    blocks.unshift(block);
  }
  table.replaceWith(...blocks);
}

/** One line per cell: nested tables become inline text, block elements their inline content. */
function flattenCells(table: Element): void {
  const doc = table.ownerDocument;
  for (const cell of Array.from(table.querySelectorAll('td, th'))) {
    if (!table.contains(cell)) continue;
    for (const nested of Array.from(cell.querySelectorAll('table'))) {
      if (!cell.contains(nested)) continue;
      const rows = Array.from(nested.querySelectorAll('tr'), (tr) =>
        Array.from(tr.children, (c) => normalizeSpace(c.textContent ?? ''))
          .filter(Boolean)
          .join(' – '),
      ).filter(Boolean);
      nested.replaceWith(doc.createTextNode(` ${rows.join('; ')} `));
    }
    for (const block of Array.from(
      cell.querySelectorAll(
        'p, div, ul, ol, li, dl, dt, dd, blockquote, h1, h2, h3, h4, h5, h6, pre, br, hr',
      ),
    )) {
      if (block.tagName === 'BR' || block.tagName === 'HR') {
        block.replaceWith(doc.createTextNode(' '));
      } else if (block.tagName === 'PRE') {
        const code = doc.createElement('code');
        code.textContent = normalizeSpace(block.textContent ?? '');
        block.replaceWith(code);
      } else {
        block.replaceWith(...Array.from(block.childNodes), doc.createTextNode(' '));
      }
    }
  }
}

/**
 * The GFM plugin writes a table only when its header row is the table's (or first tbody's) first child:
 * a caption becomes a paragraph above the table, and column groups (no text) go.
 */
function liftCaption(table: Element): void {
  const doc = table.ownerDocument;
  for (const el of childrenNamed(table, 'CAPTION', 'COLGROUP', 'COL')) {
    if (el.tagName === 'CAPTION' && textOf(el) !== '') {
      const p = doc.createElement('p');
      p.append(...Array.from(el.childNodes));
      table.before(p);
    }
    el.remove();
  }
}

/**
 * A header row as the GFM plugin recognises it (in `<thead>`, or header cells only; an empty corner cell
 * above row headers counts as one); otherwise an empty header row above the first.
 */
function ensureHeaderRow(table: Element): void {
  const rows = ownRows(table);
  const first = rows[0];
  if (!first) return;
  const doc = table.ownerDocument;
  const firstCells = ownCells(first);
  if (first.parentElement?.tagName === 'THEAD') return;
  if (firstCells.some(isHeaderCell) && firstCells.every((c) => isHeaderCell(c) || textOf(c) === '')) {
    for (const td of firstCells) {
      if (isHeaderCell(td)) continue;
      td.replaceWith(doc.createElement('th'));
    }
    return;
  }
  const width = Math.max(...rows.map((r) => ownCells(r).length));
  const head = doc.createElement('thead');
  const row = doc.createElement('tr');
  for (let i = 0; i < width; i++) row.appendChild(doc.createElement('th'));
  head.appendChild(row);
  table.insertBefore(head, table.firstChild);
}

function textOf(el: Element): string {
  return normalizeSpace(el.textContent ?? '');
}

function normalizeSpace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
