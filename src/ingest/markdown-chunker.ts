/**
 * The chunker: markdown to chunks sized for the embedding model, split at headings, then blocks, then
 * sentences, each chunk carrying its heading path. About 400 lines on purpose: the splitting rules and the
 * token budget they share are one algorithm, easier to check read top to bottom than spread over files.
 */
import { Lexer, type Token, type Tokens } from 'marked';

/** One piece of a document, sized for the embedding model. */
export interface Chunk {
  /** Position in the document, from 0. */
  index: number;
  /** The chunk's own markdown (overlap from the previous chunk included): what users are shown. */
  text: string;
  /** Title, heading path and text: what gets embedded. Fits the model's window. */
  embedText: string;
  /** Headings above the chunk, outermost first (empty before the first heading). */
  headingPath: string[];
}

interface ChunkOptions {
  /** The model's window; every `embedText` counts at most this many tokens. */
  maxTokens: number;
  /** Tokens of the previous chunk repeated at the start of the next one within a section (whole sentences). */
  overlapTokens: number;
  /** The model's token count for a whole input, special tokens included (`Embedder.countTokens`). */
  countTokens: (s: string) => number;
}

/** Smallest content budget worth chunking for; below it the prefix is cut down. */
const MIN_CONTENT_TOKENS = 16;

type UnitKind = 'prose' | 'code' | 'table';

/** A piece the packer places whole: a block, or part of a block too big for one chunk. */
interface Unit {
  text: string;
  /** Estimated tokens (content only, no special tokens). */
  tokens: number;
  kind: UnitKind;
  /** Put between this unit and the one before it in the same chunk. */
  join: string;
}

interface Section {
  headingPath: string[];
  blocks: Token[];
}

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Splits a markdown document into chunks for embedding. Sections (split at headings) are packed
 * separately; code blocks, tables, list items and paragraphs stay whole when they fit and are otherwise
 * split at row, line, sentence and finally word boundaries (code and table pieces keep their fences and
 * header row). Consecutive chunks of a section share `overlapTokens` worth of whole sentences. Sizes are
 * in the model's own tokens and every `embedText` is checked against `maxTokens` with `countTokens`.
 * Deterministic; an empty or whitespace-only document gives no chunks.
 */
