/**
 * What the indexer's commits cost everyone else, and how long an upload waits behind a backlog.
 *
 *   node bench/indexer-commit.ts [--storage pglite,postgres] [--chunks 1737] [--background 5000]
 *                                [--backlog 2000] [--parts all,256,32] [--pending 50000]
 *
 * 1. Commit of a large item: an item of `--chunks` chunks (the fastapi release-notes page made 1,737) is
 *    replaced while a prober runs semantic searches back to back. Per commit size (`all` is one
 *    transaction for the whole item, as before this change; the others are the indexer's
 *    `commitChunks`): the longest transaction the indexer held, the longest stretch of the commit with
 *    no search answered, the commit's wall time, and the time spent leasing, chunking and embedding
 *    before it (the main thread's too). `--background` chunks of other items are in the graph first.
 * 2. An upload behind a sync's backlog: `--backlog` pending items of one connection, then one upload of
 *    another organization; the indexer runs until both are done. Oldest-first (before) took the upload
 *    last, so its wait was the whole drain; the turns take it in the first round.
 * 3. The lease statement with `--pending` pending items: the turns (now) and oldest-first (before).
 * 4. Search's cost for skipping staged chunks: the nearest-chunks statement with and without the
 *    condition, alternated, on the database of part 1.
 *
 * Vectors come from test/support/hash-embedder.ts (384 dimensions, word-based: texts sharing words are
 * close), not the model: part 1 measures the database, and the model would take minutes per run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { createOrganization } from '../src/db/repositories/organizations.ts';
import { toVectorLiteral } from '../src/embedding/vector.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { storeDocument } from '../src/ingest/hash-skip.ts';
import { search } from '../src/search/search.ts';
import { ensureVectorIndex, vectorExpr } from '../src/search/vector-index.ts';
import { hashEmbedder } from '../test/support/hash-embedder.ts';
import { type NativePostgres, startNativePostgres } from '../test/support/native-postgres.ts';
import { openBenchDatabase, percentile, printTable, rng, writeResult } from './lib.ts';

const { values } = parseArgs({
  options: {
    storage: { type: 'string', default: 'pglite,postgres' },
    chunks: { type: 'string', default: '1737' },
    background: { type: 'string', default: '5000' },
    backlog: { type: 'string', default: '2000' },
    parts: { type: 'string', default: 'all,256,32' },
    pending: { type: 'string', default: '50000' },
  },
});
const MODES = values.storage
  .split(',')
  .filter((m): m is 'pglite' | 'postgres' => m === 'pglite' || m === 'postgres');
const CHUNKS = Number(values.chunks);
const BACKGROUND = Number(values.background);
const BACKLOG = Number(values.backlog);
const PARTS = values.parts.split(',').map((p) => (p === 'all' ? Number.POSITIVE_INFINITY : Number(p)));
const PENDING = Number(values.pending);
const embedder = hashEmbedder({ dimensions: 384, maxTokens: 256 });
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 1 : 0) : '-');

// ---- Text ----------------------------------------------------------------------------------------------

const random = rng(13);
const VOCABULARY = Array.from({ length: 3_000 }, (_, i) => `w${i.toString(36)}`);
/** Zipf-like draws, so sections share common words and differ in rare ones (as prose does). */
const word = () => VOCABULARY[Math.floor(random() ** 3 * VOCABULARY.length)]!;
/** A document of `sections` sections of about 150 words: one chunk each at 256 tokens. */
const documentOf = (sections: number, revision: number) =>
  Array.from(
    { length: sections },
    (_, i) => `## Release ${revision}.${i}\n\n${Array.from({ length: 150 }, word).join(' ')}.`,
  ).join('\n\n');

async function store(
  db: Database,
  org: string,
  key: string,
  markdown: string,
  source: { type: 'upload' | 'integration'; connectionId?: string },
) {
  return (
    await db.transaction((tx) =>
      storeDocument(
        tx,
        org,
        {
          sourceType: source.type,
          sourceTableName: source.type === 'upload' ? 'uploaded_documents' : 'docs_space_pages',
          sourceKey: key,
          title: key,
          markdown,
          url: '',
          visibility: 'public',
          tags: [],
          connectionId: source.connectionId ?? null,
        },
        { respectTombstones: false },
      ),
    )
  ).itemId!;
}

/**
 * The database as the indexer sees it, timing each of its transactions (callback start to commit) and
 * noting when the first one started.
 */
