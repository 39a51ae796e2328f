/** The console's frame: sign-in gate, header with navigation, and the page the location names. */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { clientFor, messageOf, ok, storedKey, storeKey } from './api.ts';
import { ConnectionsPage } from './pages/connections.tsx';
import { CrawlsPage } from './pages/crawls.tsx';
import { ItemsPage } from './pages/items.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { SearchPage } from './pages/search.tsx';
import { SyncJobsPage } from './pages/sync-jobs.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { BASE, Link, PAGES, pageOf, useLocation } from './router.tsx';
import { type ConsoleSession, SessionContext } from './ui.tsx';

export function App() {
  const [key, setKey] = useState<string | null>(storedKey);
  const [signedOutBecause, setSignedOutBecause] = useState<string | null>(null);
  const signOut = useCallback((message?: string) => {
    storeKey(null);
    setKey(null);
    setSignedOutBecause(message ?? null);
  }, []);
  const session = useMemo<ConsoleSession | null>(
    () => (key ? { client: clientFor(key), signOut } : null),
    [key, signOut],
  );
  if (!session) {
    return (
      <SignIn
        reason={signedOutBecause}
        onSignedIn={(k) => {
          storeKey(k);
          setKey(k);
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell />
    </SessionContext.Provider>
  );
}

function Shell() {
  const { pathname } = useLocation();
  const page = pageOf(pathname);
  const main = useRef<HTMLElement>(null);
  const label = PAGES.find((p) => p.path === page)?.label ?? 'Not found';
  // A new page: its title, and focus on its heading so keyboard and screen-reader users start there.
  const first = useRef(true);
  useEffect(() => {
    document.title = `${label} · Knowledge base console`;
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [label]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="top-row">
          <span class="brand">Knowledge base</span>
          <SignOutButton />
        </div>
        <nav aria-label="Console">
          <ul>
            {PAGES.map((p) => (
              <li key={p.path}>
                <Link href={BASE + p.path} current={p.path === page}>
                  {p.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main" ref={main}>
        <h1 tabIndex={-1}>{label}</h1>
        {page === '' && <OverviewPage />}
        {page === '/connections' && <ConnectionsPage />}
        {page === '/sync-jobs' && <SyncJobsPage />}
        {page === '/crawls' && <CrawlsPage />}
        {page === '/items' && <ItemsPage />}
        {page === '/search' && <SearchPage />}
        {page === '/webhooks' && <WebhooksPage />}
        {page === null && (
          <p>
            No console page lives at this address. <Link href={BASE}>Go to the overview</Link>.
          </p>
        )}
      </main>
    </>
  );
}

function SignOutButton() {
  return (
    <button
      type="button"
      class="secondary"
      onClick={() => {
        storeKey(null);
        location.reload();
      }}
    >
      Sign out
    </button>
  );
}

function SignIn(props: { reason: string | null; onSignedIn(key: string): void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(props.reason);
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="sign-in">
      <h1>Knowledge base console</h1>
      <form
        class="card"
        onSubmit={async (e) => {
          e.preventDefault();
          const key = value.trim();
          setBusy(true);
          setError(null);
          try {
            // Any authenticated call proves the key; the connection list is among the cheapest.
            await ok(clientFor(key).GET('/api/connect/connections'));
            props.onSignedIn(key);
          } catch (err) {
            setError(messageOf(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          value={value}
          aria-describedby="api-key-hint"
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <p id="api-key-hint" class="hint">
          An API key of your organization (<code>kb_…</code>). It stays in this tab's session storage and is
          forgotten when the tab closes.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="notice error" role="alert">
          {error ?? ''}
        </p>
      </form>
    </main>
  );
}
