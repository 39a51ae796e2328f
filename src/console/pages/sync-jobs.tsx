/**
 * Sync-job history of one connection (GET /api/connect/connection-sync-jobs), newest first, with each
 * job's documents seen, stored, unchanged, deleted and failed; polled every 1.5 s while one runs.
 */
import { useState } from 'preact/hooks';
import type { SyncJob } from '../../client/index.ts';
import { ok } from '../api.ts';
import { JobWarnings } from '../job-warnings.tsx';
import { BASE, navigate, useLocation } from '../router.tsx';
import {
  Badge,
  ErrorText,
  formatBytes,
  formatDuration,
  formatNumber,
  formatTime,
  Pager,
  Section,
  useLoad,
  useSession,
} from '../ui.tsx';

const PAGE_SIZE = 20;
const ACTIVE = new Set(['pending', 'running']);

export function SyncJobsPage() {
  const { client } = useSession();
  const { params } = useLocation();
  const connections = useLoad(() => ok(client.GET('/api/connect/connections')), []);
  const types = useLoad(() => ok(client.GET('/api/connect/connection-types')), []);
  const labelOf = (type: string) => types.data?.data.find((t) => t.type === type)?.label ?? type;
  const list = connections.data?.data ?? [];
  const chosen = params.get('connection');
  const connection = list.find((c) => c.id === chosen) ?? list[0];
  return (
    <Section title="History" id="sync-jobs">
      <ErrorText error={connections.error} />
      {connections.data && list.length === 0 && <p>No connection yet: connect a source first.</p>}
      {list.length > 0 && connection && (
        <>
          <label for="jobs-connection">Connection</label>
          <select
            id="jobs-connection"
            value={connection.id}
            onChange={(e) =>
              navigate(`${BASE}/sync-jobs?connection=${encodeURIComponent(e.currentTarget.value)}`, {
                replace: true,
              })
            }
          >
            {list.map((c) => (
              <option key={c.id} value={c.id}>
                {labelOf(c.type)} ({c.type}, {c.status})
              </option>
            ))}
          </select>
          <JobList key={connection.id} connectionId={connection.id} />
        </>
      )}
    </Section>
  );
}

function JobList({ connectionId }: { connectionId: string }) {
  const { client } = useSession();
  const [page, setPage] = useState(1);
  const jobs = useLoad(
    () =>
      ok(
        client.GET('/api/connect/connection-sync-jobs', {
          params: {
            query: { connectionId, limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
          },
        }),
      ),
    [connectionId, page],
    { pollMs: 1500, poll: (d) => d.data.some((j) => ACTIVE.has(j.status)) },
  );
  const data = jobs.data;
  return (
    <>
      <ErrorText error={jobs.error} />
      {data && data.data.length === 0 && <p>This connection has no sync job yet.</p>}
      {data && data.data.length > 0 && (
        <>
          <ol class="jobs">
            {data.data.map((j) => (
              <JobCard key={j.jobId} job={j} />
            ))}
          </ol>
          <Pager
            page={page}
            pages={Math.ceil(data.total / PAGE_SIZE)}
            total={data.total}
            noun="jobs"
            onPage={setPage}
          />
        </>
      )}
    </>
  );
}

function JobCard({ job }: { job: SyncJob }) {
  const d = job.documents;
  return (
    <li class="job" data-job={job.jobId} data-status={job.status}>
      <div class="job-head">
        <strong>
          Job #{job.jobId} · {job.jobType === 'reset' ? 'full re-sync' : 'sync'}
        </strong>
        <Badge value={job.status} />
        <span class="hint">
          {job.trigger === 'schedule' ? 'scheduled' : 'started by API'} · {formatTime(job.startTime)} ·{' '}
          {formatDuration(job.duration)}
          {job.attempts > 1 ? ` · attempt ${job.attempts}` : ''}
        </span>
      </div>
      {ACTIVE.has(job.status) && <progress class="wide" aria-label={`Job ${job.jobId} in progress`} />}
      <dl class="facts compact" aria-label={`Documents of job ${job.jobId}`}>
        <div>
          <dt>Seen</dt>
          <dd data-count="seen">{formatNumber(d.seen)}</dd>
        </div>
        <div>
          <dt>Stored</dt>
          <dd data-count="stored">{formatNumber(d.stored)}</dd>
        </div>
        <div>
          <dt>Unchanged</dt>
          <dd data-count="unchanged">{formatNumber(d.unchanged)}</dd>
        </div>
        <div>
          <dt>Deleted</dt>
          <dd data-count="deleted">{formatNumber(d.deleted)}</dd>
        </div>
        <div>
          <dt>Failed</dt>
          <dd data-count="failed">{formatNumber(d.failed)}</dd>
        </div>
        <div>
          <dt>Received</dt>
          <dd>{formatBytes(job.bytesSynced)}</dd>
        </div>
      </dl>
      {job.error && <p class="error-text">{job.error}</p>}
      <JobWarnings warnings={job.warnings} total={job.warningCount} />
      {job.failures.length > 0 && (
        <details>
          <summary>
            {formatNumber(job.failureCount)} document{job.failureCount === 1 ? '' : 's'} could not be synced
          </summary>
          <ul>
            {job.failures.map((f, i) => (
              <li key={`${f.table ?? ''}/${f.externalId ?? i}`}>
                {f.externalId ? <code>{f.externalId}</code> : null} {f.message}
                {f.retryable ? ' (will be retried)' : ''}
              </li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}
