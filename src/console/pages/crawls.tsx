/**
 * Crawl jobs: a form with the seed's options (url, limit, include/exclude paths, external links) and the
 * extensions (depth, tags, pace per host, JavaScript rendering); the list with progress, outcomes, refusal
 * reasons and cancel, polled while a crawl runs.
 */
import { useState } from 'preact/hooks';
import type { CrawlJob } from '../../client/index.ts';
import { ok } from '../api.ts';
import { JobWarnings } from '../job-warnings.tsx';
import {
  Badge,
  ErrorText,
  formatNumber,
  formatTime,
  NoticeView,
  Pager,
  Section,
  splitList,
  useAction,
  useLoad,
  useSession,
} from '../ui.tsx';

const PAGE_SIZE = 10;
const ACTIVE = new Set(['idle', 'scraping']);

export function CrawlsPage() {
  const { client } = useSession();
  const [page, setPage] = useState(1);
  const list = useLoad(
    () =>
      ok(
        client.GET('/api/connect/crawling/', {
          params: { query: { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE } },
        }),
      ),
    [page],
    { pollMs: 1500, poll: (d) => d.data.some((j) => ACTIVE.has(j.status)) },
  );
  return (
    <>
      <Section title="Start a crawl" id="start-crawl">
        <CrawlForm
          onStarted={() => {
            setPage(1);
            void list.reload();
          }}
        />
      </Section>
      <Section title="Crawl jobs" id="crawl-jobs">
        <ErrorText error={list.error} />
        {list.data && list.data.data.length === 0 && <p>No crawl yet.</p>}
        {list.data && list.data.data.length > 0 && (
          <>
            <ol class="jobs">
              {list.data.data.map((j) => (
                <CrawlCard key={j.id} job={j} onChanged={() => void list.reload()} />
              ))}
            </ol>
            <Pager
              page={page}
              pages={Math.ceil(list.data.total / PAGE_SIZE)}
              total={list.data.total}
              noun="crawls"
              onPage={setPage}
            />
          </>
        )}
      </Section>
    </>
  );
}

function CrawlForm(props: { onStarted(): void }) {
  const { client } = useSession();
  const { notice, busy, run } = useAction();
  const [url, setUrl] = useState('');
  const [limit, setLimit] = useState('100');
  const [include, setInclude] = useState('');
  const [exclude, setExclude] = useState('');
  const [external, setExternal] = useState(false);
  const [depth, setDepth] = useState('');
  const [tags, setTags] = useState('');
  const [pace, setPace] = useState<CrawlPace>({ render: false, maxConcurrency: '', delayMs: '' });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          const job = await ok(
            client.POST('/api/connect/crawling/', {
              body: {
                url: url.trim(),
                limit: Number(limit),
                includePaths: splitList(include, /\n/),
                excludePaths: splitList(exclude, /\n/),
                allowExternalLinks: external,
                tags: splitList(tags),
                ...(depth.trim() !== '' ? { maxDepth: Number(depth) } : {}),
                ...paceBody(pace),
              },
            }),
          );
          props.onStarted();
          return `Crawl of ${job.url} started.`;
        });
      }}
    >
      <label for="crawl-url">Start URL</label>
      <input
        id="crawl-url"
        type="url"
        required
        placeholder="https://docs.example.com/"
        value={url}
        onInput={(e) => setUrl(e.currentTarget.value)}
      />
      <CrawlLimitAndDepth limit={limit} onLimit={setLimit} depth={depth} onDepth={setDepth} />
      <CrawlPathPatterns include={include} onInclude={setInclude} exclude={exclude} onExclude={setExclude} />
      <label for="crawl-tags">Tags (comma-separated)</label>
      <input id="crawl-tags" type="text" value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
      <div class="check">
        <input
          id="crawl-external"
          type="checkbox"
          checked={external}
          onChange={(e) => setExternal(e.currentTarget.checked)}
        />
        <label for="crawl-external">Follow links to other sites</label>
      </div>
      <CrawlPaceAndRendering pace={pace} onPace={setPace} />
      <button type="submit" disabled={busy}>
        Start crawl
      </button>
      <NoticeView notice={notice} />
    </form>
  );
}

