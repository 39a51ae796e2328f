/**
 * The admin console: a small single-page app (Preact, src/console/) served at `/console`.
 *
 * No build step: esbuild bundles src/console/main.tsx (and its CSS) in memory on the first request to
 * /console, once per service, and each asset is compressed then (brotli and gzip) so a request costs
 * a lookup. The shell HTML names the assets by a hash of their content, so they are cached for good and a
 * new build is a new URL; the shell itself is revalidated (ETag). Every path under /console that is not an
 * asset answers the shell, so the app's own routes (/console/items, ...) work as deep links.
 *
 * No API key here: the static files carry no data. The key is typed into the page, kept in the tab's
 * sessionStorage and sent by the app on its /api calls like any other client's. The shell's
 * Content-Security-Policy allows this origin's script, style and API only.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import type { App } from '../context.ts';

const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));
const ENTRY = path.join(CONSOLE_DIR, 'main.tsx');
const ASSET_PREFIX = '/console/assets/';

/** Only this origin's script, style and API; no inline script, no frames, no other origin. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  type: string;
  etag: string;
  identity: Buffer;
  br: Buffer;
  gzip: Buffer;
}

interface ConsoleBuild {
  shell: Asset;
  /** By file name under /console/assets/. */
  assets: Map<string, Asset>;
}

function asset(type: string, body: Buffer): Asset {
  return {
    type,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    identity: body,
    // Once per build, so the slowest (smallest) settings are worth it.
    br: brotliCompressSync(body, {
      params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
    gzip: gzipSync(body, { level: 9 }),
  };
}

/** Bundles the app with esbuild (a runtime dependency) and lays out the shell and its assets. */
async function buildConsole(): Promise<ConsoleBuild> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: 'out',
    legalComments: 'none',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const assets = new Map<string, Asset>();
  let script = '';
  let style = '';
  for (const file of result.outputFiles) {
    const ext = path.extname(file.path);
    const body = Buffer.from(file.contents);
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
    const name = `console.${hash}${ext}`;
    if (ext === '.js') {
      script = name;
      assets.set(name, asset('text/javascript; charset=utf-8', body));
    } else if (ext === '.css') {
      style = name;
      assets.set(name, asset('text/css; charset=utf-8', body));
    }
  }
  if (!script) throw new Error('the console bundle has no script');
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    '<title>Knowledge base console</title><link rel="icon" href="data:,">' +
    (style ? `<link rel="stylesheet" href="${ASSET_PREFIX}${style}">` : '') +
    `<script type="module" src="${ASSET_PREFIX}${script}"></script></head>` +
    '<body><noscript>The console needs JavaScript.</noscript><div id="app"></div></body></html>';
  return { shell: asset('text/html; charset=utf-8', Buffer.from(html)), assets };
}

/** The encoding to send: brotli, else gzip, else none, as the client's Accept-Encoding allows (q=0 refuses). */
export function preferredEncoding(header: string | undefined): 'br' | 'gzip' | null {
  const accepted = new Map<string, number>();
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [token, ...params] = part.trim().split(';');
    if (!token) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(token, q === undefined ? 1 : Number(q));
  }
  const allows = (name: string) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0;
  if (allows('br')) return 'br';
  if (allows('gzip')) return 'gzip';
  return null;
}

function send(request: FastifyRequest, reply: FastifyReply, a: Asset, cacheControl: string) {
  reply
    .header('content-type', a.type)
    .header('cache-control', cacheControl)
    .header('etag', a.etag)
    .header('vary', 'accept-encoding')
    .header('x-content-type-options', 'nosniff');
  if (request.headers['if-none-match'] === a.etag) return reply.code(304).send();
  const encoding = preferredEncoding(request.headers['accept-encoding']);
  if (encoding) reply.header('content-encoding', encoding);
  return reply.send(encoding === 'br' ? a.br : encoding === 'gzip' ? a.gzip : a.identity);
}

export function register(app: App): void {
  // Built on first use, once per service (a test app that never serves the console never bundles it);
  // a failed build is forgotten so the next request tries again.
  let built: Promise<ConsoleBuild> | null = null;
  const consoleBuild = async (): Promise<ConsoleBuild> => {
    built ??= buildConsole();
    try {
      return await built;
    } catch (err) {
      built = null;
      app.log.error({ err }, 'console build failed');
      throw new AppError('unavailable', 'The console could not be built; the service log says why.');
    }
  };

  const shell = async (request: FastifyRequest, reply: FastifyReply) => {
    const { shell } = await consoleBuild();
    reply
      .header('content-security-policy', CSP)
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY');
    return send(request, reply, shell, 'no-cache');
  };
  const hidden = { schema: { hide: true } };
  // The address a person types first: the console, not a 404 error.
  app.get('/', hidden, (_request, reply) => reply.redirect('/console', 302));
  app.get('/console', hidden, shell);
  app.get('/console/*', hidden, shell);
  app.get<{ Params: { file: string } }>(`${ASSET_PREFIX}:file`, hidden, async (request, reply) => {
    const a = (await consoleBuild()).assets.get(request.params.file);
    if (!a) throw new AppError('not_found', 'No such console file; reload /console for the current ones.');
    return send(request, reply, a, 'public, max-age=31536000, immutable');
  });
}
