/**
 * Connections: each with its status, schedule and last job, a sync button, pause/resume and disconnect;
 * and a form to connect a source, built from GET /api/connect/connection-types (the fields each source
 * declares), with the OAuth consent flow for the sources that have one.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { components, Connection } from '../../client/index.ts';
import { ok } from '../api.ts';
import { BASE, Link, navigate, useLocation } from '../router.tsx';
import {
  Badge,
  ErrorText,
  formatNumber,
  formatTime,
  NoticeView,
  Prose,
  Section,
  useAction,
  useLoad,
  useSession,
} from '../ui.tsx';

type ConnectionType = components['schemas']['ConnectionType'];
/** The create-connection body; `source` is built from the declared fields, so it is checked by the API. */
interface CreateBody {
  source: Record<string, unknown> & { type: string };
  secretId?: string;
  schedule?: { intervalMinutes: number };
}

const OAUTH_PENDING = 'kb-console-oauth';
const ACTIVE_JOB = new Set(['pending', 'running']);

interface PendingConsent {
  type: string;
  secretId: string;
  tenantField: string | null;
  tenant: string | null;
}

export function ConnectionsPage() {
  const { client } = useSession();
  const types = useLoad(() => ok(client.GET('/api/connect/connection-types')), []);
  const list = useLoad(() => ok(client.GET('/api/connect/connections')), [], {
    pollMs: 1500,
    poll: (d) => d.data.some((c) => c.lastJob !== null && ACTIVE_JOB.has(c.lastJob.status)),
  });
  const typeList = types.data?.data ?? [];
  const labelOf = (type: string) => {
    const t = typeList.find((x) => x.type === type);
    return t ? `${t.label} (${t.type})` : type;
  };
  const consent = useConsentReturn(typeList, () => void list.reload());

  return (
    <>
      <NoticeView notice={consent.notice} />
      <Section title="Your connections" id="connections">
        <ErrorText error={list.error} />
        {list.data && list.data.data.length === 0 && <p>No source is connected yet: connect one below.</p>}
        {list.data && list.data.data.length > 0 && (
          <ConnectionTable connections={list.data.data} labelOf={labelOf} reload={() => void list.reload()} />
        )}
      </Section>
      <Section title="Connect a source" id="connect">
        <ErrorText error={types.error} />
        {typeList.length > 0 && <ConnectForm types={typeList} onConnected={() => void list.reload()} />}
      </Section>
    </>
  );
}

