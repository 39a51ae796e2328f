/**
 * HTML page → title, main-content markdown and links. The page is parsed once with linkedom; links,
 * canonical URL and robots meta come from the whole page, then boilerplate (navigation, headers, footers,
 * sidebars, cookie banners, scripts) is removed and the main content is located by its semantic element
 * (`<main>`, `<article>`, ...) or, when the page has none, by @mozilla/readability. The markdown comes
 * from the service's one HTML-to-markdown converter (src/lib/html-to-markdown.ts), shared with the
 * connectors. The main text's near-duplicate signature (fingerprint.ts) and the item's search words are
 * taken here too, so their cost is paid in the extraction worker, not on the crawl's thread.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { absolutizeUrls, elementToMarkdown, markCodeLanguages } from '../lib/html-to-markdown.ts';
import { itemSearchWords } from '../lib/search-words.ts';
import { textSignature } from './fingerprint.ts';
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
  /** MinHash signature of the markdown (fingerprint.ts); null when the text is too short to compare. */
  signature: number[] | null;
  /** The item's search words (src/lib/search-words.ts) of `title` and `markdown`, split here, off the crawl's thread. */
  searchWords: string;
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
  /(?:^|[\s_-])(?:cookies?|consent|gdpr|cookiebanner|sidebar|side-bar|sidenav|breadcrumbs?|skip-link|skiplink|toc|table-of-contents|navbar|nav|share|sharing|social-share|newsletter|advert|ads|footer|copyright|colophon)(?:$|[\s_-])/i;

/**
 * Where the author declared the main content. Trusted however short it is: a short page (an index, a
 * package overview, a search page) is stored with its own few words, never with the longer text the
 * fallback would find around it (the site's footer or navigation, the same on every page).
 */
const DECLARED_MAIN = new Set(['main', '[role=main]']);

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

/** Below this many characters a guessed container (an article, `#content`...) is not trusted to hold the page's content. */
const MIN_MAIN_TEXT = 140;

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
  // Before Readability, which strips the class attributes that name code languages.
  markCodeLanguages(document);
  // Links and images point to absolute URLs, so the markdown stands on its own (resolved here: Readability
  // cannot, a linkedom document has no base URI).
  absolutizeUrls(document, base);

  const main = findMainElement(document);
  let root = main?.element ?? null;
  let readabilityTitle: string | undefined;
  if (!main || (!main.declared && textLength(main.element) < MIN_MAIN_TEXT)) {
    // No trustworthy container: let Readability find the densest block, but keep a short guessed one
    // (a landing page, a stub) unless Readability finds clearly more text elsewhere.
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
  let markdown = root ? elementToMarkdown(root) : '';
  if (!rootH1 && h1 && title === h1) markdown = `# ${h1}\n\n${markdown}`.trim();
  const signature = textSignature(markdown);
  const searchWords = itemSearchWords(title, markdown);
  return canonical
    ? { title, markdown, links, canonical, noindex, signature, searchWords }
    : { title, markdown, links, noindex, signature, searchWords };
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

/**
 * The main content's container, and whether the author declared it so (`<main>`, `role=main`). A declared
 * one left empty (its content comes from a script) is returned when no other container has text: what
 * the fallback would find outside it is the page's boilerplate.
 */
function findMainElement(document: Document): { element: Element; declared: boolean } | null {
  let emptyDeclared: Element | null = null;
  for (const selector of MAIN_SELECTORS) {
    const matches = document.querySelectorAll(selector);
    // Several <article>s make a listing page, not an article: leave that to Readability.
    if (matches.length !== 1) continue;
    const element = matches[0]!;
    const declared = DECLARED_MAIN.has(selector);
    if (textLength(element) > 0) return { element, declared };
    if (declared) emptyDeclared ??= element;
  }
  return emptyDeclared ? { element: emptyDeclared, declared: true } : null;
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

function textLength(el: Element): number {
  return (el.textContent ?? '').replace(/\s+/g, '').length;
}

function normalizeSpace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
