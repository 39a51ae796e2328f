import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Database, Queryable } from '../src/db/database.ts';
import { openPgliteThread } from '../src/db/pglite-thread.ts';
import { itemSearchWords } from '../src/lib/search-words.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { DEFAULT_BATCH_ITEMS } from '../src/ingest/indexer.ts';
import type { Embedder } from '../src/embedding/index.ts';
import { chunkMarkdown } from '../src/ingest/markdown-chunker.ts';
import type { NativePostgres } from '../test/support/native-postgres.ts';

/** Print rows as an aligned table (every benchmark prints one). */
export function printTable(title: string, rows: Array<Record<string, string>>): void {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]!);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i]!)).join(' | ')} |`;
  console.log(`\n${title}`);
  console.log(line(cols));
  console.log(`|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(cols.map((c) => r[c] ?? '')));
}

/** Keep the raw numbers next to the table (bench/results is ignored by git). */
export function writeResult(name: string, data: unknown): void {
  mkdirSync('bench/results', { recursive: true });
  const machine = {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
  writeFileSync(
    `bench/results/${name}.json`,
    JSON.stringify({ at: new Date().toISOString(), machine, data }, null, 2),
  );
}

export function ndcgAt(ranked: string[], rel: Map<string, number>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    const g = rel.get(id) ?? 0;
    if (g > 0) dcg += (2 ** g - 1) / Math.log2(i + 2);
  });
  const ideal = [...rel.values()].sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
  return idcg === 0 ? 0 : dcg / idcg;
}

