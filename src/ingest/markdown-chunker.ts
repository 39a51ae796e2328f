/**
 * The chunker: markdown to chunks sized for the embedding model, split at headings, then blocks, then
 * sentences, each chunk carrying its heading path, and the ranking text it is embedded from. About 650
 * lines on purpose: the splitting, joining and packing rules and the token budget they share are one
 * algorithm, easier to check read top to bottom than spread over files.
 */
import { Lexer, type Token, type Tokens } from 'marked';

/** One piece of a document, sized for the embedding model. */
export interface Chunk {
  /** Position in the document, from 0. */
  index: number;
  /** The chunk's own markdown, links included (overlap from the previous chunk too): what users are shown. */
  text: string;
  /**
   * Title, heading path and the text's {@link rankingText}: what gets embedded and keyword-indexed. Fits
   * the model's window.
   */
  embedText: string;
  /** Headings above the chunk, outermost first (empty before the first heading). */
  headingPath: string[];
}

interface ChunkOptions {
  /** The model's window; every `embedText` counts at most this many tokens. */
  maxTokens: number;
  /** Tokens of the previous chunk repeated at the start of the next one within a section (whole sentences). */
  overlapTokens: number;
  /**
   * Fewest content tokens (of the ranking text, heading path not counted) a chunk may have unless its
   * whole document has fewer: smaller sections join a neighbour. 0: every section is chunked apart.
   */
  minTokens?: number;
  /** The model's token count for a whole input, special tokens included (`Embedder.countTokens`). */
  countTokens: (s: string) => number;
}

/** Smallest content budget worth chunking for; below it the prefix is cut down. */
const MIN_BUDGET_TOKENS = 16;

type UnitKind = 'prose' | 'code' | 'table' | 'heading';

/** A piece the packer places whole: a block, or part of a block too big for one chunk. */
interface Unit {
  /** The markdown shown to users. */
  text: string;
  /** The words ranked: {@link rankingText} of `text` (links reduced to their anchor text, markup left out). */
  rank: string;
  /** Estimated tokens of `rank` (content only, no special tokens). */
  tokens: number;
  kind: UnitKind;
  /** Put between this unit and the one before it in the same chunk. */
  join: string;
  /** The heading path of the section the unit comes from. */
  path: string[];
}

/** A chunk before it is rendered: its units, the first `overlap` of them repeated from the chunk before. */
interface Draft {
  units: Unit[];
  overlap: number;
}

