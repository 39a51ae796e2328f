/**
 * The schema-driven API fuzzer, shared by `test/ops/fuzz.test.ts` (2,000 requests per route,
 * PGlite) and `bench/fuzz.ts` (20,000 per route, both storage modes).
 *
 * It reads the service's own `/openapi.json`, and for every path and method builds a seeded fast-check
 * generator from the route's JSON schemas: valid requests (realistic values, ids of rows that exist:
 * items, connections, crawl jobs, organizations, keys, OAuth states and secrets, of the caller's
 * organization and of the other one) and mutated ones (missing, extra and wrongly typed fields, NUL and
 * control characters, lone surrogates, bad percent-encodings, over-long strings and query strings, absurd
 * numbers, deep nesting, huge arrays, wrong content types and charsets, invalid UTF-8 bodies, duplicated
 * query keys, missing, malformed, revoked and other organizations' keys, wrong methods and paths).
 *
 * Each answer is checked: status below 500 and in the API's table (API.md "Errors"); every 4xx body is
 * JSON with string `error` (a code whose status is the answer's) and `message`, nothing else unless the
 * route documents it (`jobId` of 409 sync_in_progress), no stack trace or SQL, and no more than 300
 * characters of the request echoed. The database is fingerprinted ({@link fingerprinter}: rows written
 * per table, and row counts with a hash over every table the migrations create) around each rejected
 * request to a mutating route, and around each batch of requests to a read-only route: a rejected request
 * that changed it is a failure. A request with organization B's key (naming A's ids, mostly) must not
 * change any row of A, whatever it answers. Before any fixture exists, each route first gets a few
 * requests on the fresh installation (what a first use writes).
 *
 * Requests go through `app.inject` (no sockets). No worker runs, so run-sync and crawl requests only queue
 * jobs; connections and OAuth consents talk to a stub source on loopback that accepts one Notion token
 * and grants codes starting with `good` (so creating a `notes` connection and completing a consent can
 * succeed) and refuses everything else.
 * Search runs against a deterministic hashing embedder (32 dimensions), so valid searches run the real
 * SQL (vector, keyword and hybrid, with every filter) instead of stopping at `503 unavailable`.
 *
 * No route is skipped: none waits on a long external call here (sources are the loopback stub, crawls and
 * syncs only queue), and the admin API is enabled with a token of its own. Beside the document's routes
 * it fuzzes `/openapi.json`, the docs UI's files (`/docs/static/*`: path traversal), the console's shell
 * and files (`/console/*`, `/console/assets/*`) and routes that do not exist. `/mcp` is not in the
 * document and not fuzzed here: it speaks MCP (JSON-RPC 2.0), whose protocol errors are JSON-RPC error
 * objects with the transport's statuses (406, 405, 400 parse errors), not the API's `{error, message}`;
 * only its 401 for a missing or bad key is in the API's shape. Its tools
 * reach the service through these same routes (in-process, with the caller's key), so what they can do
 * is fuzzed here; test/mcp/http.test.ts checks /mcp's own answers to malformed requests.
 *
 * Reproduce a failure with the seed and route it prints: `KB_FUZZ_SEED=<seed> KB_FUZZ_ROUTES='<METHOD
 * path>'` (the request sequence of a route depends only on the seed and the route; the ids it resolves
 * to depend on the requests before it).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { registeredConnectors } from '../../src/connectors/registry.ts';
import type { Database } from '../../src/db/database.ts';
import { upsertConnection } from '../../src/db/repositories/connections.ts';
import type { Embedder } from '../../src/embedding/index.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import { NO_NUL_PATTERN } from '../../src/http/text-guard.ts';
import { ERROR_STATUS } from '../../src/lib/errors.ts';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.ts';
import { type StorageMode, startTestApp, type TestApp } from './harness.ts';

// ---------------------------------------------------------------------------------------------------
// Options and results
// ---------------------------------------------------------------------------------------------------

export interface FuzzOptions {
  mode: StorageMode;
  /** Requests per route. */
  runs: number;
  seed: number;
  /** Only these routes (`METHOD path` as printed); all when empty. */
  routes?: string[];
  /** Requests per generated batch (default 200): fixtures are topped up between batches. */
  batch?: number;
  /** Stop collecting after this many failures (the run goes on, counting). */
  maxFailures?: number;
  /** Called after each route. */
  onRoute?(stats: RouteStats): void;
  /** PGlite on a data directory on disk (as the service runs it) instead of in memory: the bench. */
  pglitePersistent?: boolean;
}

export interface RouteStats {
  route: string;
  requests: number;
  /** Answers by status. */
  statuses: Map<number, number>;
  ms: number;
}

export interface PrintableRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The body as UTF-8 text, or base64 (`bodyBase64`) when it is not valid UTF-8. */
  body?: string;
  bodyBase64?: string;
  /** What the generator did to a valid request (`valid` when nothing). */
  mutation: string;
}

export interface FuzzFailure {
  seed: number;
  route: string;
  /** Index of the request in the route's sequence (or the first of a batch). */
  index: number;
  problem: string;
  request: PrintableRequest;
  status?: number;
  response?: string;
}

export interface FuzzResult {
  mode: StorageMode;
  seed: number;
  stats: RouteStats[];
  failures: FuzzFailure[];
  /** Failures beyond maxFailures, counted but not kept. */
  moreFailures: number;
  /** Statuses a route answered to valid requests that its OpenAPI entry does not list. */
  undocumented: Map<string, Set<number>>;
  /** Where the time went: generating requests, the app answering, fingerprints, fixtures. */
  timing: { generateMs: number; injectMs: number; fingerprintMs: number; fixturesMs: number };
}

export const DEFAULT_SEED = 20_260_413;

/** KB_FUZZ_SEED, else the fixed default. */
export function fuzzSeed(): number {
  const given = process.env['KB_FUZZ_SEED'];
  if (given === undefined || given === '') return DEFAULT_SEED;
  const n = Number(given);
  if (!Number.isSafeInteger(n)) throw new Error(`KB_FUZZ_SEED must be an integer, not ${given}`);
  return n;
}

/** KB_FUZZ_ROUTES: `METHOD path` entries separated by commas. */
export function fuzzRouteFilter(): string[] {
  return (process.env['KB_FUZZ_ROUTES'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

// ---------------------------------------------------------------------------------------------------
// The target: the app, a stub source, a hashing embedder, fixtures
// ---------------------------------------------------------------------------------------------------

const ADMIN_TOKEN = 'fuzz-admin-token-0123456789abcdef';
/** The one token the stub source accepts (Notion's `/v1/users/me`). */
const GOOD_SOURCE_TOKEN = 'ntn_fuzz_good_token_0123456789';
const PUBLIC_URL = 'https://kb.fuzz.test';
/** Small body limits make the over-limit cases cheap to send (the defaults are 1 and 16 MiB). */
const BODY_LIMIT = 64 * 1024;
const BULK_BODY_LIMIT = 256 * 1024;
const TAGS = ['alpha', 'beta', 'gamma', 'docs', 'faq', 'Ünïcode', 'a b', 'x'.repeat(100)];
const WORDS = [
  'refund',
  'policy',
  'shipping',
  'invoice',
  'password',
  'reset',
  'account',
  'billing',
  'search',
  'vector',
  'crawl',
  'sitemap',
  'robots',
  'markdown',
  'token',
  'webhook',
  'pagination',
  'café',
  'naïve',
  'données',
  '検索',
  'мир',
  'AND',
  'OR',
  'NOT',
  '&',
  '|',
  '!',
  ':*',
  "'",
  '"',
  '\\',
  '(',
  ')',
  '<->',
  '%',
  '_',
];

/**
 * A deterministic embedder: words hashed into 32 dimensions, L2-normalized. Nothing like a language
 * model, but it makes search run its real statements (HNSW, filters, keyword fusion) under fuzzing.
 */
export class HashingEmbedder implements Embedder {
  readonly modelId = 'fuzz-hashing-32';
  readonly dimensions = 32;
  readonly maxTokens = 512;
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.#vector(t));
  }
  async embedQuery(text: string): Promise<Float32Array> {
    return this.#vector(text);
  }
  countTokens(text: string): number {
    return Math.ceil(text.length / 4) + 2;
  }
  async close(): Promise<void> {}
  #vector(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
      if (!word) continue;
      const h = createHash('sha1').update(word).digest();
      v[h[0]! % this.dimensions]! += h[1]! & 1 ? 1 : -1;
    }
    let norm = Math.hypot(...v);
    if (norm === 0) {
      v[0] = 1;
      norm = 1;
    }
    for (let i = 0; i < v.length; i++) v[i]! /= norm;
    return v;
  }
}

/**
 * The stub behind every source's base URL (and OAuth base URL): Notion's `/v1/users/me` with the good
 * token, a token endpoint that grants codes starting with `good`, and 401 for everything else.
 */
async function startStubSource(): Promise<FakeServer> {
  return startFakeServer((req) => {
    if (req.method === 'POST' && req.path.endsWith('/oauth/token')) {
      let code = '';
      try {
        code = String((JSON.parse(req.body) as { code?: unknown }).code ?? '');
      } catch {
        code = new URLSearchParams(req.body).get('code') ?? '';
      }
      if (!code.startsWith('good')) {
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid code.' } };
      }
      return {
        status: 200,
        body: {
          access_token: GOOD_SOURCE_TOKEN,
          token_type: 'bearer',
          refresh_token: null,
          bot_id: 'b3414d65-1224-4ff7-8ffa-c06674a8f8a2',
          workspace_name: 'Fuzz Docs',
          workspace_id: '9f1b5b4e-4d58-4a3b-9e69-0a3c2d2e7f11',
          owner: { type: 'workspace', workspace: true },
        },
      };
    }
    const auth = String(req.headers['authorization'] ?? '');
    if (req.method === 'GET' && req.path === '/v1/users/me' && auth === `Bearer ${GOOD_SOURCE_TOKEN}`) {
      return {
        status: 200,
        body: {
          object: 'user',
          id: 'b3414d65-1224-4ff7-8ffa-c06674a8f8a2',
          name: 'KB Connector',
          avatar_url: null,
          type: 'bot',
          bot: { owner: { type: 'workspace', workspace: true }, workspace_name: 'Fuzz Docs' },
        },
      };
    }
    return {
      status: 401,
      body: { object: 'error', status: 401, code: 'unauthorized', message: 'Unauthorized.' },
    };
  });
}

