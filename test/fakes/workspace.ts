/**
 * A large fake workspace of one source, for `bench/source-sync.ts`: the source's fake server filled with
 * `documents` generated pages. Page bodies are generated on request from the page's number, so the fake
 * itself stays small in memory and the benchmark's peak RSS is the service's.
 */
import type { SourceFakeHandle } from '../connectors/source-e2e.ts';

export interface BenchWorkspace extends SourceFakeHandle {
  /** The `source` of the create-connection request (type included). */
  source: Record<string, unknown>;
  /** Edits `count` distinct documents at the source (text and modification time change); their ids. */
  edit(count: number): string[];
}

export interface BenchWorkspaceFactory {
  /** The source type, e.g. `notes`. */
  type: string;
  /** The product, e.g. `Notion`. */
  label: string;
  /** The connector's base-URL setting, pointed at the fake. */
  baseUrlSetting: string;
  /** Starts the fake with `documents` documents (pages, rows, posts: whatever the source syncs). */
  start(documents: number): Promise<BenchWorkspace>;
}

/**
 * Picks `count` distinct ids spread evenly over `ids`, starting further along on each call (`round`), so
 * successive edits of a benchmark touch different documents.
 */
export function spreadPick<T>(ids: readonly T[], count: number, round: number): T[] {
  const n = Math.min(count, ids.length);
  if (n === 0) return [];
  const step = Math.max(1, Math.floor(ids.length / n));
  const offset = round % step;
  return Array.from({ length: n }, (_, i) => ids[(offset + i * step) % ids.length]!);
}

/**
 * Deterministic text for document `n` at `revision`, drawn from `vocabulary` by a small LCG: a benchmark's
 * bodies are reproducible, differ per document and revision, and need no storage.
 */
export function benchText(vocabulary: readonly string[], n: number, revision: number) {
  let state = (Math.imul(n, 2_654_435_761) + Math.imul(revision, 40_503) + 1) >>> 0;
  const word = () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return vocabulary[state % vocabulary.length]!;
  };
  const words = (count: number) => Array.from({ length: count }, word).join(' ');
  const sentence = (count: number) => {
    const s = words(count);
    return `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;
  };
  const paragraph = (sentences: number) => Array.from({ length: sentences }, () => sentence(12)).join(' ');
  return { word, words, sentence, paragraph };
}
