/**
 * HTML page → title, main-content markdown and links. The page is parsed once with linkedom; links,
 * canonical URL and robots meta come from the whole page, then boilerplate (navigation, headers, footers,
 * sidebars, cookie banners, scripts) is removed and the main content is located by its semantic element
 * (`<main>`, `<article>`, ...) or, when the page has none, by @mozilla/readability. Turndown with the GFM
 * plugin writes markdown that keeps headings, lists, tables and fenced code blocks with their language.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';
import { canonicalizeUrl, resolveLink } from './url.ts';

export interface ExtractedPage {
  /** Page title: the main heading when the `<title>` repeats it plus a site name, else the `<title>`. */
  title: string;
  /** Main content as GitHub-flavoured markdown. */
  markdown: string;
  /** Canonical absolute http(s) URLs of every link on the page (navigation included), deduplicated. */
  links: string[];
  /** `<link rel="canonical">`, resolved. */
  canonical?: string;
  /** `<meta name="robots" content="noindex">` (or `none`). */
  noindex: boolean;
}

// Removed everywhere: never content.
const JUNK_SELECTOR = [
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'canvas',
  'svg',
  'link',
  'meta',
  'input',
  'button',
  'select',
  'textarea',
  'dialog',
  'nav',
  'aside',
  'footer',
  '[role=navigation]',
  '[role=banner]',
  '[role=contentinfo]',
  '[role=complementary]',
  '[role=search]',
  '[role=dialog]',
  '[aria-hidden=true]',
  '[hidden]',
  'a.headerlink',
  'a.anchor',
  '.linenos',
  '.lineno',
].join(',');

// Boilerplate recognised by id or class name (cookie banners, sidebars, tables of contents...).
const BOILERPLATE_NAME =
  /(?:^|[\s_-])(?:cookies?|consent|gdpr|cookiebanner|sidebar|side-bar|sidenav|breadcrumbs?|skip-link|skiplink|toc|table-of-contents|navbar|nav|share|sharing|social-share|newsletter|advert|ads)(?:$|[\s_-])/i;

// Where authors put the main content, most specific first.
const MAIN_SELECTORS = [
  'main',
  '[role=main]',
  'article',
  '#content',
  '#main-content',
  '#main',
  '.main-content',
  '.post-content',
  '.entry-content',
  '.markdown-body',
  '.content',
];

/** Below this many characters a semantic container is not trusted to hold the page's content. */
const MIN_MAIN_TEXT = 140;