function ConnectionTable(props: {
  connections: Connection[];
  labelOf(type: string): string;
  reload(): void;
}) {
  const { client } = useSession();
  const { notice, busy, run } = useAction();
  return (
    <>
      <NoticeView notice={notice} />
      <table class="table">
        <thead>
          <tr>
            <th scope="col">Source</th>
            <th scope="col">Status</th>
            <th scope="col">Last job</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.connections.map((c) => {
            const label = props.labelOf(c.type);
            const job = c.lastJob;
            return (
              <tr key={c.id} data-connection={c.type}>
                <th scope="row" data-label="Source">
                  {label}
                  <div class="hint">
                    {c.schedule
                      ? `Syncs every ${formatNumber(c.schedule.intervalMinutes)} min`
                      : 'No schedule'}
                    {c.nextSyncAt ? ` · next ${formatTime(c.nextSyncAt)}` : ''}
                  </div>
                </th>
                <td data-label="Status">
                  <Badge value={c.status} />
                </td>
                <td data-label="Last job" class="last-job">
                  {job ? (
                    <>
                      <Badge value={job.status} />{' '}
                      <span>
                        #{job.jobId} · {formatNumber(job.documents.stored)} stored ·{' '}
                        {formatNumber(job.documents.deleted)} deleted · {formatTime(job.lastUpdatedAt)}
                      </span>
                      {job.status === 'running' && (
                        <progress aria-label={`Sync of ${label} running`} class="inline" />
                      )}
                      {job.error && <div class="error-text">{job.error}</div>}
                      <div>
                        <Link href={`${BASE}/sync-jobs?connection=${encodeURIComponent(c.id)}`}>
                          Job history
                        </Link>
                      </div>
                    </>
                  ) : (
                    'Never synced'
                  )}
                </td>
                <td data-label="Actions">
                  <div class="actions">
                    <button
                      type="button"
                      disabled={busy}
                      aria-label={`Sync ${label} now`}
                      onClick={() =>
                        run(async () => {
                          const r = await ok(
                            client.POST('/api/connect/run-sync', {
                              body: { connectionId: c.id, jobType: 'sync' },
                            }),
                          );
                          props.reload();
                          return `Sync job #${r.jobId} of ${label} queued.`;
                        })
                      }
                    >
                      Sync now
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      disabled={busy}
                      aria-label={`Re-read everything from ${label}`}
                      onClick={() =>
                        run(async () => {
                          const r = await ok(
                            client.POST('/api/connect/run-sync', {
                              body: { connectionId: c.id, jobType: 'reset' },
                            }),
                          );
                          props.reload();
                          return `Full re-sync job #${r.jobId} of ${label} queued.`;
                        })
                      }
                    >
                      Full re-sync
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      disabled={busy}
                      aria-label={`${c.status === 'active' ? 'Pause' : 'Resume'} ${label}`}
                      onClick={() =>
                        run(async () => {
                          const status = c.status === 'active' ? 'inactive' : 'active';
                          await ok(
                            client.PATCH('/api/connect/set-connection-status', {
                              body: { connectionId: c.id, status },
                            }),
                          );
                          props.reload();
                          return status === 'inactive'
                            ? `${label} paused: no scheduled syncs; its items stay searchable.`
                            : `${label} resumed.`;
                        })
                      }
                    >
                      {c.status === 'active' ? 'Pause' : 'Resume'}
                    </button>
                    <button
                      type="button"
                      class="danger"
                      disabled={busy}
                      aria-label={`Disconnect ${label}`}
                      onClick={() => {
                        if (
                          !confirm(`Disconnect ${label}? Its items, credentials and job history are deleted.`)
                        )
                          return;
                        void run(async () => {
                          const r = await ok(
                            client.DELETE('/api/connect/connection', { body: { connectionId: c.id } }),
                          );
                          props.reload();
                          return `${label} disconnected; ${formatNumber(r.deletedItems)} items removed.`;
                        });
                      }}
                    >
                      Disconnect
                    </button>
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

function ConnectForm(props: { types: ConnectionType[]; onConnected(): void }) {
  const { client } = useSession();
  const { notice, busy, run } = useAction();
  const [typeName, setTypeName] = useState(props.types[0]!.type);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [schedule, setSchedule] = useState('');
  const type = props.types.find((t) => t.type === typeName) ?? props.types[0]!;
  const id = (field: string) => `connect-${type.type}-${field}`;

  const source = (): Record<string, unknown> & { type: string } => {
    const out: Record<string, unknown> & { type: string } = { type: type.type };
    for (const f of type.fields) {
      const v = values[f.name];
      if (f.kind === 'boolean') {
        if (v === true) out[f.name] = true;
      } else if (typeof v === 'string' && v.trim() !== '') out[f.name] = v.trim();
    }
    return out;
  };

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          const body: CreateBody = { source: source() };
          if (schedule.trim() !== '') body.schedule = { intervalMinutes: Number(schedule) };
          const r = await ok(client.POST('/api/connect/connection', { body: body as never }));
          props.onConnected();
          setValues({});
          return r.created
            ? `Connected ${type.label}. Start its first sync from the list above.`
            : `${type.label}'s credentials were replaced; its items stay.`;
        });
      }}
    >
      <label for="connect-type">Source</label>
      <select
        id="connect-type"
        value={type.type}
        onChange={(e) => {
          setTypeName(e.currentTarget.value);
          setValues({});
        }}
      >
        {props.types.map((t) => (
          <option key={t.type} value={t.type}>
            {t.label} ({t.type})
          </option>
        ))}
      </select>
      {type.fields.map((f) =>
        f.kind === 'boolean' ? (
          <div class="check" key={id(f.name)}>
            <input
              id={id(f.name)}
              type="checkbox"
              checked={values[f.name] === true}
              aria-describedby={f.description ? `${id(f.name)}-hint` : undefined}
              onChange={(e) => setValues({ ...values, [f.name]: e.currentTarget.checked })}
            />
            <label for={id(f.name)}>{f.name}</label>
            {f.description && (
              <p id={`${id(f.name)}-hint`} class="hint">
                <Prose text={f.description} />
              </p>
            )}
          </div>
        ) : (
          <div key={id(f.name)}>
            <label for={id(f.name)}>
              {f.name}
              {f.required ? '' : ' (optional)'}
            </label>
            <FieldInput
              id={id(f.name)}
              secret={f.secret}
              email={f.name === 'email'}
              required={f.required}
              value={typeof values[f.name] === 'string' ? (values[f.name] as string) : ''}
              describedBy={f.description ? `${id(f.name)}-hint` : undefined}
              onValue={(v) => setValues({ ...values, [f.name]: v })}
            />
            {f.description && (
              <p id={`${id(f.name)}-hint`} class="hint">
                <Prose text={f.description} />
              </p>
            )}
          </div>
        ),
      )}
      <label for="connect-schedule">Sync every (minutes, optional)</label>
      <input
        id="connect-schedule"
        type="number"
        inputMode="numeric"
        min={5}
        max={525600}
        value={schedule}
        onInput={(e) => setSchedule(e.currentTarget.value)}
      />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Connect {type.label}
        </button>
        {type.oauth && (
          <button
            type="button"
            class="secondary"
            disabled={busy}
            onClick={() =>
              run(async () => {
                const tenantField = type.oauth?.tenantField ?? null;
                const tenant = tenantField ? String(values[tenantField] ?? '').trim() || null : null;
                const body: Record<string, string> = {
                  type: type.type,
                  redirectUri: `${location.origin}${BASE}/connections`,
                };
                if (tenantField && tenant) body[tenantField] = tenant;
                const r = await ok(client.POST('/api/connect/oauth/initiate', { body: body as never }));
                const pending: PendingConsent = {
                  type: type.type,
                  secretId: r.secretId,
                  tenantField,
                  tenant,
                };
                sessionStorage.setItem(OAUTH_PENDING, JSON.stringify(pending));
                location.assign(r.consentUrl);
                return `Opening ${type.label}'s consent page…`;
              })
            }
          >
            Connect with {type.label} consent (OAuth)
          </button>
        )}
      </div>
      {type.oauth && !type.oauth.configured && (
        <p class="hint">OAuth for {type.label} is not configured on this service; give a token instead.</p>
      )}
      <NoticeView notice={notice} />
    </form>
  );
}

