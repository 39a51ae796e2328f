/** `kb search <query>`: the search endpoint with its modes and filters; hits nearest first. */
import type { Command } from 'commander';
import { ok, type paths, type SearchResult } from '../client/index.ts';
import { UsageError } from './errors.ts';
import { oneLine } from './format.ts';
import { collect, connect, intOption, printJson, type RemoteOptions, remoteOptions } from './remote.ts';

type SearchBody = paths['/api/consume/search']['post']['requestBody']['content']['application/json'];

const MODES = ['semantic', 'hybrid', 'keyword'] as const;
const SOURCE_TYPES = ['integration', 'crawl', 'upload'] as const;
const VISIBILITIES = ['public', 'private'] as const;

interface SearchOptions extends RemoteOptions {
  mode?: string;
  limit?: number;
  tag?: string[];
  sourceType?: string[];
  visibility?: string[];
  maxDistance?: number;
}

function oneOf<T extends string>(option: string, allowed: readonly T[], values: string[]): T[] {
  for (const v of values) {
    if (!(allowed as readonly string[]).includes(v)) {
      throw new UsageError(`${option} must be one of ${allowed.join(', ')}, not "${v}"`);
    }
  }
  return values as T[];
}

function distance(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 2)
    throw new UsageError(`--max-distance must be from 0 to 2, not "${value}"`);
  return n;
}

/** Hits as people read them: rank, distance, title, where it comes from, then the passage. */
export function formatHits(hits: SearchResult[]): string {
  if (hits.length === 0) return 'no results';
  const width = String(hits.length).length;
  return hits
    .map((h, i) => {
      const where = [h.source_type, h.source_url].filter(Boolean).join('  ');
      return (
        `${String(i + 1).padStart(width)}. ${h.distance.toFixed(3)}  ${oneLine(h.title, 80)}  ${where}\n` +
        `${' '.repeat(width + 2)}${oneLine(h.chunk_plain_text, 200)}`
      );
    })
    .join('\n');
}

export function register(program: Command): void {
  remoteOptions(
    program
      .command('search')
      .description('search the knowledge base; hits nearest first with their cosine distance')
      .argument('<query...>', 'what to look for (words are joined)')
      .option('--mode <mode>', `${MODES.join(' | ')} (service default semantic)`)
      .option('--limit <n>', 'hits at most, 1-100 (service default 10)', intOption('--limit', 1, 100))
      .option('--tag <tag>', 'only items with this tag (repeatable: any of them)', collect)
      .option('--source-type <type>', `only ${SOURCE_TYPES.join(' | ')} items (repeatable)`, collect)
      .option('--visibility <v>', `only ${VISIBILITIES.join(' | ')} items (repeatable)`, collect)
      .option('--max-distance <d>', 'only passages at most this cosine distance away (0-2)', distance),
  ).action(async (words: string[], opts: SearchOptions) => {
    const remote = connect(opts);
    const body: SearchBody = {
      query: words.join(' '),
      includeEmbedding: false,
      ...(opts.mode ? { mode: oneOf('--mode', MODES, [opts.mode])[0] } : {}),
      ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
      ...(opts.tag ? { tags: opts.tag } : {}),
      ...(opts.sourceType ? { sourceTypes: oneOf('--source-type', SOURCE_TYPES, opts.sourceType) } : {}),
      ...(opts.visibility ? { visibility: oneOf('--visibility', VISIBILITIES, opts.visibility) } : {}),
      ...(opts.maxDistance !== undefined ? { cosineDistanceThreshold: opts.maxDistance } : {}),
    };
    const answer = await ok(remote.client.POST('/api/consume/search', { body }));
    if (remote.json) printJson(answer);
    else console.log(formatHits(answer.result));
  });
}
