import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { newShortId } from './ids.ts';

const KEY_PREFIX = 'kb';

/**
 * API keys look like `kb_<keyId>_<secret>`: the key id (64 bits, public, used for lookup and revocation)
 * and a 192-bit random secret. Only a SHA-256 of the secret is stored; a slow hash buys nothing for a
 * secret with this much entropy.
 */
export function generateApiKey(): { keyId: string; apiKey: string; secretHash: string } {
  const keyId = newShortId(8);
  const secret = randomBytes(24).toString('base64url');
  return { keyId, apiKey: `${KEY_PREFIX}_${keyId}_${secret}`, secretHash: hashSecret(secret) };
}

export function parseApiKey(apiKey: string): { keyId: string; secret: string } | null {
  const m = /^kb_([0-9a-f]{16})_([A-Za-z0-9_-]{32})$/.exec(apiKey);
  return m ? { keyId: m[1]!, secret: m[2]! } : null;
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * AES-256-GCM for source credentials at rest. Stored form: `v1:<iv>:<tag>:<ciphertext>` (base64url),
 * with the row's id as associated data so a ciphertext cannot be moved to another row.
 */
export class CredentialCipher {
  readonly #key: Buffer;

  constructor(keyBase64: string) {
    const key = Buffer.from(keyBase64, 'base64');
    if (key.length !== 32) throw new Error('KB_ENCRYPTION_KEY must be base64 of exactly 32 bytes');
    this.#key = key;
  }

  static generateKey(): string {
    return randomBytes(32).toString('base64');
  }

  encrypt(plaintext: string, associatedData: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(associatedData));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      'v1',
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      ct.toString('base64url'),
    ].join(':');
  }

  decrypt(stored: string, associatedData: string): string {
    const [version, iv, tag, ct] = stored.split(':');
    if (version !== 'v1' || !iv || !tag || ct === undefined)
      throw new Error('unrecognized credential format');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(associatedData));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}