const LANGUAGE_CLASS = /(?:^|\s)(?:language|lang|highlight-source|highlight)-([\w#+.-]+)/i;

const turndown = createTurndown();

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

/** Extracts title, markdown, links and indexing hints from an HTML page fetched from `url`. */
export function extractPage(html: string, url: string): ExtractedPage {
  // linkedom does not synthesise the html/body elements a browser would for a fragment.
  const source = /<html[\s>]/i.test(html)
    ? html
    : `<!DOCTYPE html><html>${/<body[\s>]/i.test(html) ? html : `<body>${html}</body>`}</html>`;
  const { document } = parseHTML(source) as unknown as { document: Document };
  const baseHref = document.querySelector('base[href]')?.getAttribute('href');
  const base = (baseHref && canonicalizeUrl(baseHref, url)) || url;

  const links = collectLinks(document, base);
  const canonical = findCanonical(document, base);
  const noindex = hasNoindex(document);
  const docTitle = normalizeSpace(
    document.querySelector('title')?.textContent ??
      document.querySelector('meta[property="og:title"]')?.getAttribute('content') ??
      '',
  );

  removeBoilerplate(document);
  markCodeLanguages(document);
  absolutizeUrls(document, base);

  let root = findMainElement(document);
  let readabilityTitle: string | undefined;
  if (!root || textLength(root) < MIN_MAIN_TEXT) {
    // No trustworthy semantic container: let Readability find the densest block, but keep a short
    // <main> (a landing page, a stub) unless Readability finds clearly more text elsewhere.
    const mainLength = root ? textLength(root) : 0;
    const fallback = readabilityContent(document);
    const fallbackLength = fallback ? textLength(fallback.element) : 0;
    if (fallback && (!root || (fallbackLength >= MIN_MAIN_TEXT && fallbackLength > 3 * mainLength))) {
      root = fallback.element;
      readabilityTitle = fallback.title;
    }
  }
  root ??= document.body ?? document.documentElement;

  const rootH1 = root?.querySelector('h1');
  // Readability drops a heading that repeats the title; the page's own <h1> still names it.
  const h1 = normalizeSpace((rootH1 ?? document.querySelector('h1'))?.textContent ?? '');
  const title = chooseTitle(docTitle, h1, readabilityTitle, url);
  let markdown = root ? toMarkdown(root) : '';
  if (!rootH1 && h1 && title === h1) markdown = `# ${h1}\n\n${markdown}`.trim();
  return canonical ? { title, markdown, links, canonical, noindex } : { title, markdown, links, noindex };
}

function collectLinks(document: Document, base: string): string[] {
  const seen = new Set<string>();
  for (const a of document.querySelectorAll('a[href], area[href]')) {
    const resolved = resolveLink(a.getAttribute('href') ?? '', base);
    if (resolved) seen.add(resolved);
  }
  return [...seen];
}

function findCanonical(document: Document, base: string): string | undefined {
  for (const link of document.querySelectorAll('link[rel][href]')) {
    const rel = (link.getAttribute('rel') ?? '').toLowerCase().split(/\s+/);
    if (rel.includes('canonical')) return canonicalizeUrl(link.getAttribute('href') ?? '', base) ?? undefined;
  }
  return undefined;
}

function hasNoindex(document: Document): boolean {
  for (const meta of document.querySelectorAll('meta[name][content]')) {
    if ((meta.getAttribute('name') ?? '').toLowerCase() !== 'robots') continue;
    if (/\b(?:noindex|none)\b/i.test(meta.getAttribute('content') ?? '')) return true;
  }
  return false;
}

function removeBoilerplate(document: Document): void {
  for (const el of Array.from(document.querySelectorAll(JUNK_SELECTOR))) el.remove();
  // A page-wide header is boilerplate; a header inside the article usually holds its title.
  for (const el of Array.from(document.querySelectorAll('header'))) {
    if (!el.closest('main, article, [role=main]')) el.remove();
  }
  for (const el of Array.from(document.querySelectorAll('[class], [id]'))) {
    if (el.tagName === 'HTML' || el.tagName === 'BODY' || !el.isConnected) continue;
    const name = `${el.getAttribute('id') ?? ''} ${el.getAttribute('class') ?? ''}`;
    if (!BOILERPLATE_NAME.test(name)) continue;
    // Never drop a wrapper of the content itself (`<div class="with-sidebar"><main>...`).
    if (el.matches('main, article, [role=main]') || el.querySelector('main, article, [role=main], h1'))
      continue;
    el.remove();
  }
}

/** Records each code block's language on its `<pre>` before any cleaning removes the classes. */
function markCodeLanguages(document: Document): void {
  for (const pre of document.querySelectorAll('pre')) {
    const code = pre.querySelector('code');
    const candidates = [code, pre, pre.parentElement, pre.parentElement?.parentElement];
    for (const el of candidates) {
      const m = el ? LANGUAGE_CLASS.exec(el.getAttribute('class') ?? '') : null;
      if (m?.[1]) {
        pre.setAttribute('data-lang', m[1]);
        break;
      }
    }
    const dataLang = pre.getAttribute('data-lang') ?? code?.getAttribute('data-lang');
    if (dataLang) pre.setAttribute('data-lang', dataLang.replace(/[^\w#+.-]/g, ''));
  }
}

/** Markdown must stand on its own: links and images point to absolute URLs. */
function absolutizeUrls(document: Document, base: string): void {
  for (const a of document.querySelectorAll('a[href]')) {
    const href = a.getAttribute('href') ?? '';
    if (href.startsWith('#')) continue;
    try {
      a.setAttribute('href', new URL(href, base).href);
    } catch {
      a.removeAttribute('href');
    }
  }
  for (const img of document.querySelectorAll('img[src]')) {
    try {
      img.setAttribute('src', new URL(img.getAttribute('src') ?? '', base).href);
    } catch {
      img.removeAttribute('src');
    }
  }
}

function findMainElement(document: Document): Element | null {
  for (const selector of MAIN_SELECTORS) {
    const matches = document.querySelectorAll(selector);
    // Several <article>s make a listing page, not an article: leave that to Readability.
    if (matches.length !== 1) continue;
    const el = matches[0]!;
    if (textLength(el) > 0) return el;
  }
  return null;
}

function readabilityContent(document: Document): { element: Element; title?: string } | null {
  try {
    // Readability takes apart the document it reads; the original must survive for the <main> fallback.
    const article = new Readability<Element>(document.cloneNode(true) as Document, {
      serializer: (node) => node as Element,
      charThreshold: 200,
    }).parse();
    if (!article?.content) return null;
    return { element: article.content, title: article.title ?? undefined };
  } catch {
    return null;
  }
}

function chooseTitle(
  docTitle: string,
  h1: string,
  readabilityTitle: string | undefined,
  url: string,
): string {
  // "First Steps - FastAPI" with <h1>First Steps</h1>: the heading is the page's own title, the rest
  // the site's name. Compared on letters and digits only ("`APIRouter` class" vs "APIRouter class").
  if (h1 && comparable(docTitle).includes(comparable(h1))) return h1;
  if (docTitle) return docTitle;
  if (h1) return h1;
  if (readabilityTitle) return normalizeSpace(readabilityTitle);
  const path = new URL(url).pathname.replace(/\/(index\.html?)?$/i, '');
  return safeDecode(path.split('/').pop() ?? '') || new URL(url).hostname;
}

function comparable(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function toMarkdown(root: Element): string {
  prepareTables(root);
  return tidyMarkdown(turndown.turndown(root.outerHTML));
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
 * GFM tables are one line per row under a header row: cells lose their block structure (nested tables
 * become inline text) and a table without a header row gets its first row promoted, instead of either
 * breaking the table or leaving it as raw HTML.
 */
function prepareTables(root: Element): void {
  const doc = root.ownerDocument;
  for (const cell of Array.from(root.querySelectorAll('td, th'))) {
    if (!cell.isConnected) continue;
    for (const nested of Array.from(cell.querySelectorAll('table'))) {
      if (!nested.isConnected) continue;
      const rows = Array.from(nested.querySelectorAll('tr'), (tr) =>
        Array.from(tr.children, (c) => normalizeSpace(c.textContent ?? ''))
          .filter(Boolean)
          .join(' – '),
      ).filter(Boolean);
      nested.replaceWith(doc.createTextNode(` ${rows.join('; ')} `));
    }
    for (const block of Array.from(
      cell.querySelectorAll('p, div, ul, ol, li, blockquote, h1, h2, h3, h4, h5, h6, pre, br, hr'),
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
  for (const table of Array.from(root.querySelectorAll('table'))) {
    if (table.querySelector('th')) continue;
    const firstRow = table.querySelector('tr');
    if (!firstRow) continue;
    for (const td of Array.from(firstRow.children)) {
      if (td.tagName !== 'TD') continue;
      const th = doc.createElement('th');
      while (td.firstChild) th.appendChild(td.firstChild);
      td.replaceWith(th);
    }
  }
}

function textLength(el: Element): number {
  return (el.textContent ?? '').replace(/\s+/g, '').length;
}

function normalizeSpace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
