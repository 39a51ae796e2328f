/**
 * A site whose pages a script builds (a single-page app's shape): every page is the same empty shell,
 * and /app.js fetches the page's content and links as JSON and writes them into the document. Without
 * JavaScript a crawler sees no text and no links past the start page.
 *
 * `privateOrigin`: the page /leaky also asks that origin (an address the crawler must refuse) for a
 * script, an image, a preconnect and data, to prove the browser reaches nothing the crawler may not.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RouteHandler, type ServedRoutes, serveRoutes } from './sites.ts';

export interface ScriptPage {
  title: string;
  /** The text the script writes into the page: only a rendered page has it. */
  text: string;
  links: string[];
}

/** The pages of the site, by path; each one's text says which page it is. */
export const SCRIPT_PAGES: Record<string, ScriptPage> = {
  '/': {
    title: 'Orbit Handbook',
    text: 'Welcome to the Orbit handbook: this text exists only once the page script has run in a browser.',
    links: ['/guide', '/reference'],
  },
  '/guide': {
    title: 'Orbit Guide',
    text: 'The Orbit guide explains how satellites keep station using small reaction wheels and patience.',
    links: ['/', '/reference'],
  },
  '/reference': {
    title: 'Orbit Reference',
    text: 'The Orbit reference lists every command: launch, coast, burn and dock, each with its arguments.',
    links: ['/', '/guide'],
  },
};

/** /leaky (with a private origin): its text, besides what it tries to fetch from that origin. */
export const LEAKY_PAGE: ScriptPage = {
  title: 'Orbit Leaky Page',
  text: 'This Orbit page also asks a private address for data, which the crawler must never reach.',
  links: ['/'],
};

/** The words that mark a rendered page: present in every page's script-built text, never in its shell. */
export const RENDERED_MARK = 'Orbit';

function shell(extraHead = '', extraBody = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Loading</title>
<script src="/app.js" defer></script>${extraHead}</head>
<body><div id="app"></div>${extraBody}<noscript>Please enable JavaScript.</noscript></body></html>`;
}

/** Builds the page from /api/page: a heading, two paragraphs and its links. */
const APP_JS = `
fetch('/api/page?path=' + encodeURIComponent(location.pathname))
  .then((r) => r.json())
  .then((p) => {
    document.title = p.title;
    const main = document.createElement('main');
    const h1 = document.createElement('h1');
    h1.textContent = p.title;
    main.appendChild(h1);
    for (const text of [p.text, 'This second paragraph gives the article enough words to be read as the main content of the page.']) {
      const para = document.createElement('p');
      para.textContent = text;
      main.appendChild(para);
    }
    const nav = document.createElement('nav');
    for (const href of p.links) {
      const a = document.createElement('a');
      a.href = href;
      a.textContent = href;
      nav.appendChild(a);
    }
    document.getElementById('app').append(nav, main);
  });
`;

/** /leaky's own script: asks the private origin for data and writes what it gets into the page. */
function leakyJs(privateOrigin: string): string {
  return `
fetch('${privateOrigin}/secret').then((r) => r.text()).then((t) => {
  const p = document.createElement('p');
  p.textContent = 'LEAKED ' + t;
  document.body.appendChild(p);
}).catch(() => {});
`;
}

export async function serveScriptSite(opts: { privateOrigin?: string } = {}): Promise<ServedRoutes> {
  const priv = opts.privateOrigin;
  const pages: Record<string, ScriptPage> = { ...SCRIPT_PAGES, ...(priv ? { '/leaky': LEAKY_PAGE } : {}) };
  const routes: Record<string, RouteHandler> = {
    '/app.js': { headers: { 'content-type': 'text/javascript' }, body: APP_JS },
    '/api/page': (_req, res, ctx) => {
      const path = ctx.url.searchParams.get('path') ?? '/';
      const page = pages[path];
      if (!page) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(page));
    },
  };
  for (const path of Object.keys(SCRIPT_PAGES)) routes[path] = { body: shell() };
  if (priv) {
    routes['/leaky'] = {
      body: shell(
        `<link rel="preconnect" href="${priv}"><script src="/leaky.js" defer></script><script src="${priv}/tracker.js"></script>`,
        `<img src="${priv}/pixel.png"><iframe src="${priv}/frame"></iframe>`,
      ),
    };
    routes['/leaky.js'] = { headers: { 'content-type': 'text/javascript' }, body: leakyJs(priv) };
  }
  return serveRoutes(routes);
}

/** A server on an address the crawler must refuse; it counts every connection and request it gets. */
export interface PrivateTarget {
  origin: string;
  connections: () => number;
  requests: () => number;
  close: () => Promise<void>;
}

export async function servePrivateTarget(host = '127.0.0.2'): Promise<PrivateTarget> {
  let connections = 0;
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' });
    res.end('the private secret');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    connections: () => connections,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