export function chunkMarkdown(doc: { title: string; markdown: string }, opts: ChunkOptions): Chunk[] {
  const markdown = doc.markdown.replace(/\r\n?/g, '\n');
  if (markdown.trim() === '') return [];
  const chunker = new Chunker(doc.title.replace(/\s+/g, ' ').trim(), opts);
  const chunks: Chunk[] = [];
  for (const section of splitSections(markdown)) chunker.chunkSection(section, chunks);
  if (chunks.length === 0) {
    // Only headings (or only link definitions): keep the words rather than lose the document.
    chunker.chunkSection({ headingPath: [], blocks: [{ type: 'paragraph', raw: markdown.trim() }] }, chunks);
  }
  return chunks;
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

class Chunker {
  private readonly title: string;
  private readonly opts: ChunkOptions;
  /** Tokens the model adds around every input. */
  private readonly special: number;

  constructor(title: string, opts: ChunkOptions) {
    if (
      !Number.isInteger(opts.maxTokens) ||
      !Number.isInteger(opts.overlapTokens) ||
      opts.overlapTokens < 0
    ) {
      throw new RangeError('maxTokens and overlapTokens must be integers, overlapTokens at least 0');
    }
    this.title = title;
    this.opts = opts;
    this.special = opts.countTokens('');
    if (opts.maxTokens < this.special + MIN_CONTENT_TOKENS) {
      throw new RangeError(`maxTokens ${opts.maxTokens} leaves no room for content`);
    }
  }

  /** Content tokens of `s` alone. */
  private cost(s: string): number {
    return Math.max(0, this.opts.countTokens(s) - this.special);
  }

  chunkSection(section: Section, out: Chunk[]): void {
    const prefix = this.prefix(section.headingPath);
    const budget = this.opts.maxTokens - this.special - (prefix ? this.cost(prefix) : 0);
    const overlapBudget = Math.min(this.opts.overlapTokens, Math.floor(budget / 2));
    const pending: Unit[] = section.blocks.flatMap((block) => this.blockUnits(block, budget)).reverse();

    let previous: Unit[] = [];
    while (pending.length > 0) {
      // Start from the overlap, then add whole units while the estimate fits.
      let overlap = previous.length > 0 ? this.overlapUnits(previous, overlapBudget) : [];
      const fresh: Unit[] = [pending.pop()!];
      let used = sumTokens(overlap) + fresh[0]!.tokens;
      while (used > budget && overlap.length > 0) {
        used -= overlap[0]!.tokens;
        overlap = overlap.slice(1);
      }
      while (pending.length > 0 && used + pending.at(-1)!.tokens <= budget) {
        const next = pending.pop()!;
        fresh.push(next);
        used += next.tokens;
      }
      // Per-unit estimates can differ from the count of the joined text: check the real input, and give
      // units back (or cut one finer) until it fits.
      for (;;) {
        const units = [...overlap, ...fresh];
        const text = joinUnits(units);
        const embedText = prefix ? `${prefix}\n\n${text}` : text;
        const excess = this.opts.countTokens(embedText) - this.opts.maxTokens;
        const pieces =
          excess > 0 && overlap.length === 0 && fresh.length === 1
            ? this.splitUnit(fresh[0]!, Math.max(1, fresh[0]!.tokens - excess - 1))
            : [];
        // Emit when it fits, or when one unit is left that cannot be cut (the model truncates it).
        if (excess <= 0 || pieces.length === 1) {
          out.push({ index: out.length, text, embedText, headingPath: [...section.headingPath] });
          previous = units;
          break;
        }
        if (overlap.length > 0) overlap = overlap.slice(1);
        else if (fresh.length > 1) pending.push(fresh.pop()!);
        else {
          fresh.pop();
          pending.push(...pieces.reverse());
          fresh.push(pending.pop()!);
        }
      }
    }
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
    const tokens = this.cost(raw);
    if (tokens <= budget) return [{ text: raw, tokens, kind, join: '\n\n' }];
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
    const tokens = this.cost(text);
    if (tokens <= budget) return [{ text, tokens, kind: 'prose', join }];
    const parts = sentences(text);
    const units =
      parts.length > 1
        ? parts.flatMap((part) => this.prose(part.text, budget, part.join))
        : this.wordPieces(text, budget).map(
            (p): Unit => ({ text: p, tokens: this.cost(p), kind: 'prose', join: ' ' }),
          );
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
      units.push({ text, tokens: this.cost(text), kind, join: '\n\n' });
      group = [];
      used = 0;
    };
    for (const line of lines) {
      const c = this.cost(line) + 1;
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
    let units: Unit[] = parts.map((p) => ({
      text: p.text,
      tokens: this.cost(p.text),
      kind: 'prose',
      join: p.join,
    }));
    if (units.length < 2) {
      units = this.wordPieces(unit.text, budget).map((p) => ({
        text: p,
        tokens: this.cost(p),
        kind: 'prose',
        join: ' ',
      }));
    }
    if (units.length < 2) {
      units = this.charPieces(unit.text, budget).map((p) => ({
        text: p,
        tokens: this.cost(p),
        kind: 'prose',
        join: '',
      }));
    }
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
        const tokens = this.cost(parts[k]!.text);
        if (used + tokens > budget) break;
        taken.unshift({ text: parts[k]!.text, tokens, kind: 'prose', join: parts[k]!.join });
        used += tokens;
      }
      break;
    }
    return taken;
  }
}

function sumTokens(units: Unit[]): number {
  return units.reduce((n, u) => n + u.tokens, 0);
}

function joinUnits(units: Unit[]): string {
  return units.map((u, i) => (i === 0 ? u.text : u.join + u.text)).join('');
}