function timedTransactions(db: Database, times: number[], started: { at: number }): Database {
  return {
    ...db,
    kind: db.kind,
    query: db.query,
    exec: db.exec,
    transaction: async (fn) => {
      let t0 = 0;
      try {
        return await db.transaction((tx) => {
          t0 = performance.now();
          started.at ||= t0;
          return fn(tx);
        });
      } finally {
        if (t0 > 0) times.push(performance.now() - t0);
      }
    },
    close: db.close,
  };
}

// ---- 1. Commit of a large item ---------------------------------------------------------------------------

interface CommitRow {
  parts: string;
  transactions: number;
  longestTxMs: number;
  searches: number;
  searchP50Ms: number;
  /** Leasing, chunking and embedding the item, before its first transaction (also on this thread). */
  prepareMs: number;
  /** The longest stretch of the commit with no search answered (started, waiting or not even sent). */
  longestGapMs: number;
  /** From the first transaction to the last one's commit. */
  commitMs: number;
}

async function commitLargeItem(db: Database, org: string): Promise<CommitRow[]> {
  // Other items' chunks in the graph, written in one transaction each (not timed).
  for (let i = 0; i * 250 < BACKGROUND; i++)
    await store(db, org, `background-${i}`, documentOf(Math.min(250, BACKGROUND - i * 250), 1_000 + i), {
      type: 'upload',
    });
  await new Indexer(db, embedder, { commitChunks: 100_000 }).drain();
  await store(db, org, 'release-notes', documentOf(CHUNKS, 0), { type: 'upload' });
  await new Indexer(db, embedder, { commitChunks: 100_000 }).drain();
  const queries = await Promise.all(
    Array.from({ length: 50 }, () => embedder.embedQuery(Array.from({ length: 8 }, word).join(' '))),
  );

  const rows: CommitRow[] = [];
  for (const [run, parts] of PARTS.entries()) {
    await store(db, org, 'release-notes', documentOf(CHUNKS, run + 1), { type: 'upload' });
    const txTimes: number[] = [];
    const started = { at: 0 };
    const indexer = new Indexer(timedTransactions(db, txTimes, started), embedder, {
      commitChunks: Number.isFinite(parts) ? parts : 100_000,
    });
    // The window is the commit: from the indexer's first transaction to its last commit.
    let committing = true;
    const searchTimes: number[] = [];
    // When searches were answered: on PGlite a statement runs on this thread, so a long one keeps the
    // prober from even sending its next search, and a search's own latency would not show the wait.
    const answeredAt: number[] = [];
    const prober = (async () => {
      for (let q = 0; committing; q++) {
        const t0 = performance.now();
        const hits = await search(
          db,
          {
            organizationId: org,
            vector: queries[q % queries.length]!,
            text: '',
            limit: 10,
            mode: 'semantic',
            includeEmbedding: false,
          },
          embedder.dimensions,
        );
        searchTimes.push(performance.now() - t0);
        answeredAt.push(performance.now());
        if (hits.length === 0) throw new Error('a search found nothing');
        await sleep(5);
      }
    })();
    const t0 = performance.now();
    const indexed = await indexer.drain();
    const end = performance.now();
    const commitMs = end - started.at;
    committing = false;
    await prober;
    if (indexed !== 1) throw new Error(`indexed ${indexed} items, expected the one`);
    const sorted = [...searchTimes].sort((a, b) => a - b);
    const marks = [started.at, ...answeredAt.filter((t) => t > started.at && t < end), end];
    const longestGapMs = Math.max(...marks.slice(1).map((t, i) => t - marks[i]!));
    rows.push({
      parts: Number.isFinite(parts) ? String(parts) : `all (${CHUNKS}, as before)`,
      transactions: txTimes.length,
      longestTxMs: Math.max(...txTimes),
      searches: sorted.length,
      searchP50Ms: percentile(sorted, 50),
      longestGapMs,
      prepareMs: started.at - t0,
      commitMs,
    });
    process.stderr.write(`  commit in parts of ${rows.at(-1)!.parts}: ${ms(commitMs)} ms\n`);
  }
  return rows;
}

// ---- 2. An upload behind a backlog -----------------------------------------------------------------------

interface BacklogRow {
  backlog: number;
  uploadIndexedMs: number;
  backlogIndexedBeforeUpload: number;
  drainMs: number;
}