/** A declared string field: masked when it is a secret (tokens), never autofilled. */
function FieldInput(props: {
  id: string;
  secret: boolean;
  email: boolean;
  required: boolean;
  value: string;
  describedBy: string | undefined;
  onValue(value: string): void;
}) {
  const common = {
    id: props.id,
    autoComplete: 'off',
    spellcheck: false,
    required: props.required,
    value: props.value,
    'aria-describedby': props.describedBy,
    onInput: (e: { currentTarget: HTMLInputElement }) => props.onValue(e.currentTarget.value),
  };
  if (props.secret) return <input type="password" {...common} />;
  if (props.email) return <input type="email" {...common} />;
  return <input type="text" {...common} />;
}

/**
 * Back from an OAuth consent: the callback redirected here with `secretId` and `status`. On success the
 * connection is created with the consent's secretId; either way the outcome is shown and the URL cleaned.
 */
function useConsentReturn(types: ConnectionType[], onConnected: () => void) {
  const { client } = useSession();
  const { params } = useLocation();
  const { notice, run, setNotice } = useAction();
  const handled = useRef(false);
  const secretId = params.get('secretId');
  const status = params.get('status');
  useEffect(() => {
    if (handled.current || !secretId || !status || types.length === 0) return;
    handled.current = true;
    const raw = sessionStorage.getItem(OAUTH_PENDING);
    sessionStorage.removeItem(OAUTH_PENDING);
    navigate(`${BASE}/connections`, { replace: true });
    const pending = raw ? (JSON.parse(raw) as PendingConsent) : null;
    const label = types.find((t) => t.type === pending?.type)?.label ?? 'the source';
    if (status !== 'success') {
      setNotice({
        kind: 'error',
        text: `${label} did not grant access (${params.get('error') ?? 'unknown error'}); start the consent again.`,
      });
      return;
    }
    if (!pending || pending.secretId !== secretId) {
      setNotice({ kind: 'error', text: 'This consent was not started from this tab; start it again here.' });
      return;
    }
    void run(async () => {
      const source: Record<string, unknown> = { type: pending.type };
      if (pending.tenantField && pending.tenant) source[pending.tenantField] = pending.tenant;
      const r = await ok(
        client.POST('/api/connect/connection', { body: { source, secretId: pending.secretId } as never }),
      );
      onConnected();
      return `Connected ${label} through OAuth consent${r.created ? '' : ' (credentials replaced)'}.`;
    });
  }, [secretId, status, types.length]);
  return { notice };
}