/** Every base-URL and OAuth setting the registered sources declare, pointed at the stub. */
export function sourceSettings(stubUrl: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const c of registeredConnectors) {
    if (c.baseUrlSetting) settings[c.baseUrlSetting] = stubUrl;
    const o = c.oauth?.settings;
    if (o) {
      settings[o.baseUrl] = stubUrl;
      settings[o.clientId] = `fuzz-client-${c.type}`;
      settings[o.clientSecret] = `fuzz-secret-${c.type}-0123456789`;
    }
  }
  return settings;
}

type OrgKey = 'A' | 'B';

/** Ids of rows that exist (or existed), per organization, for valid requests to name. */
interface OrgPools {
  items: string[];
  connections: string[];
  crawls: string[];
  secrets: string[];
  states: string[];
}

interface Pools {
  A: OrgPools;
  B: OrgPools;
  /** Organization ids (A, B and those the admin API made). */
  orgs: string[];
  /** Key ids the admin API may revoke (never A's or B's own keys). */
  keys: string[];
  /** Full API keys made by the admin API, and which of them are revoked. */
  apiKeys: Map<string, string>;
  revoked: string[];
}

const POOL_MAX = 300;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function remember(list: string[], value: string): void {
  if (list.includes(value)) return;
  list.push(value);
  if (list.length > POOL_MAX) list.splice(0, list.length - POOL_MAX);
}

function forget(list: string[], values: readonly unknown[]): void {
  for (const v of values) {
    const i = list.indexOf(String(v));
    if (i >= 0) list.splice(i, 1);
  }
}

function emptyOrgPools(): OrgPools {
  return { items: [], connections: [], crawls: [], secrets: [], states: [] };
}

interface Target {
  t: TestApp;
  stub: FakeServer;
  openapi: OpenApiDoc;
  pools: Pools;
  keyOf: Record<OrgKey, string>;
  orgIdOf: Record<OrgKey, string>;
  fingerprint(full: boolean): Promise<Fingerprint>;
  /**
   * Tops the fixtures up: `items` per organization, `states` open consents for A (a third for B); the
   * routes that use them up ask for more.
   */
  replenish(needs?: { items?: number; states?: number }): Promise<void>;
  close(): Promise<void>;
}

/** Items per organization beyond which replenish() removes the oldest the fuzzer created. */
const ITEMS_KEPT = 100;

