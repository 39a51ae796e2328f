/**
 * Pages rendered in a headless Chromium (Debian's `chromium`, driven by playwright-core) for crawls that
 * ask for it (`renderJavaScript`): a page whose content a script builds is stored as the reader sees it,
 * not as its empty shell.
 *
 * The browser never reaches the network itself. Every request a page makes is intercepted and, when it is
 * of a kind worth making (the page's own document, scripts, styles, data), made by the crawler's outbound
 * fetch, the same guard as every other crawler request (address checked on the socket, every redirect
 * hop); everything else is refused. Chromium is started with a proxy that does not exist and a resolver
 * that resolves nothing, so a request interception could miss (a preconnect, a WebRTC probe) fails too.
 *
 * Memory is bounded: at most `renderPages` pages are open at once in one process, each in its own
 * browser context (no cookies, storage or cache shared between pages), with a cap on its requests, on the
 * bytes they bring and on the size of the HTML taken from it, and a time limit. The browser starts on the
 * first page rendered and closes when the last crawl using it ends (or the service stops).
 */
import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, Page, Request, Route } from 'playwright-core';
import { type OutboundFetch, OutboundBlockedError } from '../net/outbound.ts';

/** What the renderer needs of the crawler's settings (settings.ts). */
export interface RenderSettings {
  userAgent: string;
  browserPath: string;
  renderPages: number;
  renderTimeoutMs: number;
  maxRenderRequests: number;
  /** Cap on each response a page's request brings, and on the rendered HTML (characters). */
  maxPageBytes: number;
}

export interface RenderRequest {
  /** The page's URL (after redirects): the address the page's relative URLs and scripts see. */
  url: string;
  /** The page's HTML as the crawler fetched it: the browser is given this document, not a second fetch. */
  html: string;
  signal?: AbortSignal | undefined;
}

export type RenderResult =
  | {
      kind: 'rendered';
      html: string;
      /** The rendered HTML was longer than the cap and was cut there. */
      truncated: boolean;
      /** Requests the page made that the outbound guard refused (not public addresses, other schemes). */
      blocked: string[];
    }
  /** No browser here (or it would not start): the caller keeps the fetched HTML. */
  | { kind: 'unavailable'; reason: string }
  /** This page could not be rendered (a crash, the time limit before the document loaded). */
  | { kind: 'failed'; message: string };

/** One crawl's use of the renderer: `close` at the crawl's end lets the browser go when no crawl needs it. */
export interface RenderSession {
  render(req: RenderRequest): Promise<RenderResult>;
  close(): Promise<void>;
}

/**
 * This workplace's and production's flags: no sandbox (the service may run as root in a container), no
 * background traffic Chromium would start on its own, and no network of its own (see the module's comment).
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--proxy-server=http://no-proxy.invalid:9',
  '--proxy-bypass-list=<-loopback>',
  '--host-resolver-rules=MAP * ~NOTFOUND',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/** Kinds of request a page's content can depend on; images, fonts, media and the rest are refused unmade. */
const MADE_RESOURCE_TYPES = new Set(['document', 'script', 'xhr', 'fetch', 'stylesheet']);

/** A crawler reads: a script's POST (a form, an analytics beacon) could change something on the site. */
const MADE_METHODS = new Set(['GET', 'HEAD']);

/** Response headers not passed on to the browser: the body it gets is already decoded and whole. */
const DROPPED_RESPONSE_HEADERS = new Set([
  'content-encoding',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'set-cookie',
]);

/** Request headers passed on from the page's requests (the outbound fetch sets the user agent). */
const FORWARDED_REQUEST_HEADERS = new Set(['accept', 'accept-language', 'content-type', 'referer']);

/** How long the page's requests must have been quiet, after its load event, for its content to be taken. */
const QUIET_MS = 250;

/** Bytes all of one page's requests may bring, as a multiple of the page size cap. */
const PAGE_BYTES_FACTOR = 4;

/** Launches the browser; tests may give another (a path that does not exist: the fallback). */
export type LaunchBrowser = (executablePath: string, args: string[]) => Promise<Browser>;

