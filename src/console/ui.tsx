/** What every page shares: the signed-in client, action feedback, polling, formatting. */
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { isUnauthorized, type KbClient, messageOf, ok } from './api.ts';

export interface ConsoleSession {
  client: KbClient;
  /** Forget the key and go back to the sign-in form, with a message saying why. */
  signOut(message?: string): void;
}

export const SessionContext = createContext<ConsoleSession | null>(null);

export function useSession(): ConsoleSession {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}

type Notice = { kind: 'success' | 'error'; text: string } | null;

/**
 * Runs the actions of one form or list and keeps what the person should be told: the success message
 * the action returns, or the API's own error message. A 401 signs out (the key was revoked meanwhile).
 */
export function useAction() {
  const { signOut } = useSession();
  const [notice, setNotice] = useState<Notice>(null);
  const [busy, setBusy] = useState(false);
  const run = useCallback(
    async (action: () => Promise<string | undefined>): Promise<boolean> => {
      setBusy(true);
      setNotice(null);
      try {
        const message = await action();
        if (message) setNotice({ kind: 'success', text: message });
        return true;
      } catch (err) {
        if (isUnauthorized(err)) signOut(messageOf(err));
        else setNotice({ kind: 'error', text: messageOf(err) });
        return false;
      } finally {
        setBusy(false);
      }
    },
    [signOut],
  );
  return { notice, setNotice, busy, run };
}

/** `useAction`'s runner, for a part (a table row) that reports through its parent's notice. */
export type RunAction = ReturnType<typeof useAction>['run'];

/**
 * Loads data for a page and reloads it on demand, or every `pollMs` while `poll(data)` says something is
 * still moving (a job running) and the tab is visible.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
  opts: { pollMs?: number; poll?: (data: T) => boolean } = {},
) {
  const { signOut } = useSession();
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const generation = useRef(0);

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const next = await loadRef.current();
      if (mine !== generation.current) return;
      setData(next);
      setError(null);
    } catch (err) {
      if (mine !== generation.current) return;
      if (isUnauthorized(err)) signOut(messageOf(err));
      else setError(messageOf(err));
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, [signOut]);

  // The caller's deps say when to load again.
  useEffect(() => {
    void reload();
  }, deps);

  const polling = data !== null && opts.pollMs !== undefined && (opts.poll?.(data) ?? false);
  useEffect(() => {
    if (!polling) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void reload();
    }, opts.pollMs);
    return () => clearInterval(timer);
  }, [polling, opts.pollMs, reload]);

  return { data, error, loading, reload, setData };
}

/**
 * The source types the service connects (GET /api/connect/connection-types), and how a page names one:
 * the product and its type, `GitBook (docs_space)`, or the bare type until the list has loaded.
 */
export function useSourceTypes() {
  const { client } = useSession();
  const types = useLoad(() => ok(client.GET('/api/connect/connection-types')), []);
  const list = types.data?.data ?? [];
  const labelOf = (type: string) => {
    const t = list.find((x) => x.type === type);
    return t ? `${t.label} (${t.type})` : type;
  };
  return { types, list, labelOf };
}

/** The outcome of the last action: success in a polite live region, errors in an alert region. */
export function NoticeView({ notice }: { notice: Notice }) {
  return (
    <>
      <p class="notice success" role="status">
        {notice?.kind === 'success' ? notice.text : ''}
      </p>
      <p class="notice error" role="alert">
        {notice?.kind === 'error' ? notice.text : ''}
      </p>
    </>
  );
}

export function ErrorText({ error }: { error: string | null }) {
  return (
    <p class="notice error" role="alert">
      {error ?? ''}
    </p>
  );
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge badge-${value}`}>{value}</span>;
}

export function Section(props: {
  title: string;
  id?: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <section class="card" aria-labelledby={props.id}>
      <div class="card-head">
        <h2 id={props.id}>{props.title}</h2>
        {props.actions}
      </div>
      {props.children}
    </section>
  );
}

/** Previous / next over a paged list, with where the person is. */
export function Pager(props: {
  page: number;
  pages: number;
  total: number;
  noun: string;
  busy?: boolean;
  onPage(page: number): void;
}) {
  const { page, pages, total } = props;
  const noun = total === 1 ? props.noun.replace(/s$/, '') : props.noun;
  return (
    <nav class="pager" aria-label={`${props.noun} pages`}>
      {pages > 1 && (
        <button type="button" disabled={page <= 1 || props.busy} onClick={() => props.onPage(page - 1)}>
          Previous
        </button>
      )}
      <span class="pager-status" data-page={page} aria-live="polite">
        Page {formatNumber(page)} of {formatNumber(Math.max(pages, 1))} · {formatNumber(total)} {noun}
      </span>
      {pages > 1 && (
        <button type="button" disabled={page >= pages || props.busy} onClick={() => props.onPage(page + 1)}>
          Next
        </button>
      )}
    </nav>
  );
}

export function formatNumber(n: number): string {
  return n.toLocaleString('en-US');
}

export function formatTime(t: number | string | null | undefined): string {
  if (t === null || t === undefined) return '—';
  const d = new Date(t);
  return Number.isNaN(d.getTime())
    ? '—'
    : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** `a, b , c` → ['a', 'b', 'c'] (tags and other short lists typed into one field). */
export function splitList(text: string, separator: RegExp = /,/): string[] {
  return text
    .split(separator)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Text from the API's descriptions, with its `code` spans shown as code. */
export function Prose({ text }: { text: string }) {
  return <>{text.split('`').map((part, i) => (i % 2 === 1 ? <code key={part}>{part}</code> : part))}</>;
}
