/**
 * Connections: each with its status, schedule and last job, a sync button, pause/resume and disconnect;
 * and a form to connect a source, built from GET /api/connect/connection-types (the fields each source
 * declares), with the OAuth consent flow for the sources that have one.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { components, Connection } from '../../client/index.ts';
import { type KbClient, ok } from '../api.ts';
import { BASE, Link, navigate, useLocation } from '../router.tsx';
import {
  Badge,
  ErrorText,
  formatNumber,
  formatTime,
  NoticeView,
  Prose,
  type RunAction,
  Section,
  useAction,
  useLoad,
  useSession,
  useSourceTypes,
} from '../ui.tsx';

type ConnectionType = components['schemas']['ConnectionType'];
/** The create-connection body; `source` is built from the declared fields, so it is checked by the API. */
interface CreateBody {
  source: Record<string, unknown> & { type: string };
  secretId?: string;
  schedule?: { intervalMinutes: number };
}

/** What the create answers; `jobId` names the first sync, which the service starts with the connection. */
interface CreateAnswer {
  created: boolean;
  jobId?: number;
}

/** What the person is told after a create: connected (or credentials replaced), and the sync it started. */
function connectedMessage(label: string, r: CreateAnswer, how = ''): string {
  const started = r.jobId === undefined ? '' : ` Its first sync (job #${r.jobId}) started.`;
  return r.created
    ? `Connected ${label}${how}.${started}`
    : `${label}'s credentials were replaced${how}; its items stay.${r.jobId === undefined ? '' : ` A sync (job #${r.jobId}) started.`}`;
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
  const { types, list: typeList, labelOf } = useSourceTypes();
  const list = useLoad(() => ok(client.GET('/api/connect/connections')), [], {
    pollMs: 1500,
    poll: (d) => d.data.some((c) => c.lastJob !== null && ACTIVE_JOB.has(c.lastJob.status)),
  });
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
          {props.connections.map((c) => (
            <ConnectionRow
              key={c.id}
              connection={c}
              label={props.labelOf(c.type)}
              busy={busy}
              run={run}
              reload={props.reload}
            />
          ))}
        </tbody>
      </table>
    </>
  );
}

interface ConnectionRowProps {
  connection: Connection;
  label: string;
  /** The table's one action runner: one notice and one busy state for every row. */
  busy: boolean;
  run: RunAction;
  reload(): void;
}

function ConnectionRow(props: ConnectionRowProps) {
  const { connection: c, label } = props;
  return (
    <tr data-connection={c.type}>
      <th scope="row" data-label="Source">
        {label}
        <div class="hint">
          {c.schedule ? `Syncs every ${formatNumber(c.schedule.intervalMinutes)} min` : 'No schedule'}
          {c.nextSyncAt ? ` · next ${formatTime(c.nextSyncAt)}` : ''}
        </div>
      </th>
      <td data-label="Status">
        <Badge value={c.status} />
      </td>
      <td data-label="Last job" class="last-job">
        {c.lastJob ? <LastJob connectionId={c.id} label={label} job={c.lastJob} /> : 'Never synced'}
      </td>
      <td data-label="Actions">
        <ConnectionActions {...props} />
      </td>
    </tr>
  );
}

function LastJob(props: { connectionId: string; label: string; job: NonNullable<Connection['lastJob']> }) {
  const { job } = props;
  return (
    <>
      <Badge value={job.status} />{' '}
      <span>
        #{job.jobId} · {formatNumber(job.documents.stored)} stored · {formatNumber(job.documents.deleted)}{' '}
        deleted · {formatTime(job.lastUpdatedAt)}
      </span>
      {job.status === 'running' && <progress aria-label={`Sync of ${props.label} running`} class="inline" />}
      {job.error && <div class="error-text">{job.error}</div>}
      <div>
        <Link href={`${BASE}/sync-jobs?connection=${encodeURIComponent(props.connectionId)}`}>
          Job history
        </Link>
      </div>
    </>
  );
}

/** Sync, full re-sync, pause or resume, and disconnect (after a confirmation: it deletes the items). */
function ConnectionActions({ connection: c, label, busy, run, reload }: ConnectionRowProps) {
  const { client } = useSession();
  const queue = (jobType: 'sync' | 'reset', what: string) =>
    run(async () => {
      const r = await ok(client.POST('/api/connect/run-sync', { body: { connectionId: c.id, jobType } }));
      reload();
      return `${what} job #${r.jobId} of ${label} queued.`;
    });
  const toggle = () =>
    run(async () => {
      const status = c.status === 'active' ? 'inactive' : 'active';
      await ok(client.PATCH('/api/connect/set-connection-status', { body: { connectionId: c.id, status } }));
      reload();
      return status === 'inactive'
        ? `${label} paused: no scheduled syncs; its items stay searchable.`
        : `${label} resumed.`;
    });
  const disconnect = () => {
    if (!confirm(`Disconnect ${label}? Its items, credentials and job history are deleted.`)) return;
    void run(async () => {
      const r = await ok(client.DELETE('/api/connect/connection', { body: { connectionId: c.id } }));
      reload();
      return `${label} disconnected; ${formatNumber(r.deletedItems)} items removed.`;
    });
  };
  return (
    <div class="actions">
      <button
        type="button"
        disabled={busy}
        aria-label={`Sync now: ${label}`}
        onClick={() => queue('sync', 'Sync')}
      >
        Sync now
      </button>
      <button
        type="button"
        class="secondary"
        disabled={busy}
        aria-label={`Full re-sync of ${label}`}
        title="Re-read everything and remove what the source no longer has"
        onClick={() => queue('reset', 'Full re-sync')}
      >
        Full re-sync
      </button>
      <button
        type="button"
        class="secondary"
        disabled={busy}
        aria-label={`${c.status === 'active' ? 'Pause' : 'Resume'} ${label}`}
        onClick={toggle}
      >
        {c.status === 'active' ? 'Pause' : 'Resume'}
      </button>
      <button
        type="button"
        class="danger"
        disabled={busy}
        aria-label={`Disconnect ${label}`}
        onClick={disconnect}
      >
        Disconnect
      </button>
    </div>
  );
}