const launchChromium: LaunchBrowser = async (executablePath, args) => {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath, headless: true, args, timeout: 60_000 });
};

/**
 * The process's renderer: one browser, shared by every crawl that renders, started when first needed.
 * Each crawl (a session) gets a browser context of its own (cookies and storage never cross crawls), whose
 * pages are reused from one render to the next: opening a page starts a renderer process, which costs
 * more than most pages take to render.
 */
export class PageRenderer {
  readonly #settings: RenderSettings;
  readonly #fetch: OutboundFetch;
  readonly #launch: LaunchBrowser;
  #browser: Promise<Browser> | null = null;
  #sessions = 0;
  /** Pages rendering now (at most `renderPages`), and those waiting for one to end. */
  #rendering = 0;
  readonly #waiting: Array<() => void> = [];
  /** Pages open in the browser, rendering or kept for reuse (each leaves when it closes). */
  readonly #alive = new Set<Page>();

  constructor(opts: { settings: RenderSettings; fetch: OutboundFetch; launch?: LaunchBrowser }) {
    this.#settings = opts.settings;
    this.#fetch = opts.fetch;
    this.#launch = opts.launch ?? launchChromium;
  }

  /** Starts one crawl's use of the renderer; nothing is launched until a page is rendered. */
  session(): RenderSession {
    this.#sessions++;
    const pages = new SessionPages();
    let closed = false;
    return {
      render: (req) => this.#render(pages, req),
      close: async () => {
        if (closed) return;
        closed = true;
        await pages.close();
        this.#sessions--;
        if (this.#sessions === 0) await this.close();
      },
    };
  }

  /** Whether a browser is running now (tests: it is closed once no crawl uses it). */
  get running(): boolean {
    return this.#browser !== null;
  }

  /** Closes the browser (the service stops, or no crawl uses it); the next page rendered starts another. */
  async close(): Promise<void> {
    const browser = this.#browser;
    this.#browser = null;
    if (!browser) return;
    await browser.then((b) => b.close()).catch(() => {});
  }

  async #render(pages: SessionPages, req: RenderRequest): Promise<RenderResult> {
    const path = this.#settings.browserPath;
    if (!existsSync(path)) return { kind: 'unavailable', reason: `no browser at ${path}` };
    await this.#takeSlot(req.signal);
    try {
      let browser: Browser;
      try {
        browser = await this.#started();
      } catch (err) {
        return { kind: 'unavailable', reason: `the browser at ${path} did not start: ${firstLine(err)}` };
      }
      const run = { settings: this.#settings, fetch: this.#fetch };
      let page: Page;
      try {
        page = await pages.take(browser, run);
      } catch (err) {
        return { kind: 'failed', message: firstLine(err) };
      }
      if (!this.#alive.has(page)) {
        this.#alive.add(page);
        page.once('close', () => this.#alive.delete(page));
      }
      const { result, reusable } = await renderIn(page, pages, req, run);
      // Kept for the next page only while the process's pages stay within the bound.
      if (reusable && this.#alive.size <= Math.max(1, this.#settings.renderPages)) pages.idle.push(page);
      else await page.close().catch(() => {});
      return result;
    } finally {
      this.#giveSlot();
    }
  }

  #started(): Promise<Browser> {
    if (!this.#browser) {
      const launching = this.#launch(this.#settings.browserPath, CHROMIUM_ARGS);
      this.#browser = launching;
      // A browser that will not start is tried again by the next page, not remembered as started.
      launching.catch(() => {
        if (this.#browser === launching) this.#browser = null;
      });
      launching.then(
        (b) =>
          b.on('disconnected', () => {
            if (this.#browser === launching) this.#browser = null;
          }),
        () => {},
      );
    }
    return this.#browser;
  }

  /** Waits until fewer than `renderPages` pages are rendering in this process. */
  async #takeSlot(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (this.#rendering < Math.max(1, this.#settings.renderPages)) {
      this.#rendering++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.#waiting.indexOf(grant);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(grant);
    });
  }

  #giveSlot(): void {
    const next = this.#waiting.shift();
    // The slot passes straight to the next waiter: `rendering` stays as it is.
    if (next) next();
    else this.#rendering--;
  }
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.slice(0, 300);
}

