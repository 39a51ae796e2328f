/**
 * Does one organization's big document hold the service's event loop? The service runs in this process as
 * `kb serve` composes it (buildApp + listen on 127.0.0.1, the background indexer, two job workers), over
 * PGlite on disk (default) or a new database on the native Postgres fixture. The clients run in a second
 * process, so this process's event loop is the service's alone.
 *
 *   node bench/event-loop.ts [--busy] [--storage pglite|postgres] [--model real|hash]
 *                            [--chars 5000000] [--more 1000000,1000000] [--crawl-pages 2]
 *                            [--crawl-page-chars 1500000] [--seed-docs 200] [--quiet-seconds 15]
 *                            [--max-seconds 900]
 *
 * 1. Organization B gets `--seed-docs` SciFact abstracts (uploaded, indexed) to search.
 * 2. Quiet window: readers alone for `--quiet-seconds`, one closed-loop client per read, 50 ms apart:
 *    GET /healthz, POST items query (B), GET stats (B), POST search (B, SciFact queries).
 * 3. Load window: the same readers while organization A uploads a `--chars` document (SciFact abstracts
 *    under headings: prose, as a manual or an export is), then the `--more` documents one after the
 *    other, and crawls a loopback site of `--crawl-pages` pages of `--crawl-page-chars` characters of
 *    HTML each; the window ends when all of them are indexed (or after `--max-seconds`).
 * 4. After window: the readers alone again for `--quiet-seconds`, over the index now holding A's chunks.
 *
 * Reported: per read, p50/p95/p99/max ms quiet and loaded and their ratio; the event-loop delay of this
 * process (perf_hooks.monitorEventLoopDelay, 10 ms resolution) in each window; every stall of the loop
 * over 50 ms in the load window (a 5 ms timer that fired late), the worst ones with the functions that ran
 * during them (a CPU profile of the main thread taken over the load window, its samples in the stall's
 * interval counted by the frames on their stacks); and how long each document took from its upload to
 * `indexed`, with its chunk count.
 *
 * `--model real` embeds with the fixture model (what a user waits for); `--model hash` keeps the model's
 * tokenizer, so chunking costs what it costs, but makes vectors with the hash embedder of the tests, so
 * the event loop is measured without minutes of inference. `--busy` starts two CPU hogs (busy loops in
 * child processes) beside it for the whole run, as a loaded machine would be.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { migrate } from '../src/db/migrate.ts';
import { createApiKey, createOrganization } from '../src/db/repositories/organizations.ts';
import type { Embedder } from '../src/embedding/index.ts';
import { buildApp } from '../src/http/app.ts';
import { createTestEmbedder } from '../test/support/model.ts';
import { hashEmbedder } from '../test/support/hash-embedder.ts';
import { composeTestService, testConfig } from '../test/support/harness.ts';
import { type NativePostgres, startNativePostgres } from '../test/support/native-postgres.ts';
import {
  loadAverage,
  openBenchDatabase,
  percentile,
  printTable,
  readScifactJsonl,
  writeResult,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    busy: { type: 'boolean', default: false },
    storage: { type: 'string', default: 'pglite' },
    model: { type: 'string', default: 'real' },
    chars: { type: 'string', default: '5000000' },
    more: { type: 'string', default: '1000000,1000000' },
    'crawl-pages': { type: 'string', default: '2' },
    'crawl-page-chars': { type: 'string', default: '1500000' },
    'seed-docs': { type: 'string', default: '200' },
    'quiet-seconds': { type: 'string', default: '15' },
    'max-seconds': { type: 'string', default: '900' },
    /** Internal: this process is the clients' process. */
    clients: { type: 'string' },
    /** Internal: this process is a CPU hog. */
    hog: { type: 'boolean', default: false },
  },
});

const READS = ['healthz', 'items query', 'stats', 'search'] as const;
type Read = (typeof READS)[number];
const READ_PAUSE_MS = 50;
const STALL_MS = 50;

/** Prose in markdown: SciFact abstracts, each under a heading, until `chars` characters. */
function bigMarkdown(chars: number, offset: number): string {
  const corpus = readScifactJsonl<{ title: string; text: string }>('corpus.jsonl');
  const parts: string[] = [];
  let n = 0;
  for (let i = offset; n < chars; i++) {
    const d = corpus[i % corpus.length]!;
    const part = `## ${d.title}\n\n${d.text}\n\n`;
    parts.push(part);
    n += part.length;
  }
  return parts.join('').slice(0, chars);
}

