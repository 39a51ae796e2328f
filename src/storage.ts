import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config.ts';
import { ConfigError } from './config.ts';
import type { Database } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { openDatabase } from './db/open.ts';
import {
  countOrganizations,
  createApiKey,
  createOrganization,
  lockDefaultOrganizationCreation,
} from './db/repositories/organizations.ts';
import { CredentialCipher } from './lib/crypto.ts';

/** Where embedded mode keeps the credential-encryption key it generated. */
export function encryptionKeyFile(dataDir: string): string {
  return path.join(dataDir, 'encryption.key');
}

/**
 * The credential-encryption key: from KB_ENCRYPTION_KEY, or (embedded mode only) generated once into
 * the data directory. Server mode requires it explicitly: several processes must share one key, and a
 * key generated on one machine would make the credentials unreadable on the others.
 */
function resolveEncryptionKey(config: Config): string {
  if (config.KB_ENCRYPTION_KEY) {
    new CredentialCipher(config.KB_ENCRYPTION_KEY); // validates length
    return config.KB_ENCRYPTION_KEY;
  }
  if (config.storage === 'postgres') {
    throw new ConfigError(
      'KB_ENCRYPTION_KEY is required with DATABASE_URL (base64 of 32 random bytes, the same for every process). ' +
        "Make one with: node -e \"console.log(require('crypto').randomBytes(32).toString('base64'))\"",
    );
  }
  const file = encryptionKeyFile(config.dataDir);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(config.dataDir, { recursive: true });
  const key = CredentialCipher.generateKey();
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return key;
}

interface Storage {
  db: Database;
  cipher: CredentialCipher;
  /** Set on the very first start of an empty database: the `default` organization's one-time key. */
  firstStartKey: string | null;
}

/**
 * Open the database, apply migrations, and on a brand-new installation create the `default` organization.
 * In embedded mode the data directory is locked before anything in it is read or written (the database
 * first, then the encryption key a first start generates): while another process has it open, this
 * throws DataDirInUseError (src/db/data-dir-lock.ts) and changes nothing.
 */
export async function openStorage(config: Config, opts: { createDefaultOrg: boolean }): Promise<Storage> {
  // A key from the settings (server mode requires one) is checked before anything opens; the key file of
  // a data directory is read, or made, only once the directory is locked.
  const keyFromSettings =
    config.KB_ENCRYPTION_KEY || config.storage === 'postgres' ? resolveEncryptionKey(config) : null;
  const db = await openDatabase(config);
  try {
    const cipher = new CredentialCipher(keyFromSettings ?? resolveEncryptionKey(config));
    await migrate(db);
    let firstStartKey: string | null = null;
    if (opts.createDefaultOrg) {
      firstStartKey = await db.transaction(async (tx) => {
        await lockDefaultOrganizationCreation(tx);
        if ((await countOrganizations(tx)) > 0) return null;
        const org = await createOrganization(tx, 'default');
        return (await createApiKey(tx, org.id)).apiKey;
      });
    }
    return { db, cipher, firstStartKey };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}
