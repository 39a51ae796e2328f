import { randomBytes, randomUUID } from 'node:crypto';

/** Opaque identifiers for rows the API exposes. UUIDv4: unguessable, so ids leak nothing about other orgs. */
export function newId(): string {
  return randomUUID();
}

/** A short random id (hex) for API key ids, which appear inside the key itself. */
export function newShortId(bytes = 8): string {
  return randomBytes(bytes).toString('hex');
}