/** A page of HTML paragraphs of about `chars` characters. */
function bigHtml(chars: number, offset: number): string {
  const md = bigMarkdown(chars, offset);
  const body = md
    .split('\n\n')
    .map((p) => (p.startsWith('## ') ? `<h2>${p.slice(3)}</h2>` : `<p>${p}</p>`))
    .join('\n');
  return `<!doctype html><html><head><title>Big page ${offset}</title></head><body><main><h1>Big page ${offset}</h1>${body}</main></body></html>`;
}

interface ClientJob {
  url: string;
  keyA: string;
  keyB: string;
  chars: number;
  more: number[];
  crawlPages: number;
  crawlPageChars: number;
}

type ChildMessage =
  | { type: 'ready' }
  | { type: 'latencies'; window: string; data: Record<Read, number[]>; errors: string[] }
  | { type: 'uploaded'; name: string; id: string; ms: number }
  | { type: 'crawl'; id: string };

// ---------------------------------------------------------------- the clients' process

async function runClients(job: ClientJob): Promise<void> {
  const say = (m: ChildMessage) => process.stdout.write(`${JSON.stringify(m)}\n`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const call = (method: string, path: string, key: string | null, body?: unknown) =>
    new Promise<any>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        job.url + path,
        {
          method,
          agent,
          timeout: 120_000,
          headers: {
            ...(key ? { authorization: `Bearer ${key}` } : {}),
            ...(payload ? { 'content-type': 'application/json' } : {}),
          },
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => {
            const text = Buffer.concat(parts).toString();
            if ((res.statusCode ?? 500) >= 300)
              reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`));
            else resolve(text ? JSON.parse(text) : null);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
      req.on('error', reject);
      req.end(payload);
    });

  // The site to crawl: an index linking to the big pages.
  const pages = Array.from({ length: job.crawlPages }, (_, i) => bigHtml(job.crawlPageChars, 1000 + i * 997));
  const site = http.createServer((req, res) => {
    const m = /^\/page-(\d+)$/.exec(req.url ?? '');
    if (req.url === '/') {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<html><head><title>Site</title></head><body>${pages.map((_, i) => `<a href="/page-${i}">page ${i}</a>`).join(' ')}</body></html>`,
      );
    } else if (m && pages[Number(m[1])]) {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(pages[Number(m[1])]);
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;

  const queries = readScifactJsonl<{ text: string }>('queries.jsonl').map((q) => q.text);
  const titleWords = readScifactJsonl<{ title: string }>('corpus.jsonl')
    .slice(0, 200)
    .map((d) => d.title.split(/\s+/)[0]!.replace(/\W/g, ''))
    .filter((w) => w.length > 3);
  let q = 0;
  const reads: Record<Read, () => Promise<unknown>> = {
    healthz: () => call('GET', '/healthz', null),
    'items query': () =>
      call('POST', '/api/connect/knowledgebase-items/query', job.keyB, {
        limit: 20,
        ...(q % 2 === 0 ? { search: titleWords[q++ % titleWords.length] } : { page: 1 + (q++ % 5) }),
      }),
    stats: () => call('GET', '/api/connect/knowledgebase-items/stats', job.keyB),
    search: () =>
      call('POST', '/api/consume/search', job.keyB, { query: queries[q++ % queries.length], limit: 10 }),
  };
  /** Runs the readers until `stop` resolves; returns their latencies. */
  const readWindow = async (stop: Promise<void>) => {
    let done = false;
    void stop.then(() => {
      done = true;
    });
    const data = Object.fromEntries(READS.map((r) => [r, [] as number[]])) as Record<Read, number[]>;
    const errors: string[] = [];
    await Promise.all(
      READS.map(async (read) => {
        while (!done) {
          const t0 = performance.now();
          try {
            await reads[read]();
            data[read].push(performance.now() - t0);
          } catch (err) {
            errors.push(`${read}: ${(err as Error).message}`.slice(0, 200));
          }
          await sleep(READ_PAUSE_MS);
        }
      }),
    );
    return { data, errors };
  };

  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const nextLine = async () =>
    JSON.parse((await lines.next()).value as string) as { type: string; seconds?: number };
  say({ type: 'ready' });
  for (;;) {
    const cmd = await nextLine();
    if (cmd.type === 'quiet') {
      const r = await readWindow(sleep(cmd.seconds! * 1000));
      say({ type: 'latencies', window: 'quiet', ...r });
    } else if (cmd.type === 'load') {
      let stop!: () => void;
      const stopped = new Promise<void>((r) => {
        stop = r;
      });
      const readers = readWindow(stopped);
      const upload = async (name: string, chars: number, offset: number) => {
        const content = bigMarkdown(chars, offset);
        const t0 = performance.now();
        const res = await call('POST', '/api/connect/knowledgebase-items', job.keyA, {
          title: name,
          content,
        });
        say({ type: 'uploaded', name, id: res.item.id, ms: performance.now() - t0 });
      };
      const writers = (async () => {
        await upload(`Big ${job.chars} characters`, job.chars, 0);
        if (job.crawlPages > 0) {
          const { id } = await call('POST', '/api/connect/crawling/', job.keyA, {
            url: siteUrl,
            limit: job.crawlPages + 1,
          });
          say({ type: 'crawl', id });
        }
        for (const [i, chars] of job.more.entries())
          await upload(`More ${i + 1}: ${chars} characters`, chars, 3000 + i * 1231);
      })();
      await nextLine(); // stop
      stop();
      await writers.catch((err: Error) => process.stderr.write(`writers failed: ${err.message}\n`));
      const r = await readers;
      say({ type: 'latencies', window: 'load', ...r });
    } else break; // `end`
  }
  site.close();
  agent.destroy();
}

// ---------------------------------------------------------------- the service's process

/**
 * The fixture model's tokenizer (so chunks are what the indexer makes) with the hash embedder's vectors,
 * made on a thread of their own as the model's are (hash-embed-thread.ts): hashing a round's chunks on
 * this thread would measure a stall the service does not have. Queries are hashed here (a fraction of a
 * millisecond each).
 */
function tokenizerWithHashVectors(real: Embedder): Embedder {
  const hash = hashEmbedder({ dimensions: 384, maxTokens: real.maxTokens });
  const thread = new Worker(new URL('./hash-embed-thread.ts', import.meta.url), {
    env: { ...process.env, BENCH_HASH_MAX_TOKENS: String(real.maxTokens) },
  });
  thread.unref();
  const pending = new Map<number, (vectors: Float32Array[]) => void>();
  thread.on('message', (msg: { id: number; vectors: Float32Array[] }) => {
    pending.get(msg.id)?.(msg.vectors);
    pending.delete(msg.id);
  });
  let nextId = 0;
  const e: Embedder = Object.create(real);
  Object.defineProperties(e, {
    modelId: { value: `bench-hash-vectors-${real.modelId}` },
    dimensions: { value: 384 },
    embed: {
      value: (texts: string[], signal?: AbortSignal) => {
        signal?.throwIfAborted();
        const id = nextId++;
        return new Promise<Float32Array[]>((resolve) => {
          pending.set(id, resolve);
          thread.postMessage({ id, texts });
        });
      },
    },
    embedQuery: { value: hash.embedQuery },
  });
  return e;
}

interface Stall {
  /** performance.now() when the late timer fired. */
  at: number;
  ms: number;
}

/** The frames that ran during [from, to] (performance.now() ms) by the share of profile samples they were on. */
function heldBy(profile: any, profileStartPerf: number, from: number, to: number): string {
  const byId = new Map<number, any>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const c of node.children ?? []) parent.set(c, node.id);
  }
  const counts = new Map<string, { n: number; depth: number }>();
  let total = 0;
  let t = profileStartPerf;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] / 1000;
    if (t < from || t > to) continue;
    total++;
    const seen = new Set<string>();
    let id: number | undefined = profile.samples[i];
    let depth = 0;
    const frames: string[] = [];
    while (id !== undefined) {
      const f = byId.get(id).callFrame;
      const file = (f.url as string).replace(/^file:\/\/.*?\/(src|node_modules|bench|test)\//, '$1/');
      const name = `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
      frames.push(name);
      id = parent.get(id);
    }
    for (const name of frames.reverse()) {
      depth++;
      if (seen.has(name) || name.startsWith('(root)')) continue;
      seen.add(name);
      const c = counts.get(name) ?? { n: 0, depth };
      c.n++;
      c.depth = Math.max(c.depth, depth);
      counts.set(name, c);
    }
  }
  if (total === 0) return 'no samples';
  // The most specific frames that cover most of the stall: deepest first among those on half the samples.
  const top = [...counts.entries()]
    .filter(([name, c]) => c.n / total >= 0.3 && !/^\((program|idle|garbage collector)\)/.test(name))
    .sort((a, b) => b[1].depth - a[1].depth)
    .slice(0, 3)
    .map(([name, c]) => `${name} ${Math.round((100 * c.n) / total)}%`);
  const idle = counts.get('(idle)')?.n ?? 0;
  const gc = counts.get('(garbage collector)')?.n ?? 0;
  return `${top.join(' < ') || '-'}${gc ? `; GC ${Math.round((100 * gc) / total)}%` : ''}${idle ? `; idle ${Math.round((100 * idle) / total)}%` : ''}`;
}

async function main(): Promise<void> {
  const hogs: ChildProcess[] = [];
  if (values.busy) {
    for (let i = 0; i < 2; i++)
      hogs.push(spawn(process.execPath, [fileURLToPath(import.meta.url), '--hog'], { stdio: 'ignore' }));
  }
  const storage = values.storage === 'postgres' ? 'postgres' : 'pglite';
  const native: NativePostgres | null = storage === 'postgres' ? await startNativePostgres() : null;
  const { db, cleanup } = await openBenchDatabase(storage, native, 'kb-bench-event-loop-');
  let child: ChildProcess | null = null;
  let closeService = async () => {};
  try {
    await migrate(db);
    const orgA = await createOrganization(db, 'uploader');
    const orgB = await createOrganization(db, 'reader');
    const keyA = (await createApiKey(db, orgA.id)).apiKey;
    const keyB = (await createApiKey(db, orgB.id)).apiKey;
    const config = testConfig({ KB_RATE_LIMIT_PER_MINUTE: '0', KB_CRAWL_ALLOW_PRIVATE: 'true' });
    const service = composeTestService(db, config, { runIndexer: true });
    const real = await createTestEmbedder();
    const embedder = values.model === 'hash' ? tokenizerWithHashVectors(real) : real;
    await service.embedding.use(embedder);
    const app = await buildApp(service.appDeps, { logger: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    service.startWorkers({ concurrency: 2, listenUrl: null });
    closeService = async () => {
      await app.close();
      await service.close();
      await real.close();
    };
    const count = async (sql: string, params: unknown[] = []) =>
      (await db.query<{ n: number }>(sql, params))[0]!.n;

    // 1. Organization B's documents, uploaded and indexed before the clock starts.
    const seed = readScifactJsonl<{ title: string; text: string }>('corpus.jsonl')
      .filter((d) => d.title.trim() && d.text.trim())
      .slice(0, Number(values['seed-docs']));
    for (const d of seed) {
      await app.inject({
        method: 'POST',
        url: '/api/connect/knowledgebase-items',
        headers: { authorization: `Bearer ${keyB}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ title: d.title, content: d.text }),
      });
    }
    while ((await count("SELECT count(*)::int AS n FROM items WHERE indexing_status = 'pending'")) > 0)
      await sleep(200);

    const job: ClientJob = {
      url,
      keyA,
      keyB,
      chars: Number(values.chars),
      more: values.more ? values.more.split(',').filter(Boolean).map(Number) : [],
      crawlPages: Number(values['crawl-pages']),
      crawlPageChars: Number(values['crawl-page-chars']),
    };
    const clients = spawn(
      process.execPath,
      [fileURLToPath(import.meta.url), '--clients', JSON.stringify(job)],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    child = clients;
    const send = (m: unknown) => clients.stdin!.write(`${JSON.stringify(m)}\n`);
    const inbox: ChildMessage[] = [];
    let wake = () => {};
    void (async () => {
      for await (const line of createInterface({ input: clients.stdout! })) {
        inbox.push(JSON.parse(line) as ChildMessage);
        wake();
      }
    })();
    const receive = async <T extends ChildMessage['type']>(
      type: T,
    ): Promise<Extract<ChildMessage, { type: T }>> => {
      for (;;) {
        const i = inbox.findIndex((m) => m.type === type);
        if (i >= 0) return inbox.splice(i, 1)[0] as Extract<ChildMessage, { type: T }>;
        await new Promise<void>((r) => {
          wake = r;
        });
      }
    };
    await receive('ready');

    // The loop's delay (histogram) and its stalls (a 5 ms timer that fired more than STALL_MS late).
    const delay = monitorEventLoopDelay({ resolution: 10 });
    const stalls: Stall[] = [];
    let expected = performance.now() + 5;
    const ticker = setInterval(() => {
      const now = performance.now();
      if (now - expected > STALL_MS) stalls.push({ at: now, ms: now - expected });
      expected = now + 5;
    }, 5);

    // 2. Quiet window.
    const loadBefore = loadAverage();
    delay.enable();
    send({ type: 'quiet', seconds: Number(values['quiet-seconds']) });
    const quiet = await receive('latencies');
    delay.disable();
    const quietDelay = { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 };
    delay.reset();
    stalls.length = 0;

    // 3. Load window, profiled.
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 1000 });
    await session.post('Profiler.start');
    const profileStart = performance.now();
    // Starting the profiler is a stall of its own, not the service's: let the late tick land first.
    await sleep(100);
    delay.reset();
    delay.enable();
    const t0 = performance.now();
    stalls.length = 0;
    send({ type: 'load' });
    const docs: Array<{ name: string; id: string; uploadMs: number; indexedS?: number; chunks?: number }> =
      [];
    const expectedDocs = 1 + job.more.length;
    const deadline = t0 + Number(values['max-seconds']) * 1000;
    let crawlId: string | null = null;
    let crawlIndexedS: number | null = null;
    for (;;) {
      for (
        let i = inbox.findIndex((m) => m.type === 'uploaded');
        i >= 0;
        i = inbox.findIndex((m) => m.type === 'uploaded')
      ) {
        const m = inbox.splice(i, 1)[0] as Extract<ChildMessage, { type: 'uploaded' }>;
        docs.push({ name: m.name, id: m.id, uploadMs: m.ms });
      }
      const c = inbox.findIndex((m) => m.type === 'crawl');
      if (c >= 0) crawlId = (inbox.splice(c, 1)[0] as Extract<ChildMessage, { type: 'crawl' }>).id;
      for (const d of docs) {
        if (d.indexedS !== undefined) continue;
        const [row] = await db.query<{ indexing_status: string; chunks: number }>(
          `SELECT indexing_status, (SELECT count(*)::int FROM chunks WHERE item_id = $1) AS chunks FROM items WHERE id = $1`,
          [d.id],
        );
        if (row?.indexing_status === 'indexed') {
          d.indexedS = (performance.now() - t0) / 1000;
          d.chunks = row.chunks;
        } else if (row?.indexing_status === 'failed') throw new Error(`${d.name} failed to index`);
      }
      if (crawlId && crawlIndexedS === null) {
        const pages = await count(
          `SELECT count(*)::int AS n FROM items WHERE organization_id = $1 AND source_type = 'crawl' AND indexing_status = 'indexed'
             AND title LIKE 'Big page%'`,
          [orgA.id],
        );
        if (pages >= job.crawlPages) crawlIndexedS = (performance.now() - t0) / 1000;
      }
      const allDocs = docs.length === expectedDocs && docs.every((d) => d.indexedS !== undefined);
      if ((allDocs && (job.crawlPages === 0 || crawlIndexedS !== null)) || performance.now() > deadline)
        break;
      await sleep(500);
    }
    send({ type: 'stop' });
    const load = await receive('latencies');
    delay.disable();
    clearInterval(ticker);
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    const loadDelay = { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 };
    const loadAfter = loadAverage();
    // 4. After: the readers alone again, over organization A's chunks now stored. Reads over a larger index
    // (the HNSW graph and BM25 statistics are shared) cost more by themselves; the ratio to this window is
    // what the indexing's competition for the database and the cores adds.
    send({ type: 'quiet', seconds: Number(values['quiet-seconds']) });
    const settled = await receive('latencies');
    send({ type: 'end' });

    // Report.
    const f = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 1 : 0) : '-');
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const rows = READS.map((read) => {
      const a = sorted(quiet.data[read]);
      const b = sorted(load.data[read]);
      const c = sorted(settled.data[read]);
      return {
        read,
        'quiet n': String(a.length),
        'quiet p50/p95/p99 ms': `${f(percentile(a, 50))} / ${f(percentile(a, 95))} / ${f(percentile(a, 99))}`,
        'load n': String(b.length),
        'load p50/p95/p99/max ms': `${f(percentile(b, 50))} / ${f(percentile(b, 95))} / ${f(percentile(b, 99))} / ${f(b.at(-1) ?? Number.NaN)}`,
        'p95 ratio': (percentile(b, 95) / percentile(a, 95)).toFixed(2),
        'p99 ratio': (percentile(b, 99) / percentile(a, 99)).toFixed(2),
        'after p50/p95 ms': `${f(percentile(c, 50))} / ${f(percentile(c, 95))}`,
        'p95 ratio to after': (percentile(b, 95) / percentile(c, 95)).toFixed(2),
      };
    });
    const title = `${storage}, model ${values.model}${values.busy ? ', BUSY (2 CPU hogs)' : ''}; load ${loadBefore} -> ${loadAfter}`;
    printTable(`Reads (organization B), ${title}`, rows);
    printTable('Event-loop delay of the service process', [
      {
        window: 'quiet',
        'p99 ms': f(quietDelay.p99),
        'max ms': f(quietDelay.max),
        [`stalls > ${STALL_MS} ms`]: '-',
      },
      {
        window: 'load',
        'p99 ms': f(loadDelay.p99),
        'max ms': f(loadDelay.max),
        [`stalls > ${STALL_MS} ms`]: `${stalls.length} (${f(stalls.reduce((s, x) => s + x.ms, 0))} ms in all)`,
      },
    ]);
    const worst = [...stalls].sort((a, b) => b.ms - a.ms).slice(0, 8);
    printTable(
      'Worst stalls of the load window, and what ran during them',
      worst.map((s) => ({
        'at s': f((s.at - t0) / 1000),
        ms: f(s.ms),
        'held by (deepest frames on >= 30% of samples, deepest first)': heldBy(
          profile,
          profileStart,
          s.at - s.ms,
          s.at,
        ),
      })),
    );
    // Every stall by the deepest frame that held it (idle: the thread waited for the CPU, not for our code).
    const causes = new Map<string, { n: number; ms: number; worst: number }>();
    for (const s of stalls) {
      const held = heldBy(profile, profileStart, s.at - s.ms, s.at);
      const cause = held.startsWith('-')
        ? 'nothing of ours (idle: waiting for a CPU)'
        : held.split(' < ')[0]!.replace(/ \d+%$/, '');
      const c = causes.get(cause) ?? { n: 0, ms: 0, worst: 0 };
      c.n++;
      c.ms += s.ms;
      c.worst = Math.max(c.worst, s.ms);
      causes.set(cause, c);
    }
    printTable(
      `Stalls over ${STALL_MS} ms by what held them`,
      [...causes.entries()]
        .sort((a, b) => b[1].ms - a[1].ms)
        .map(([cause, c]) => ({ cause, stalls: String(c.n), 'ms in all': f(c.ms), 'worst ms': f(c.worst) })),
    );
    printTable('Documents (organization A): upload answered, indexed', [
      ...docs.map((d) => ({
        document: d.name,
        'upload answered ms': f(d.uploadMs),
        'indexed after s': d.indexedS === undefined ? 'not yet' : f(d.indexedS),
        chunks: String(d.chunks ?? '-'),
      })),
      ...(job.crawlPages > 0
        ? [
            {
              document: `crawl of ${job.crawlPages} pages x ${job.crawlPageChars} chars of HTML`,
              'upload answered ms': '-',
              'indexed after s': crawlIndexedS === null ? 'not yet' : f(crawlIndexedS),
              chunks: '-',
            },
          ]
        : []),
    ]);
    const errors = [...quiet.errors, ...load.errors, ...settled.errors];
    if (errors.length > 0)
      console.log(`\n${errors.length} read errors, first: ${errors.slice(0, 3).join(' | ')}`);
    writeResult(`event-loop-${storage}-${values.model}${values.busy ? '-busy' : ''}`, {
      args: values,
      rows,
      quietDelay,
      loadDelay,
      stalls: worst.map((s) => ({ atS: (s.at - t0) / 1000, ms: s.ms })),
      docs,
      crawlIndexedS,
      errors: errors.length,
    });
  } finally {
    child?.kill();
    await closeService().catch(() => {});
    await db.close().catch(() => {});
    await cleanup();
    await native?.stop();
    for (const h of hogs) h.kill();
  }
}

if (values.hog) {
  for (;;) {}
} else if (values.clients) {
  await runClients(JSON.parse(values.clients) as ClientJob);
} else {
  await main();
}