async function uploadBehindBacklog(db: Database): Promise<BacklogRow> {
  const syncing = (await createOrganization(db, 'syncing')).id;
  const uploading = (await createOrganization(db, 'uploading')).id;
  for (let i = 0; i < BACKLOG; i += 100) {
    await db.transaction(async (tx) => {
      for (let j = i; j < Math.min(BACKLOG, i + 100); j++) {
        await storeDocument(
          tx,
          syncing,
          {
            sourceType: 'integration',
            sourceTableName: 'docs_space_pages',
            sourceKey: `integration:conn-sync:docs_space_pages:${j}`,
            title: `Page ${j}`,
            markdown: Array.from({ length: 400 }, word).join(' '),
            url: '',
            visibility: 'public',
            tags: [],
            connectionId: 'conn-sync',
          },
          { respectTombstones: false },
        );
      }
    });
  }
  const upload = await store(
    db,
    uploading,
    'upload:after-the-sync',
    Array.from({ length: 200 }, word).join(' '),
    { type: 'upload' },
  );
  const pendingBacklog = async () =>
    (
      await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM items WHERE organization_id = $1 AND indexing_status = 'pending'",
        [syncing],
      )
    )[0]!.n;
  const indexer = new Indexer(db, embedder, { pollMs: 20 });
  const t0 = performance.now();
  indexer.start();
  let uploadIndexedMs = Number.NaN;
  let backlogIndexedBeforeUpload = Number.NaN;
  for (;;) {
    const [u] = await db.query<{ status: string }>(
      'SELECT indexing_status AS status FROM items WHERE id = $1',
      [upload],
    );
    if (Number.isNaN(uploadIndexedMs) && u!.status === 'indexed') {
      uploadIndexedMs = performance.now() - t0;
      backlogIndexedBeforeUpload = BACKLOG - (await pendingBacklog());
    }
    if (!Number.isNaN(uploadIndexedMs) && (await pendingBacklog()) === 0) break;
    await sleep(20);
  }
  const drainMs = performance.now() - t0;
  await indexer.stop();
  return { backlog: BACKLOG, uploadIndexedMs, backlogIndexedBeforeUpload, drainMs };
}

// ---- 3. The lease statement ------------------------------------------------------------------------------

/** The lease as it was: oldest change first over every pending item. */
const OLDEST_FIRST_LEASE = `
  UPDATE items SET indexing_lease_until = now() + make_interval(secs => $2)
   WHERE id IN (SELECT id FROM items
                 WHERE indexing_status = 'pending'
                   AND (indexing_lease_until IS NULL OR indexing_lease_until < now())
                 ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED)
  RETURNING id, organization_id, title, content, content_hash, tags, visibility, source_type`;

async function leaseStatement(db: Database): Promise<Array<Record<string, string>>> {
  const org = (await createOrganization(db, 'lease-bench')).id;
  const other = (await createOrganization(db, 'lease-bench-other')).id;
  const insert = (o: string, n: number, type: string, conn: string | null, tag: string) =>
    db.query(
      `INSERT INTO items (id, organization_id, title, content, content_hash, source_type, source_table_name, source_key, connection_id, updated_at, search_words)
       SELECT 'lease-' || $5 || '-' || g, $1, 'Page ' || g, 'text', 'h' || g, $2, 't', $5 || ':' || g, $3,
              now() - make_interval(secs => $4 - g), array_to_tsvector(ARRAY['page', g::text, 'text'])
         FROM generate_series(1, $4) AS g`,
      [o, type, conn, n, tag],
    );
  await insert(org, Math.round(PENDING * 0.9), 'integration', 'conn-big', 'sync');
  await insert(org, Math.round(PENDING * 0.06), 'crawl', null, 'crawl');
  await insert(
    other,
    PENDING - Math.round(PENDING * 0.9) - Math.round(PENDING * 0.06) - 10,
    'integration',
    'conn-other',
    'other',
  );
  await insert(other, 10, 'upload', null, 'upload');
  await db.exec('ANALYZE items');
  // The statement the indexer runs now, read from its source so that the benchmark times that very text.
  const source = await import('node:fs').then((fs) =>
    fs.readFileSync(new URL('../src/ingest/indexer.ts', import.meta.url), 'utf8'),
  );
  const turns = /const LEASE_SQL = `([\s\S]*?)`;/.exec(source)?.[1];
  if (!turns) throw new Error('LEASE_SQL not found in src/ingest/indexer.ts');
  const time = async (sql: string) => {
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      const t0 = performance.now();
      // Rolled back: every run leases from the same state.
      await db
        .transaction(async (tx) => {
          await tx.query(sql, [16, 30]);
          throw new Error('rollback');
        })
        .catch((err: Error) => {
          if (err.message !== 'rollback') throw err;
        });
      if (i > 0) times.push(performance.now() - t0);
    }
    return times.sort((a, b) => a - b);
  };
  const rows = [];
  for (const [name, sql] of [
    ['turns across queues (now)', turns],
    ['oldest first (before)', OLDEST_FIRST_LEASE],
  ] as const) {
    const t = await time(sql);
    rows.push({ statement: name, 'p50 ms': ms(percentile(t, 50)), 'max ms': ms(t.at(-1)!) });
  }
  return rows;
}

