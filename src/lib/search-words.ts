/**
 * The words the items query's `search` finds an item by (its `search_words`, migrations 013 and 016), and
 * the words of a search, split here the same way on both sides: runs of Unicode letters, marks and digits,
 * lower-cased with `toLowerCase` (all of Unicode, whatever the database's locale). `snake_case` is the
 * words `snake` and `case`, `0.115.0` is `0`, `115` and `0`, `O'Brien` is `o` and `brien`.
 *
 * Why here and not in SQL (Postgres's `to_tsvector('simple', ...)` in a trigger, as migration 013 did):
 * that parser cost ~0.2 ms of embedded Postgres per kB of text (a 700 kB page: ~140 ms), on the thread that
 * serves every request in embedded mode, and a fifth of a crawl's time there; this split costs ~0.05 ms per
 * kB in JavaScript, and the database only stores the list (`array_to_tsvector`).
 *
 * Limits of a tsvector, kept here because `array_to_tsvector` refuses a list past them (the item's write
 * would fail): a word of at most {@link MAX_WORD_CHARS} characters is kept (a longer one by its start, on
 * both sides, so a search for it still finds it as a prefix), and the distinct words of an item are kept in
 * order of first appearance until {@link MAX_WORDS_BYTES}: a text with more distinct words than that is
 * found by the words of its beginning (a tsvector cannot hold more than 1 MB of them).
 *
 * Content is markdown: its link targets, image URLs and HTML tags are not words of the item
 * ({@link withoutLinkTargets}); a link's anchor text and an image's alt text are.
 */

export const MAX_WORD_CHARS = 255;
export const MAX_WORDS_BYTES = 1_000_000;

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * `[text](target "title")` and `![alt](src)`: anchor or alt text (group 1), then the target and any title,
 * all on one line (so that slices ending at a line break cut none).
 */
const LINK = /!?\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'))?[ \t]*\)/g;
/** An HTML tag on one line: a name, then attributes (an autolink such as `<https://host>` is no tag). */
const TAG = /<\/?[A-Za-z][A-Za-z0-9-]*(?:[ \t][^<>\n]*)?\/?>/g;

/**
 * Markdown without what readers do not read: links become their anchor text, images their alt text, and
 * HTML tags go. A page's link targets were as much as 38% of its stored markdown (a reference manual),
 * words like `http`, `html` and the host's name in every item. Line by line: the text of several lines
 * gives the same as its lines one by one.
 */
export function withoutLinkTargets(markdown: string): string {
  if (!markdown.includes('](') && !markdown.includes('<')) return markdown;
  return markdown.replace(LINK, '$1').replace(TAG, ' ');
}

/** The words of a text, lower-cased, each cut to {@link MAX_WORD_CHARS}, in order, repeats included. */
export function splitWords(text: string): string[] {
  const words = text.toLowerCase().match(WORD) ?? [];
  for (let i = 0; i < words.length; i++)
    if (words[i]!.length > MAX_WORD_CHARS) words[i] = words[i]!.slice(0, MAX_WORD_CHARS);
  return words;
}

/**
 * An item's distinct words (title and content), space-separated: the parameter of
 * `array_to_tsvector(string_to_array($n, ' '))` (no word holds a space).
 */
export function itemSearchWords(title: string, content: string): string {
  const words = new DistinctWords();
  if (words.add(title)) words.add(withoutLinkTargets(content));
  return words.joined();
}

/**
 * Characters of content split between two turns of the event loop by {@link itemSearchWordsInSlices}:
 * some 3-6 ms of work (the split costs 0.05-0.12 ms per 1,000 characters), and under 50 ms on a machine
 * whose cores are busy with other work (a slice of 200,000 characters held the loop 84 ms there).
 */
export const SEARCH_WORDS_SLICE_CHARS = 50_000;

/**
 * {@link itemSearchWords}, the same string, computed a slice of the content at a time with a turn of the
 * event loop between slices: a 5,000,000-character document is 0.3-0.6 s of splitting, which must not
 * stop every other request. Slices end after a whitespace character (a line break where one is near), which
 * no word, link or tag holds and across which lower-casing looks at no context (Greek final sigma), so the
 * words are those of the whole text.
 */
export async function itemSearchWordsInSlices(title: string, content: string): Promise<string> {
  const words = new DistinctWords();
  if (!words.add(title)) return words.joined();
  let start = 0;
  while (start < content.length) {
    const end = sliceEnd(content, start + SEARCH_WORDS_SLICE_CHARS);
    const slice = start === 0 && end === content.length ? content : content.slice(start, end);
    if (!words.add(withoutLinkTargets(slice))) break;
    start = end;
    if (start < content.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return words.joined();
}

/**
 * The end of a slice at or after `from`: just past the next line break if one comes within another
 * slice's length (links and tags do not span lines: {@link withoutLinkTargets} gives the same), else just
 * past the next whitespace character (a link on a line that long may then keep its target's words), else
 * the text's end.
 */
function sliceEnd(text: string, from: number): number {
  if (from >= text.length) return text.length;
  const newline = text.indexOf('\n', from);
  if (newline >= 0 && newline < from + SEARCH_WORDS_SLICE_CHARS) return newline + 1;
  const space = /\s/g;
  space.lastIndex = from;
  const found = space.exec(text);
  return found ? found.index + 1 : text.length;
}

/** The distinct words seen so far, in order of first appearance, until {@link MAX_WORDS_BYTES}. */
class DistinctWords {
  readonly #seen = new Set<string>();
  #bytes = 0;

  /** Adds the words of `text`; false once the list is full (later words are not kept). */
  add(text: string): boolean {
    for (const word of splitWords(text)) {
      if (this.#seen.has(word)) continue;
      // A tsvector stores each distinct word's UTF-8 bytes once, plus 4 bytes of entry.
      this.#bytes += Buffer.byteLength(word) + 4;
      if (this.#bytes > MAX_WORDS_BYTES) return false;
      this.#seen.add(word);
    }
    return true;
  }

  joined(): string {
    return [...this.#seen].join(' ');
  }
}
