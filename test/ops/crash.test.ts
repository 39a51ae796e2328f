/**
 * The crash suite (the cases beside test/jobs/worker-kill.test.ts and postgres-restart.test.ts):
 *
 * 1. A worker process SIGKILLed in the middle of a crawl (native Postgres, separate processes): another
 *    worker takes the crawl back once its heartbeat is stale, the crawl completes, every page of the site
 *    is stored exactly once and nothing stays running.
 * 2. The embedded service (`node src/main.ts`, PGlite on a data dir, the real embedding model) SIGKILLed
 *    while uploads are being indexed and a crawl runs: restarted on the same directory, every acknowledged
 *    upload is there with its content, indexing resumes at once (no item stays `pending`), search finds
 *    an upload, and the crawl resumes and finishes without storing a page twice.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPglite } from '../../src/db/pglite.ts';
import type { CrawlJobView } from '../../src/db/repositories/crawl-jobs.ts';
import { createApiKey, createOrganization } from '../../src/db/repositories/organizations.ts';
import { buildApp } from '../../src/http/app.ts';
import { FAST_CRAWLER, FASTAPI_DOCS } from '../http/crawl-helpers.ts';
import { waitFor } from '../jobs/helpers.ts';
import { composeTestService, freshDatabase, testConfig } from '../support/harness.ts';
import { startWorkerProcess } from '../support/worker-process.ts';
import { testModelDir } from '../support/model.ts';
import { type EmbeddedService, startEmbeddedService } from '../support/embedded-service.ts';
import { type ServedRoutes, type ServedSite, serveDirectory, serveRoutes } from '../support/sites.ts';

/** The site's pages as its sitemap lists them (paths), the set a complete crawl must store. */
function sitemapPaths(): string[] {
  const sitemap = readFileSync(path.join(FASTAPI_DOCS, 'sitemap.xml'), 'utf8');
  return [...sitemap.matchAll(/<loc>http:\/\/127\.0\.0\.1:8000([^<]*)<\/loc>/g)].map((m) => m[1]!);
}
/** `/a/index.html`, `/a/` and `/a` are one page. */
const pageKey = (p: string) => p.replace(/index\.html$/, '').replace(/\/$/, '');

function isAlive(c: ChildProcess | undefined): c is ChildProcess {
  return !!c && c.exitCode === null && c.signalCode === null;
}

