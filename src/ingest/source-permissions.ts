/**
 * Failures that mean the connection's credentials lack a permission at the source (a Shopify access
 * scope, a Zendesk role, a Notion page not shared with the integration, a 403): the person can grant it,
 * so the job carries a `permission_missing` warning besides the failure itself. Connectors report these
 * in their own words; this reads what they report (a 403 status, a named scope, the vendor's code).
 */
import { isSourceHttpError } from '../connectors/http.ts';
import type { NewJobWarning } from '../db/repositories/job-warnings.ts';

const PERMISSION_WORDS =
  /\bACCESS_DENIED\b|\baccess scopes?\b|\bpermissions?\b|\bnot shared with the integration\b|\bforbidden\b/i;

/** Whether a connector's failure (or a sync's error) says a permission is missing. */
export function isMissingPermission(error: unknown): boolean {
  if (isSourceHttpError(error) && error.status === 403) return true;
  if (error instanceof Error && typeof (error as { scope?: unknown }).scope === 'string') return true;
  return PERMISSION_WORDS.test(error instanceof Error ? error.message : String(error));
}

/**
 * The warning for a missing permission: `what` is the table (kind of document) it cost, when known;
 * `message` the failure's text, secrets already scrubbed.
 */
export function permissionWarning(what: string | undefined, message: string): NewJobWarning {
  return { code: 'permission_missing', subject: what ?? 'source', message };
}
