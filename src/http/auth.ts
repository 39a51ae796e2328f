import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Database } from '../db/database.ts';
import { findApiKey, touchApiKey } from '../db/repositories/organizations.ts';
import { parseApiKey, secretMatches } from '../lib/crypto.ts';
import { AppError } from '../lib/errors.ts';

/**
 * Paths under /api that carry no API key: the OAuth callback (the browser lands there), the sources'
 * change notifications (each proven by the vendor's signature instead) and the admin API.
 */
function isPublicApiPath(path: string): boolean {
  return (
    path === '/api/connect/oauth/callback' ||
    path.startsWith('/api/connect/webhooks/') ||
    path.startsWith('/api/admin/')
  );
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/** How often a key's `last_used_at` is written; finer than this is not worth a write per request. */
const TOUCH_EVERY_MS = 60_000;

/** onRequest hook: resolve `Authorization: Bearer <api key>` to the caller's organization. */
export function apiKeyAuth(db: Database) {
  // Per process: when this process last recorded each key's use, so most requests write nothing.
  const touchedAt = new Map<string, number>();
  return async (request: FastifyRequest): Promise<void> => {
    const path = request.url.split('?')[0]!;
    // /mcp is the MCP server over HTTP (routes/mcp.ts): its tools act with the caller's key.
    if (!(path.startsWith('/api/') || path === '/mcp') || isPublicApiPath(path)) return;
    const token = bearerToken(request);
    if (!token) throw new AppError('unauthorized', 'Send an API key as "Authorization: Bearer <key>".');
    const parsed = parseApiKey(token);
    const record = parsed ? await findApiKey(db, parsed.keyId) : null;
    if (!parsed || !record || record.revoked_at || !secretMatches(parsed.secret, record.secret_hash)) {
      throw new AppError('unauthorized', 'The API key is unknown or revoked.');
    }
    request.caller = { organizationId: record.organization_id, keyId: record.id };
    const now = Date.now();
    if (now - (touchedAt.get(record.id) ?? 0) >= TOUCH_EVERY_MS) {
      touchedAt.set(record.id, now);
      await touchApiKey(db, record.id);
    }
  };
}

/** Admin routes: `Authorization: Bearer <KB_ADMIN_TOKEN>`; without the setting the admin API does not exist. */
export function requireAdmin(adminToken: string | undefined) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!adminToken)
      throw new AppError('not_found', 'The admin API is disabled; set KB_ADMIN_TOKEN to enable it.');
    const token = bearerToken(request);
    const a = Buffer.from(token ?? '');
    const b = Buffer.from(adminToken);
    if (!token || a.length !== b.length || !timingSafeEqual(a, b)) {
      throw new AppError('unauthorized', 'Send the admin token as "Authorization: Bearer <KB_ADMIN_TOKEN>".');
    }
  };
}
