/**
 * The fenced code blocks of a markdown page, with the `<!-- tested: <id> -->` marker that precedes a block
 * the README test runs, and the `## ` section each block is in (a `### ` subsection belongs to its `## `).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CodeBlock {
  /** The marker's id, or null for a block without one. */
  id: string | null;
  /** The fence's info string (`sh`, `console`, `json`, `ts`, or empty). */
  lang: string;
  body: string;
  /** The `## ` heading above it ('' before the first). */
  section: string;
  /** 1-based line of the opening fence, for messages. */
  line: number;
}

const MARKER = /^<!-- tested: ([a-z0-9-]+) -->$/;

/** Reads a page of the checkout (`README.md`, `docs/mcp.md`) into its blocks; a marker must precede a fence. */
export function codeBlocks(file: string): CodeBlock[] {
  const lines = readFileSync(new URL(file, `file://${ROOT}`), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  let section = '';
  let marker: { id: string; line: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heading = /^## (.+)$/.exec(line);
    if (heading) section = heading[1]!.trim();
    const marked = MARKER.exec(line.trim());
    if (marked) {
      if (marker)
        throw new Error(`${file}:${marker.line + 1}: marker "${marker.id}" is not followed by a block`);
      marker = { id: marked[1]!, line: i };
      continue;
    }
    const fence = /^```(\S*)\s*$/.exec(line);
    if (!fence) {
      if (marker && line.trim() !== '')
        throw new Error(`${file}:${marker.line + 1}: marker "${marker.id}" is not directly above a block`);
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    if (i >= lines.length) throw new Error(`${file}:${start + 1}: a block that never closes`);
    blocks.push({ id: marker?.id ?? null, lang: fence[1]!, body: body.join('\n'), section, line: start + 1 });
    marker = null;
  }
  if (marker) throw new Error(`${file}:${marker.line + 1}: marker "${marker.id}" is not followed by a block`);
  return blocks;
}

/** The one block with this marker id in `blocks` (an error names the page when there is none or several). */
export function markedBlock(blocks: CodeBlock[], id: string, file: string): CodeBlock {
  const found = blocks.filter((b) => b.id === id);
  if (found.length !== 1) throw new Error(`${file} has ${found.length} blocks marked "${id}", not one`);
  return found[0]!;
}

/**
 * Replaces each `from` with its `to` in a block's text. Every `from` must be there: a README that no
 * longer shows a placeholder would otherwise send the test to the outside world (or to port 8080).
 */
export function substitute(
  text: string,
  pairs: ReadonlyArray<readonly [string, string]>,
  what: string,
): string {
  let out = text;
  for (const [from, to] of pairs) {
    if (!out.includes(from))
      throw new Error(`${what} no longer contains "${from}" (the test substitutes it)`);
    out = out.replaceAll(from, to);
  }
  return out;
}

/** The commands of a `sh` block: `\`-continued lines joined, blank lines and `#` comments left out. */
export function shellCommands(body: string): string[] {
  const commands: string[] = [];
  let current = '';
  for (const raw of body.split('\n')) {
    const line = raw.trimEnd();
    if (current === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    commands.push((current + line).trim());
    current = '';
  }
  if (current) commands.push(current.trim());
  return commands;
}

/**
 * A `console` block: the `$ ` command line, then the output as shown, where a line `...` stands for any
 * lines and `...` inside a line for any text.
 */
export function consoleTranscript(body: string): { command: string; shown: string[] } {
  const [first, ...rest] = body.split('\n');
  if (!first?.startsWith('$ ')) throw new Error(`a console block starts with "$ ": ${first}`);
  return { command: first.slice(2).trim(), shown: rest };
}