// ---- 4. Search's staged-chunks condition ---------------------------------------------------------------

async function stagedCondition(db: Database, org: string): Promise<Array<Record<string, string>>> {
  const dims = embedder.dimensions;
  const vec = vectorExpr(dims, 'c.embedding');
  const sql = (condition: string) =>
    `SELECT c.id FROM chunks AS c WHERE c.organization_id = $1 ${condition}
      ORDER BY ${vec} <=> $2::vector(${dims}) LIMIT 10`;
  const variants = [
    ['with the condition (now)', sql('AND c.generation NOT IN (SELECT generation FROM chunk_staging)')],
    ['without (before)', sql('')],
  ] as const;
  const times = variants.map(() => [] as number[]);
  for (let q = 0; q < 200; q++) {
    const v = toVectorLiteral(await embedder.embedQuery(Array.from({ length: 8 }, word).join(' ')));
    for (const [i, [, text]] of variants.entries()) {
      await db.transaction(async (tx) => {
        // search.ts's settings for its index pass.
        await tx.exec(
          'SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = 300; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off',
        );
        const t0 = performance.now();
        await tx.query(text, [org, v]);
        times[i]!.push(performance.now() - t0);
      });
    }
  }
  return variants.map(([name], i) => {
    const t = times[i]!.sort((a, b) => a - b);
    return { statement: name, 'p50 ms': ms(percentile(t, 50)), 'p95 ms': ms(percentile(t, 95)) };
  });
}

// ---- Main --------------------------------------------------------------------------------------------------

const native: NativePostgres | null = MODES.includes('postgres') ? await startNativePostgres() : null;
const results: Record<string, unknown> = {};
try {
  for (const mode of MODES) {
    const label = mode === 'pglite' ? 'embedded (PGlite)' : 'server (Postgres)';
    process.stderr.write(`${label}\n`);
    const { db, cleanup } = await openBenchDatabase(mode, native, 'indexer-commit-');
    try {
      await migrate(db);
      await ensureVectorIndex(db, { id: embedder.modelId, dimensions: embedder.dimensions });
      const org = (await createOrganization(db, 'commit-bench')).id;
      const commits = await commitLargeItem(db, org);
      printTable(
        `${label}: replacing a ${CHUNKS}-chunk item while searches run (${BACKGROUND} other chunks)`,
        commits.map((r) => ({
          'chunks per transaction': r.parts,
          transactions: String(r.transactions),
          'longest transaction ms': ms(r.longestTxMs),
          'searches meanwhile': String(r.searches),
          'search p50 ms': ms(r.searchP50Ms),
          'longest time without a search answered ms': ms(r.longestGapMs),
          'commit ms': ms(r.commitMs),
          'lease, chunk and embed before it ms': ms(r.prepareMs),
        })),
      );
      const staged = await stagedCondition(db, org);
      printTable(`${label}: the nearest-chunks statement, 200 queries each (search's index pass)`, staged);
      const backlog = await uploadBehindBacklog(db);
      printTable(`${label}: an upload of another organization behind a ${BACKLOG}-item sync backlog`, [
        {
          order: 'turns across queues (now)',
          'upload indexed after s': ms(backlog.uploadIndexedMs / 1000),
          'backlog items indexed before it': String(backlog.backlogIndexedBeforeUpload),
        },
        {
          order: 'oldest first (before): last, after the whole backlog',
          'upload indexed after s': ms(backlog.drainMs / 1000),
          'backlog items indexed before it': String(BACKLOG),
        },
      ]);
      const lease = await leaseStatement(db);
      printTable(
        `${label}: the lease statement with ${PENDING} pending items (16 leased, rolled back)`,
        lease,
      );
      results[mode] = { commits, staged, backlog, lease };
    } finally {
      await db.close();
      await cleanup();
    }
  }
} finally {
  await native?.stop();
}
writeResult('indexer-commit', {
  chunks: CHUNKS,
  background: BACKGROUND,
  backlog: BACKLOG,
  pending: PENDING,
  results,
});
