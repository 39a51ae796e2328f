/** How far the knowledge base is: GET /api/connect/knowledgebase-items/stats, polled while items wait. */
import type { ItemStats } from '../../client/index.ts';
import { ok } from '../api.ts';
import {
  ErrorText,
  formatDuration,
  formatNumber,
  Section,
  useLoad,
  useSession,
  useSourceTypes,
} from '../ui.tsx';

export function OverviewPage() {
  const { client } = useSession();
  const {
    data: stats,
    error,
    reload,
    loading,
  } = useLoad(() => ok(client.GET('/api/connect/knowledgebase-items/stats')), [], {
    pollMs: 2000,
    poll: (s) => s.byIndexingStatus.pending > 0,
  });
  return (
    <Section
      title="Indexing progress"
      id="progress"
      actions={
        <button type="button" class="secondary" onClick={() => void reload()} disabled={loading}>
          Refresh
        </button>
      }
    >
      <ErrorText error={error} />
      {stats && <Progress stats={stats} />}
    </Section>
  );
}

function Progress({ stats }: { stats: ItemStats }) {
  const { total, byIndexingStatus: s } = stats;
  const percent = total === 0 ? 100 : Math.floor((s.indexed / total) * 100);
  return (
    <>
      <p class="big" data-testid="searchable">
        {formatNumber(s.indexed)} of {formatNumber(total)} items searchable ({percent}%)
      </p>
      <progress
        class="wide"
        max={Math.max(total, 1)}
        value={total === 0 ? 1 : s.indexed}
        aria-label="Items searchable"
      />
      <IndexingFacts stats={stats} />
      <SourceFacts stats={stats} />
      {stats.byConnection.length > 0 && <ConnectionBreakdown stats={stats} />}
    </>
  );
}

/** What waits, what failed, and how fast the indexer gets through it. */
function IndexingFacts({ stats }: { stats: ItemStats }) {
  const { byIndexingStatus: s, indexer } = stats;
  return (
    <dl class="facts">
      <div>
        <dt>Pending</dt>
        <dd>{formatNumber(s.pending)}</dd>
      </div>
      <div>
        <dt>Failed</dt>
        <dd>{formatNumber(s.failed)}</dd>
      </div>
      <div>
        <dt>Searchable passages</dt>
        <dd>{formatNumber(stats.chunks)}</dd>
      </div>
      <div>
        <dt>Indexer rate</dt>
        <dd>{indexer.ratePerSecond === null ? '—' : `${indexer.ratePerSecond.toFixed(1)} items/s`}</dd>
      </div>
      <div>
        <dt>Time to searchable</dt>
        <dd>
          {indexer.etaSeconds === null
            ? 'unknown yet'
            : indexer.etaSeconds === 0
              ? 'all done'
              : `about ${formatDuration(indexer.etaSeconds * 1000)}`}
        </dd>
      </div>
      <div>
        <dt>Queued ahead</dt>
        <dd>{formatNumber(indexer.queuedAhead)}</dd>
      </div>
    </dl>
  );
}

function SourceFacts({ stats }: { stats: ItemStats }) {
  return (
    <>
      <h3>By source</h3>
      <dl class="facts">
        <div>
          <dt>Connections</dt>
          <dd>{formatNumber(stats.bySourceType.integration)}</dd>
        </div>
        <div>
          <dt>Crawls</dt>
          <dd>{formatNumber(stats.bySourceType.crawl)}</dd>
        </div>
        <div>
          <dt>Uploads</dt>
          <dd>{formatNumber(stats.bySourceType.upload)}</dd>
        </div>
      </dl>
    </>
  );
}

function ConnectionBreakdown({ stats }: { stats: ItemStats }) {
  const { labelOf } = useSourceTypes();
  return (
    <table class="table">
      <caption>By connection</caption>
      <thead>
        <tr>
          <th scope="col">Connection</th>
          <th scope="col">Items</th>
          <th scope="col">Searchable</th>
          <th scope="col">Pending</th>
          <th scope="col">Failed</th>
        </tr>
      </thead>
      <tbody>
        {stats.byConnection.map((c) => (
          <tr key={c.connectionId}>
            <th scope="row" data-label="Connection">
              {labelOf(c.type)}
            </th>
            <td data-label="Items">{formatNumber(c.total)}</td>
            <td data-label="Searchable">{formatNumber(c.byIndexingStatus.indexed)}</td>
            <td data-label="Pending">{formatNumber(c.byIndexingStatus.pending)}</td>
            <td data-label="Failed">{formatNumber(c.byIndexingStatus.failed)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
