/**
 * Sitemap discovery: the sitemaps robots.txt lists plus the usual locations, sitemap indexes followed,
 * gzip handled, every fetch through the outbound guard, and hard bounds on sitemaps read and URLs kept.
 */
import { gunzipSync } from 'node:zlib';
import { type OutboundFetch, OutboundBlockedError } from '../net/outbound.ts';
import { canonicalizeUrl, urlKey } from './url.ts';

/** Locations tried besides those listed in robots.txt. */
const USUAL_SITEMAP_PATHS = ['/sitemap.xml', '/sitemap_index.xml'];

interface SitemapEntry {
  /** Canonical page URL. */
  url: string;
  /** `<lastmod>` as written, when present. */
  lastmod?: string;
}

interface ParsedSitemap {
  /** `index`: entries are sitemaps; `urlset` / `text`: entries are pages; `unknown`: not a sitemap. */
  kind: 'index' | 'urlset' | 'text' | 'unknown';
  entries: SitemapEntry[];
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXmlText(raw: string): string {
  const cdata = /^<!\[CDATA\[([\s\S]*?)\]\]>$/.exec(raw.trim());
  if (cdata) return (cdata[1] ?? '').trim();
  return raw.trim().replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code =
        name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

function childText(block: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, 'i').exec(block);
  return m ? decodeXmlText(m[1] ?? '') : undefined;
}

/**
 * Parses a sitemap document: an XML `<urlset>`, an XML `<sitemapindex>`, or a plain-text sitemap (one URL
 * per line). Entries whose `<loc>` is not an http(s) URL are dropped. Relative locs resolve against `base`.
 */
export function parseSitemap(body: string, base?: string): ParsedSitemap {
  const isIndex = /<sitemapindex[\s>]/i.test(body);
  const isUrlset = !isIndex && /<urlset[\s>]/i.test(body);
  const entries: SitemapEntry[] = [];
  if (isIndex || isUrlset) {
    // Regular expressions rather than a DOM: sitemaps are flat, can be tens of MB, and <loc> is all we need
    // (prefixed children such as <image:loc> do not match the bare tag name).
    const blockRe = isIndex
      ? /<sitemap(?:\s[^>]*)?>([\s\S]*?)<\/sitemap>/gi
      : /<url(?:\s[^>]*)?>([\s\S]*?)<\/url>/gi;
    for (const m of body.matchAll(blockRe)) {
      const block = m[1] ?? '';
      const loc = childText(block, 'loc');
      const url = loc ? canonicalizeUrl(loc, base) : null;
      if (!url) continue;
      const lastmod = childText(block, 'lastmod');
      entries.push(lastmod ? { url, lastmod } : { url });
    }
    return { kind: isIndex ? 'index' : 'urlset', entries };
  }
  if (/^\s*</.test(body)) return { kind: 'unknown', entries };
  for (const line of body.split(/\r?\n/)) {
    const t = line.trim();
    if (!/^https?:\/\//i.test(t)) continue;
    const url = canonicalizeUrl(t);
    if (url) entries.push({ url });
  }
  return { kind: entries.length > 0 ? 'text' : 'unknown', entries };
}

interface SitemapDiscoveryOptions {
  /** Any URL of the site: the usual locations are tried on its origin. */
  siteUrl: string;
  /** Sitemaps listed in robots.txt. */
  listed?: readonly string[];
  /** Stop after this many page URLs (default 10,000). */
  maxUrls?: number;
  /** Stop after reading this many sitemap documents, indexes included (default 50). */
  maxSitemaps?: number;
  /** Per-document size cap, decompressed (default 50 MiB, the protocol's maximum). */
  maxBytes?: number;
  signal?: AbortSignal;
  /**
   * robots.txt's verdict: the usual locations it disallows are not tried (sitemaps robots.txt lists, and
   * those a sitemap index names, are offered by the site and always read).
   */
  robotsAllows?: (url: string) => boolean;
}

interface SitemapDiscovery {
  /** Page entries, deduplicated by URL key, in document order. */
  entries: SitemapEntry[];
  /** Sitemap documents read. */
  sitemaps: string[];
  /** True when a bound (URLs or sitemaps) stopped discovery early. */
  truncated: boolean;
  /** Sitemaps that could not be read, with why (404s of the usual locations are not errors). */
  errors: Array<{ url: string; message: string }>;
}

/**
 * Reads the site's sitemaps breadth first: robots.txt's list plus {@link USUAL_SITEMAP_PATHS}, following
 * sitemap indexes, within the bounds. Failures of single sitemaps, policy refusals
 * ({@link OutboundBlockedError}) included, are collected in `errors`, not thrown; aborts are rethrown.
 */
export async function discoverSitemaps(
  fetch: OutboundFetch,
  opts: SitemapDiscoveryOptions,
): Promise<SitemapDiscovery> {
  const maxUrls = opts.maxUrls ?? 10_000;
  const maxSitemaps = opts.maxSitemaps ?? 50;
  const maxBytes = opts.maxBytes ?? 50 * 1024 * 1024;
  const usual = new Set<string>();
  for (const p of USUAL_SITEMAP_PATHS) {
    const u = new URL(p, opts.siteUrl).href;
    if (opts.robotsAllows?.(u) ?? true) usual.add(u);
  }
  const queue: string[] = [];
  const queued = new Set<string>();
  const enqueue = (u: string) => {
    const c = canonicalizeUrl(u);
    if (c && !queued.has(c)) {
      queued.add(c);
      queue.push(c);
    }
  };
  for (const u of opts.listed ?? []) enqueue(u);
  for (const u of usual) enqueue(u);

  const result: SitemapDiscovery = { entries: [], sitemaps: [], truncated: false, errors: [] };
  const seenPages = new Set<string>();

  while (queue.length > 0) {
    if (result.sitemaps.length >= maxSitemaps || result.entries.length >= maxUrls) {
      result.truncated = true;
      break;
    }
    const sitemapUrl = queue.shift()!;
    let body: string;
    try {
      const res = await fetch(sitemapUrl, {
        signal: opts.signal,
        maxBytes,
        headers: { accept: 'application/xml, text/xml, text/plain;q=0.9, */*;q=0.5' },
      });
      if (res.status < 200 || res.status >= 300) {
        if (!(usual.has(sitemapUrl) && (res.status === 404 || res.status === 410))) {
          result.errors.push({ url: sitemapUrl, message: `HTTP ${res.status}` });
        }
        continue;
      }
      result.sitemaps.push(sitemapUrl);
      body = decodeBody(res.body, maxBytes);
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      // A refused sitemap (say, one listed at a private address) is skipped like any unreadable one.
      const message = err instanceof Error ? err.message : String(err);
      result.errors.push({
        url: sitemapUrl,
        message: err instanceof OutboundBlockedError ? `blocked: ${message}` : message,
      });
      continue;
    }
    const parsed = parseSitemap(body, sitemapUrl);
    if (parsed.kind === 'index') {
      for (const e of parsed.entries) enqueue(e.url);
      continue;
    }
    if (parsed.kind === 'unknown' && !usual.has(sitemapUrl)) {
      result.errors.push({ url: sitemapUrl, message: 'not a sitemap' });
    }
    for (const e of parsed.entries) {
      const key = urlKey(e.url);
      if (!key || seenPages.has(key)) continue;
      if (result.entries.length >= maxUrls) {
        result.truncated = true;
        break;
      }
      seenPages.add(key);
      result.entries.push(e);
    }
  }
  return result;
}

/** Gzipped sitemaps (`.xml.gz`, served without content-encoding) are recognised by their magic bytes. */
function decodeBody(body: Buffer, maxBytes: number): string {
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) {
    try {
      return gunzipSync(body, { maxOutputLength: maxBytes }).toString('utf8');
    } catch (err) {
      throw new Error(`cannot decompress sitemap: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return body.toString('utf8');
}