describe('a worker process SIGKILLed mid-crawl (postgres)', () => {
  let db: Database;
  let url: string;
  let drop: () => Promise<void>;
  let site: ServedSite;
  let child: ChildProcess | undefined;
  const GATED_AFTER = 45;
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => {
    openGate = resolve;
  });

  before(async () => {
    const fresh = await freshDatabase('postgres');
    db = fresh.db;
    url = fresh.url!;
    drop = fresh.drop;
    await migrate(db);
    // Requests past the first GATED_AFTER are held until the kill: the kill finds part of the site stored
    // and the worker's every fetch slot mid-fetch, however fast or slow the machine crawls.
    site = await serveDirectory(FASTAPI_DOCS, { delayMs: 5, gate: { after: GATED_AFTER, open: gate } });
  });
  after(async () => {
    openGate();
    if (isAlive(child)) child.kill('SIGKILL');
    await site?.close();
    await drop?.();
  });

  test('another worker takes the crawl back; it completes with every page stored once and nothing left running', async () => {
    const env = {
      DATABASE_URL: url,
      KB_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      KB_CRAWL_ALLOW_PRIVATE: 'true',
      KB_LOG_LEVEL: 'silent',
    };
    const service = composeTestService(db, testConfig(env), { crawler: FAST_CRAWLER });
    const app = await buildApp(service.appDeps, { logger: false });
    await app.ready();
    const org = await createOrganization(db, 'crawl-kill');
    const key = (await createApiKey(db, org.id)).apiKey;
    const api = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const res = await app.inject({
        method,
        url: path,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { payload: JSON.stringify(body) } : {}),
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const getCrawl = (id: string): Promise<CrawlJobView> => api('GET', `/api/connect/crawling/${id}`);

    let pool: ReturnType<typeof service.startWorkers> | undefined;
    try {
      child = await startWorkerProcess(env);

      // A limit above the site's size: the crawl has to take every page.
      const job = (await api('POST', '/api/connect/crawling/', {
        url: `${site.origin}/`,
        limit: 1000,
      })) as CrawlJobView;
      // Every fetch slot of the child (FAST_CRAWLER: 4 per host) is held at the gate.
      await waitFor(() => site.requests.length >= GATED_AFTER + 4, 60_000, 'the child held at the gate');
      child.kill('SIGKILL');
      await once(child, 'exit');
      openGate();

      const dead = await getCrawl(job.id);
      assert.equal(dead.status, 'scraping', 'the dead worker left the crawl in progress');
      assert.ok(dead.completed_pages < 154, `the kill landed mid-crawl (${dead.completed_pages} pages done)`);
      const [{ n: storedAtKill }] = (await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM items WHERE organization_id = $1 AND source_type = 'crawl'",
        [org.id],
      )) as [{ n: number }];
      assert.ok(storedAtKill >= 20, `pages were stored before the kill (${storedAtKill})`);
      const [{ n: inFlight }] = (await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM crawl_frontier WHERE crawl_job_id = $1 AND state = 'fetching'",
        [job.id],
      )) as [{ n: number }];
      assert.ok(inFlight > 0, 'the dead worker left pages mid-fetch');

      // This process's worker, with a short staleness bound, takes the crawl back and finishes it.
      pool = service.startWorkers({
        concurrency: 1,
        pollMs: 50,
        heartbeatMs: 100,
        staleMs: 1_000,
        reapEveryMs: 100,
        periodicTasks: [],
        listenUrl: null,
      });
      let done = dead;
      await waitFor(
        async () => {
          done = await getCrawl(job.id);
          return ['completed', 'failed', 'cancelled'].includes(done.status);
        },
        90_000,
        'the crawl to end after the kill',
      );
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.error_message, null);
      assert.equal(done.completed_pages, done.total_pages, 'every admitted page was finished');

      const [engine] = await db.query<{ status: string; attempts: number }>(
        'SELECT j.status, j.attempts FROM jobs j JOIN crawl_jobs c ON c.job_id = j.id WHERE c.id = $1',
        [job.id],
      );
      // At least one retry took it over (a loaded machine may delay this worker's own heartbeat past the
      // short staleness bound, and a further attempt then finishes it: still nothing twice, below).
      assert.equal(engine?.status, 'succeeded');
      assert.ok(engine.attempts >= 2, `a retry took it over (attempts ${engine.attempts})`);
      const running = await db.query('SELECT id FROM jobs WHERE status = $1', ['running']);
      assert.deepEqual(running, [], 'no job stays running');
      const unfinished = await db.query<{ url: string; state: string }>(
        "SELECT url, state FROM crawl_frontier WHERE crawl_job_id = $1 AND state <> 'done'",
        [job.id],
      );
      assert.deepEqual(unfinished, [], 'rows left mid-fetch by the dead worker were done by the next one');

      // Every page of the site, once: one item per sitemap page, no second item for any URL.
      const items = await db.query<{ source_url: string; source_key: string; content: string }>(
        "SELECT source_url, source_key, content FROM items WHERE organization_id = $1 AND source_type = 'crawl'",
        [org.id],
      );
      const pages = sitemapPaths();
      assert.equal(pages.length, 154);
      const byPage = new Map<string, number>();
      for (const item of items) {
        assert.ok(item.source_url.startsWith(`${site.origin}/`), item.source_url);
        assert.ok(item.content.length > 0, `${item.source_url} has content`);
        const k = pageKey(new URL(item.source_url).pathname);
        byPage.set(k, (byPage.get(k) ?? 0) + 1);
      }
      assert.deepEqual(
        [...byPage].filter(([, n]) => n > 1),
        [],
        'no page is stored twice',
      );
      assert.deepEqual(
        pages.filter((p) => !byPage.has(pageKey(p))),
        [],
        'every page of the site is stored',
      );
      assert.equal(items.length, 154);
      const stored =
        (done.outcomes['created'] ?? 0) + (done.outcomes['updated'] ?? 0) + (done.outcomes['unchanged'] ?? 0);
      assert.equal(stored, 154, `outcomes count each page once: ${JSON.stringify(done.outcomes)}`);
      // Each stored page was committed whole: its item, its page memory and its frontier row together.
      const [{ n: withoutMemory }] = (await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM items i
          WHERE i.organization_id = $1 AND i.source_type = 'crawl'
            AND NOT EXISTS (SELECT 1 FROM crawl_pages p WHERE p.organization_id = i.organization_id AND p.source_key = i.source_key)`,
        [org.id],
      )) as [{ n: number }];
      assert.equal(withoutMemory, 0, 'every stored page has its page memory');
    } finally {
      if (isAlive(child)) child.kill('SIGKILL');
      await pool?.stop();
      await app.close();
      await service.close();
    }
  });
});

/** Distinct sentences, one per upload, so a search for one has a single right answer. */
const SUBJECTS = [
  'A violet submarine',
  'The retired astronomer',
  'Our village bakery',
  'A stubborn tortoise',
  'The night-shift nurse',
  'An orchestra of kazoos',
  'The lighthouse keeper',
  'A glacier in Patagonia',
];
const ACTIONS = [
  'delivered forty jars of honey to',
  'wrote a long letter about',
  'repainted the fence beside',
  'lost a chess tournament in',
  'measured the rainfall over',
  'sang lullabies to the goats of',
];
const PLACES = [
  'Reykjavik',
  'the Sahara',
  'a quiet harbour',
  'the moon base',
  'Lisbon',
  'an abandoned mine',
  'the railway museum',
  'Kyoto',
];
const sentenceOf = (i: number) =>
  `${SUBJECTS[i % SUBJECTS.length]} ${ACTIONS[Math.floor(i / SUBJECTS.length) % ACTIONS.length]} ${PLACES[Math.floor(i / (SUBJECTS.length * ACTIONS.length)) % PLACES.length]} on day ${i}.`;
/** The same long log section in every upload: a second chunk, so indexing falls behind the uploads. */
const LOGBOOK = Array.from(
  { length: 12 },
  (_, n) =>
    `Shift ${n + 1}: the crew checked the pumps, logged the tide tables, counted the spare rope and noted the wind.`,
).join(' ');
/**
 * An upload of two chunks: the model embeds some 20-60 chunks/s here, so two clients uploading outpace
 * it and a backlog builds (with one chunk each the indexer kept up with them, and the backlog below was
 * never reached).
 */
const contentOf = (i: number) =>
  `## Summary\n\n${sentenceOf(i)}\n\n## Notes\n\nEntry ${i} records ordinary maintenance notes, inventory counts and weather observations for the logbook.\n\n## Log\n\n${LOGBOOK}`;

/** Pages of the embedded test's site besides its start page, and how many of them answer at once. */
const SITE_PAGES = 30;
const UNGATED_PAGES = 6;
const WORDS =
  'river lantern copper meadow falcon harbour quartz willow ember glacier thistle orchard basalt heron saffron tundra marble cobalt juniper lagoon cedar prairie walnut canyon'.split(
    ' ',
  );
/** A page of distinct prose (a seeded pick of words), so no page is a near-duplicate of another. */
function sitePage(i: number, origin: string): string {
  let seed = i * 7919 + 17;
  const word = () => {
    seed = (seed * 48271) % 2147483647;
    return WORDS[seed % WORDS.length]!;
  };
  const paragraphs = Array.from({ length: 2 }, () => `<p>${Array.from({ length: 40 }, word).join(' ')}.</p>`);
  return `<!doctype html><html><head><title>Field guide ${i}</title></head><body><main><h1>Field guide ${i}</h1>${paragraphs.join('')}<a href="${origin}/">home</a></main></body></html>`;
}

describe('the embedded service SIGKILLed during ingestion (pglite)', () => {
  let dataDir = '';
  let site: ServedRoutes;
  let running: EmbeddedService | undefined;
  // Pages past the first few are held until the kill (or 8 s each, below the crawler's 20 s request
  // timeout): the crawl is mid-way at the kill however fast or slow the machine is.
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => {
    openGate = resolve;
  });
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'kb-crash-'));
    site = await serveRoutes({
      '/': (_req, res, { origin }) => {
        const links = Array.from(
          { length: SITE_PAGES },
          (_, i) => `<li><a href="${origin}/guide/${i}">Guide ${i}</a></li>`,
        );
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          `<!doctype html><html><head><title>Field guides</title></head><body><main><h1>Field guides</h1><p>Every guide of the collection, one page each.</p><ul>${links.join('')}</ul></main></body></html>`,
        );
      },
      '*': async (_req, res, { origin, url }) => {
        const m = /^\/guide\/(\d+)$/.exec(url.pathname);
        const i = m ? Number(m[1]) : -1;
        if (i < 0 || i >= SITE_PAGES) {
          res.writeHead(404, { 'content-type': 'text/plain' });
          return res.end('not found');
        }
        if (i >= UNGATED_PAGES) await Promise.race([gate, sleep(8_000, undefined, { ref: false })]);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(sitePage(i, origin));
      },
    });
  });
  after(async () => {
    openGate();
    if (running && isAlive(running.child)) running.child.kill('SIGKILL');
    await site?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test('restarted on its data dir: acknowledged uploads kept, indexing resumes, the crawl finishes, nothing twice', async () => {
    const modelDir = await testModelDir();
    const first = await startEmbeddedService(dataDir, {
      KB_MODEL_DIR: modelDir,
      KB_CRAWL_ALLOW_PRIVATE: 'true',
      KB_RATE_LIMIT_PER_MINUTE: '0',
    });
    running = first;
    await waitFor(
      () => first.output().includes('first start') && /\nkb_\S+/.test(first.output()),
      10_000,
      'the key',
    );
    const key = /\n(kb_\S+)/.exec(first.output())![1]!;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const call = async (base: string, method: 'GET' | 'POST', p: string, body?: unknown) => {
      const res = await fetch(
        `${base}${p}`,
        body === undefined
          ? { method, headers: { authorization: headers.authorization } }
          : { method, headers, body: JSON.stringify(body) },
      );
      const text = await res.text();
      assert.equal(res.status, 200, `${method} ${p}: ${res.status} ${text}`);
      return JSON.parse(text);
    };
    /** Every item's indexing status, by id, through the listing API. */
    const statuses = async (base: string) => {
      const out = new Map<string, { status: string; type: string; url: string; title: string }>();
      for (let page = 1; ; page++) {
        const body = await call(base, 'POST', '/api/connect/knowledgebase-items/query', { limit: 100, page });
        for (const i of body.items)
          out.set(i.id, {
            status: i.indexing_status,
            type: i.source_type,
            url: i.source_url,
            title: i.title,
          });
        if (!body.pagination.has_next_page) return out;
      }
    };

    const crawl = (await call(first.url, 'POST', '/api/connect/crawling/', {
      url: `${site.origin}/`,
      limit: 100,
    })) as CrawlJobView;

    // Two clients keep uploading until the process dies, as fast as it answers while fewer than
    // BACKLOG uploads are pending (the poll below counts them; each upload counts until the next poll), so
    // the kill finds a backlog being indexed whatever the machine's speed, and the restarted process has a
    // bounded amount left to index. Only answered uploads count as acknowledged. BACKLOG is above what the
    // indexer leases at once (two rounds of 16 items): with fewer pending, its two rounds could lease them
    // all, its drain end, and a kill during the VACUUM that ends a drain find nothing leased.
    const BACKLOG = 60;
    const acknowledged = new Map<string, number>();
    const attempted = new Set<number>();
    let next = 0;
    let killed = false;
    let backlog = 0;
    let uploadFailure: unknown;
    const uploader = async () => {
      while (!killed && next < 300) {
        if (backlog >= BACKLOG) {
          await sleep(50);
          continue;
        }
        const i = next++;
        attempted.add(i);
        try {
          const res = await fetch(`${first.url}/api/connect/knowledgebase-items`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ title: `Crash upload ${i}`, content: contentOf(i) }),
          });
          const body = (await res.json()) as { item: { id: string } };
          if (res.ok) acknowledged.set(body.item.id, i);
          else assert.fail(`upload ${i}: ${res.status} ${JSON.stringify(body)}`);
        } catch (err) {
          if (killed) return;
          uploadFailure ??= err;
          throw err;
        }
        backlog++;
      }
    };
    const uploaders = [uploader(), uploader()];
    // An upload that fails before the kill fails the test at the next poll (not as an unhandled rejection).
    for (const u of uploaders) u.catch(() => {});

    // The kill lands once indexing is under way (some uploads indexed, some pending) and mid-crawl.
    let atKill = { indexed: 0, pending: 0, crawled: 0 };
    let pendingAtKill = new Set<string>();
    await waitFor(
      async () => {
        if (uploadFailure) throw uploadFailure;
        const listed = await statuses(first.url);
        pendingAtKill = new Set([...listed].filter(([, s]) => s.status === 'pending').map(([id]) => id));
        const all = [...listed.values()].filter((s) => s.type === 'upload');
        const job = (await call(first.url, 'GET', `/api/connect/crawling/${crawl.id}`)) as CrawlJobView;
        atKill = {
          indexed: all.filter((s) => s.status === 'indexed').length,
          pending: all.filter((s) => s.status === 'pending').length,
          crawled: job.completed_pages,
        };
        backlog = atKill.pending;
        return (
          atKill.indexed >= 3 && atKill.pending >= 40 && atKill.crawled >= 3 && job.status === 'scraping'
        );
      },
      90_000,
      'indexing and crawling under way',
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(atKill)}`);
    });
    killed = true;
    first.child.kill('SIGKILL');
    await first.exited;
    openGate();
    await Promise.all(uploaders);
    assert.ok(atKill.crawled < SITE_PAGES + 1, 'the kill landed mid-crawl');

    // What the dead process left, read from a copy of its data dir (opening the directory itself would
    // recover it here, and the restart below would no longer start from a crash).
    const copy = mkdtempSync(path.join(tmpdir(), 'kb-crash-copy-'));
    try {
      cpSync(dataDir, copy, { recursive: true });
      const dead = await openPglite(path.join(copy, 'pgdata'));
      try {
        const [left] = await dead.query<{ leased: number; running: number; fetching: number }>(
          `SELECT (SELECT count(*)::int FROM items
                    WHERE indexing_status = 'pending' AND indexing_lease_until IS NOT NULL) AS leased,
                  (SELECT count(*)::int FROM jobs WHERE status = 'running') AS running,
                  (SELECT count(*)::int FROM crawl_frontier WHERE crawl_job_id = $1 AND state = 'fetching') AS fetching`,
          [crawl.id],
        );
        assert.ok(left!.leased > 0, `the kill caught an indexing round: ${JSON.stringify(left)}`);
        assert.equal(left!.running, 1, 'the crawl job was left running');
        assert.ok(left!.fetching > 0, `pages were in flight: ${JSON.stringify(left)}`);
      } finally {
        await dead.close();
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
    // At least 43 uploads were listed; the answers of at most two (one per client) died with the process.
    assert.ok(acknowledged.size >= 41, `uploads were acknowledged before the kill (${acknowledged.size})`);

    const second = await startEmbeddedService(dataDir, {
      KB_MODEL_DIR: modelDir,
      KB_CRAWL_ALLOW_PRIVATE: 'true',
      KB_RATE_LIMIT_PER_MINUTE: '0',
    });
    running = second;
    assert.ok(!second.output().includes('first start'), 'the restart found its data');

    // The crawl resumes in the restarted process and finishes.
    let job = crawl;
    await waitFor(
      async () => {
        job = await call(second.url, 'GET', `/api/connect/crawling/${crawl.id}`);
        return ['completed', 'failed', 'cancelled'].includes(job.status);
      },
      120_000,
      'the crawl to finish after the restart',
    );
    assert.equal(job.status, 'completed', JSON.stringify(job));
    assert.ok(job.completed_pages > atKill.crawled, 'the crawl went on after the restart');
    assert.equal(job.completed_pages, job.total_pages);

    // Indexing resumes at once: everything reaches `indexed` (the old defect left leased items pending
    // for the lease's 300 s).
    let items = await statuses(second.url);
    await waitFor(
      async () => {
        items = await statuses(second.url);
        return [...items.values()].every((s) => s.status !== 'pending');
      },
      120_000,
      'every item to leave pending',
    );
    assert.deepEqual(
      [...items.values()].filter((s) => s.status !== 'indexed'),
      [],
      'every item is indexed',
    );
    for (const id of acknowledged.keys()) assert.ok(items.has(id), `acknowledged upload ${id} is present`);
    const uploads = [...items.values()].filter((s) => s.type === 'upload');
    for (const u of uploads) {
      const i = Number(/^Crash upload (\d+)$/.exec(u.title)?.[1]);
      assert.ok(attempted.has(i), `${u.title} was sent`);
    }
    assert.equal(new Set(uploads.map((u) => u.title)).size, uploads.length, 'no upload stored twice');

    // Crawled pages: every page of the site once, as many as the crawl says it stored.
    const crawled = [...items.values()].filter((s) => s.type === 'crawl');
    const paths = crawled.map((c) => new URL(c.url).pathname).sort();
    const expected = ['/', ...Array.from({ length: SITE_PAGES }, (_, i) => `/guide/${i}`)].sort();
    assert.deepEqual(paths, expected, 'every page of the site is stored exactly once');
    assert.equal(job.total_pages, SITE_PAGES + 1);
    const stored =
      (job.outcomes['created'] ?? 0) + (job.outcomes['updated'] ?? 0) + (job.outcomes['unchanged'] ?? 0);
    assert.equal(stored, SITE_PAGES + 1, JSON.stringify(job.outcomes));

    // Search finds an upload that was pending when the process died (indexed by the restarted one).
    const probe = [...acknowledged].find(([id]) => pendingAtKill.has(id));
    assert.ok(probe, 'an acknowledged upload was pending at the kill');
    const hits = (await call(second.url, 'POST', '/api/consume/search', {
      query: sentenceOf(probe[1]),
      limit: 5,
      includeEmbedding: false,
    })) as { result: Array<{ item_id: string }> };
    assert.ok(
      hits.result.some((h) => h.item_id === probe[0]),
      `search finds upload ${probe[1]}: ${JSON.stringify(hits.result)}`,
    );

    // Stopped cleanly, the data dir shows each acknowledged upload whole: its content and its chunks.
    second.child.kill('SIGTERM');
    await second.exited;
    assert.equal(second.child.exitCode, 0, second.output());
    running = undefined;
    const db = await openPglite(path.join(dataDir, 'pgdata'));
    try {
      const rows = await db.query<{ id: string; content: string; chunks: number }>(
        `SELECT i.id, i.content, (SELECT count(*)::int FROM chunks c WHERE c.item_id = i.id) AS chunks
           FROM items i WHERE i.id = ANY($1::text[])`,
        [[...acknowledged.keys()]],
      );
      assert.equal(rows.length, acknowledged.size);
      for (const row of rows) {
        assert.equal(row.content, contentOf(acknowledged.get(row.id)!), `content of ${row.id}`);
        assert.ok(row.chunks > 0, `${row.id} has its chunks`);
      }
      const [left] = await db.query<{ pending: number; running: number }>(
        `SELECT (SELECT count(*)::int FROM items WHERE indexing_status = 'pending') AS pending,
                (SELECT count(*)::int FROM jobs WHERE status IN ('pending', 'running')) AS running`,
      );
      assert.deepEqual(left, { pending: 0, running: 0 }, 'no item pending, no job left over');
    } finally {
      await db.close();
    }
  });
});
