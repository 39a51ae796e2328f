/**
 * The query's terms in a chunk's text, for the search playground: the text cut into plain and matched
 * parts (rendered as text and <mark>, never as HTML). A term matches at the start of a word and
 * case-insensitively, so `install` marks the start of `Installation`.
 */

/** Words too common to be worth marking. */
const STOPWORDS = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'by',
  'do',
  'for',
  'from',
  'how',
  'i',
  'in',
  'is',
  'it',
  'of',
  'on',
  'or',
  'the',
  'to',
  'what',
  'with',
]);

/** The distinct terms of a query worth marking, longest first (so a longer term wins at one place). */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const terms = new Set(words.filter((w) => w.length >= 2 && !STOPWORDS.has(w)));
  return [...terms].sort((a, b) => b.length - a.length);
}

interface TextPart {
  text: string;
  match: boolean;
}

export function highlight(text: string, query: string): TextPart[] {
  const terms = queryTerms(query);
  if (terms.length === 0 || text === '') return [{ text, match: false }];
  const escaped = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${escaped.join('|')})`, 'giu');
  const parts: TextPart[] = [];
  let at = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > at) parts.push({ text: text.slice(at, m.index), match: false });
    parts.push({ text: m[0], match: true });
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push({ text: text.slice(at), match: false });
  return parts;
}
