/**
 * Pages that are lists of links: a site's indexes, tables of contents, sitemaps and tag pages. Their text
 * is the titles of other pages, so every chunk of them matches a question about any of those pages and
 * outranks the page itself (a reference manual's 30 index pages were 6% of its pages and 27% of its
 * chunks). A crawl stores them (they are listed, and the crawler follows their links) but does not chunk
 * them for search unless the crawl asks for them (`indexListPages`).
 *
 * Told apart by what the text is, not by URL names: a page is a list of links when it has at least
 * {@link MIN_LINKS} links, at least {@link MIN_LINK_TEXT_SHARE} of its letters and digits are in link
 * anchors, and the text outside the anchors is under {@link MAX_OTHER_CHARS_PER_LINK} letters and digits a
 * link. Measured on the FastAPI docs (154 pages): no page has over 0.38 of its text in anchors (the
 * largest, a how-to with 3 links; release notes, 7,204 links, 0.20 and 32 characters of other text a
 * link; the home page, 52 links, 0.05); a generated index or table of contents has 0.8-1.0 and a few
 * characters a link. An index that gives each link a sentence of its own (a module index with a synopsis
 * per module) is text people search, and stays searchable.
 */
import { Lexer, type Token } from 'marked';

/** Fewer links than this is never a list page (a stub with a link or two is a short page, not an index). */
export const MIN_LINKS = 10;
/** Share of the page's letters and digits inside link anchors from which it may be a list page. */
export const MIN_LINK_TEXT_SHARE = 0.5;
/** Letters and digits outside anchors per link below which it may be a list page (about six words). */
export const MAX_OTHER_CHARS_PER_LINK = 40;

export interface LinkStats {
  links: number;
  /** Letters and digits of the page's text (code included, link targets and markup not). */
  textChars: number;
  /** Those inside link anchors. */
  linkChars: number;
}

const LETTERS = /[\p{L}\p{N}]/gu;

/** Links and how much of the text is theirs, from the page's markdown. */
export function linkStats(markdown: string): LinkStats {
  const stats: LinkStats = { links: 0, textChars: 0, linkChars: 0 };
  count(new Lexer({ gfm: true }).lex(markdown), false, stats);
  return stats;
}

function count(tokens: Token[], inLink: boolean, stats: LinkStats): void {
  for (const t of tokens) {
    if (t.type === 'link') {
      stats.links++;
      count(t.tokens ?? [], true, stats);
    } else if (t.type === 'list') {
      for (const item of t.items) count(item.tokens, inLink, stats);
    } else if (t.type === 'table') {
      for (const cell of [...t.header, ...t.rows.flat()]) count(cell.tokens, inLink, stats);
    } else if (t.type === 'image' || t.type === 'html' || t.type === 'def') {
      // Alt text, tags and link definitions are not the page's words.
    } else if ('tokens' in t && Array.isArray(t.tokens) && t.tokens.length > 0) {
      count(t.tokens, inLink, stats);
    } else if ('text' in t && typeof t.text === 'string') {
      const n = t.text.match(LETTERS)?.length ?? 0;
      stats.textChars += n;
      if (inLink) stats.linkChars += n;
    }
  }
}

/** Whether the page is a list of links (the module comment gives the rule and the thresholds). */
export function isLinkListPage(markdown: string): boolean {
  // Cheap bound first: a page with fewer link openings and URLs than MIN_LINKS needs no lexing.
  if ((markdown.match(/\]\(|:\/\//g)?.length ?? 0) < MIN_LINKS) return false;
  const s = linkStats(markdown);
  if (s.links < MIN_LINKS || s.textChars === 0) return false;
  const share = s.linkChars / s.textChars;
  const otherPerLink = (s.textChars - s.linkChars) / s.links;
  return share >= MIN_LINK_TEXT_SHARE && otherPerLink < MAX_OTHER_CHARS_PER_LINK;
}
