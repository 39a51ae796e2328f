import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Database } from '../src/db/database.ts';
import { openPglite } from '../src/db/pglite.ts';
import { openPostgres } from '../src/db/postgres.ts';
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
  const machine = { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version };
  writeFileSync(`bench/results/${name}.json`, JSON.stringify({ at: new Date().toISOString(), machine, data }, null, 2));
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

/** BEIR SciFact beside the checkout (../shared/data/scifact). */
export const SCIFACT_DATA = new URL('../../shared/data/scifact/', import.meta.url);

export function readScifactJsonl<T = any>(name: string): T[] {
  return readFileSync(new URL(name, SCIFACT_DATA), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

/**
 * An empty database for a benchmark: PGlite in a temp dir on disk (as the service runs it), or a new
 * database on the native Postgres with the service's own pool size.
 */
export async function openBenchDatabase(
  mode: 'pglite' | 'postgres',
  native: NativePostgres | null,
  prefix: string,
): Promise<{ db: Database; cleanup(): Promise<void> }> {
  if (mode === 'pglite') {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    const db = await openPglite(path.join(dir, 'pgdata'));
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
