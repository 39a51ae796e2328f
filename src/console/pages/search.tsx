/**
 * The search playground: one query run as semantic and as hybrid search side by side (POST
 * /api/consume/search), each hit with its cosine distance and chunk (its markdown rendered, safely), the
 * query's terms marked.
 */
import { useState } from 'preact/hooks';
import type { SearchResult } from '../../client/index.ts';
import { isUnauthorized, messageOf, ok } from '../api.ts';
import { Markdown } from '../markdown.tsx';
import { Section, splitList, useSession } from '../ui.tsx';

const MODES = ['semantic', 'hybrid'] as const;
type Mode = (typeof MODES)[number];
type Outcome = { hits: SearchResult[]; ms: number } | { error: string };

export function SearchPage() {
  const { busy, asked, results, ask } = useSideBySideSearch();
  return (
    <>
      <Section title="Ask the knowledge base" id="ask">
        <SearchForm busy={busy} onAsk={ask} />
      </Section>
      {asked && (
        <div class="side-by-side" aria-busy={busy}>
          {MODES.map((mode) => (
            <Hits key={mode} mode={mode} query={asked} outcome={results[mode]} />
          ))}
        </div>
      )}
    </>
  );
}

/** What the form asks: the fields as typed (numbers and lists are read when the query runs). */
interface Question {
  query: string;
  limit: string;
  tags: string;
  threshold: string;
}

/** Runs one question in every mode at once and keeps each mode's hits (or its error) and time. */
function useSideBySideSearch() {
  const { client, signOut } = useSession();
  const [asked, setAsked] = useState('');
  const [busy, setBusy] = useState(false);
  const [results, setResults] = useState<Partial<Record<Mode, Outcome>>>({});

  const searchOne = async (mode: Mode, q: Question): Promise<Outcome> => {
    const started = performance.now();
    try {
      const r = await ok(
        client.POST('/api/consume/search', {
          body: {
            query: q.query,
            mode,
            limit: Number(q.limit),
            includeEmbedding: false,
            ...(splitList(q.tags).length > 0 ? { tags: splitList(q.tags) } : {}),
            ...(q.threshold.trim() !== '' ? { cosineDistanceThreshold: Number(q.threshold) } : {}),
          },
        }),
      );
      return { hits: r.result, ms: performance.now() - started };
    } catch (err) {
      if (isUnauthorized(err)) signOut(messageOf(err));
      return { error: messageOf(err) };
    }
  };

  const ask = async (q: Question) => {
    setBusy(true);
    const [semantic, hybrid] = await Promise.all(MODES.map((m) => searchOne(m, q)));
    setResults({ semantic, hybrid });
    setAsked(q.query);
    setBusy(false);
  };

  return { busy, asked, results, ask };
}

function SearchForm(props: { busy: boolean; onAsk(question: Question): Promise<void> }) {
  const [query, setQuery] = useState('');
  const [limit, setLimit] = useState('10');
  const [tags, setTags] = useState('');
  const [threshold, setThreshold] = useState('');
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        await props.onAsk({ query: query.trim(), limit, tags, threshold });
      }}
    >
      <label for="search-query">Query</label>
      <input
        id="search-query"
        type="search"
        required
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
      />
      <div class="row">
        <div>
          <label for="search-limit">Hits per mode</label>
          <input
            id="search-limit"
            type="number"
            inputMode="numeric"
            min={1}
            max={100}
            value={limit}
            onInput={(e) => setLimit(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for="search-threshold">Max distance (optional)</label>
          <input
            id="search-threshold"
            type="number"
            inputMode="decimal"
            step="0.05"
            min={0}
            max={2}
            value={threshold}
            onInput={(e) => setThreshold(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for="search-tags">Tags (any of, comma-separated)</label>
          <input id="search-tags" type="text" value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
        </div>
      </div>
      <button type="submit" disabled={props.busy}>
        {props.busy ? 'Searching…' : 'Search'}
      </button>
    </form>
  );
}

function Hits(props: { mode: Mode; query: string; outcome: Outcome | undefined }) {
  const o = props.outcome;
  const id = `hits-${props.mode}`;
  return (
    <section class="card" aria-labelledby={id} data-mode={props.mode}>
      <div class="card-head">
        <h2 id={id}>{props.mode === 'semantic' ? 'Semantic' : 'Hybrid'}</h2>
        {o && 'hits' in o && (
          <span class="hint">
            {o.hits.length} hit{o.hits.length === 1 ? '' : 's'} · {Math.round(o.ms)} ms
          </span>
        )}
      </div>
      {o && 'error' in o && (
        <p class="notice error" role="alert">
          {o.error}
        </p>
      )}
      {o && 'hits' in o && o.hits.length === 0 && <p>No passage matches.</p>}
      {o && 'hits' in o && o.hits.length > 0 && (
        <ol class="hits">
          {o.hits.map((h) => (
            <li key={`${h.item_id}:${h.chunk_index}`} class="hit">
              <div class="hit-head">
                {/^https?:\/\//.test(h.source_url) ? (
                  <a href={h.source_url} target="_blank" rel="noopener noreferrer" class="hit-title">
                    {h.title}
                  </a>
                ) : (
                  <span class="hit-title">{h.title}</span>
                )}
                <span class="distance" title="Cosine distance (0 is the same direction)">
                  distance {h.distance.toFixed(3)}
                </span>
              </div>
              <p class="hint">
                {h.source_type} · passage {h.chunk_index + 1}
                {h.tags.length > 0 ? ` · ${h.tags.join(', ')}` : ''}
              </p>
              <div class="chunk">
                <Markdown markdown={h.chunk_plain_text} query={props.query} />
              </div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
