/**
 * The one error type of the service. Every failure a caller can see is an AppError with a code from a
 * closed set; `src/http/errors.ts` maps codes to HTTP statuses in one table.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  source_auth_failed: 400,
  source_unreachable: 400,
  oauth_required: 400,
  oauth_not_configured: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  sync_in_progress: 409,
  connection_inactive: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Extra fields to merge into the error body (e.g. `retryAfterSeconds`); never secrets. */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
