/**
 * Failures that mean the connection's credentials lack a permission at the source: the person can grant
 * it, so the job carries a `permission_missing` warning besides the failure itself. Read from what the
 * failure is, never from its wording: a source's 403, or a connector's {@link SourcePermissionError}.
 */
import { isSourceHttpError, SourcePermissionError } from '../connectors/http.ts';
import type { NewJobWarning } from '../db/repositories/job-warnings.ts';

/** Whether a connector's failure (or a sync's error) says a permission is missing. */
export function isMissingPermission(error: unknown): boolean {
  return (isSourceHttpError(error) && error.status === 403) || error instanceof SourcePermissionError;
}

/**
 * The warning for a missing permission: `what` is the table (kind of document) it cost, when known;
 * `message` the failure's text, secrets already scrubbed.
 */
export function permissionWarning(what: string | undefined, message: string): NewJobWarning {
  return { code: 'permission_missing', subject: what ?? 'source', message };
}
