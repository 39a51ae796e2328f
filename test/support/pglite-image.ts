import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { listMigrations, migrate } from '../../src/db/migrate.ts';
import { pgliteDatabase, pgliteImage } from '../../src/db/pglite.ts';

/**
 * Images of an in-memory PGlite database for the tests to start from (`image` of openPgliteThread):
 * `empty` is the cluster as initdb leaves it, `migrated` the same with every migration applied. A test
 * database starts in about 0.4 s from an image against about 2.5 s through initdb and the migrations,
 * and the suite starts several hundred of them. The database is the same either way: the image is a
 * tarball of the data directory PGlite itself wrote.
 *
 * Kept in the fixtures cache (`.cache/pglite-images/`), named by a hash of what decides their content
 * (the PGlite and pgvector packages, and for `migrated` every migration's text), so a changed migration
 * builds a new image (and removes the older one of its kind). Test files running in parallel may build one
 * at once: each writes a file of its own and renames it into place, so a reader sees a whole image or none.
 */
export type PgliteImageKind = 'empty' | 'migrated';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cacheDir = process.env['KB_CACHE_DIR'] ?? path.join(repoRoot, '.cache');

const built = new Map<PgliteImageKind, Promise<string>>();

/** The path of the image of `kind`, built the first time it is asked for. */
export function pgliteImageFile(kind: PgliteImageKind): Promise<string> {
  let file = built.get(kind);
  if (!file) {
    file = buildImage(kind);
    built.set(kind, file);
  }
  return file;
}

function packageVersion(name: string): string {
  // Not through require.resolve: PGlite's exports do not include its package.json.
  const file = path.join(repoRoot, 'node_modules', name, 'package.json');
  const json = JSON.parse(readFileSync(file, 'utf8')) as { version: string };
  return json.version;
}

function imageKey(kind: PgliteImageKind): string {
  const hash = createHash('sha256');
  hash.update(
    `${kind}\0${packageVersion('@electric-sql/pglite')}\0${packageVersion('@electric-sql/pglite-pgvector')}`,
  );
  if (kind === 'migrated') hash.update(`\0${migrationsHash()}`);
  return hash.digest('hex').slice(0, 16);
}

/** A hash of every migration's name and text: names what a migrated database holds. */
export function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const m of listMigrations()) hash.update(`${m.name}\0${m.sql}\0`);
  return hash.digest('hex').slice(0, 16);
}

async function buildImage(kind: PgliteImageKind): Promise<string> {
  const dir = path.join(cacheDir, 'pglite-images');
  const file = path.join(dir, `${kind}-${imageKey(kind)}.tar`);
  if (existsSync(file)) return file;
  const pg = await PGlite.create(undefined, { extensions: { vector } });
  try {
    if (kind === 'migrated') await migrate(pgliteDatabase(pg));
    const bytes = await pgliteImage(pg);
    mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(partial, bytes);
    renameSync(partial, file);
    // Images of older migrations or packages (40 MB each) are not read again.
    for (const old of readdirSync(dir))
      if (old.startsWith(`${kind}-`) && old.endsWith('.tar') && path.join(dir, old) !== file)
        rmSync(path.join(dir, old), { force: true });
  } finally {
    await pg.close();
  }
  return file;
}