interface PageRun {
  settings: RenderSettings;
  fetch: OutboundFetch;
}

/** One crawl's browser context, its pages kept for reuse, and which render each page is serving. */
class SessionPages {
  readonly idle: Page[] = [];
  readonly traffic = new WeakMap<Page, PageTraffic>();
  #context: { browser: Browser; context: Promise<BrowserContext> } | null = null;

  /** An idle page of this crawl, or a new one (in a context made on first use, or after a new browser). */
  async take(browser: Browser, run: PageRun): Promise<Page> {
    const reused = this.idle.pop();
    if (reused && !reused.isClosed()) return reused;
    if (this.#context?.browser !== browser) {
      const made = { browser, context: this.#newContext(browser, run) };
      this.#context = made;
      // A context that could not be made is made again for the next page.
      made.context.catch(() => {
        if (this.#context === made) this.#context = null;
      });
    }
    return (await this.#context.context).newPage();
  }

  async #newContext(browser: Browser, run: PageRun): Promise<BrowserContext> {
    const context = await browser.newContext({
      userAgent: run.settings.userAgent,
      serviceWorkers: 'block',
      acceptDownloads: false,
    });
    await context.route('**/*', (route, request) => {
      let traffic: PageTraffic | undefined;
      try {
        traffic = this.traffic.get(request.frame().page());
      } catch {
        // A request of no page's frame (a worker's): refused below.
      }
      return traffic ? traffic.handle(route, request) : route.abort('blockedbyclient').catch(() => {});
    });
    // A WebSocket is never opened: the handler neither connects it nor answers it.
    await context.routeWebSocket(/.*/, (ws) => void ws.close().catch(() => {}));
    return context;
  }

  async close(): Promise<void> {
    const context = this.#context?.context;
    this.#context = null;
    this.idle.length = 0;
    await context?.then((c) => c.close()).catch(() => {});
  }
}

/** Past the time limit, how long the page's content may take to be read before the page is closed. */
const READ_GRACE_MS = 5_000;

/**
 * Renders one page; `reusable` when the page ended clean (back on about:blank, so no script of this page
 * runs on) and may render the crawl's next page.
 */
async function renderIn(
  page: Page,
  pages: SessionPages,
  req: RenderRequest,
  run: PageRun,
): Promise<{ result: RenderResult; reusable: boolean }> {
  const limitMs = run.settings.renderTimeoutMs;
  // At the time limit the page's requests stop and its content is read as it stands; a page whose script
  // never yields (the read never answers) is closed a little later.
  const deadline = AbortSignal.timeout(limitMs);
  const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
  const hardStop = req.signal
    ? AbortSignal.any([req.signal, AbortSignal.timeout(limitMs + READ_GRACE_MS)])
    : AbortSignal.timeout(limitMs + READ_GRACE_MS);
  const onStop = () => void page.close().catch(() => {});
  hardStop.addEventListener('abort', onStop, { once: true });
  const traffic = new PageTraffic(req, run, signal);
  pages.traffic.set(page, traffic);
  try {
    const loaded = await page.goto(req.url, { waitUntil: 'load', timeout: limitMs }).then(
      () => true,
      () => false,
    );
    req.signal?.throwIfAborted();
    traffic.touch();
    // Past the time limit with the document in, its content as it stands is still better than the shell.
    if (!loaded && !traffic.documentServed)
      return {
        result: { kind: 'failed', message: 'the page did not load in the time limit' },
        reusable: false,
      };
    await traffic.quiet(signal);
    const taken = await takeHtml(page, run.settings.maxPageBytes);
    traffic.end();
    const reusable = await page.goto('about:blank', { timeout: READ_GRACE_MS }).then(
      () => !hardStop.aborted,
      () => false,
    );
    return { result: { kind: 'rendered', ...taken, blocked: traffic.blocked }, reusable };
  } catch (err) {
    req.signal?.throwIfAborted();
    return { result: { kind: 'failed', message: firstLine(err) }, reusable: false };
  } finally {
    traffic.end();
    hardStop.removeEventListener('abort', onStop);
    pages.traffic.delete(page);
  }
}

/** The page's HTML as the DOM now holds it, cut at `maxChars` inside the browser (never sent whole). */
async function takeHtml(page: Page, maxChars: number): Promise<{ html: string; truncated: boolean }> {
  return page.evaluate((max) => {
    const doctype = document.doctype ? '<!doctype html>\n' : '';
    const whole = doctype + document.documentElement.outerHTML;
    return whole.length > max
      ? { html: whole.slice(0, max), truncated: true }
      : { html: whole, truncated: false };
  }, maxChars);
}

/** One page's requests: which are made (through the outbound fetch), which refused, and when it is quiet. */
class PageTraffic {
  readonly blocked: string[] = [];
  documentServed = false;
  readonly #req: RenderRequest;
  readonly #run: PageRun;
  readonly #signal: AbortSignal;
  #made = 0;
  #ended = false;
  #bytesLeft: number;
  #inFlight = 0;
  #lastActivity = performance.now();

  constructor(req: RenderRequest, run: PageRun, signal: AbortSignal) {
    this.#req = req;
    this.#run = run;
    this.#signal = signal;
    this.#bytesLeft = PAGE_BYTES_FACTOR * run.settings.maxPageBytes;
  }

  /** The render is over: whatever the page still asks for is refused. */
  end(): void {
    this.#ended = true;
  }

  async handle(route: Route, request: Request): Promise<void> {
    if (this.#ended) return route.abort('blockedbyclient').catch(() => {});
    this.#inFlight++;
    this.#lastActivity = performance.now();
    try {
      await this.#answer(route, request);
    } catch {
      // The page or its context closed first (time limit, cancel): nothing is waiting for this answer.
    } finally {
      this.#inFlight--;
      this.#lastActivity = performance.now();
    }
  }

  async #answer(route: Route, request: Request): Promise<void> {
    if (request.isNavigationRequest()) {
      // The page's own document, as the crawler fetched it; any other navigation (a script's redirect, a
      // frame) would leave the page the crawler judged.
      if (this.documentServed || request.frame().parentFrame() !== null)
        return route.abort('blockedbyclient');
      this.documentServed = true;
      return route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: this.#req.html,
      });
    }
    const made =
      MADE_RESOURCE_TYPES.has(request.resourceType()) &&
      MADE_METHODS.has(request.method()) &&
      this.#made < this.#run.settings.maxRenderRequests &&
      this.#bytesLeft > 0;
    if (!made) return route.abort('blockedbyclient');
    this.#made++;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers()))
      if (FORWARDED_REQUEST_HEADERS.has(name.toLowerCase())) headers[name] = value;
    let res: Awaited<ReturnType<OutboundFetch>>;
    try {
      res = await this.#run.fetch(request.url(), {
        method: request.method(),
        headers,
        signal: this.#signal,
        maxBytes: Math.min(this.#run.settings.maxPageBytes, this.#bytesLeft),
      });
    } catch (err) {
      if (err instanceof OutboundBlockedError) this.blocked.push(request.url());
      return route.abort(err instanceof OutboundBlockedError ? 'blockedbyclient' : 'failed');
    }
    this.#bytesLeft -= res.body.length;
    const responseHeaders: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      if (!DROPPED_RESPONSE_HEADERS.has(name)) responseHeaders[name] = value;
    });
    return route.fulfill({ status: res.status, headers: responseHeaders, body: res.body });
  }

  /**
   * Counts now as activity: a request a script starts on the load event reaches the handler a moment
   * later, so quiet is measured from the load, not from the page's last request before it.
   */
  touch(): void {
    this.#lastActivity = performance.now();
  }

  /** Resolves once no request has been in flight for {@link QUIET_MS}, or when `signal` ends the page. */
  async quiet(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const idleFor = performance.now() - this.#lastActivity;
      if (this.#inFlight === 0 && idleFor >= QUIET_MS) return;
      const wait = this.#inFlight === 0 ? QUIET_MS - idleFor : QUIET_MS / 3;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(1, Math.ceil(wait)));
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }
}