function CrawlCard(props: { job: CrawlJob; onChanged(): void }) {
  const { client } = useSession();
  const { notice, busy, run } = useAction();
  const j = props.job;
  const active = ACTIVE.has(j.status);
  const outcomes = Object.entries(j.outcomes).filter(([, n]) => n > 0);
  const refused = Object.entries(j.refused).filter(([, r]) => r.count > 0);
  return (
    <li class="job" data-crawl={j.id} data-status={j.status}>
      <div class="job-head">
        <strong class="url">{j.url}</strong>
        <Badge value={j.status} />
        <span class="hint">
          {formatTime(j.created_at)}
          {j.completed_at ? ` → ${formatTime(j.completed_at)}` : ''}
        </span>
      </div>
      <progress
        class="wide"
        max={Math.max(j.total_pages, 1)}
        value={j.total_pages === 0 ? (active ? undefined : 0) : j.completed_pages}
        aria-label={`Pages stored of the crawl of ${j.url}`}
      />
      <p class="progress-text">
        {formatNumber(j.completed_pages)} of {formatNumber(j.total_pages)} pages stored · limit{' '}
        {formatNumber(j.limit)} · {formatNumber(j.fetched_pages)} fetched of at most{' '}
        {formatNumber(j.fetch_limit)}
        {j.maxDepth !== null ? ` · depth ${j.maxDepth}` : ''}
        {j.tags.length > 0 ? ` · tags ${j.tags.join(', ')}` : ''}
        {j.renderJavaScript ? ' · rendered' : ''}
        {j.maxConcurrency !== null ? ` · ${j.maxConcurrency} at a time per host` : ''}
        {j.delayMs !== null ? ` · ${j.delayMs} ms apart` : ''}
      </p>
      {outcomes.length > 0 && (
        <ul class="chips" aria-label="Outcomes">
          {outcomes.map(([k, n]) => (
            <li key={k} class="chip">
              {k} {formatNumber(n)}
            </li>
          ))}
        </ul>
      )}
      {j.error_message && <p class="error-text">{j.error_message}</p>}
      <JobWarnings warnings={j.warnings} total={j.warning_count} />
      {refused.length > 0 && <RefusedUrls refused={refused} />}
      {active && (
        <button
          type="button"
          class="danger"
          disabled={busy}
          aria-label={`Cancel the crawl of ${j.url}`}
          onClick={() =>
            run(async () => {
              await ok(client.DELETE('/api/connect/crawling/{id}', { params: { path: { id: j.id } } }));
              props.onChanged();
              return `Crawl of ${j.url} cancelled.`;
            })
          }
        >
          Cancel crawl
        </button>
      )}
      <NoticeView notice={notice} />
    </li>
  );
}

/** A labelled whole-number input, kept as typed (an empty one is an option left out). */
function NumberField(props: {
  id: string;
  label: string;
  min: number;
  required?: boolean;
  /** The id of the hint that describes it. */
  hint?: string;
  value: string;
  onValue(value: string): void;
}) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="number"
        inputMode="numeric"
        min={props.min}
        required={props.required}
        value={props.value}
        aria-describedby={props.hint}
        onInput={(e) => props.onValue(e.currentTarget.value)}
      />
    </div>
  );
}

function CrawlLimitAndDepth(props: {
  limit: string;
  onLimit(limit: string): void;
  depth: string;
  onDepth(depth: string): void;
}) {
  return (
    <>
      <div class="row">
        <NumberField
          id="crawl-limit"
          label="Page limit"
          min={1}
          required
          value={props.limit}
          onValue={props.onLimit}
        />
        <NumberField
          id="crawl-depth"
          label="Link depth (optional)"
          min={0}
          hint="crawl-depth-hint"
          value={props.depth}
          onValue={props.onDepth}
        />
      </div>
      <p id="crawl-depth-hint" class="hint">
        With a depth, only links are followed (no sitemaps); 0 crawls the start page alone.
      </p>
    </>
  );
}

