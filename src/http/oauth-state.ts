/**
 * Shared by the OAuth endpoints (not an endpoint itself, so not under routes/): the signed `state` of a
 * consent, the HMAC key behind it, and the OAuth steps and app of a source ({@link oauthOf}).
 *
 * `state` = `<nonce>.<expiry, epoch s>.<HMAC-SHA256 of both>` (base64url). The signature lets the
 * callback refuse a forged or altered state before touching the database, the expiry bounds how long a
 * consent may take, and the nonce's row in `oauth_states` (marked used in the same statement that reads
 * it) makes it single-use. The HMAC key is random, made once per installation, and stored encrypted with
 * the credential key, so every process of a deployment shares it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import {
  insertServiceSettingIfAbsent,
  readServiceSetting,
  updateServiceSetting,
} from '../db/repositories/service-settings.ts';
import type { CredentialCipher } from '../lib/crypto.ts';
import { AppError } from '../lib/errors.ts';

/** How long a consent may take, from initiate to callback. */
export const OAUTH_STATE_TTL_MS = 10 * 60_000;

const KEY_SETTING = 'oauth_state_hmac_key';

/** Associated data of an OAuth token stored under a secret id (binds the ciphertext to that id). */
export function oauthSecretAad(secretId: string): string {
  return `oauth_secret:${secretId}`;
}

/** The stored key; when there is none yet, a new one is stored unless `create` is false (then null). */
async function loadKey(db: Queryable, cipher: CredentialCipher, opts: { create: true }): Promise<Buffer>;
async function loadKey(
  db: Queryable,
  cipher: CredentialCipher,
  opts: { create: boolean },
): Promise<Buffer | null>;
async function loadKey(
  db: Queryable,
  cipher: CredentialCipher,
  { create }: { create: boolean },
): Promise<Buffer | null> {
  const read = async () => {
    const setting = await readServiceSetting<{ encrypted?: string }>(db, KEY_SETTING);
    const enc = setting?.encrypted;
    if (!enc) return null;
    try {
      return Buffer.from(cipher.decrypt(enc, KEY_SETTING), 'base64');
    } catch {
      return null; // made under another encryption key: replace it below
    }
  };
  const existing = await read();
  if (existing || !create) return existing;
  const fresh = randomBytes(32).toString('base64');
  const value = JSON.stringify({ encrypted: cipher.encrypt(fresh, KEY_SETTING) });
  // Two processes may race here: the first writer wins and both read its key back.
  await insertServiceSettingIfAbsent(db, KEY_SETTING, value);
  const stored = await read();
  if (stored) return stored;
  // The stored key was made under another credential key (KB_ENCRYPTION_KEY changed): replace it.
  await updateServiceSetting(db, KEY_SETTING, value);
  return Buffer.from(fresh, 'base64');
}

function sign(key: Buffer, body: string): string {
  return createHmac('sha256', key).update(body).digest('base64url');
}

/** Signs and verifies consent states; one per app (the HMAC key is loaded once, on first use). */
export class OAuthStates {
  readonly #db: Queryable;
  readonly #cipher: CredentialCipher;
  #key: Promise<Buffer> | null = null;

  constructor(db: Queryable, cipher: CredentialCipher) {
    this.#db = db;
    this.#cipher = cipher;
  }

  #stateKey(): Promise<Buffer> {
    if (!this.#key) {
      const p = loadKey(this.#db, this.#cipher, { create: true });
      p.catch(() => {
        if (this.#key === p) this.#key = null;
      });
      this.#key = p;
    }
    return this.#key;
  }

  /** A new state for the nonce `id`, valid for `ttlMs`. */
  async sign(id: string, ttlMs: number): Promise<string> {
    const exp = Math.floor((Date.now() + ttlMs) / 1000);
    const body = `${id}.${exp}`;
    return `${body}.${sign(await this.#stateKey(), body)}`;
  }

  /** The nonce of a state whose signature holds and which has not expired; 400 invalid_request otherwise. */
  async verify(state: string): Promise<string> {
    const parts = state.split('.');
    const invalid = new AppError('invalid_request', 'The OAuth state is invalid; start the consent again.');
    if (parts.length !== 3) throw invalid;
    const [id, exp, sig] = parts as [string, string, string];
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(id) || !/^\d{1,12}$/.test(exp)) throw invalid;
    // Without a stored key no state was ever signed: refuse it without making the key (a refused
    // request changes nothing). Once one exists it is cached like the signing side's.
    const key = this.#key ? await this.#key : await loadKey(this.#db, this.#cipher, { create: false });
    if (!key) throw invalid;
    this.#key ??= Promise.resolve(key);
    const expected = Buffer.from(sign(key, `${id}.${exp}`));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
    if (Number(exp) * 1000 < Date.now()) {
      throw new AppError(
        'invalid_request',
        'The OAuth consent took too long and its state expired; start it again.',
      );
    }
    return id;
  }
}

export function newStateNonce(): string {
  return randomBytes(18).toString('base64url');
}
