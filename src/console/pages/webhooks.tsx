/**
 * Webhooks: register an endpoint (its signing secret shown once, right after), the endpoints with their
 * state (a disabled one says why, and can be enabled again), and an endpoint's delivery log.
 */
import { useState } from 'preact/hooks';
import { ok } from '../api.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEndpoint, type WebhookEventType } from '../../client/index.ts';
import {
  Badge,
  ErrorText,
  formatTime,
  NoticeView,
  Section,
  splitList,
  useAction,
  useLoad,
  useSession,
} from '../ui.tsx';

/** The signed-in client, whose paths include the webhook endpoints. */
function useWebhookCalls() {
  return useSession().client;
}

export function WebhooksPage() {
  const calls = useWebhookCalls();
  const [shown, setShown] = useState<string | null>(null);
  const list = useLoad(async () => await ok(calls.GET('/api/connect/webhook-endpoints')), []);
  return (
    <>
      <Section title="Add a webhook endpoint" id="add-webhook">
        <EndpointForm onAdded={() => void list.reload()} />
      </Section>
      <Section title="Webhook endpoints" id="webhook-endpoints">
        <ErrorText error={list.error} />
        {list.data && list.data.endpoints.length === 0 && <p>No endpoint yet.</p>}
        <ol class="jobs">
          {list.data?.endpoints.map((e) => (
            <EndpointCard
              key={e.id}
              endpoint={e}
              onChanged={() => void list.reload()}
              onShow={() => setShown(shown === e.id ? null : e.id)}
            />
          ))}
        </ol>
      </Section>
      {shown && (
        <Section title="Deliveries" id="webhook-deliveries">
          <Deliveries endpointId={shown} />
        </Section>
      )}
    </>
  );
}

function EndpointForm(props: { onAdded(): void }) {
  const calls = useWebhookCalls();
  const { notice, busy, run } = useAction();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          // An unknown type goes to the service as written, which answers which ones it knows.
          const types = splitList(events) as WebhookEventType[];
          const created = await ok(
            calls.POST('/api/connect/webhook-endpoints', {
              body: { url, ...(types.length ? { events: types } : {}) },
            }),
          );
          setSecret(created.secret ?? null);
          setUrl('');
          props.onAdded();
          return `Endpoint ${created.id} added.`;
        });
      }}
    >
      <label for="webhook-url">URL</label>
      <input
        id="webhook-url"
        type="url"
        required
        value={url}
        onInput={(e) => setUrl(e.currentTarget.value)}
      />
      <label for="webhook-events">
        Event types (comma-separated; empty: all of {WEBHOOK_EVENT_TYPES.join(', ')})
      </label>
      <input id="webhook-events" value={events} onInput={(e) => setEvents(e.currentTarget.value)} />
      <button type="submit" disabled={busy}>
        Add endpoint
      </button>
      <NoticeView notice={notice} />
      {secret && (
        <p role="status">
          Signing secret (shown this once; keep it now): <code>{secret}</code>
        </p>
      )}
    </form>
  );
}

function EndpointCard(props: { endpoint: WebhookEndpoint; onChanged(): void; onShow(): void }) {
  const calls = useWebhookCalls();
  const { notice, busy, run } = useAction();
  const e = props.endpoint;
  const path = { id: e.id };
  return (
    <li class="job">
      <p>
        <Badge value={e.enabled ? (e.failingSince ? 'failing' : 'enabled') : 'disabled'} />{' '}
        <code>{e.url}</code> {e.events ? e.events.join(', ') : 'all events'}
      </p>
      {e.disabledReason && <p>{e.disabledReason}</p>}
      <button type="button" onClick={props.onShow} aria-label={`Deliveries of ${e.url}`}>
        Deliveries
      </button>{' '}
      <button
        type="button"
        disabled={busy}
        aria-label={`${e.enabled ? 'Disable' : 'Enable'} ${e.url}`}
        onClick={() =>
          void run(async () => {
            await ok(
              calls.PATCH('/api/connect/webhook-endpoints/{id}', {
                params: { path },
                body: { enabled: !e.enabled },
              }),
            );
            props.onChanged();
            return undefined;
          })
        }
      >
        {e.enabled ? 'Disable' : 'Enable'}
      </button>{' '}
      <button
        type="button"
        disabled={busy}
        aria-label={`Delete ${e.url}`}
        onClick={() =>
          void run(async () => {
            await ok(calls.DELETE('/api/connect/webhook-endpoints/{id}', { params: { path } }));
            props.onChanged();
            return undefined;
          })
        }
      >
        Delete
      </button>
      <NoticeView notice={notice} />
    </li>
  );
}

function Deliveries(props: { endpointId: string }) {
  const calls = useWebhookCalls();
  const log = useLoad(
    async () =>
      await ok(
        calls.GET('/api/connect/webhook-endpoints/{id}/deliveries', {
          params: { path: { id: props.endpointId } },
        }),
      ),
    [props.endpointId],
    { pollMs: 3000, poll: (d) => d.deliveries.some((x) => x.status === 'pending') },
  );
  return (
    <>
      <ErrorText error={log.error} />
      {log.data && log.data.deliveries.length === 0 && <p>No delivery yet.</p>}
      {log.data && log.data.deliveries.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Created</th>
              <th>Event</th>
              <th>Status</th>
              <th>Attempts</th>
              <th>Next attempt</th>
              <th>Last error</th>
            </tr>
          </thead>
          <tbody>
            {log.data.deliveries.map((d) => (
              <tr key={d.id}>
                <td>{formatTime(d.createdAt)}</td>
                <td>{d.eventType}</td>
                <td>
                  <Badge value={d.status} />
                </td>
                <td>{d.attempts}</td>
                <td>{d.nextAttemptAt ? formatTime(d.nextAttemptAt) : ''}</td>
                <td>{d.lastError ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