type FieldValues = Record<string, string | boolean>;

function ConnectForm(props: { types: ConnectionType[]; onConnected(): void }) {
  const { client } = useSession();
  const { notice, busy, run } = useAction();
  const [typeName, setTypeName] = useState(props.types[0]!.type);
  const [values, setValues] = useState<FieldValues>({});
  const [schedule, setSchedule] = useState('');
  const type = props.types.find((t) => t.type === typeName) ?? props.types[0]!;
  const id = (field: string) => `connect-${type.type}-${field}`;

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          const body: CreateBody = { source: sourceOf(type, values) };
          if (schedule.trim() !== '') body.schedule = { intervalMinutes: Number(schedule) };
          const r: CreateAnswer = await ok(client.POST('/api/connect/connection', { body: body as never }));
          props.onConnected();
          setValues({});
          return connectedMessage(type.label, r);
        });
      }}
    >
      <SourceTypeSelect
        types={props.types}
        value={type.type}
        onChange={(name) => {
          setTypeName(name);
          setValues({});
        }}
      />
      {type.fields.map((f) => (
        <DeclaredField
          key={id(f.name)}
          id={id(f.name)}
          field={f}
          value={values[f.name]}
          onValue={(v) => setValues({ ...values, [f.name]: v })}
        />
      ))}
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
            disabled={busy || !type.oauth.configured}
            aria-describedby={type.oauth.configured ? undefined : 'connect-oauth-off'}
            onClick={() => run(() => startConsent(client, type, values))}
          >
            Connect with {type.label} consent (OAuth)
          </button>
        )}
      </div>
      {type.oauth && !type.oauth.configured && (
        <p id="connect-oauth-off" class="hint">
          OAuth for {type.label} is not configured on this service (its operator sets up the OAuth app); give
          a token instead.
        </p>
      )}
      <NoticeView notice={notice} />
    </form>
  );
}

function SourceTypeSelect(props: { types: ConnectionType[]; value: string; onChange(type: string): void }) {
  return (
    <>
      <label for="connect-type">Source</label>
      <select id="connect-type" value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.types.map((t) => (
          <option key={t.type} value={t.type}>
            {t.label} ({t.type})
          </option>
        ))}
      </select>
    </>
  );
}

/** The create body's `source`: the type and each filled-in field (a checkbox only when checked). */
function sourceOf(type: ConnectionType, values: FieldValues): CreateBody['source'] {
  const out: CreateBody['source'] = { type: type.type };
  for (const f of type.fields) {
    const v = values[f.name];
    if (f.kind === 'boolean') {
      if (v === true) out[f.name] = true;
    } else if (typeof v === 'string' && v.trim() !== '') out[f.name] = v.trim();
  }
  return out;
}

/**
 * Starts the OAuth consent: what is needed to finish it on return (useConsentReturn) waits in this tab's
 * sessionStorage while the browser goes to the source's consent page.
 */
async function startConsent(client: KbClient, type: ConnectionType, values: FieldValues): Promise<string> {
  const tenantField = type.oauth?.tenantField ?? null;
  const tenant = tenantField ? String(values[tenantField] ?? '').trim() || null : null;
  const body: Record<string, string> = {
    type: type.type,
    redirectUri: `${location.origin}${BASE}/connections`,
  };
  if (tenantField && tenant) body[tenantField] = tenant;
  const r = await ok(client.POST('/api/connect/oauth/initiate', { body: body as never }));
  const pending: PendingConsent = { type: type.type, secretId: r.secretId, tenantField, tenant };
  sessionStorage.setItem(OAUTH_PENDING, JSON.stringify(pending));
  location.assign(r.consentUrl);
  return `Opening ${type.label}'s consent page…`;
}

/** `label`: what the form calls the field (services before it was listed give only `name`). */
type DeclaredFieldSpec = ConnectionType['fields'][number] & { label?: string };

/** One field the source declares: a checkbox for a boolean, else a labelled input; its description below. */
function DeclaredField(props: {
  id: string;
  field: DeclaredFieldSpec;
  value: string | boolean | undefined;
  onValue(value: string | boolean): void;
}) {
  const { id, field: f } = props;
  const hintId = f.description ? `${id}-hint` : undefined;
  const hint = f.description && (
    <p id={`${id}-hint`} class="hint">
      <Prose text={f.description} />
    </p>
  );
  if (f.kind === 'boolean') {
    return (
      <div class="check">
        <input
          id={id}
          type="checkbox"
          checked={props.value === true}
          aria-describedby={hintId}
          onChange={(e) => props.onValue(e.currentTarget.checked)}
        />
        <label for={id}>{f.label ?? f.name}</label>
        {hint}
      </div>
    );
  }
  return (
    <div>
      <label for={id}>
        {f.label ?? f.name}
        {f.required ? '' : ' (optional)'}
      </label>
      <FieldInput
        id={id}
        secret={f.secret}
        email={f.name === 'email'}
        required={f.required}
        value={typeof props.value === 'string' ? props.value : ''}
        describedBy={hintId}
        onValue={props.onValue}
      />
      {hint}
    </div>
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
      const r: CreateAnswer = await ok(
        client.POST('/api/connect/connection', { body: { source, secretId: pending.secretId } as never }),
      );
      onConnected();
      return connectedMessage(label, r, ' through OAuth consent');
    });
  }, [secretId, status, types.length]);
  return { notice };
}