export function recallAt(ranked: string[], rel: Map<string, number>, k: number): number {
  const relevant = [...rel.entries()].filter(([, g]) => g > 0).map(([id]) => id);
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((id) => top.has(id)).length / relevant.length;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** BEIR SciFact, whose files sit beside the checkout rather than in it (the URL below). */
export const SCIFACT_DATA = new URL('../../shared/data/scifact/', import.meta.url);

export function readScifactJsonl<T = any>(name: string): T[] {
  return readFileSync(new URL(name, SCIFACT_DATA), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

/**
 * An empty database for a benchmark: PGlite in a temp dir on disk, on its own thread (as the service runs it), or a new
 * database on the native Postgres with the service's own pool size.
 */
export async function openBenchDatabase(
  mode: 'pglite' | 'postgres',
  native: NativePostgres | null,
  prefix: string,
): Promise<{ db: Database; cleanup(): Promise<void> }> {
  if (mode === 'pglite') {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    const db = await openPgliteThread(path.join(dir, 'pgdata'));
    return { db, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `kbbench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: native!.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(native!.url);
  url.pathname = `/${name}`;
  return { db: await openPostgres(url.toString()), cleanup: async () => {} };
}

/** mulberry32: a small seedable generator in [0, 1), so a benchmark's draws are the same on every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The 1, 5 and 15-minute load averages, printed beside measurements (the machine may be shared). */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** A comma-separated list of sizes (`--sizes`, `--steps`), ascending. */
export function sizeList(arg: string): number[] {
  return arg
    .split(',')
    .map(Number)
    .sort((a, b) => a - b);
}

/** `--storage pglite,postgres`: the storage modes named, unknown names dropped. */
export function storageModes(arg: string): Array<'pglite' | 'postgres'> {
  return arg.split(',').filter((m): m is 'pglite' | 'postgres' => m === 'pglite' || m === 'postgres');
}

/**
 * Bulk-insert indexed upload items of one organization (one row per id; titles and contents in the same
 * order), as the benchmarks that load chunks with SQL make them.
 */
export async function insertBenchItems(
  tx: Queryable,
  orgId: string,
  ids: string[],
  titles: string[],
  contents: string[],
): Promise<void> {
  await tx.query(
    `INSERT INTO items (id, organization_id, title, content, content_hash, source_type, source_table_name,
                        source_url, source_key, indexing_status, search_words)
     SELECT u.id, $1, u.title, u.content, md5(u.content), 'upload', 'uploaded_documents',
            'https://docs.example.com/' || u.id, 'upload:' || u.id, 'indexed',
            array_to_tsvector(string_to_array(u.words, ' '))
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, title, content, words)`,
    [orgId, ids, titles, contents, titles.map((t, i) => itemSearchWords(t, contents[i]!))],
  );
}

export interface ScifactChunk {
  title: string;
  text: string;
  embedText: string;
}

/** The SciFact corpus chunked as the indexer chunks it (the embedder's tokenizer), at most `limit` chunks. */
export function scifactChunks(embedder: Embedder, limit = Number.POSITIVE_INFINITY): ScifactChunk[] {
  const chunks: ScifactChunk[] = [];
  for (const d of readScifactJsonl<{ title: string; text: string }>('corpus.jsonl')) {
    for (const c of chunkMarkdown(
      { title: d.title, markdown: d.text },
      { maxTokens: embedder.maxTokens, overlapTokens: 32, countTokens: (s) => embedder.countTokens(s) },
    ))
      chunks.push({ title: d.title, text: c.text, embedText: c.embedText });
    if (chunks.length >= limit) break;
  }
  chunks.length = Math.min(chunks.length, limit);
  return chunks;
}

const REPO = path.resolve(import.meta.dirname, '..');

/**
 * The first `n` SciFact chunks and their vectors from the real model, cached in
 * .cache/bench/search-latency-<model>-<n>.f32 (shared by bench/search-latency.ts and bench/ceiling.ts).
 * `report` prints where the vectors came from and how fast they were embedded (to stderr).
 */
export async function realScifactChunks(
  embedder: Embedder,
  n: number,
  { report = false }: { report?: boolean } = {},
): Promise<{ chunks: ScifactChunk[]; vectors: Float32Array[] }> {
  const chunks = scifactChunks(embedder, n);
  const dims = embedder.dimensions;
  const cache = path.join(
    REPO,
    '.cache',
    'bench',
    `search-latency-${embedder.modelId.replace(/\W+/g, '_')}-${chunks.length}.f32`,
  );
  if (existsSync(cache)) {
    const buf = readFileSync(cache);
    const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
    if (all.length === chunks.length * dims) {
      if (report)
        process.stderr.write(`real vectors: ${chunks.length} from cache ${path.relative(REPO, cache)}\n`);
      return { chunks, vectors: chunks.map((_, i) => all.slice(i * dims, (i + 1) * dims)) };
    }
  }
  const vectors: Float32Array[] = [];
  const t0 = performance.now();
  for (let i = 0; i < chunks.length; i += 32) {
    vectors.push(...(await embedder.embed(chunks.slice(i, i + 32).map((c) => c.embedText))));
    process.stderr.write(`\rembedding real chunks ${vectors.length}/${chunks.length}`);
  }
  const seconds = (performance.now() - t0) / 1000;
  process.stderr.write(
    report ? ` (${seconds.toFixed(0)} s, ${(chunks.length / seconds).toFixed(1)} chunks/s)\n` : '\n',
  );
  mkdirSync(path.dirname(cache), { recursive: true });
  const all = new Float32Array(chunks.length * dims);
  for (const [i, v] of vectors.entries()) all.set(v, i * dims);
  writeFileSync(cache, Buffer.from(all.buffer));
  return { chunks, vectors };
}

function gaussian(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

/** A real vector plus small Gaussian noise (`sigma` per dimension), renormalized. */
export function deriveVector(base: Float32Array, r: () => number, sigma: number): Float32Array {
  const out = new Float32Array(base.length);
  let norm = 0;
  for (let i = 0; i < base.length; i++) {
    out[i] = base[i]! + sigma * gaussian(r);
    norm += out[i]! * out[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

/**
 * The raw model on items' chunk texts, in the indexer's calls (one per round of its items,
 * DEFAULT_BATCH_ITEMS of src/ingest/indexer.ts): the reference the ingest benchmarks hold the pipeline to.
 */
export async function embedInRounds(
  embedder: Embedder,
  perItem: string[][],
  roundItems = DEFAULT_BATCH_ITEMS,
): Promise<{ chunks: number; seconds: number }> {
  const t0 = performance.now();
  let chunks = 0;
  for (let r = 0; r < perItem.length; r += roundItems) {
    const texts = perItem.slice(r, r + roundItems).flat();
    await embedder.embed(texts);
    chunks += texts.length;
  }
  return { chunks, seconds: (performance.now() - t0) / 1000 };
}

/**
 * How long a model had no document call to work on: its `embed` calls are counted as they go out and come
 * back (wrap the embedder the indexer uses with `watch`). Time with none outstanding while items wait is
 * time the pipeline left the model idle, whatever the machine's load; take `ms()` before and after.
 */
export class ModelIdle {
  #outstanding = 0;
  #since = performance.now();
  #idle = 0;

  watch<E extends Embedder>(embedder: E): E {
    const embed = embedder.embed.bind(embedder);
    embedder.embed = (texts, signal) => {
      if (this.#outstanding++ === 0) this.#idle += performance.now() - this.#since;
      return embed(texts, signal).finally(() => {
        if (--this.#outstanding === 0) this.#since = performance.now();
      });
    };
    return embedder;
  }

  /** Milliseconds without a call outstanding since the embedder was watched. */
  ms(): number {
    return this.#idle + (this.#outstanding === 0 ? performance.now() - this.#since : 0);
  }
}

/** Serves `dir` from a process of its own (bench/serve-site.ts); resolves to its origin and a function that stops it. */
export async function serveSiteElsewhere(
  dir: string,
): Promise<{ origin: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./serve-site.ts', import.meta.url)), dir], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const origin = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('exit', (code) => reject(new Error(`site server exited with ${code}`)));
  });
  return {
    origin,
    stop: () =>
      new Promise<void>((resolve) => {
        child.on('exit', () => resolve());
        child.stdin.end();
      }),
  };
}