interface Section {
  headingPath: string[];
  /** The heading line that opened the section, as written (absent before the first heading). */
  heading?: { raw: string; text: string };
  blocks: Token[];
}

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Splits a markdown document into chunks for embedding. Sections (split at headings) are packed
 * separately, except that a section with fewer than `minTokens` content tokens joins a neighbour (the one
 * sharing the longest heading path, so its parent's) and the joined section's heading stays in the text;
 * code blocks, tables, list items and paragraphs stay whole when they fit and are otherwise split at row,
 * line, sentence and finally word boundaries (code and table pieces keep their fences and header row), and
 * a code block or table that starts a new chunk takes the paragraph introducing it along. Consecutive
 * chunks of a section share `overlapTokens` worth of whole sentences. Sizes are counted on the ranking
 * text ({@link rankingText}: what is embedded and keyword-indexed) in the model's own tokens, and every
 * `embedText` is checked against `maxTokens` with `countTokens`. Deterministic; an empty or
 * whitespace-only document gives no chunks.
 */
export function chunkMarkdown(doc: { title: string; markdown: string }, opts: ChunkOptions): Chunk[] {
  const markdown = doc.markdown.replace(/\r\n?/g, '\n');
  if (markdown.trim() === '') return [];
  const chunker = new Chunker(doc.title.replace(/\s+/g, ' ').trim(), opts);
  let sections = splitSections(markdown);
  if (sections.length === 0) {
    // Only headings (or only link definitions): keep the words rather than lose the document.
    sections = [{ headingPath: [], blocks: [{ type: 'paragraph', raw: markdown.trim() }] }];
  }
  const drafts: Draft[] = [];
  for (const group of chunker.group(sections)) chunker.packGroup(group, drafts);
  return chunker.joinSmall(drafts).map((d, index) => ({ index, ...chunker.render(d.units) }));
}

function splitSections(markdown: string): Section[] {
  const sections: Section[] = [];
  const stack: Array<{ depth: number; text: string }> = [];
  let current: Section = { headingPath: [], blocks: [] };
  for (const token of new Lexer({ gfm: true }).lex(markdown)) {
    if (token.type === 'heading') {
      const heading = token as Tokens.Heading;
      if (current.blocks.length > 0) sections.push(current);
      while (stack.length > 0 && stack.at(-1)!.depth >= heading.depth) stack.pop();
      const text = inlineText(heading.tokens) || heading.text.trim();
      if (text) stack.push({ depth: heading.depth, text });
      current = { headingPath: stack.map((h) => h.text), blocks: [] };
      if (text) current.heading = { raw: `${'#'.repeat(heading.depth)} ${heading.text.trim()}`, text };
      continue;
    }
    // Blank lines, rules and link reference definitions carry no content of their own.
    if (token.type === 'space' || token.type === 'hr' || token.type === 'def') continue;
    if (token.raw.trim() === '') continue;
    current.blocks.push(token);
  }
  if (current.blocks.length > 0) sections.push(current);
  return sections;
}

/** Plain text of inline markdown (emphasis, links and code spans reduced to their words). */
function inlineText(tokens: Token[] | undefined): string {
  if (!tokens) return '';
  let out = '';
  for (const t of tokens) {
    if ('tokens' in t && Array.isArray(t.tokens) && t.tokens.length > 0) out += inlineText(t.tokens);
    else if (t.type === 'br') out += ' ';
    else if (t.type === 'html') out += '';
    else if ('text' in t && typeof t.text === 'string') out += t.text;
  }
  return out.replace(/\s+/g, ' ').trim();
}

/** Formatting tags terminal recordings and highlighters leave inside code blocks (`<font color=...>`). */
const CODE_MARKUP = /<\/?(?:font|span|u|b|i|em|strong|a|div|code|pre|small|sup|sub|mark|kbd)(?:\s[^<>]*)?>/g;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * The text a passage is ranked by (embedded and keyword-indexed): its markdown with links reduced to
 * their anchor text, images to their alt text, HTML tags left out and emphasis and code-span markers
 * dropped. Link targets and image URLs are words of no question (`http`, `host`, `html`, anchors
 * repeating the name), were 38% of a reference manual's stored markdown, and sat in both the vectors and
 * the BM25 postings; users are still shown the markdown with its links. Code keeps its text, less the
 * formatting tags some sites put in it.
 */
export function rankingText(markdown: string, kind: UnitKind = 'prose'): string {
  if (kind === 'code') {
    if (!CODE_MARKUP.test(markdown)) return markdown;
    CODE_MARKUP.lastIndex = 0;
    return markdown
      .replace(CODE_MARKUP, '')
      .replace(/&(amp|lt|gt|quot|apos|nbsp);/g, (_, name: string) => ENTITIES[name] ?? '');
  }
  // Plain text needs no lexing (most sentences of most pages).
  if (!/[[\]<>*_`!&\\]/.test(markdown)) return markdown;
  return inlineRanking(new Lexer({ gfm: true }).inlineTokens(markdown));
}

function inlineRanking(tokens: Token[]): string {
  let out = '';
  for (const t of tokens) {
    switch (t.type) {
      case 'link':
      case 'strong':
      case 'em':
      case 'del':
        out += inlineRanking((t as Tokens.Link).tokens ?? []);
        break;
      case 'image':
        out += (t as Tokens.Image).text;
        break;
      case 'html':
        break;
      case 'codespan':
      case 'escape':
        out += (t as Tokens.Codespan).text.replace(/&(amp|lt|gt|quot|#39);/g, (m, n: string) =>
          n === '#39' ? "'" : (ENTITIES[n] ?? m),
        );
        break;
      case 'br':
        out += '\n';
        break;
      case 'text':
        out +=
          'tokens' in t && Array.isArray(t.tokens) && t.tokens.length > 0 ? inlineRanking(t.tokens) : t.raw;
        break;
      default:
        out += t.raw;
    }
  }
  return out;
}

/** Sentences (ICU also ends one at a line break), each with the whitespace that led up to it, normalized. */
function sentences(text: string): Array<{ text: string; join: string }> {
  const out: Array<{ text: string; join: string }> = [];
  let gap = '';
  for (const { segment } of sentenceSegmenter.segment(text)) {
    const s = segment.trim();
    // Keep "no space" where the text had none (CJK sentences follow each other directly).
    if (s) out.push({ text: s, join: gap.includes('\n') ? '\n' : gap === '' ? '' : ' ' });
    gap = segment.slice(segment.trimEnd().length);
  }
  return out;
}

/** The longest common start of two heading paths. */
function commonPath(a: string[], b: string[]): string[] {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return a.slice(0, n);
}

class Chunker {
  private readonly title: string;
  private readonly opts: ChunkOptions;
  /** Tokens the model adds around every input. */
  private readonly special: number;
  private readonly minTokens: number;

  constructor(title: string, opts: ChunkOptions) {
    const minTokens = opts.minTokens ?? 0;
    if (
      !Number.isInteger(opts.maxTokens) ||
      !Number.isInteger(opts.overlapTokens) ||
      opts.overlapTokens < 0 ||
      !Number.isInteger(minTokens) ||
      minTokens < 0
    ) {
      throw new RangeError(
        'maxTokens, minTokens and overlapTokens must be integers, the last two at least 0',
      );
    }
    this.title = title;
    this.opts = opts;
    this.minTokens = minTokens;
    this.special = opts.countTokens('');
    if (opts.maxTokens < this.special + MIN_BUDGET_TOKENS) {
      throw new RangeError(`maxTokens ${opts.maxTokens} leaves no room for content`);
    }
  }

  /** Content tokens of `s` alone. */
  private cost(s: string): number {
    return Math.max(0, this.opts.countTokens(s) - this.special);
  }

  /** Content tokens a chunk under `path` may hold. */
  private budget(path: string[]): number {
    const prefix = this.prefix(path);
    return this.opts.maxTokens - this.special - (prefix ? this.cost(prefix) : 0);
  }

  /** A unit of `text`, ranked by its {@link rankingText} (its heading path is set by its section). */
  private unit(text: string, kind: UnitKind, join: string, path: string[] = []): Unit {
    const rank = kind === 'heading' ? text : rankingText(text, kind);
    return { text, rank, tokens: this.cost(rank), kind, join, path };
  }

  /**
   * Sections as the units they are packed from, in groups packed together: a group below `minTokens`
   * joins the neighbouring group that shares the longer heading path with it (the earlier one on a tie),
   * until every group has `minTokens` or the document is one group. Each section's heading is a unit of
   * its own, shown only in a chunk whose heading path does not name it (one that began in an earlier
   * section), so its words stay with its text.
   */
  group(sections: Section[]): Unit[][] {
    const groups = sections.map((s) => [s]);
    const units = new Map(sections.map((s) => [s, this.sectionUnits(s)]));
    const tokens = sections.map((s) => sumTokens(units.get(s)!));
    const paths = sections.map((s) => s.headingPath);
    for (let i = 0; i < groups.length && groups.length > 1; ) {
      if (tokens[i]! >= this.minTokens) {
        i++;
        continue;
      }
      const before = i > 0 ? commonPath(paths[i - 1]!, paths[i]!).length : -1;
      const after = i + 1 < groups.length ? commonPath(paths[i]!, paths[i + 1]!).length : -1;
      const first = after > before ? i : i - 1;
      groups.splice(first, 2, [...groups[first]!, ...groups[first + 1]!]);
      tokens.splice(first, 2, tokens[first]! + tokens[first + 1]!);
      paths.splice(first, 2, commonPath(paths[first]!, paths[first + 1]!));
      i = first;
    }
    return groups.map((g) =>
      g.flatMap((s) => {
        const own = units.get(s)!;
        if (!s.heading || own.length === 0) return own;
        return [this.unit(s.heading.text, 'heading', '\n\n', s.headingPath), ...own].map((u, i) =>
          i === 0 ? { ...u, text: s.heading!.raw } : u,
        );
      }),
    );
  }

  private sectionUnits(section: Section): Unit[] {
    const path = section.headingPath;
    const budget = this.budget(path);
    const units = section.blocks.flatMap((block) => this.blockUnits(block, budget));
    for (const u of units) u.path = path;
    return units;
  }

  /**
   * Packs a group's units into chunks: whole units while they fit, a heading or the paragraph before a
   * code block or table carried over to the next chunk rather than left at the end of this one, and the
   * rest of the group left at `minTokens` at least where giving units back allows. Overlap stays within a
   * section.
   */
  packGroup(units: Unit[], out: Draft[]): void {
    const pending = new Pending(units);
    let previous: Unit[] = [];
    while (pending.size > 0) {
      const first = pending.pop();
      const budget = this.budget(first.path);
      const overlapBudget = Math.min(this.opts.overlapTokens, Math.floor(budget / 2));
      const sameSection =
        previous.length > 0 && first.kind !== 'heading' && previous.at(-1)!.path === first.path;
      let overlap = sameSection ? this.overlapUnits(previous, overlapBudget) : [];
      const fresh: Unit[] = [first];
      // A heading that opens a chunk is named by its heading path, not shown: it costs nothing here (the
      // real count in `fit` has the last word).
      let used = sumTokens(overlap) + (first.kind === 'heading' ? 0 : first.tokens);
      while (used > budget && overlap.length > 0) {
        used -= overlap[0]!.tokens;
        overlap = overlap.slice(1);
      }
      while (pending.size > 0 && used + pending.peek()!.tokens <= budget) {
        const next = pending.pop();
        fresh.push(next);
        used += next.tokens;
      }
      // A rest below `minTokens` takes units back from this chunk while this one keeps `minTokens`.
      while (
        pending.size > 0 &&
        pending.tokens < this.minTokens &&
        fresh.length > 1 &&
        sumTokens(fresh) - fresh.at(-1)!.tokens >= this.minTokens
      ) {
        pending.push(fresh.pop()!);
      }
      this.carryOver(fresh, pending, budget);
      const draft = this.fit(overlap, fresh, pending);
      out.push(draft);
      previous = draft.units;
    }
  }

  /**
   * A heading left last in a chunk, or a paragraph followed by a code block or table that did not fit
   * beside it, goes on to the next chunk (the paragraph only if the two fit together), as long as this
   * chunk keeps `minTokens`.
   */
  private carryOver(fresh: Unit[], pending: Pending, budget: number): void {
    const next = pending.peek();
    const last = fresh.at(-1)!;
    if (!next || fresh.length < 2) return;
    const leads =
      last.kind === 'heading' ||
      (last.kind === 'prose' &&
        (next.kind === 'code' || next.kind === 'table') &&
        last.tokens + next.tokens <= budget);
    if (leads && sumTokens(fresh) - last.tokens >= this.minTokens) pending.push(fresh.pop()!);
  }

  /**
   * The chunk of `overlap` and `fresh`, checked against the model's real count: units go back to
   * `pending` (or one is cut finer) until it fits.
   */
  private fit(overlapIn: Unit[], fresh: Unit[], pending: Pending): Draft {
    let overlap = overlapIn;
    for (;;) {
      const draft = { units: [...overlap, ...fresh], overlap: overlap.length };
      const excess = this.opts.countTokens(this.render(draft.units).embedText) - this.opts.maxTokens;
      const pieces =
        excess > 0 && overlap.length === 0 && fresh.length === 1
          ? this.splitUnit(fresh[0]!, Math.max(1, fresh[0]!.tokens - excess - 1))
          : [];
      // Done when it fits, or when one unit is left that cannot be cut (the model truncates it).
      if (excess <= 0 || pieces.length === 1) return draft;
      if (overlap.length > 0) overlap = overlap.slice(1);
      else if (fresh.length > 1) pending.push(fresh.pop()!);
      else {
        fresh.pop();
        for (const piece of pieces.reverse()) pending.push(piece);
        fresh.push(pending.pop());
      }
    }
  }

  /**
   * A chunk still below `minTokens` (a paragraph between two code blocks that fill a chunk each, the end
   * of a section after one) joins the next chunk, else the previous one, where the two fit the window
   * together; its overlap with the one it joins is dropped.
   */
  joinSmall(drafts: Draft[]): Draft[] {
    const out = [...drafts];
    for (let i = 0; i < out.length && out.length > 1; ) {
      const d = out[i]!;
      if (sumTokens(d.units) >= this.minTokens) {
        i++;
        continue;
      }
      const next = out[i + 1];
      const prev = out[i - 1];
      const intoNext = next && { units: [...d.units, ...next.units.slice(next.overlap)], overlap: d.overlap };
      const intoPrev = prev && { units: [...prev.units, ...d.units.slice(d.overlap)], overlap: prev.overlap };
      if (intoNext && this.fits(intoNext)) out.splice(i, 2, intoNext);
      else if (intoPrev && this.fits(intoPrev)) {
        out.splice(i - 1, 2, intoPrev);
        i--;
      } else i++;
    }
    return out;
  }

  private fits(draft: Draft): boolean {
    return this.opts.countTokens(this.render(draft.units).embedText) <= this.opts.maxTokens;
  }

  /** A chunk's text, embedText and heading path (the path its units share). */
  render(units: Unit[]): Omit<Chunk, 'index'> {
    const path = units.map((u) => u.path).reduce(commonPath);
    // A heading the chunk's heading path names is not repeated in its text.
    const shown = units.filter((u) => u.kind !== 'heading' || u.path.length > path.length);
    const rank = joinUnits(shown, 'rank');
    const prefix = this.prefix(path);
    return {
      text: joinUnits(shown, 'text'),
      embedText: prefix ? `${prefix}\n\n${rank}` : rank,
      headingPath: [...path],
    };
  }

  /** Title and heading path, the context every chunk of the section is embedded with. */
  private prefix(headingPath: string[]): string {
    const path =
      headingPath.length > 0 && headingPath[0]!.toLowerCase() === this.title.toLowerCase()
        ? headingPath.slice(1)
        : headingPath;
    const lines = [this.title, path.join(' > ')].filter((l) => l !== '');
    const prefix = lines.join('\n');
    // A pathological title or heading must not crowd out the content: keep at most half the window.
    const limit = Math.floor((this.opts.maxTokens - this.special) / 2);
    return this.cost(prefix) <= limit ? prefix : this.truncate(prefix, limit);
  }

  /** The longest word-boundary prefix of `text` within `limit` tokens. */
  private truncate(text: string, limit: number): string {
    const words = text.split(/(?<=\s)/);
    let lo = 0;
    let hi = words.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (this.cost(words.slice(0, mid).join('')) <= limit) lo = mid;
      else hi = mid - 1;
    }
    return words.slice(0, lo).join('').trim();
  }

  private blockUnits(block: Token, budget: number): Unit[] {
    const raw = block.raw.replace(/^\n+|\s+$/g, '');
    const kind: UnitKind = block.type === 'code' ? 'code' : block.type === 'table' ? 'table' : 'prose';
    const whole = this.unit(raw, kind, '\n\n');
    if (whole.tokens <= budget) return [whole];
    let units: Unit[];
    if (block.type === 'code') units = this.splitCode(block as Tokens.Code, raw, budget);
    else if (block.type === 'table') units = this.splitTable(raw, budget);
    else if (block.type === 'list') {
      units = (block as Tokens.List).items.flatMap((item) =>
        this.prose(item.raw.replace(/^\n+|\s+$/g, ''), budget, '\n'),
      );
    } else units = this.prose(raw, budget, ' ');
    if (units[0]) units[0].join = '\n\n';
    return units;
  }

  /** A text as one unit when it fits, else as sentences (or lines), long ones as words, long words as characters. */
  private prose(text: string, budget: number, join: string): Unit[] {
    const whole = this.unit(text, 'prose', join);
    if (whole.tokens <= budget) return [whole];
    const parts = sentences(text);
    const units =
      parts.length > 1
        ? parts.flatMap((part) => this.prose(part.text, budget, part.join))
        : this.wordPieces(text, budget).map((p) => this.unit(p, 'prose', ' '));
    if (units[0]) units[0].join = join;
    return units;
  }

  /** Groups words into pieces within `budget`; a single word beyond it is cut into characters. */
  private wordPieces(text: string, budget: number): string[] {
    const words = text.split(/\s+/).filter((w) => w !== '');
    if (words.length <= 1) return this.charPieces(text, budget);
    const pieces: string[] = [];
    let current: string[] = [];
    let used = 0;
    for (const word of words) {
      const c = this.cost(word);
      if (current.length > 0 && used + c > budget) {
        pieces.push(current.join(' '));
        current = [];
        used = 0;
      }
      current.push(word);
      used += c;
    }
    if (current.length > 0) pieces.push(current.join(' '));
    return pieces;
  }

  private charPieces(text: string, budget: number): string[] {
    const chars = Array.from(text);
    const pieces: string[] = [];
    let start = 0;
    while (start < chars.length) {
      let lo = start + 1;
      let hi = chars.length;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (this.cost(chars.slice(start, mid).join('')) <= budget) lo = mid;
        else hi = mid - 1;
      }
      pieces.push(chars.slice(start, lo).join(''));
      start = lo;
    }
    return pieces;
  }

  /** Code split at line boundaries; each piece is a complete fenced block in the original language. */
  private splitCode(code: Tokens.Code, raw: string, budget: number): Unit[] {
    const fenced = code.codeBlockStyle !== 'indented';
    const lines = fenced ? code.text.split('\n') : raw.split('\n');
    const open = fenced ? raw.split('\n')[0]! : '';
    const fence = fenced ? (open.trimStart().match(/^(`{3,}|~{3,})/)?.[1] ?? '```') : '';
    const wrap = (body: string[]) => (fenced ? [open, ...body, fence] : body).join('\n');
    const frame = fenced ? this.cost(wrap([])) : 0;
    return this.groupLines(lines, budget - frame, wrap, 'code');
  }

  /** A table split into runs of rows, each run under the header row (and its delimiter row). */
  private splitTable(raw: string, budget: number): Unit[] {
    const lines = raw.split('\n');
    const header = lines.slice(0, 2);
    const wrap = (rows: string[]) => [...header, ...rows].join('\n');
    const frame = this.cost(wrap([]));
    if (frame > budget / 2) return this.prose(raw, budget, '\n\n');
    return this.groupLines(lines.slice(2), budget - frame, wrap, 'table');
  }

  private groupLines(
    lines: string[],
    room: number,
    wrap: (lines: string[]) => string,
    kind: UnitKind,
  ): Unit[] {
    const units: Unit[] = [];
    let group: string[] = [];
    let used = 0;
    const flush = () => {
      if (group.length === 0) return;
      const text = wrap(group);
      units.push(this.unit(text, kind, '\n\n'));
      group = [];
      used = 0;
    };
    for (const line of lines) {
      const c = this.cost(rankingText(line, kind)) + 1;
      if (c > room) {
        // One line longer than a chunk: flush, then cut the line itself into word pieces.
        flush();
        for (const piece of this.wordPieces(line, Math.max(1, room))) {
          group.push(piece);
          flush();
        }
        continue;
      }
      if (used + c > room) flush();
      group.push(line);
      used += c;
    }
    flush();
    return units;
  }

  /**
   * Cuts a unit that proved too big for its chunk into smaller units within `budget`: sentences, else
   * words, else characters. Returns one unit only when the text cannot be cut any further.
   */
  private splitUnit(unit: Unit, budget: number): Unit[] {
    const parts = sentences(unit.text);
    let units = parts.map((p) => this.unit(p.text, 'prose', p.join, unit.path));
    if (units.length < 2)
      units = this.wordPieces(unit.text, budget).map((p) => this.unit(p, 'prose', ' ', unit.path));
    if (units.length < 2)
      units = this.charPieces(unit.text, budget).map((p) => this.unit(p, 'prose', '', unit.path));
    if (units[0]) units[0].join = unit.join;
    return units;
  }

  /** The end of the previous chunk, in whole sentences (or whole code blocks and tables), within `budget`. */
  private overlapUnits(previous: Unit[], budget: number): Unit[] {
    const taken: Unit[] = [];
    let used = 0;
    for (let i = previous.length - 1; i >= 0 && used < budget; i--) {
      const unit = previous[i]!;
      if (unit.tokens + used <= budget) {
        taken.unshift(unit);
        used += unit.tokens;
        continue;
      }
      if (unit.kind !== 'prose') break;
      const parts = sentences(unit.text);
      for (let k = parts.length - 1; k >= 1; k--) {
        const part = this.unit(parts[k]!.text, 'prose', parts[k]!.join, unit.path);
        if (used + part.tokens > budget) break;
        taken.unshift(part);
        used += part.tokens;
      }
      break;
    }
    return taken;
  }
}

function sumTokens(units: Unit[]): number {
  return units.reduce((n, u) => n + u.tokens, 0);
}

function joinUnits(units: Unit[], field: 'text' | 'rank'): string {
  return units.map((u, i) => (i === 0 ? u[field] : u.join + u[field])).join('');
}

/** The units still to place, next one last, with their tokens summed as they come and go. */
class Pending {
  readonly #stack: Unit[];
  #tokens: number;

  constructor(units: Unit[]) {
    this.#stack = [...units].reverse();
    this.#tokens = sumTokens(units);
  }

  get size(): number {
    return this.#stack.length;
  }

  get tokens(): number {
    return this.#tokens;
  }

  peek(): Unit | undefined {
    return this.#stack.at(-1);
  }

  pop(): Unit {
    const unit = this.#stack.pop()!;
    this.#tokens -= unit.tokens;
    return unit;
  }

  push(unit: Unit): void {
    this.#stack.push(unit);
    this.#tokens += unit.tokens;
  }
}