/** The form's pace and rendering fields as typed: empty numbers are not sent (the operator's defaults). */
interface CrawlPace {
  render: boolean;
  maxConcurrency: string;
  delayMs: string;
}

function paceBody(pace: CrawlPace): { renderJavaScript?: true; maxConcurrency?: number; delayMs?: number } {
  return {
    ...(pace.render ? { renderJavaScript: true } : {}),
    ...(pace.maxConcurrency.trim() !== '' ? { maxConcurrency: Number(pace.maxConcurrency) } : {}),
    ...(pace.delayMs.trim() !== '' ? { delayMs: Number(pace.delayMs) } : {}),
  };
}

/** How hard the crawl presses each host (within the operator's bounds, which the API enforces), and rendering. */
function CrawlPaceAndRendering(props: { pace: CrawlPace; onPace(pace: CrawlPace): void }) {
  const { pace, onPace } = props;
  return (
    <>
      <div class="row">
        <NumberField
          id="crawl-max-concurrency"
          label="Max concurrency per host (optional)"
          min={1}
          value={pace.maxConcurrency}
          onValue={(v) => onPace({ ...pace, maxConcurrency: v })}
        />
        <NumberField
          id="crawl-delay-ms"
          label="Delay between requests, ms (optional)"
          min={0}
          hint="crawl-pace-hint"
          value={pace.delayMs}
          onValue={(v) => onPace({ ...pace, delayMs: v })}
        />
      </div>
      <p id="crawl-pace-hint" class="hint">
        Empty: the service's defaults. The service refuses a pace beyond what its operator allows.
      </p>
      <div class="check">
        <input
          id="crawl-render"
          type="checkbox"
          checked={pace.render}
          onChange={(e) => onPace({ ...pace, render: e.currentTarget.checked })}
        />
        <label for="crawl-render">
          Render JavaScript (slower; for pages that build their content with scripts)
        </label>
      </div>
    </>
  );
}

/** Which paths the crawl keeps to or skips: regular expressions, one a line. */
function CrawlPathPatterns(props: {
  include: string;
  onInclude(include: string): void;
  exclude: string;
  onExclude(exclude: string): void;
}) {
  return (
    <>
      <label for="crawl-include">Include paths (one regular expression per line)</label>
      <textarea
        id="crawl-include"
        rows={2}
        placeholder="^/docs/"
        value={props.include}
        onInput={(e) => props.onInclude(e.currentTarget.value)}
      />
      <label for="crawl-exclude">Exclude paths (one regular expression per line)</label>
      <textarea
        id="crawl-exclude"
        rows={2}
        placeholder="^/blog/"
        value={props.exclude}
        onInput={(e) => props.onExclude(e.currentTarget.value)}
      />
    </>
  );
}

type Refusal = CrawlJob['refused'][string];

/** Why pages were not crawled: a count per reason, with example URLs (and, for duplicates, the page kept). */
function RefusedUrls({ refused }: { refused: [string, Refusal][] }) {
  return (
    <details class="refused">
      <summary>Not crawled: {refused.map(([k, r]) => `${k} ${formatNumber(r.count)}`).join(', ')}</summary>
      <dl>
        {refused.map(([reason, r]) => (
          <div key={reason}>
            <dt>
              {reason} ({formatNumber(r.count)})
            </dt>
            {r.sample.map((u) => (
              <dd key={u}>
                {u}
                {r.of?.[u] ? ` → ${r.of[u]}` : ''}
              </dd>
            ))}
          </div>
        ))}
      </dl>
    </details>
  );
}