async function startTarget(mode: StorageMode, persistent: boolean): Promise<Target> {
  const stub = await startStubSource();
  const dir = persistent && mode === 'pglite' ? mkdtempSync(path.join(tmpdir(), 'kb-fuzz-')) : null;
  const t = await startTestApp(mode, {
    ...(dir ? { pgliteDir: path.join(dir, 'pgdata') } : {}),
    config: {
      KB_ADMIN_TOKEN: ADMIN_TOKEN,
      KB_CRAWL_ALLOW_PRIVATE: 'true',
      KB_PUBLIC_URL: PUBLIC_URL,
      KB_BODY_LIMIT_BYTES: String(BODY_LIMIT),
      KB_BULK_BODY_LIMIT_BYTES: String(BULK_BODY_LIMIT),
      ...sourceSettings(stub.url),
    },
  });
  const embedder = new HashingEmbedder();
  await t.service.embedding.use(embedder);
  const indexer = new Indexer(t.db, embedder);
  const openapi = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApiDoc;
  const pools: Pools = {
    A: emptyOrgPools(),
    B: emptyOrgPools(),
    orgs: [t.orgA.id, t.orgB.id],
    keys: [],
    apiKeys: new Map(),
    revoked: [],
  };
  const keyOf = { A: t.orgA.key, B: t.orgB.key };
  const orgIdOf = { A: t.orgA.id, B: t.orgB.id };
  const fingerprint = await fingerprinter(t.db, [t.orgA.id]);

  const call = async (org: OrgKey, method: 'POST', url: string, body: unknown) => {
    const res = await t.call(method, url, { key: keyOf[org], body });
    if (res.status !== 200)
      throw new Error(`fixture ${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  /** Rows valid requests can name; topped up between batches, since fuzzing deletes them. */
  const replenish = async ({ items = 8, states = 3 }: { items?: number; states?: number } = {}) => {
    for (const org of ['A', 'B'] as const) {
      const p = pools[org];
      // Items the fuzzer creates (uploads, bulk uploads) pile up, and every later route then lists, searches
      // and indexes more: beyond ITEMS_KEPT per organization the oldest that no pool names go, so a route's
      // cost stays flat over the run (fixtures took 5.9 s at 400 requests a route, 103 s at 2,000).
      await t.db.query(
        `DELETE FROM items WHERE id IN (
           SELECT id FROM items WHERE organization_id = $1 AND id <> ALL($2::text[])
            ORDER BY created_at DESC, seq DESC OFFSET $3)`,
        [orgIdOf[org], p.items, ITEMS_KEPT],
      );
      const live = await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM items WHERE organization_id = $1',
        [orgIdOf[org]],
      );
      for (let i = live[0]!.n; i < items; i++) {
        const w = (k: number) => WORDS[(i + k) % WORDS.length]!;
        const body = await call(org, 'POST', '/api/connect/knowledgebase-items', {
          title: `${w(0)} ${w(3)} guide`,
          content: `# ${w(0)}\n\n${[0, 1, 2, 3, 4, 5, 6, 7].map(w).join(' ')}. ${WORDS.slice(0, 20).join(' ')}.`,
          tags: [TAGS[i % TAGS.length]!, TAGS[(i + 1) % TAGS.length]!],
          visibility: i % 3 === 0 ? 'private' : 'public',
        });
        remember(p.items, body.item.id);
      }
      const conns = await t.db.query<{ id: string; type: string }>(
        'SELECT id, type FROM connections WHERE organization_id = $1',
        [orgIdOf[org]],
      );
      // notes through the API (the stub accepts its token); support_desk and wiki written directly, since
      // the stub refuses their credentials.
      if (!conns.some((c) => c.type === 'notes')) {
        const body = await call(org, 'POST', '/api/connect/connection', {
          source: { type: 'notes', access_token: GOOD_SOURCE_TOKEN },
        });
        remember(p.connections, body.connectionId);
      }
      for (const type of ['support_desk', 'wiki']) {
        if (conns.some((c) => c.type === type)) continue;
        const { id } = await t.db.transaction((tx) =>
          upsertConnection(tx, {
            organizationId: orgIdOf[org],
            type,
            encrypt: (cid) => t.service.appDeps.sources.encryptCredentials(cid, { fuzz: true }),
          }),
        );
        remember(p.connections, id);
      }
      for (const c of conns) remember(p.connections, c.id);
      if (p.crawls.length < 3) {
        const body = await call(org, 'POST', '/api/connect/crawling/', {
          url: 'https://docs.example.com/start',
        });
        remember(p.crawls, body.id);
      }
      // Consents of every OAuth source; B's send the browser on to a redirectUri (a 302 at the callback).
      const oauthSources = registeredConnectors.filter((c) => c.oauth);
      for (
        let i = 0;
        p.states.length < (org === 'A' ? states : Math.ceil(states / 3)) && oauthSources.length;
        i++
      ) {
        const source = oauthSources[i % oauthSources.length]!;
        const body = await call(org, 'POST', '/api/connect/oauth/initiate', {
          type: source.type,
          ...(org === 'B' ? { redirectUri: 'https://app.example.com/connected' } : {}),
          ...(source.oauth?.tenant ? { [source.oauth.tenant.field]: 'acme' } : {}),
        });
        rememberConsent(p, body);
      }
    }
    await indexer.drain();
  };
  return {
    t,
    stub,
    openapi,
    pools,
    keyOf,
    orgIdOf,
    fingerprint,
    replenish,
    async close() {
      await t.close();
      await stub.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function rememberConsent(p: OrgPools, body: { consentUrl?: string; secretId?: string }): void {
  if (body.secretId) remember(p.secrets, body.secretId);
  const state = body.consentUrl ? new URL(body.consentUrl).searchParams.get('state') : null;
  if (state) remember(p.states, state);
}

// ---------------------------------------------------------------------------------------------------
// The database fingerprint
// ---------------------------------------------------------------------------------------------------

/** Columns a change of which is not a change: the auth hook records a key's use (once a minute) whatever the answer. */
const BOOKKEEPING = ['api_keys.last_used_at'];
/** Bulky columns left out of the content hash: content_hash and updated_at change with them. */
const HASH_SKIP = new Set([...BOOKKEEPING, 'items.content', 'chunks.text', 'chunks.embedding', 'chunks.tsv']);

/** The tables the migrations create, in order. */
export function migrationTables(): string[] {
  const dir = new URL('../../src/db/migrations/', import.meta.url);
  const tables: string[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    for (const m of readFileSync(new URL(file, dir), 'utf8').matchAll(
      /CREATE TABLE (?:IF NOT EXISTS )?(\w+)/gi,
    )) {
      if (!tables.includes(m[1]!)) tables.push(m[1]!);
    }
  }
  return tables;
}

/** Per table: rows written (inserted, updated to other values, deleted) and, when taken in full, count and hash. */
interface Fingerprint {
  writes: Map<string, string>;
  rows?: Map<string, string>;
}

/**
 * The database fingerprint, two ways, over every table the migrations create:
 * - in full (`full`): per table its row count and an order-independent hash over every row's columns (a
 *   sum of per-row hashes, so no sort), one statement. It costs a scan of every table, which grows as the
 *   fuzzer creates rows: taken around each batch of read-only requests and each route;
 * - per request: rows written per table, counted by row triggers into `kb_fuzz.writes` (in the writing
 *   transaction, so a rolled-back write counts nothing; an UPDATE to the same values counts nothing),
 *   and apart (`<table>@<organization id>`) the rows of the `watched` organizations.
 *   Reading it is one small query however large the tables, so every rejected request to a mutating
 *   route is checked on its own.
 * Both live in a schema of their own (`kb_fuzz`), outside the tables they watch; the statements are in
 * PL/pgSQL functions, planned once per connection rather than on every call (5x faster on PGlite).
 */
async function fingerprinter(
  db: Database,
  watched: string[],
): Promise<(full: boolean) => Promise<Fingerprint>> {
  const tables = migrationTables();
  const cols = await db.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ANY($1::text[]) ORDER BY table_name, ordinal_position`,
    [tables],
  );
  const parts = tables.map((table) => {
    const names = cols
      .filter((c) => c.table_name === table && !HASH_SKIP.has(`${table}.${c.column_name}`))
      .map((c) => `x.${c.column_name}`);
    if (names.length === 0)
      throw new Error(`fingerprint: table ${table} has no columns (migrations changed?)`);
    return `SELECT '${table}'::text AS t, count(*)::text || ':' || coalesce(sum(hashtextextended(ROW(${names.join(', ')})::text, 0)::numeric), 0)::text AS h FROM ${table} x`;
  });
  const triggers = tables.map((table) => {
    const ignore = BOOKKEEPING.filter((c) => c.startsWith(`${table}.`)).map((c) => `'${c.split('.')[1]}'`);
    return `CREATE TRIGGER kb_fuzz_writes AFTER INSERT OR UPDATE OR DELETE ON ${table}
              FOR EACH ROW EXECUTE FUNCTION kb_fuzz.count_write(${ignore.join(', ')});`;
  });
  await db.exec(
    `CREATE SCHEMA IF NOT EXISTS kb_fuzz;
     CREATE TABLE kb_fuzz.writes (t text PRIMARY KEY, n bigint NOT NULL);
     CREATE TABLE kb_fuzz.watched (org text PRIMARY KEY);
     CREATE FUNCTION kb_fuzz.count_write() RETURNS trigger LANGUAGE plpgsql AS $w$
     DECLARE
       row_org text := (CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END) ->> 'organization_id';
     BEGIN
       IF TG_OP = 'UPDATE' AND (to_jsonb(OLD) - TG_ARGV) = (to_jsonb(NEW) - TG_ARGV) THEN RETURN NULL; END IF;
       INSERT INTO kb_fuzz.writes VALUES (TG_TABLE_NAME, 1) ON CONFLICT (t) DO UPDATE SET n = kb_fuzz.writes.n + 1;
       IF row_org IS NOT NULL AND EXISTS (SELECT 1 FROM kb_fuzz.watched w WHERE w.org = row_org) THEN
         INSERT INTO kb_fuzz.writes VALUES (TG_TABLE_NAME || '@' || row_org, 1)
           ON CONFLICT (t) DO UPDATE SET n = kb_fuzz.writes.n + 1;
       END IF;
       RETURN NULL;
     END $w$;
     ${triggers.join('\n')}
     CREATE FUNCTION kb_fuzz.fingerprint() RETURNS TABLE (t text, h text) LANGUAGE plpgsql AS $fp$
     BEGIN RETURN QUERY ${parts.join('\nUNION ALL\n')}; END $fp$;`,
  );
  await db.query('INSERT INTO kb_fuzz.watched SELECT unnest($1::text[])', [watched]);
  return async (full) => {
    const writes = new Map(
      (await db.query<{ t: string; n: string }>('SELECT t, n::text AS n FROM kb_fuzz.writes')).map((r) => [
        r.t,
        r.n,
      ]),
    );
    if (!full) return { writes };
    const rows = new Map(
      (await db.query<{ t: string; h: string }>('SELECT * FROM kb_fuzz.fingerprint()')).map((r) => [
        r.t,
        r.h,
      ]),
    );
    return { writes, rows };
  };
}

/** Tables in which rows of organization `org` were written between two fingerprints. */
function organizationWrites(before: Fingerprint, after: Fingerprint, org: string): string[] {
  const suffix = `@${org}`;
  return [...after.writes]
    .filter(([key, n]) => key.endsWith(suffix) && before.writes.get(key) !== n)
    .map(
      ([key, n]) =>
        `${key.slice(0, -suffix.length)} (${Number(n) - Number(before.writes.get(key) ?? 0)} rows)`,
    );
}

/** Tables that changed between two fingerprints (rows written, or, when both are full, contents), less `allowed`. */
function fingerprintDiff(before: Fingerprint, after: Fingerprint, allowed: ReadonlySet<string>): string[] {
  const changed = new Set<string>();
  for (const [table, n] of after.writes)
    if (!table.includes('@') && before.writes.get(table) !== n) changed.add(table);
  if (before.rows && after.rows) {
    for (const [table, h] of after.rows) if (before.rows.get(table) !== h) changed.add(table);
  }
  return [...changed]
    .filter((t) => !allowed.has(t))
    .map((t) => {
      const w = Number(after.writes.get(t) ?? 0) - Number(before.writes.get(t) ?? 0);
      const rows = before.rows && after.rows ? `, rows ${before.rows.get(t)} -> ${after.rows.get(t)}` : '';
      return `${t} (${w} rows written${rows})`;
    });
}

// ---------------------------------------------------------------------------------------------------
// Routes from the OpenAPI document
// ---------------------------------------------------------------------------------------------------

type Schema = Record<string, any>;

interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
  security?: Array<Record<string, string[]>>;
}

interface OpenApiOperation {
  parameters?: Array<{ in: string; name: string; required?: boolean; schema: Schema }>;
  requestBody?: { content?: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema: Schema }> }>;
  security?: Array<Record<string, string[]>>;
}

type AuthKind = 'apiKey' | 'admin' | 'none';

interface Route {
  key: string;
  method: string;
  /** OpenAPI form: `/api/connect/crawling/{id}`. */
  path: string;
  pathParams: Array<{ name: string; schema: Schema }>;
  queryParams: Array<{ name: string; required: boolean; schema: Schema }>;
  body: Schema | undefined;
  auth: AuthKind;
  /** Statuses the OpenAPI entry lists. */
  documented: Set<number>;
  /** Extra fields the documented error bodies may carry, by status. */
  errorExtras: Map<number, Set<string>>;
  /** Writes to the database on purpose (so each rejected request is fingerprinted on its own). */
  mutating: boolean;
  /** Tables a rejected request to this route may change, by design. */
  mayChangeOnReject: ReadonlySet<string>;
  /** Not in the OpenAPI document (the document itself, the docs UI, unknown routes). */
  extra?: 'static' | 'unknown';
}

/**
 * Routes no request may change the database through, although a rejected one does by design:
 * the OAuth callback consumes its single-use state before exchanging the code (a failed exchange must
 * not leave the state replayable), so a rejected callback may change `oauth_states`.
 */
const CALLBACK = 'GET /api/connect/oauth/callback';
/** Fixtures the routes that use them up need per batch (so their valid requests keep naming live rows). */
const ROUTE_NEEDS = (batch: number): Record<string, { items?: number; states?: number }> => ({
  [CALLBACK]: { states: batch / 2 },
  'DELETE /api/connect/knowledgebase-items': { items: batch / 5 },
});
const MAY_CHANGE_ON_REJECT: Record<string, string[]> = { [CALLBACK]: ['oauth_states'] };

function deref(doc: OpenApiDoc, schema: Schema | undefined): Schema {
  let s = schema ?? {};
  for (let i = 0; i < 10 && typeof s['$ref'] === 'string'; i++) {
    const name = (s['$ref'] as string).replace('#/components/schemas/', '');
    s = doc.components?.schemas?.[name] ?? {};
  }
  return s;
}

function routesOf(doc: OpenApiDoc): Route[] {
  const routes: Route[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      const method = m.toUpperCase();
      const key = `${method} ${path}`;
      const security = op.security ?? doc.security ?? [];
      const auth: AuthKind = security.some((s) => 'adminToken' in s)
        ? 'admin'
        : security.some((s) => 'apiKey' in s)
          ? 'apiKey'
          : 'none';
      const params = op.parameters ?? [];
      const errorExtras = new Map<number, Set<string>>();
      for (const [status, r] of Object.entries(op.responses ?? {})) {
        const schema = deref(doc, r.content?.['application/json']?.schema);
        const props = Object.keys(schema['properties'] ?? {}).filter((p) => p !== 'error' && p !== 'message');
        errorExtras.set(Number(status), new Set(props));
      }
      routes.push({
        key,
        method,
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: p.schema })),
        queryParams: params
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, required: p.required === true, schema: p.schema })),
        body: op.requestBody?.content?.['application/json']?.schema,
        auth,
        documented: new Set(Object.keys(op.responses ?? {}).map(Number)),
        errorExtras,
        mutating: method !== 'GET' || key in MAY_CHANGE_ON_REJECT,
        mayChangeOnReject: new Set(MAY_CHANGE_ON_REJECT[key] ?? []),
      });
    }
  }
  // Outside the document: the document itself, the docs UI and its files, and routes that do not exist.
  const extra = (key: string, kind: 'static' | 'unknown', path: string, params: string[] = []): Route => ({
    key,
    method: key.split(' ')[0]!,
    path,
    pathParams: params.map((name) => ({ name, schema: { type: 'string' } })),
    queryParams: [],
    body: undefined,
    auth: 'none',
    documented: new Set([200, 302, 304, 404]),
    errorExtras: new Map(),
    mutating: false,
    mayChangeOnReject: new Set(),
    extra: kind,
  });
  routes.push(extra('GET /openapi.json', 'static', '/openapi.json'));
  routes.push(extra('GET /docs/static/{file}', 'static', '/docs/static/{file}', ['file']));
  // The console: its shell at any path under /console (client-side routes), and its hashed files.
  routes.push(extra('GET /console/{page}', 'static', '/console/{page}', ['page']));
  routes.push(extra('GET /console/assets/{file}', 'static', '/console/assets/{file}', ['file']));
  routes.push(extra('ANY /{unknown}', 'unknown', '/{unknown}', ['unknown']));
  return routes;
}

// ---------------------------------------------------------------------------------------------------
// Abstract requests: what the generators produce, before ids are resolved and bytes are written
// ---------------------------------------------------------------------------------------------------

/** An id to resolve against the pools when the request is sent (so it names a row that exists). */
class Ref {
  readonly kind: 'item' | 'connection' | 'crawl' | 'secret' | 'state' | 'org' | 'key' | 'orgId';
  readonly n: number;
  /** The other organization's row (which must behave as if it did not exist). */
  readonly other: boolean;
  constructor(kind: Ref['kind'], n: number, other: boolean) {
    this.kind = kind;
    this.n = n;
    this.other = other;
  }
}

/** JSON text written as is (numbers JSON.stringify cannot write, deep nesting). */
class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** A path segment or query string written as is (already percent-encoded, or deliberately not). */
type Raw = { raw: string };

type Auth =
  | { kind: 'own' }
  | { kind: 'other' }
  | { kind: 'none' }
  | { kind: 'header'; value: string }
  | { kind: 'revoked' }
  | { kind: 'admin' };

interface AbstractRequest {
  method: string;
  path: string;
  params: Record<string, unknown | Raw>;
  query: Array<[string, unknown]>;
  /** Appended to the query string as is. */
  rawQuery?: string;
  /** Replaces the whole path (and query) when set. */
  rawUrl?: string;
  body?: { json: unknown } | { bytes: Buffer };
  /** undefined: application/json when there is a body; null: no content-type header. */
  contentType?: string | null;
  auth: Auth;
  /** Extra headers (mutations). */
  headers?: Record<string, string>;
  mutation: string;
}

interface ConcreteRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: Buffer;
  mutation: string;
  /** The organization whose key the request carries (A, or B for `asOtherOrganization`). */
  org: OrgKey;
  /** Sent with organization B's key: it must not change any row of organization A. */
  asOtherOrganization: boolean;
}

// ---------------------------------------------------------------------------------------------------
// Generators from JSON schemas
// ---------------------------------------------------------------------------------------------------

const wordArb = fc.constantFrom(...WORDS);
const textArb = (min: number, max: number) =>
  fc
    .array(wordArb, { minLength: 1, maxLength: 8 })
    .map((ws) => ws.join(' '))
    .map((s) => (s.length > max ? s.slice(0, max) : s.length < min ? s.padEnd(min, 'x') : s));

function refArb(kind: Ref['kind'], otherWeight = 1): fc.Arbitrary<Ref> {
  return fc.tuple(fc.nat(), fc.nat(9)).map(([n, o]) => new Ref(kind, n, o < otherWeight));
}

const urlArb = fc
  .tuple(
    fc.constantFrom(
      'https://docs.example.com',
      'http://127.0.0.1:9',
      'https://example.org',
      'HTTPS://Example.COM:443',
    ),
    fc.array(fc.constantFrom('docs', 'guide', 'a b', 'ü', '%20', 'index.html', '..', 'x?y=1', '#frag'), {
      maxLength: 3,
    }),
  )
  .map(([origin, segs]) => `${origin}/${segs.join('/')}`);

/** Values for fields whose names say what they hold: ids of real rows, tokens the stub accepts, URLs. */
function hintArb(
  route: Route,
  where: 'body' | 'query' | 'path',
  name: string,
  schema: Schema,
): fc.Arbitrary<unknown> | null {
  if (where === 'path' && name === 'id') {
    if (route.path.includes('/crawling/')) return refArb('crawl');
    if (route.path.startsWith('/api/connect/knowledgebase-items/')) return refArb('item');
    if (route.path.includes('/organizations/')) return fc.oneof(refArb('org', 0), fc.constant('org-a'));
    if (route.path.includes('/keys/')) return refArb('key', 0);
  }
  if (route.extra === 'static' && name === 'file') {
    return fc.constantFrom(
      'index.css',
      'swagger-ui.css',
      'swagger-ui-bundle.js',
      'logo.svg',
      'nope.txt',
      'theme.js',
    );
  }
  if (route.extra === 'unknown')
    return fc.constantFrom(
      'api/connect/nothing',
      'api',
      'api/admin',
      'favicon.ico',
      'docs/json',
      'api/connect/crawling',
    );
  switch (name) {
    case 'ids':
      return fc.array(
        fc.oneof({ weight: 4, arbitrary: refArb('item') }, { weight: 1, arbitrary: textArb(1, 40) }),
        {
          minLength: 1,
          maxLength: 5,
        },
      );
    case 'id':
      if (where === 'body') return refArb('item');
      break;
    case 'connectionId':
      return fc.oneof(
        { weight: 4, arbitrary: refArb('connection') },
        { weight: 1, arbitrary: textArb(1, 40) },
      );
    case 'secretId':
      return fc.oneof({ weight: 4, arbitrary: refArb('secret') }, { weight: 1, arbitrary: textArb(1, 40) });
    case 'tenantId':
      return refArb('orgId', 3);
    case 'state':
      // A consent's state (single use), a forged one of the right form (live or expired), or junk.
      return fc.oneof(
        { weight: 4, arbitrary: refArb('state') },
        {
          weight: 2,
          arbitrary: fc
            .tuple(
              fc.base64String({ minLength: 24, maxLength: 24 }),
              fc.integer({ min: -3600, max: 3600 }),
              fc.base64String({ minLength: 44, maxLength: 44 }),
            )
            .map(([id, ttl, sig]) => {
              const url = (b: string) => b.replaceAll('+', '-').replaceAll('/', '_').replaceAll('=', '');
              return `${url(id).padEnd(16, 'A')}.${Math.floor(Date.now() / 1000) + ttl}.${url(sig)}`;
            }),
        },
        { weight: 1, arbitrary: textArb(1, 60) },
      );
    case 'code':
      return fc.oneof(
        fc.nat().map((n) => `good-${n}`),
        textArb(1, 30),
      );
    case 'error':
    case 'error_description':
      // What a source sends when the user refused consent: now and then.
      if (route.key === CALLBACK)
        return fc.oneof(
          { weight: 5, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: textArb(1, 60) },
        );
      break;
    case 'access_token':
      return fc.oneof(fc.constant(GOOD_SOURCE_TOKEN), textArb(1, 40));
    case 'url':
    case 'source_url':
      return urlArb;
    case 'redirectUri':
      return fc.constantFrom('https://app.example.com/done', 'http://localhost:3000/cb?x=1');
    case 'email':
      return fc.constantFrom('writer@acme.test', 'a@b.co', 'ü@example.com');
    case 'subdomain':
    case 'shop':
    case 'domain_name':
      return fc.constantFrom(
        'acme',
        'acme.zendesk.com',
        'acme.myshopify.com',
        'acme.atlassian.net',
        'docs.acme.com',
      );
    case 'name':
      if (route.path.startsWith('/api/admin')) return fc.nat().map((n) => `fuzz-org-${n}`);
      break;
    case 'tags':
      if (schema['type'] === 'array') return fc.array(fc.constantFrom(...TAGS), { maxLength: 4 });
      break;
    case 'query':
    case 'search':
    case 'title':
      return textArb(1, Math.min(Number(schema['maxLength'] ?? 200), 200));
    case 'content':
      return fc.array(wordArb, { minLength: 1, maxLength: 60 }).map((ws) => ws.join(' '));
  }
  return null;
}

/** Valid text has no NUL (the document's text rule): one becomes a space, the length unchanged. */
function withoutNul(s: string): string {
  return s.replaceAll('\u0000', ' ');
}

function stringArb(schema: Schema): fc.Arbitrary<string> {
  const min = Number(schema['minLength'] ?? 0);
  const max = Math.min(Number(schema['maxLength'] ?? 60), Math.max(min, 60));
  // The document's http(s) URLs carry a pattern of their own; realistic ones (some refused) serve better.
  if (schema['format'] === 'uri') return urlArb;
  // Every request string declares the text rule (no NUL) as its pattern: generated text has none.
  if (typeof schema['pattern'] === 'string' && schema['pattern'] !== NO_NUL_PATTERN) {
    return fc.stringMatching(new RegExp(schema['pattern']));
  }
  if (schema['format'] === 'email') return fc.constant('writer@acme.test');
  return fc.oneof(
    { weight: 3, arbitrary: textArb(min, max) },
    { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: max }).map(withoutNul) },
    { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }).map(withoutNul) },
  );
}

/** A valid value of `schema` (as far as JSON Schema says; refinements the schema cannot carry may fail). */
function valueArb(
  doc: OpenApiDoc,
  route: Route,
  where: 'body' | 'query' | 'path',
  name: string,
  raw: Schema,
): fc.Arbitrary<unknown> {
  const schema = deref(doc, raw);
  const hint = hintArb(route, where, name, schema);
  if (hint) return hint;
  if (schema['const'] !== undefined) return fc.constant(schema['const']);
  if (Array.isArray(schema['enum'])) return fc.constantFrom(...(schema['enum'] as unknown[]));
  // An object's oneOf/anyOf beside its properties are rules between fields (type or connectionId, ...),
  // which the request builders below apply; alone they are the value's alternatives.
  const alternatives = (schema['properties'] ? undefined : (schema['oneOf'] ?? schema['anyOf'])) as
    | Schema[]
    | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((s) => valueArb(doc, route, where, name, s)));
  const type = Array.isArray(schema['type']) ? schema['type'][0] : schema['type'];
  switch (type) {
    case 'string':
      return stringArb(schema);
    case 'integer': {
      const min = Number(schema['minimum'] ?? -1000);
      const max = Number(schema['maximum'] ?? min + 1000);
      return fc.oneof(fc.integer({ min, max: Math.min(max, min + 100) }), fc.integer({ min, max }));
    }
    case 'number':
      return fc.double({
        min: Number(schema['minimum'] ?? -1e6),
        max: Number(schema['maximum'] ?? 1e6),
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = Number(schema['minItems'] ?? 0);
      const max = Math.min(Number(schema['maxItems'] ?? 5), Math.max(min, 5));
      return fc.array(valueArb(doc, route, where, name, schema['items'] ?? {}), {
        minLength: min,
        maxLength: max,
      });
    }
    case 'object': {
      const props = (schema['properties'] ?? {}) as Record<string, Schema>;
      const required = (schema['required'] ?? []) as string[];
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(props)) model[k] = valueArb(doc, route, where, k, s);
      return fc.record(model, { requiredKeys: required });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A valid request of the route (before ids are resolved). */
function validArb(doc: OpenApiDoc, route: Route): fc.Arbitrary<AbstractRequest> {
  const params: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of route.pathParams) params[p.name] = valueArb(doc, route, 'path', p.name, p.schema);
  const query: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of route.queryParams) query[p.name] = valueArb(doc, route, 'query', p.name, p.schema);
  // A source's redirect to the callback always carries both.
  const requiredQuery = route.queryParams
    .filter((p) => p.required || (route.key === CALLBACK && (p.name === 'state' || p.name === 'code')))
    .map((p) => p.name);
  const body = route.body ? valueArb(doc, route, 'body', '', route.body) : fc.constant(undefined);
  const auth: fc.Arbitrary<Auth> =
    route.auth === 'admin'
      ? fc.constant({ kind: 'admin' })
      : route.auth === 'apiKey'
        ? fc.oneof(
            { weight: 4, arbitrary: fc.constant({ kind: 'own' as const }) },
            { weight: 1, arbitrary: fc.constant({ kind: 'other' as const }) },
          )
        : fc.constant({ kind: 'none' });
  const method =
    route.extra === 'unknown'
      ? fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE')
      : fc.constant(route.method);
  return fc
    .record({
      method,
      params: fc.record(params),
      query: fc.record(query, { requiredKeys: requiredQuery }),
      body,
      auth,
    })
    .map((r) => {
      const req: AbstractRequest = {
        method: r.method,
        path: route.path,
        params: r.params,
        query: Object.entries(oneOfEach(r.query)).map(([k, v]) => [k, v] as [string, unknown]),
        auth: r.auth,
        mutation: 'valid',
      };
      if (r.body !== undefined)
        req.body = { json: route.key === INITIATE ? withTenant(r.body) : oneOfEach(r.body) };
      return req;
    });
}

/**
 * Fields of which a request gives exactly one, which JSON Schema here does not say: a connection is
 * named by `type` or by `connectionId` (API.md "Connections"). When a valid request got both, one goes
 * (which one: by the id's draw, so both kinds of request stay).
 */
const EXCLUSIVE: Array<[string, string]> = [['type', 'connectionId']];

const INITIATE = 'POST /api/connect/oauth/initiate';

/**
 * An OAuth initiate body carries the account field (`subdomain`) exactly when its source's consent is per
 * account (the registry says which), which the schema does not say.
 */
function withTenant(body: unknown): unknown {
  if (body === null || typeof body !== 'object') return body;
  const out = { ...(body as Record<string, unknown>) };
  const connector = registeredConnectors.find((c) => c.type === out['type'] || c.alias === out['type']);
  const field = connector?.oauth?.tenant?.field;
  for (const c of registeredConnectors) {
    const f = c.oauth?.tenant?.field;
    if (f && f !== field) delete out[f];
  }
  if (field && out[field] === undefined) out[field] = 'acme';
  return out;
}

function oneOfEach<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out = { ...(value as Record<string, unknown>) };
  for (const [a, b] of EXCLUSIVE) {
    if (out[a] === undefined || out[b] === undefined) continue;
    const draw = out[b] instanceof Ref ? (out[b] as Ref).n : String(out[b]).length;
    delete out[draw % 2 ? a : b];
  }
  return out as T;
}

// ---------------------------------------------------------------------------------------------------
// Mutations
// ---------------------------------------------------------------------------------------------------

const overlong = (n: number) => 'a'.repeat(n);

/** Strings no field should choke on (many are also invalid for the field: that is the point). */
const BAD_STRINGS: Array<() => string> = [
  () => '',
  () => ' ',
  () => '\u0000',
  () => 'a\u0000b',
  () => '\u0001\u0002\u001b[31m\u001f\u007f',
  () => '\t\n\r\u000b\u000c',
  () => '\ud800',
  () => 'x\udfffy',
  () => '\udc00\ud800',
  () => '\u2028\u2029\u0085',
  () => '\ufeff',
  () => '\uffff\ufffe',
  () => '\u{10ffff}\u{1f600}'.repeat(40),
  () => '\u202eevil\u202c',
  () => "'; DROP TABLE items; --",
  () => '%00%zz%',
  () => '../../../etc/passwd',
  () => '<script>alert(1)</script>',
  () => '$' + '{jndi:ldap://x}',
  () => '\\',
  () => '(',
  () => '[',
  () => '*',
  () => '(a+)+$',
  () => '\\p{L}',
  () => 'a:* & !b | (c <-> d)',
  () => overlong(199),
  () => overlong(200),
  () => overlong(201),
  () => overlong(1001),
  () => overlong(2001),
  () => overlong(10_000),
  () => overlong(70_000),
  () => `${'é'.repeat(150)}\u0000`,
  () => '\u0301\u0301\u0301',
  () => 'ǅ ẞ ﬃ İ',
];

/** Numbers (and number-like strings) at the edges. */
const BAD_NUMBERS: Array<() => unknown> = [
  () => 1e308,
  () => -1e308,
  () => -1,
  () => 0,
  () => -0,
  () => 0.5,
  () => 1.5,
  () => 2 ** 31,
  () => 2 ** 53 + 2,
  () => Number.MIN_VALUE,
  () => new RawJson('1e999'),
  () => new RawJson('-1e999'),
  () => new RawJson('1E400'),
  () => new RawJson('100000000000000000000000000000'),
  () => new RawJson('0.0000000000000000000000000001'),
  () => new RawJson('-0.0'),
  () => 'NaN',
  () => 'Infinity',
  () => '-Infinity',
  () => '1e308',
  () => '0x10',
  () => '',
  () => ' 1',
  () => '1',
];

const WRONG_TYPES: Array<() => unknown> = [
  () => null,
  () => true,
  () => false,
  () => 0,
  () => 1,
  () => 'string',
  () => [],
  () => [1, 'a', null],
  () => ({}),
  () => ({ a: 1 }),
  () => [[]],
  () => new RawJson('{"__proto__":{"polluted":true}}'),
];

const EXTRA_KEYS = [
  'extra',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '',
  ' ',
  'ü',
  '\u0000',
  'a'.repeat(300),
];

/** Percent-encodings that decode to nothing valid: a lone or bad escape, NUL, bytes that are not UTF-8. */
const BROKEN_PERCENT = ['%', '%zz', '%00', '%ff', '%c3%28', '%ed%a0%80'];

const BAD_QUERY_VALUES = [
  '',
  '-1',
  '1e308',
  '1.5',
  '0x10',
  '99999999999999999999',
  'NaN',
  '+1',
  ' 1',
  '%20%31',
  '١',
  ...BROKEN_PERCENT,
  '%u0041',
  'a%',
  '%01%02',
  '%0a',
  'true',
  '[]',
  '{}',
  'null',
  'undefined',
  overlong(101),
  overlong(201),
  overlong(501),
  overlong(1999),
  overlong(2001),
  overlong(70_000),
];

const BAD_SEGMENTS = [
  ...BROKEN_PERCENT,
  'a%00b',
  '%01',
  '%2F',
  '%2f..%2f..',
  '..',
  '.',
  '%2e%2e',
  '%20',
  ' ',
  '%F0%9F%98%80',
  'ü',
  '~',
  "'",
  '%27%20OR%201%3D1',
  overlong(201),
  overlong(5000),
  `${overlong(199)}%C3%A9`,
];

const CONTENT_TYPES: Array<string | null> = [
  null,
  'text/plain',
  'text/plain; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=utf-16le',
  'application/json;charset=latin1',
  'application/json; charset=iso-8859-1',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'APPLICATION/JSON',
  'application/json; charset="UTF-8"',
  'application/json; charset=utf8',
  'application/json; charset=',
  'application/vnd.api+json',
  'application/json, text/plain',
  ';;;',
  'application/jsonx',
  'application/json; boundary=1',
  '*/*',
  '',
];

/** Bodies that are not what the API reads: broken JSON, wrong encodings, the wrong kind of value. */
const RAW_BODIES: Array<(valid: string) => Buffer> = [
  () => Buffer.from('{'),
  (v) => Buffer.from(v.slice(0, Math.max(1, Math.floor(v.length / 2)))),
  () => Buffer.from('{"a":1,}'),
  () => Buffer.from("{'a':1}"),
  () => Buffer.from('NaN'),
  () => Buffer.from('null'),
  () => Buffer.from('[]'),
  () => Buffer.from('"x"'),
  () => Buffer.from('0'),
  () => Buffer.from('true'),
  () => Buffer.from('   '),
  () => Buffer.alloc(0),
  (v) => Buffer.from(`${v} trailing`),
  (v) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(v)]),
  (v) => Buffer.from(v, 'utf16le'),
  (v) => Buffer.concat([Buffer.from(v.slice(0, -1)), Buffer.from([0xff, 0xfe]), Buffer.from(v.slice(-1))]),
  () => Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]), // {"a":"<overlong />"}
  () => Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]), // encoded surrogate
  () => Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d]), // truncated sequence
  (v) => Buffer.from(v.replace(/^\{/, '{"limit":1,"limit":"x",')),
  () => Buffer.from('{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}'),
  () => Buffer.from('{"a":"\\u0000"}'),
  () => Buffer.from('{"\\u0000":1}'),
  () => Buffer.from('{"a":"\\ud800"}'),
  () => Buffer.from(`${'['.repeat(100_000)}${']'.repeat(100_000)}`),
  () => Buffer.from(`{"a":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`),
  () => Buffer.from(' '.repeat(BODY_LIMIT + 1)),
  () => Buffer.from(`{"a":"${'x'.repeat(BULK_BODY_LIMIT + 1)}"}`),
];

const MALFORMED_AUTH = [
  'Bearer',
  'Bearer ',
  'Bearer x',
  'Bearer kb_',
  'Bearer kb_0123456789abcdef_',
  'Bearer kb_zzzzzzzzzzzzzzzz_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  'bearer   kb_0000000000000000_x   ',
  `Bearer ${'a'.repeat(10_000)}`,
  'Basic dXNlcjpwYXNz',
  'Token abc',
  'Bearer a b',
  `Bearer ${ADMIN_TOKEN}`,
  'Bearer ü',
];

/** Headers a client may send that the API does not expect. */
const ODD_HEADERS: Array<[string, string]> = [
  ['accept', 'text/html'],
  ['accept', 'application/xml'],
  ['accept', '*/*;q=0'],
  ['accept-charset', 'utf-16'],
  ['content-encoding', 'gzip'],
  ['content-encoding', 'br'],
  ['content-encoding', 'identity'],
  ['x-http-method-override', 'DELETE'],
  ['x-request-id', 'x'.repeat(500)],
  ['x-request-id', '../../etc'],
  ['x-forwarded-for', 'not-an-ip, 999.1.1.1'],
  ['x-forwarded-proto', 'javascript'],
  ['x-forwarded-host', 'evil.example'],
  ['host', 'evil.example:99999'],
  ['expect', '100-continue'],
  ['range', 'bytes=0-0'],
  ['range', 'bytes=999999-'],
  ['range', 'bytes=5-1'],
  ['range', 'bytes=0-1,3-4'],
  ['if-none-match', '*'],
  ['cookie', 'a=b; '.repeat(200)],
];

interface Choice {
  kind: string;
  pick: number;
  variant: number;
  depth: number;
}

/** Every place in a JSON value: [path, value]. */
function jsonPaths(
  v: unknown,
  path: Array<string | number> = [],
  out: Array<Array<string | number>> = [],
): Array<Array<string | number>> {
  if (v instanceof Ref || v instanceof RawJson) {
    out.push(path);
    return out;
  }
  out.push(path);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) jsonPaths(v[i], [...path, i], out);
  } else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) jsonPaths(x, [...path, k], out);
  return out;
}

function setAt(root: unknown, path: Array<string | number>, value: unknown, remove = false): unknown {
  if (path.length === 0) return value;
  const copy: any = Array.isArray(root) ? [...root] : { ...(root as object) };
  const [head, ...rest] = path;
  if (rest.length === 0) {
    if (remove) {
      if (Array.isArray(copy)) copy.splice(head as number, 1);
      else delete copy[head as string];
    } else if (head === '__proto__') {
      Object.defineProperty(copy, '__proto__', {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else copy[head!] = value;
    return copy;
  }
  copy[head!] = setAt(copy[head!], rest, value, remove);
  return copy;
}

function bodyJsonText(req: AbstractRequest): string {
  return req.body && 'json' in req.body ? toJson(req.body.json, () => 'x') : '{}';
}

/** Applies one mutation to a valid request; deterministic in the choice. */
function mutate(route: Route, r: AbstractRequest, c: Choice): AbstractRequest {
  const req: AbstractRequest = { ...r, params: { ...r.params }, query: [...r.query] };
  const at = <T>(list: readonly T[], n = c.variant): T => list[n % list.length]!;
  const describe = (what: string) => {
    req.mutation = `${c.kind}: ${what}`;
    return req;
  };
  const json = req.body && 'json' in req.body ? req.body.json : undefined;
  const paths = json === undefined ? [] : jsonPaths(json);
  const leaf = paths.length ? at(paths, c.pick) : [];
  switch (c.kind) {
    case 'drop': {
      if (json === undefined || paths.length <= 1) {
        delete req.body;
        return describe('no body');
      }
      const p = at(paths.slice(1), c.pick);
      req.body = { json: setAt(json, p, undefined, true) };
      return describe(`removed body.${p.join('.')}`);
    }
    case 'extra': {
      const key = at(EXTRA_KEYS);
      const target = json !== null && typeof json === 'object' ? json : {};
      const objPaths = jsonPaths(target).filter((p) => {
        let v: any = target;
        for (const k of p) v = v?.[k];
        return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Ref);
      });
      const p = objPaths.length ? at(objPaths, c.pick) : [];
      req.body = { json: setAt(target, [...p, key], at(WRONG_TYPES, c.depth)()) };
      return describe(`extra field ${JSON.stringify(key.slice(0, 20))} at body.${p.join('.')}`);
    }
    case 'wrongType':
      req.body = { json: setAt(json ?? {}, leaf, at(WRONG_TYPES)()) };
      return describe(`body.${leaf.join('.')} of the wrong type`);
    case 'badString':
      req.body = { json: setAt(json ?? {}, leaf, at(BAD_STRINGS)()) };
      return describe(`body.${leaf.join('.')} = bad string #${c.variant % BAD_STRINGS.length}`);
    case 'badNumber':
      req.body = { json: setAt(json ?? {}, leaf, at(BAD_NUMBERS)()) };
      return describe(`body.${leaf.join('.')} = bad number #${c.variant % BAD_NUMBERS.length}`);
    case 'deep': {
      const depth = at([10, 65, 100, 1000, 5000], c.depth);
      const open = c.variant % 2 ? '{"a":' : '[';
      const close = c.variant % 2 ? '}' : ']';
      req.body = {
        json: setAt(json ?? {}, leaf, new RawJson(`${open.repeat(depth)}1${close.repeat(depth)}`)),
      };
      return describe(`body.${leaf.join('.')} nested ${depth} deep`);
    }
    case 'hugeArray': {
      const n = at([1001, 10_000, 30_000], c.depth);
      const item = at([() => 'x', () => 1, () => null, () => ({}), () => '\u0000'], c.variant)();
      req.body = {
        json: setAt(
          json ?? {},
          leaf,
          Array.from({ length: n }, () => item),
        ),
      };
      return describe(`body.${leaf.join('.')} an array of ${n}`);
    }
    case 'rawBody': {
      const i = c.variant % RAW_BODIES.length;
      req.body = { bytes: at(RAW_BODIES, i)(bodyJsonText(req)) };
      return describe(`raw body #${i}`);
    }
    case 'contentType': {
      const ct = at(CONTENT_TYPES);
      req.contentType = ct;
      if (!req.body) req.body = { json: {} };
      if (ct?.includes('utf-16')) req.body = { bytes: Buffer.from(bodyJsonText(req), 'utf16le') };
      return describe(`content-type ${JSON.stringify(ct)}`);
    }
    case 'queryUnknown':
      req.query.push([
        at(['unknown', 'limit[]', '__proto__', 'constructor', 'a.b', 'x'.repeat(300), 'ü', ''], c.pick),
        at(BAD_QUERY_VALUES),
      ]);
      return describe('unknown query parameter');
    case 'queryDuplicate': {
      const names = route.queryParams.map((p) => p.name);
      const name = names.length ? at(names, c.pick) : 'limit';
      req.query = req.query.filter(([k]) => k !== name);
      req.rawQuery = `${name}=1&${name}=2`;
      return describe(`duplicated query key ${name}`);
    }
    case 'queryBad': {
      const names = route.queryParams.map((p) => p.name);
      const name = names.length ? at(names, c.pick) : 'x';
      req.query = req.query.filter(([k]) => k !== name);
      req.rawQuery = `${name}=${at(BAD_QUERY_VALUES)}`;
      return describe(`query ${name}=bad value #${c.variant % BAD_QUERY_VALUES.length}`);
    }
    case 'queryHuge':
      req.rawQuery = `pad=${'a'.repeat(at([16 * 1024, 70 * 1024, 200 * 1024], c.variant))}`;
      return describe('a query string over 64 kB');
    case 'path': {
      const names = route.pathParams.map((p) => p.name);
      if (names.length === 0) {
        req.rawUrl = `${route.path}${at(['/', '//', '/..', '%2F', '?%', '/%00', '/./', '.json', '%20'], c.variant)}`;
        return describe(`path ${req.rawUrl}`);
      }
      const name = at(names, c.pick);
      req.params[name] = { raw: at(BAD_SEGMENTS) } satisfies Raw;
      return describe(`path ${name} = bad segment #${c.variant % BAD_SEGMENTS.length}`);
    }
    case 'method': {
      const m = at(
        ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'].filter((x) => x !== route.method),
      );
      req.method = m;
      return describe(`method ${m}`);
    }
    case 'headers': {
      const [name, value] = at(ODD_HEADERS);
      req.headers = { [name]: value };
      return describe(`header ${name}: ${value.slice(0, 40)}`);
    }
    case 'auth': {
      const options: Auth[] = [
        { kind: 'none' },
        { kind: 'revoked' },
        ...MALFORMED_AUTH.map((value) => ({ kind: 'header' as const, value })),
        route.auth === 'admin' ? { kind: 'own' } : { kind: 'admin' },
      ];
      req.auth = at(options);
      return describe(`auth ${JSON.stringify(req.auth).slice(0, 60)}`);
    }
    default:
      return describe('none');
  }
}

function mutationKinds(route: Route): string[] {
  const kinds = [
    'auth',
    'method',
    'path',
    'queryUnknown',
    'queryDuplicate',
    'queryBad',
    'queryHuge',
    'contentType',
    'rawBody',
    'headers',
  ];
  if (route.body)
    kinds.push(
      'drop',
      'extra',
      'wrongType',
      'badString',
      'badString',
      'badNumber',
      'deep',
      'hugeArray',
      'rawBody',
      'wrongType',
    );
  if (route.pathParams.length) kinds.push('path', 'path');
  if (route.queryParams.length) kinds.push('queryBad', 'queryBad', 'queryDuplicate');
  return kinds;
}

/** The route's generator: valid requests (about 40%) and mutated ones. */
export function requestArb(doc: OpenApiDoc, route: Route): fc.Arbitrary<AbstractRequest> {
  const valid = validArb(doc, route);
  const kinds = mutationKinds(route);
  const choice = fc.record({
    kind: fc.constantFrom(...kinds),
    pick: fc.nat(),
    variant: fc.nat(),
    depth: fc.nat(),
  });
  const mutated = fc.tuple(valid, choice).map(([r, c]) => mutate(route, r, c));
  return fc.oneof({ weight: 2, arbitrary: valid }, { weight: 3, arbitrary: mutated });
}

// ---------------------------------------------------------------------------------------------------
// Writing requests
// ---------------------------------------------------------------------------------------------------

/** JSON text of a value, with Refs resolved and RawJson written as is. */
function toJson(v: unknown, resolve: (r: Ref) => string): string {
  if (v instanceof Ref) return JSON.stringify(resolve(v));
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : toJson(x, resolve))).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const parts: string[] = [];
    for (const [k, x] of Object.entries(v))
      if (x !== undefined) parts.push(`${JSON.stringify(k)}:${toJson(x, resolve)}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Percent-encodes like encodeURIComponent, writing lone surrogates as their (invalid) UTF-8 bytes. */
function encodeLoose(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    let out = '';
    for (const ch of s) {
      const code = ch.codePointAt(0)!;
      if (code >= 0xd800 && code <= 0xdfff) {
        out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
          .map((b) => `%${b.toString(16).toUpperCase()}`)
          .join('');
      } else out += encodeURIComponent(ch);
    }
    return out;
  }
}

function resolver(target: Target, org: OrgKey): (r: Ref) => string {
  const other: OrgKey = org === 'A' ? 'B' : 'A';
  const pick = (list: string[], n: number, fallback: string) =>
    list.length ? list[n % list.length]! : fallback;
  return (r) => {
    const p = target.pools[r.other ? other : org];
    switch (r.kind) {
      case 'item':
        return pick(p.items, r.n, `missing-item-${r.n}`);
      case 'connection':
        return pick(p.connections, r.n, `missing-connection-${r.n}`);
      case 'crawl':
        return pick(p.crawls, r.n, `missing-crawl-${r.n}`);
      case 'secret':
        return pick(p.secrets, r.n, `missing-secret-${r.n}`);
      case 'state': {
        // Single-use: a valid callback takes the state out of the pool.
        const list = p.states;
        if (!list.length) return `missing.state.${r.n}`;
        return list.splice(r.n % list.length, 1)[0]!;
      }
      case 'org':
        return pick(target.pools.orgs, r.n, 'missing-org');
      case 'key':
        return pick(target.pools.keys, r.n, `0000${r.n}`.slice(-16));
      case 'orgId':
        return target.orgIdOf[r.other ? other : org];
    }
  };
}

function scalarText(v: unknown, resolve: (r: Ref) => string): string {
  if (v instanceof Ref) return resolve(v);
  if (v instanceof RawJson) return v.text;
  if (typeof v === 'string') return v;
  return JSON.stringify(v) ?? '';
}

function materialize(target: Target, route: Route, r: AbstractRequest): ConcreteRequest {
  const org: OrgKey = r.auth.kind === 'other' ? 'B' : 'A';
  // Ids name A's rows (now and then B's), whatever the key: with B's key that is the cross-tenant case.
  const resolve = resolver(target, 'A');
  let url: string;
  if (r.rawUrl !== undefined) url = r.rawUrl;
  else {
    url = r.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const v = r.params[name];
      if (v !== null && typeof v === 'object' && 'raw' in (v as object)) return (v as Raw).raw;
      // The unknown-route generator gives whole paths: keep their slashes.
      const text = scalarText(v, resolve);
      return route.extra === 'unknown' ? text.split('/').map(encodeLoose).join('/') : encodeLoose(text);
    });
    const q = r.query
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${encodeLoose(k)}=${encodeLoose(scalarText(v, resolve))}`);
    if (r.rawQuery !== undefined) q.push(r.rawQuery);
    if (q.length) url += `?${q.join('&')}`;
  }
  const headers: Record<string, string> = { ...r.headers };
  switch (r.auth.kind) {
    case 'own':
      headers['authorization'] = `Bearer ${target.keyOf.A}`;
      break;
    case 'other':
      headers['authorization'] = `Bearer ${target.keyOf.B}`;
      break;
    case 'admin':
      headers['authorization'] = `Bearer ${ADMIN_TOKEN}`;
      break;
    case 'revoked': {
      const revoked = target.pools.revoked;
      headers['authorization'] =
        `Bearer ${revoked.length ? revoked[0]! : 'kb_0000000000000000_revokedrevokedrevoked'}`;
      break;
    }
    case 'header':
      headers['authorization'] = r.auth.value;
      break;
    case 'none':
      break;
  }
  let payload: Buffer | undefined;
  if (r.body) payload = 'bytes' in r.body ? r.body.bytes : Buffer.from(toJson(r.body.json, resolve));
  if (payload !== undefined) {
    if (r.contentType === undefined) headers['content-type'] = 'application/json';
    else if (r.contentType !== null) headers['content-type'] = r.contentType;
  }
  const req: ConcreteRequest = {
    method: r.method,
    url,
    headers,
    mutation: r.mutation,
    org,
    asOtherOrganization: r.auth.kind === 'other',
  };
  if (payload !== undefined) req.payload = payload;
  return req;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export function printable(req: ConcreteRequest): PrintableRequest {
  const out: PrintableRequest = {
    method: req.method,
    url: req.url,
    headers: req.headers,
    mutation: req.mutation,
  };
  if (req.payload) {
    try {
      out.body = strictUtf8.decode(req.payload);
    } catch {
      out.bodyBase64 = req.payload.toString('base64');
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Checking answers
// ---------------------------------------------------------------------------------------------------

/** Statuses of the API table (API.md "Errors") plus the successes, the callback's redirect and OPTIONS' 204. */
const API_STATUSES = new Set([200, 204, 302, 400, 401, 403, 404, 405, 409, 413, 415, 429]);
const ECHO_LIMIT = 300;
const LEAK =
  /\n\s+at |node_modules|file:\/\/|\.ts:\d+|syntax error at or near|violates \w+ constraint|relation "\w+" does not exist|invalid byte sequence|ZodError|FST_/;

function decodedInputs(req: ConcreteRequest): string {
  let url = req.url;
  try {
    url = decodeURIComponent(req.url);
  } catch {}
  const body = req.payload ? req.payload.toString('utf8') : '';
  let parsedStrings = '';
  try {
    parsedStrings = JSON.stringify(JSON.parse(body));
  } catch {}
  return [req.url, url, body, parsedStrings, ...Object.values(req.headers)].join('\u0000');
}

/** The longest stretch (over ECHO_LIMIT) of the message that is copied from the request, if any. */
function echoed(message: string, req: ConcreteRequest): number {
  if (message.length <= ECHO_LIMIT) return 0;
  const inputs = decodedInputs(req);
  for (let i = 0; i + ECHO_LIMIT < message.length; i++) {
    if (inputs.includes(message.slice(i, i + ECHO_LIMIT + 1))) return ECHO_LIMIT + 1;
  }
  return 0;
}

function checkAnswer(
  route: Route,
  req: ConcreteRequest,
  status: number,
  body: string,
  contentType: string,
): string | null {
  if (status >= 500) return `answered ${status}`;
  // MCP's endpoint speaks JSON-RPC over streamable HTTP, with that protocol's statuses (406 to a client that
  // does not accept event streams) and error shape, which test/http/openapi.test.ts checks against the
  // document; here a failure is a 5xx (above) or a change to the database (the caller's check).
  if (route.path === '/mcp') return null;
  // The docs UI's files also answer 206 to a Range and 304 to a conditional request.
  if (!API_STATUSES.has(status) && !(route.extra === 'static' && (status === 206 || status === 304))) {
    return `status ${status} is not one the API answers`;
  }
  if (status < 400) {
    if (
      req.method === 'HEAD' ||
      status === 204 ||
      status === 302 ||
      status === 304 ||
      route.extra === 'static'
    )
      return null;
    if (!contentType.includes('application/json')) return `a ${status} answer of type ${contentType}`;
    try {
      JSON.parse(body);
    } catch {
      return `a ${status} answer that is not JSON`;
    }
    return null;
  }
  if (req.method === 'HEAD') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'an error answer that is not JSON';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return 'an error answer that is not an object';
  const { error, message, ...rest } = parsed as Record<string, unknown>;
  if (typeof error !== 'string' || typeof message !== 'string' || message.length === 0) {
    return 'an error answer without string error and message';
  }
  const expected = (ERROR_STATUS as Record<string, number>)[error];
  if (expected === undefined) return `unknown error code ${JSON.stringify(error)}`;
  if (expected !== status) return `error code ${error} with status ${status} (the table says ${expected})`;
  const allowedExtras = route.errorExtras.get(status) ?? new Set<string>();
  const extras = Object.keys(rest).filter((k) => !allowedExtras.has(k));
  if (extras.length) return `error answer with undocumented fields ${extras.join(', ')}`;
  if (LEAK.test(message)) return 'error message with internals (stack, SQL, framework code)';
  if (echoed(message, req)) return `error message echoes over ${ECHO_LIMIT} characters of the request`;
  return null;
}

// ---------------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------------

/** A seed per route and batch: the route's requests do not depend on which other routes run. */
function batchSeed(seed: number, route: string, batch: number): number {
  return createHash('sha256').update(`${seed}:${route}:${batch}`).digest().readInt32LE(0);
}

/** Ids answered by a successful request go into the pools, for later requests to name. */
function learn(target: Target, route: Route, req: ConcreteRequest, body: any): void {
  const p = target.pools[req.org];
  if (!body || typeof body !== 'object') return;
  switch (route.key) {
    case 'POST /api/connect/knowledgebase-items':
      if (body.item?.id) remember(p.items, body.item.id);
      break;
    case 'POST /api/connect/crawling/':
      if (body.id) remember(p.crawls, body.id);
      break;
    case 'POST /api/connect/connection':
      if (body.connectionId) remember(p.connections, body.connectionId);
      break;
    case 'POST /api/connect/oauth/initiate':
      rememberConsent(p, body);
      break;
    case 'POST /api/admin/organizations':
      if (body.id) remember(target.pools.orgs, body.id);
      if (body.apiKey) {
        const id = String(body.apiKey).split('_')[1]!;
        remember(target.pools.keys, id);
        target.pools.apiKeys.set(id, body.apiKey);
      }
      break;
    case 'POST /api/admin/organizations/{id}/keys':
      if (body.id) {
        remember(target.pools.keys, body.id);
        target.pools.apiKeys.set(body.id, body.apiKey);
      }
      break;
    case 'DELETE /api/connect/knowledgebase-items': {
      // Deleted ids leave the pools, so that valid requests keep naming rows that exist.
      let ids: unknown;
      try {
        ids = (JSON.parse(req.payload?.toString() ?? '{}') as { ids?: unknown }).ids;
      } catch {}
      if (Array.isArray(ids)) for (const org of ['A', 'B'] as const) forget(target.pools[org].items, ids);
      break;
    }
    case 'DELETE /api/connect/connection':
      if (body.connectionId)
        for (const org of ['A', 'B'] as const) forget(target.pools[org].connections, [body.connectionId]);
      break;
    case 'DELETE /api/admin/keys/{id}': {
      const key = target.pools.apiKeys.get(req.url.split('/').pop() ?? '');
      if (key) remember(target.pools.revoked, key);
      break;
    }
  }
}

/** Requests per route sent to the fresh installation, before any fixture exists (first-use writes). */
const COLD_RUNS = 10;

/** Where the run stands: the fingerprint since which only checked requests ran, and the counters. */
interface RunState {
  target: Target;
  result: FuzzResult;
  maxFailures: number;
  /** Fingerprint after the last checked request (full when the route is read-only). */
  before: Fingerprint;
  /** An accepted request may have changed the database since `before`: take it again first. */
  stale: boolean;
}

function fail(state: RunState, f: FuzzFailure): void {
  if (state.result.failures.length < state.maxFailures) state.result.failures.push(f);
  else state.result.moreFailures++;
}

/**
 * Sends `requests` of `route` one after the other and checks each answer. Requests to a mutating route,
 * or with a method that may reach one, are fingerprinted one by one; read-only ones (GET, HEAD, OPTIONS
 * to a read-only route) once for the whole batch.
 */
async function exercise(
  state: RunState,
  route: Route,
  requests: AbstractRequest[],
  first: number,
  stats: RouteStats | null,
): Promise<void> {
  const { target, result } = state;
  const timing = result.timing;
  let readOnlySent = false;
  for (let i = 0; i < requests.length; i++) {
    const index = first + i;
    const req = materialize(target, route, requests[i]!);
    // Read-only requests (GET, HEAD, OPTIONS to a read-only route) are checked once per batch; the others,
    // and every request with B's key, one by one.
    const readOnly = !route.mutating && SAFE_METHODS.has(req.method);
    let t0 = performance.now();
    if (state.stale) {
      state.before = await target.fingerprint(!route.mutating);
      state.stale = false;
    }
    timing.fingerprintMs += performance.now() - t0;
    t0 = performance.now();
    const res = await target.t.app.inject({
      method: req.method as 'GET',
      url: req.url,
      headers: req.headers,
      ...(req.payload !== undefined ? { payload: req.payload } : {}),
    });
    timing.injectMs += performance.now() - t0;
    if (stats) {
      stats.requests++;
      stats.statuses.set(res.statusCode, (stats.statuses.get(res.statusCode) ?? 0) + 1);
    }
    if (!route.extra && !route.documented.has(res.statusCode) && req.mutation === 'valid') {
      const set = result.undocumented.get(route.key) ?? new Set<number>();
      set.add(res.statusCode);
      result.undocumented.set(route.key, set);
    }
    const failure = (problem: string): FuzzFailure => ({
      seed: result.seed,
      route: route.key,
      index,
      problem,
      request: printable(req),
      status: res.statusCode,
      response: res.body.slice(0, 2000),
    });
    const problem = checkAnswer(
      route,
      req,
      res.statusCode,
      res.body,
      String(res.headers['content-type'] ?? ''),
    );
    if (problem) fail(state, failure(problem));
    if (res.statusCode < 400) {
      let body: unknown;
      try {
        body = JSON.parse(res.body);
      } catch {}
      learn(target, route, req, body);
    }
    if (readOnly && !req.asOtherOrganization) {
      readOnlySent = true;
      continue;
    }
    const accepted = res.statusCode < 400;
    if (accepted && !req.asOtherOrganization) {
      state.stale = true;
      continue;
    }
    t0 = performance.now();
    const after = await target.fingerprint(false);
    timing.fingerprintMs += performance.now() - t0;
    if (!accepted) {
      const changed = fingerprintDiff(state.before, after, route.mayChangeOnReject);
      if (changed.length)
        fail(state, failure(`rejected (${res.statusCode}) but changed ${changed.join(', ')}`));
    }
    // Tenancy: whatever B's key asks (A's ids included), no row of A changes.
    if (req.asOtherOrganization) {
      const touched = organizationWrites(state.before, after, target.orgIdOf.A);
      if (touched.length)
        fail(state, failure(`a request with organization B's key changed A's rows: ${touched.join(', ')}`));
    }
    if (readOnly) {
      // `before` stays as it was: the batch's check compares against it, rows and writes.
      readOnlySent = true;
      continue;
    }
    state.before = { ...state.before, writes: after.writes };
    if (accepted) state.stale = true;
  }
  if (readOnlySent && !state.stale) {
    const t0 = performance.now();
    const after = await target.fingerprint(true);
    timing.fingerprintMs += performance.now() - t0;
    const changed = fingerprintDiff(state.before, after, new Set());
    if (changed.length) {
      fail(state, {
        seed: result.seed,
        route: route.key,
        index: first,
        problem: `the read-only requests ${first}..${first + requests.length - 1} changed ${changed.join(', ')}`,
        request: { method: route.method, url: route.path, headers: {}, mutation: 'batch' },
      });
    }
    state.before = after;
  }
}

/**
 * Fuzz every route of the app's OpenAPI document (and the extras) on a fresh app of `mode`: first a few
 * requests per route to the fresh installation (what a first use writes), then the fixtures, then
 * `runs` requests per route in batches, the fixtures topped up between batches.
 */
export async function runFuzz(opts: FuzzOptions): Promise<FuzzResult> {
  const target = await startTarget(opts.mode, opts.pglitePersistent ?? false);
  const batch = opts.batch ?? 200;
  const result: FuzzResult = {
    mode: opts.mode,
    seed: opts.seed,
    stats: [],
    failures: [],
    moreFailures: 0,
    undocumented: new Map(),
    timing: { generateMs: 0, injectMs: 0, fingerprintMs: 0, fixturesMs: 0 },
  };
  const state: RunState = {
    target,
    result,
    maxFailures: opts.maxFailures ?? 25,
    before: await target.fingerprint(true),
    stale: false,
  };
  try {
    const routes = routesOf(target.openapi).filter(
      (r) => !opts.routes?.length || opts.routes.includes(r.key),
    );
    const sample = (route: Route, arb: fc.Arbitrary<AbstractRequest>, b: number, n: number) => {
      const t0 = performance.now();
      const requests = fc.sample(arb, { seed: batchSeed(opts.seed, route.key, b), numRuns: n });
      result.timing.generateMs += performance.now() - t0;
      return requests;
    };
    for (const route of routes) {
      state.stale = true;
      await exercise(
        state,
        route,
        sample(route, requestArb(target.openapi, route), -1, COLD_RUNS),
        -COLD_RUNS,
        null,
      );
    }
    for (const route of routes) {
      const stats: RouteStats = { route: route.key, requests: 0, statuses: new Map(), ms: 0 };
      const started = performance.now();
      const arb = requestArb(target.openapi, route);
      for (let b = 0; b * batch < opts.runs; b++) {
        const t0 = performance.now();
        await target.replenish(ROUTE_NEEDS(batch)[route.key] ?? {});
        result.timing.fixturesMs += performance.now() - t0;
        state.stale = true;
        await exercise(
          state,
          route,
          sample(route, arb, b, Math.min(batch, opts.runs - b * batch)),
          b * batch,
          stats,
        );
      }
      stats.ms = performance.now() - started;
      result.stats.push(stats);
      opts.onRoute?.(stats);
    }
  } finally {
    await target.close();
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------
// Reporting
// ---------------------------------------------------------------------------------------------------

function clip(s: string, max = 600): string {
  return s.length > max ? `${s.slice(0, max)}…(${s.length} chars)` : s;
}

/** A failure as printed: seed, route, index, problem, and the exact request (long values clipped). */
export function describeFailure(f: FuzzFailure): string {
  const r = f.request;
  const lines = [
    `${f.route} #${f.index} (KB_FUZZ_SEED=${f.seed} KB_FUZZ_ROUTES='${f.route}'): ${f.problem}`,
    `  mutation: ${r.mutation}`,
    `  request:  ${r.method} ${clip(r.url)}`,
    `  headers:  ${clip(JSON.stringify(r.headers))}`,
  ];
  if (r.body !== undefined) lines.push(`  body:     ${clip(JSON.stringify(r.body))}`);
  if (r.bodyBase64 !== undefined) lines.push(`  body (base64): ${clip(r.bodyBase64)}`);
  if (f.status !== undefined) lines.push(`  answer:   ${f.status} ${clip(f.response ?? '')}`);
  return lines.join('\n');
}

/** Table rows: route, requests, 2xx, 3xx, 4xx by status, 5xx, ms. */
export function statsRows(stats: RouteStats[]): Array<Record<string, string>> {
  return stats.map((s) => {
    const by = (lo: number, hi: number) =>
      [...s.statuses].filter(([st]) => st >= lo && st < hi).reduce((sum, [, n]) => sum + n, 0);
    const fourxx = [...s.statuses]
      .filter(([st]) => st >= 400 && st < 500)
      .sort(([a], [b]) => a - b)
      .map(([st, n]) => `${st}:${n}`)
      .join(' ');
    return {
      route: s.route,
      requests: String(s.requests),
      '2xx': String(by(200, 300)),
      '3xx': String(by(300, 400)),
      '4xx by status': fourxx,
      '5xx': String(by(500, 600)),
      ms: String(Math.round(s.ms)),
    };
  });
}
