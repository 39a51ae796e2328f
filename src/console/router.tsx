/**
 * Client-side routes under /console (the service answers the app's shell for every one of them, so a
 * reload or a shared link lands on the same page). History API only; no library for six pages.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export const PAGES = [
  { path: '', label: 'Overview' },
  { path: '/connections', label: 'Connections' },
  { path: '/sync-jobs', label: 'Sync jobs' },
  { path: '/crawls', label: 'Crawls' },
  { path: '/items', label: 'Items' },
  { path: '/search', label: 'Search' },
  { path: '/webhooks', label: 'Webhooks' },
] as const;

type PagePath = (typeof PAGES)[number]['path'];

/** The page the location names ('' for the overview), or null for an unknown path. */
export function pageOf(pathname: string): PagePath | null {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length).replace(/\/+$/, '') : null;
  if (rest === null) return null;
  return PAGES.find((p) => p.path === rest)?.path ?? null;
}

const CHANGE = 'kb-console-navigate';

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  dispatchEvent(new Event(CHANGE));
}

/** The current location, updated on navigation (links, back and forward). */
export function useLocation(): { pathname: string; params: URLSearchParams } {
  const read = () => ({ pathname: location.pathname, params: new URLSearchParams(location.search) });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    addEventListener('popstate', update);
    addEventListener(CHANGE, update);
    return () => {
      removeEventListener('popstate', update);
      removeEventListener(CHANGE, update);
    };
  }, []);
  return loc;
}

/** An ordinary link (it opens in a new tab as usual) that navigates inside the app on a plain click. */
export function Link(props: {
  href: string;
  children: ComponentChildren;
  class?: string;
  current?: boolean;
}) {
  return (
    <a
      href={props.href}
      class={props.class}
      aria-current={props.current ? 'page' : undefined}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}
